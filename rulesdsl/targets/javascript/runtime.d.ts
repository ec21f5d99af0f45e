/** @typedef {() => number} Rng a function giving a number in [0, 1), as Math.random does */
/**
 * A reproducible generator (sfc32, seeded through splitmix32) from a whole-number seed.
 * @param {number} seed
 * @returns {Rng}
 */
export function seeded(seed: number): Rng;
/** @param {Rng} rng @param {number} low @param {number} high */
export function randint(rng: Rng, low: number, high: number): number;
/** @param {bigint} n @param {bigint} d */
export function frac(n: bigint, d: bigint): Fraction;
/** @param {any} a @param {any} b @returns {any} `a + b`: numbers exactly, dice as dice algebra */
export function add(a: any, b: any): any;
/** @param {any} a @param {any} b @returns {any} */
export function sub(a: any, b: any): any;
/** @param {any} a @param {any} b @returns {any} */
export function mul(a: any, b: any): any;
/** @param {any} a @returns {any} */
export function neg(a: any): any;
/** Exact division: formulas never lose precision before an explicit floor, ceil or round. @param {Num} a @param {Num} b */
export function div(a: Num, b: Num): Fraction;
/** `1d6 / 2`: a roll's totals divided, rounded down. @param {any} a @param {any} b @returns {any} */
export function floordiv(a: any, b: any): any;
/** @param {Num} a @param {Num} b @returns {number} -1, 0 or 1 */
export function cmp(a: Num, b: Num): number;
/** @param {string} op @param {any} a @param {any} b @returns {boolean} */
export function compare(op: string, a: any, b: any): boolean;
/** Python's truth of a formula's value: a number is true unless 0; dice are true. @param {any} x */
export function truth(x: any): boolean;
/** @param {Num} x @returns {number} */
export function floor(x: Num): number;
/** @param {Num} x @returns {number} */
export function ceil(x: Num): number;
/** Rounding as a table does it: halves go up. @param {Num} x @returns {number} */
export function round(x: Num): number;
/** @param {Num} x @returns {number | Fraction} */
export function abs(x: Num): number | Fraction;
/** `min` of numbers: the first least one, as given. @param {...Num} xs @returns {Num} */
export function min(...xs: Num[]): Num;
/** @param {...Num} xs @returns {Num} */
export function max(...xs: Num[]): Num;
/** @param {any} value @param {string} what @returns {number} */
export function wholeOf(value: any, what: string): number;
/** `given`, when it is the id of an entity of `kind`. @param {string} kind @param {string} param @param {unknown} given @param {readonly string[]} ids */
export function knownId(kind: string, param: string, given: unknown, ids: readonly string[]): string;
/** A formula's arguments, in the order of `keys`: each must be given, and nothing else.
 * @param {Record<string, any>} given @param {readonly string[]} keys @param {string} formula @returns {any[]} */
export function argsOf(given: Record<string, any>, keys: readonly string[], formula: string): any[];
/** An attribute's value by id, which a derived attribute needs. @param {Record<string, any>} values @param {string} id */
export function attribute(values: Record<string, any>, id: string): any;
/** A value as JSON text, the same in Python (`json_value`): a whole number as a number, a fraction as
 * "n/d", a truth value, dice as their text. @param {unknown} value */
export function jsonValue(value: unknown): string;
/** `Object.freeze`, all the way down through plain objects and arrays. @template T @param {T} value @returns {T} */
export function freeze<T>(value: T): T;
/** Python's `str.casefold`: lowercase, except where full case folding differs (`ß` -> `ss`, `ς` -> `σ`). @param {string} text */
export function casefold(text: string): string;
/** The id a display name gets: `"Sergeant-at-Arms"` -> `sergeant_at_arms` (accents dropped). @param {string} text */
export function slug(text: string): string;
/** Dice with their text written the usual way (`10d6 + 2`, `3d6 * 5 - 1d6`), as Python writes it.
 * @param {readonly DiceTerm[]} terms @param {number} modifier @param {readonly DicePart[]} [parts] */
export function makeDice(terms: readonly DiceTerm[], modifier: number, parts?: readonly DicePart[]): Dice;
/** `(n)d6`, `dice(n, 6)`, `(n)d6kh3`: dice whose count a formula computes. @param {Num} count @param {Num} sides @param {string} [suffix] */
export function dice(count: Num, sides: Num, suffix?: string): Dice;
/** `max(1, 1d8 + CON)`. @param {...(Dice | Num)} values */
export function diceMax(...values: (Dice | Num)[]): Dice;
/** `min(10, 2d6 * 2)`. @param {...(Dice | Num)} values */
export function diceMin(...values: (Dice | Num)[]): Dice;
/** @typedef {Record<string, Record<string, string>>} Names kind -> id -> display name */
/** @typedef {boolean | null} Verdict null: undecided (a fact it needs was not given) */
/** @typedef {{previous: readonly string[], fact(subject: string): number | string | null, holds(kind: string, entity: string): Verdict, skillsOf(lifepath: string): readonly string[], settingOf(lifepath: string): string | null, tagsOf(lifepath: string): readonly string[]}} Facts */
/** @param {Names} names @param {string} kind @param {string} id */
export function nameOf(names: Names, kind: string, id: string): string;
/** @typedef {{low: number, high: number, targets_low: number | null, targets_high: number | null}} RollBand */
/** A mechanic (or any entity) the JavaScript target does not emit yet: every use throws NotSupported.
 * @param {string} kind @param {string} id @param {string} why */
export function notSupported(kind: string, id: string, why: string): Readonly<{
    id: string;
    notSupported: string;
    roll: () => never;
    judge: () => never;
    chance: () => never;
    chances: () => never;
    lookup: () => never;
    rollChain: () => never;
    at: () => never;
    evaluate: () => never;
}>;
/** Years lived before `lifepath` (or after all of `previous`). @param {Catalog} catalog @param {readonly string[]} previous @param {string | null} [lifepath] */
export function ageBefore(catalog: Catalog, previous: readonly string[], lifepath?: string | null): number;
/** @param {Lifepath} lifepath @param {Facts} path @returns {Verdict} */
export function verdict(lifepath: Lifepath, path: Facts): Verdict;
/** @param {Lifepath} lifepath @param {Facts} path @param {Names} names @param {Verdict} decided */
export function reasons(lifepath: Lifepath, path: Facts, names: Names, decided: Verdict): string[];
/** The character's stock: the stock of the setting of its born lifepath (the first of `lifepaths`); null when
 * that lifepath or its setting is unknown (lifepaths.py born_stock).
 * @param {Catalog} catalog @param {Record<string, {stock: string}>} settings @param {readonly string[]} lifepaths
 * @returns {string | null} */
export function bornStock(catalog: Catalog, settings: Record<string, {
    stock: string;
}>, lifepaths: readonly string[]): string | null;
/** The common traits of the character's stock, in the stock's order: had from birth (lifepaths.py common_traits).
 * @param {Catalog} catalog @param {Record<string, {stock: string}>} settings
 * @param {Record<string, {common_traits: readonly string[]}>} stocks @param {readonly string[]} lifepaths
 * @returns {string[]} */
export function commonTraits(catalog: Catalog, settings: Record<string, {
    stock: string;
}>, stocks: Record<string, {
    common_traits: readonly string[];
}>, lifepaths: readonly string[]): string[];
/** @typedef {{lifepaths: string[], stock: string | null, age: number, mental_pool: number | null, physical_pool: number | null, mental_bonus: number, physical_bonus: number, lifepath_skill_points: number, general_skill_points: number, required_skills: string[], trait_points: number, required_traits: string[], common_traits: string[], resource_points: number, violations: string[], undecided: string[]}} Sheet */
/** @typedef {{either?: readonly string[], gender?: string | null, traits?: readonly string[], held?: Record<string, readonly string[]>, picks?: readonly string[]}} BurnOptions */
/**
 * Burn a character from lifepath ids (born lifepath first): the sheet is a plain frozen object whose
 * `JSON.stringify` is the Python sheet's `to_json()`.
 * @param {Catalog} catalog @param {Record<string, {stock: string}>} settings @param {Record<string, {common_traits: readonly string[], stat_pools: string | null}>} stocks
 * @param {Record<string, Table<any>>} tables @param {Names} names @param {readonly string[]} lifepaths @param {BurnOptions} [options]
 * @returns {Readonly<Sheet>}
 */
export function burnCharacter(catalog: Catalog, settings: Record<string, {
    stock: string;
}>, stocks: Record<string, {
    common_traits: readonly string[];
    stat_pools: string | null;
}>, tables: Record<string, Table<any>>, names: Names, lifepaths: readonly string[], options?: BurnOptions): Readonly<Sheet>;
/** Raised by an entity the JavaScript target does not emit yet (listed in NOT_SUPPORTED). */
export class NotSupported extends Error {
    /** @param {string} kind @param {string} id @param {string} why */
    constructor(kind: string, id: string, why: string);
    kind: string;
    id: string;
    why: string;
}
/** The exact odds of a roll would take more work than MAX_WORK (or read past MAX_TAIL). */
export class OddsTooCostly extends RangeError {
    /** @param {string} message */
    constructor(message: string);
}
/** A number past the rows of a table the rules leave partial: no answer to give. */
export class PastRows extends RangeError {
    /** @param {string} table @param {string} message */
    constructor(table: string, message: string);
    table: string;
}
/** A formula's `ref KIND` parameter was given a name that is no id of that kind. */
export class UnknownId extends RangeError {
    /** @param {string} kind @param {string} param @param {unknown} given @param {readonly string[]} ids */
    constructor(kind: string, param: string, given: unknown, ids: readonly string[]);
    kind: string;
    param: string;
    given: unknown;
    ids: readonly string[];
}
/** An exact fraction of two BigInts, in lowest terms with a positive denominator. */
export class Fraction {
    /** @param {Num | bigint} x */
    static of(x: Num | bigint): Fraction;
    /** @param {bigint} n @param {bigint} [d] */
    constructor(n: bigint, d?: bigint);
    /** @readonly */ readonly n: bigint;
    /** @readonly */ readonly d: bigint;
    /** @param {Fraction} o */ add(o: Fraction): Fraction;
    /** @param {Fraction} o */ sub(o: Fraction): Fraction;
    /** @param {Fraction} o */ mul(o: Fraction): Fraction;
    /** @param {Fraction} o */ div(o: Fraction): Fraction;
    neg(): Fraction;
    /** @param {Fraction} o */ cmp(o: Fraction): 0 | 1 | -1;
    /** @param {number} k */ pow(k: number): Fraction;
    isZero(): boolean;
    floor(): bigint;
    toString(): string;
    toJSON(): string;
}
export const ZERO: Fraction;
export const ONE: Fraction;
/** The marker for a value the source does not give (`unknown`); `none` is null. */
export const UNKNOWN: Readonly<{
    unknown: true;
    toJSON: () => "unknown";
    toString: () => string;
}>;
export const MAX_WORK: 2000000;
export const MAX_TAIL: 10000;
/** `count` dice of `sides` sides; `keep` of them count (the highest, or `lowest`); `explode`: a top face rolls again. */
export class DiceTerm {
    /** @param {number} count @param {number} sides @param {number | null} [keep] @param {boolean} [lowest] @param {boolean} [explode] */
    constructor(count: number, sides: number, keep?: number | null, lowest?: boolean, explode?: boolean);
    count: number;
    sides: number;
    keep: number | null;
    lowest: boolean;
    explode: boolean;
    get plain(): boolean;
    get text(): string;
    /** @param {Rng} rng @returns {[number, number[]]} the total and every face rolled, in order */
    throw(rng: Rng): [number, number[]];
}
/** A dice expression (`1d10`, `2d6+3`, `4d6kh3`, `3d6 * 5 - 1d6`): its terms, a modifier and parts added on. */
export class Dice {
    /** @param {string} text @param {readonly DiceTerm[]} terms @param {number} [modifier] @param {readonly DicePart[]} [parts] */
    constructor(text: string, terms: readonly DiceTerm[], modifier?: number, parts?: readonly DicePart[]);
    text: string;
    terms: readonly DiceTerm[];
    modifier: number;
    parts: readonly Readonly<{
        kind: "scaled";
        dice: Dice;
        factor: number;
    } | {
        kind: "divided";
        dice: Dice;
        divisor: number;
    } | {
        kind: "bounded";
        dice: Dice;
        low: number | null;
        high: number | null;
    }>[];
    get plain(): boolean;
    /** @returns {Spread} */
    spread(): Spread;
    get minimum(): number;
    /** @returns {number | null} the highest total; null when a die explodes */
    get maximum(): number | null;
    /** @param {Rng} rng @returns {{total: number, faces: number[]}} */
    throw(rng: Rng): {
        total: number;
        faces: number[];
    };
    /** @param {Rng} rng */
    roll(rng: Rng): number;
    /** The exact chance that a roll lands in low..high (null: open). @param {number | null} low @param {number | null} high */
    chance(low: number | null, high: number | null): Fraction;
    /** The chance of every total (up to `upTo`: needed when a die explodes), as [total, Fraction] pairs, ascending.
     * @param {number | null} [upTo] @returns {[number, Fraction][]} */
    distribution(upTo?: number | null): [number, Fraction][];
    /** The distribution as JSON text, the same as Python's `distribution_json`. @param {number | null} [upTo] */
    distributionJson(upTo?: number | null): string;
    /** @param {Dice | Num} other @returns {Dice} */
    plus(other: Dice | Num): Dice;
    /** @param {number} factor @returns {Dice} */
    times(factor: number): Dice;
    /** @param {number} divisor @returns {Dice} */
    dividedBy(divisor: number): Dice;
    toString(): string;
    toJSON(): string;
}
/** A formula kept as data (a table cell such as `6 - PRS`): `evaluate({PRS: 4})` computes it (names in any case).
 * `T`: what it yields. @template [T=unknown] */
export class Formula<T = unknown> {
    /** @param {string} text @param {readonly string[]} names @param {(values: Record<string, Num>) => T} compute */
    constructor(text: string, names: readonly string[], compute: (values: Record<string, Num>) => T);
    text: string;
    names: readonly string[];
    compute: (values: Record<string, Num>) => T;
    /** @param {Record<string, Num>} [values] @returns {T} */
    evaluate(values?: Record<string, Num>): T;
    toString(): string;
    toJSON(): string;
}
/** One key of a row: a range (either end open: null), a name, or a parity (1 odd, 0 even). */
export class Key {
    /** @param {number | null} low @param {number | null} high @param {string | null} [name] @param {number | null} [parity] */
    constructor(low: number | null, high: number | null, name?: string | null, parity?: number | null);
    low: number | null;
    high: number | null;
    name: string | null;
    parity: number | null;
    /** @param {number | string | Fraction} key */
    matches(key: number | string | Fraction): boolean;
    get text(): string;
}
/** @template R */
export class Row<R> {
    /** @param {readonly Key[]} keys @param {R} value @param {string | null} [source] */
    constructor(keys: readonly Key[], value: R, source?: string | null);
    keys: readonly Key[];
    value: R;
    source: string | null;
    /** @param {readonly (number | string | Fraction)[]} keys */
    matches(keys: readonly (number | string | Fraction)[]): boolean;
    /** @param {readonly (number | string | Fraction)[]} given */
    matchesGiven(given: readonly (number | string | Fraction)[]): boolean;
    get keyText(): string;
}
/** What a table is rolled on: dice per key (`d66`: tens and units), the modifiers its rows cover, the keys it is given. */
export class Roll {
    /** @param {string} text @param {readonly Dice[]} dice @param {number} [modifierLow] @param {number} [modifierHigh] @param {boolean} [tensUnits] @param {readonly string[]} [given] */
    constructor(text: string, dice: readonly Dice[], modifierLow?: number, modifierHigh?: number, tensUnits?: boolean, given?: readonly string[]);
    text: string;
    dice: readonly Dice[];
    modifierLow: number;
    modifierHigh: number;
    tensUnits: boolean;
    given: readonly string[];
    /** @param {Rng} rng @param {number} [modifier] @returns {number[]} */
    roll(rng: Rng, modifier?: number): number[];
    /** @param {number} key @param {number | null} low @param {number | null} high @param {number} [modifier] */
    chance(key: number, low: number | null, high: number | null, modifier?: number): Fraction;
    /** @param {number} key @param {number} parity @param {number} [modifier] */
    parityChance(key: number, parity: number, modifier?: number): Fraction;
    toString(): string;
}
/** `2 x treasure` in a `rolls` cell: roll on that table `times` times. */
export class Rolls {
    /** @param {number} times @param {string} table */
    constructor(times: number, table: string);
    times: number;
    table: string;
}
export const MAX_CHAIN: 1000;
/** A roll on a table: the numbers rolled, the row they land on (of that table's rows: `R`).
 * @template [R=any] @typedef {{table: string, numbers: number[], row: R, clamped: boolean, given: (number | string)[]}} Rolled */
/** @template R */
export class Table<R> {
    /** @param {{id: string, name: string, dice: Roll | null, rows: readonly Row<R>[], source?: string | null, clamp?: boolean, partial?: boolean, chains?: readonly string[], registry?: Record<string, Table<any>>, otherwise?: Row<R> | null}} spec */
    constructor(spec: {
        id: string;
        name: string;
        dice: Roll | null;
        rows: readonly Row<R>[];
        source?: string | null;
        clamp?: boolean;
        partial?: boolean;
        chains?: readonly string[];
        registry?: Record<string, Table<any>>;
        otherwise?: Row<R> | null;
    });
    id: string;
    name: string;
    dice: Roll | null;
    rows: readonly Row<R>[];
    source: string | null;
    clamp: boolean;
    partial: boolean;
    chains: readonly string[];
    registry: Record<string, Table<any>>;
    otherwise: Row<R> | null;
    /** @param {readonly (number | string | Fraction)[]} keys */
    _row(keys: readonly (number | string | Fraction)[]): Row<R> | null;
    /** The row for a number or a name per key (`lookup("III", 2)`); the otherwise row where no row has them. @param {...(number | string)} keys @returns {R} */
    lookup(...keys: (number | string)[]): R;
    /** @param {number} key @param {readonly Row<R>[]} rows @returns {[number | null, number | null]} */
    _bounds(key: number, rows: readonly Row<R>[]): [number | null, number | null];
    /** @param {Record<string, number | string>} given @returns {(number | string)[]} */
    _given(given: Record<string, number | string>): (number | string)[];
    /** Roll the dice (plus `modifier`) after the keys it is given, and look the numbers up.
     * @param {Rng} rng @param {number} [modifier] @param {Record<string, number | string>} [given] @returns {Rolled<R>} */
    roll(rng: Rng, modifier?: number, given?: Record<string, number | string>): Rolled<R>;
    /** The row a formula looks up. @param {...(number | Fraction)} numbers @returns {R} */
    at(...numbers: (number | Fraction)[]): R;
    /** @param {readonly (number | string | Fraction)[]} keys @param {number} given @returns {[R, boolean]} */
    _find(keys: readonly (number | string | Fraction)[], given: number): [R, boolean];
    /** Roll here, then on every table the row names, and so on to the end.
     * @param {Rng} rng @param {number} [modifier] @param {Record<string, number | string>} [given] @returns {Rolled[]} */
    rollChain(rng: Rng, modifier?: number, given?: Record<string, number | string>): Rolled[];
    /** Each row (for the keys given) with the exact chance a roll with this modifier lands on it; the otherwise row last.
     * @param {number} [modifier] @param {Record<string, number | string>} [given] @returns {{row: Row<R>, chance: Fraction}[]} */
    chances(modifier?: number, given?: Record<string, number | string>): {
        row: Row<R>;
        chance: Fraction;
    }[];
    /** The chances as JSON text, the same as Python's `chances_json`: [[row keys, "n/d"], ...].
     * @param {number} [modifier] @param {Record<string, number | string>} [given] */
    chancesJson(modifier?: number, given?: Record<string, number | string>): string;
}
/** @abstract */
export class Requirement {
    /** @param {Facts} facts @returns {Verdict} */
    judge(facts: Facts): Verdict;
    /** @param {Names} names @returns {string} */
    describe(names: Names): string;
}
export class TookLifepath extends Requirement {
    /** @param {string} lifepath */
    constructor(lifepath: string);
    lifepath: string;
    /** @param {Facts} facts */ judge(facts: Facts): boolean;
}
export class HasTrait extends Requirement {
    /** @param {string} trait */
    constructor(trait: string);
    trait: string;
}
export class HasSkill extends Requirement {
    /** @param {string} skill */
    constructor(skill: string);
    skill: string;
    /** @param {Facts} facts */ judge(facts: Facts): boolean;
}
export class Holds extends Requirement {
    /** @param {string} kind @param {string} entity */
    constructor(kind: string, entity: string);
    kind: string;
    entity: string;
}
export class Previous extends Requirement {
    /** @param {string} lifepath */
    constructor(lifepath: string);
    lifepath: string;
    /** @param {Facts} facts */ judge(facts: Facts): boolean;
}
export class CountOf extends Requirement {
    /** @param {number} count @param {string | null} [setting] @param {string | null} [tag] @param {readonly string[]} [lifepaths] */
    constructor(count: number, setting?: string | null, tag?: string | null, lifepaths?: readonly string[]);
    count: number;
    setting: string | null;
    tag: string | null;
    lifepaths: readonly string[];
    /** @param {string} lifepath @param {Facts} facts */
    _selects(lifepath: string, facts: Facts): boolean;
    /** @param {Facts} facts */ judge(facts: Facts): boolean;
}
/** `age > 50`, `position in 2..3`, `gender = female`. */
export class Condition extends Requirement {
    /** @param {string} subject @param {string} [op] @param {number | string | null} [value] @param {number | null} [low] @param {number | null} [high] */
    constructor(subject: string, op?: string, value?: number | string | null, low?: number | null, high?: number | null);
    subject: string;
    op: string;
    value: string | number | null;
    low: number | null;
    high: number | null;
}
export class GmPermission extends Requirement {
    /** @param {Facts} facts */ judge(facts: Facts): boolean;
}
export class AllOf extends Junction {
    /** @param {readonly Requirement[]} items */
    constructor(items: readonly Requirement[]);
}
export class AnyOf extends Junction {
    /** @param {readonly Requirement[]} items */
    constructor(items: readonly Requirement[]);
}
export class Not extends Requirement {
    /** @param {Requirement} item */
    constructor(item: Requirement);
    item: Requirement;
}
/** What a `choices of ref KIND` field gives: the ids `fixed`, and picks among others. */
export class Offer {
    /** @param {readonly string[]} fixed @param {readonly {count: number, options: readonly string[]}[]} picks */
    constructor(fixed: readonly string[], picks: readonly {
        count: number;
        options: readonly string[];
    }[]);
    fixed: readonly string[];
    picks: {
        count: number;
        options: string[];
    }[];
    get options(): string[];
    /** @param {...readonly string[]} chosen */
    choose(...chosen: (readonly string[])[]): string[];
}
/** A check a field names (`check END 5+`): its mechanic, the modifier (a formula) and the target. */
export class Check {
    /** @param {CheckMechanic} mechanic @param {Formula} modifier @param {number} target */
    constructor(mechanic: CheckMechanic, modifier: Formula, target: number);
    mechanic: CheckMechanic;
    modifier: Formula<any>;
    target: number;
    /** @param {Record<string, Num>} values */
    _modifier(values: Record<string, Num>): number;
    /** @param {Rng} rng @param {Record<string, Num>} [values] */
    roll(rng: Rng, values?: Record<string, Num>): Readonly<{
        numbers: number[];
        total: number;
        target: number;
        success: boolean;
        effect: number;
    }>;
    /** @param {Record<string, Num>} [values] */
    chance(values?: Record<string, Num>): Fraction;
    toString(): string;
}
/** A pool of dice against a target number: each die at or over it is a success. */
export class PoolMechanic {
    /** @param {string} id @param {string} name @param {number} sides @param {{stack_on?: number | null, fumble_ones?: number | null}} [rules] */
    constructor(id: string, name: string, sides: number, rules?: {
        stack_on?: number | null;
        fumble_ones?: number | null;
    });
    id: string;
    name: string;
    sides: number;
    stackOn: number | null;
    fumbleOnes: number | null;
    /** Read dice already rolled; a stacked die is given as its faces. @param {readonly (number | readonly number[])[]} dice @param {number} target */
    judge(dice: readonly (number | readonly number[])[], target: number): Readonly<{
        totals: number[];
        successes: number;
        fumble: boolean;
    }>;
    /** @param {Rng} rng @param {number} dice @param {number} target */
    roll(rng: Rng, dice: number, target: number): Readonly<{
        totals: number[];
        successes: number;
        fumble: boolean;
    }>;
    /** The exact chance that one die reaches `target`, stacking where it may. @param {number} target */
    successChance(target: number): Fraction;
    /** @param {number} dice @param {number} target @returns {[number, Fraction][]} */
    successChances(dice: number, target: number): [number, Fraction][];
}
/** Dice added to a base; with one die `explode_on` rolls again and adds, `fumble_on` subtracts; `floor` bounds it. */
export class TotalMechanic {
    /** @param {string} id @param {string} name @param {Dice} dice @param {{explode_on?: number | null, fumble_on?: number | null, floor?: number | null}} [rules] */
    constructor(id: string, name: string, dice: Dice, rules?: {
        explode_on?: number | null;
        fumble_on?: number | null;
        floor?: number | null;
    });
    id: string;
    name: string;
    dice: Dice;
    explodeOn: number | null;
    fumbleOn: number | null;
    floor: number | null;
    get sides(): number;
    /** @param {readonly number[]} faces @param {number} [base] */
    total(faces: readonly number[], base?: number): number;
    /** @param {readonly number[]} faces */
    _chain(faces: readonly number[]): number;
    /** @param {Rng} rng @param {number} [base] @returns {[number, number[]]} */
    roll(rng: Rng, base?: number): [number, number[]];
}
/** Dice plus a modifier against a target number: made when the total reaches it. */
export class CheckMechanic {
    /** @param {string} id @param {string} name @param {Dice} dice */
    constructor(id: string, name: string, dice: Dice);
    id: string;
    name: string;
    dice: Dice;
    /** @param {readonly number[]} faces @param {number} modifier @param {number} target */
    judge(faces: readonly number[], modifier: number, target: number): Readonly<{
        numbers: number[];
        total: number;
        target: number;
        success: boolean;
        effect: number;
    }>;
    /** @param {Rng} rng @param {number} [modifier] @param {number} [target] */
    roll(rng: Rng, modifier?: number, target?: number): Readonly<{
        numbers: number[];
        total: number;
        target: number;
        success: boolean;
        effect: number;
    }>;
    /** @param {number} modifier @param {number} target */
    chance(modifier: number, target: number): Fraction;
}
/** Two sides each roll the dice plus their modifier; the higher total wins, by the difference. */
export class ContestMechanic {
    /** @param {string} id @param {string} name @param {Dice} dice */
    constructor(id: string, name: string, dice: Dice);
    id: string;
    name: string;
    dice: Dice;
    /** @param {number} first @param {number} second */
    judge(first: number, second: number): Readonly<{
        first: number;
        second: number;
        winner: 0 | 1 | null;
        margin: number;
    }>;
    /** @param {Rng} rng @param {number} [first] @param {number} [second] */
    roll(rng: Rng, first?: number, second?: number): Readonly<{
        first: number;
        second: number;
        winner: 0 | 1 | null;
        margin: number;
    }>;
    /** The exact chance that the first side wins outright. @param {number} [first] @param {number} [second] */
    chance(first?: number, second?: number): Fraction;
}
/** Roll a number of one kind of die and read the highest (a Blades in the Dark action roll): `outcomes` are
 * the bands the highest die falls in; `critical` dice showing the top face read as "critical"; `zeroDice`:
 * with no dice, roll that many and read the lowest. */
export class HighestMechanic {
    /** @param {string} id @param {string} name @param {number} sides @param {readonly {name: string, low: number, high: number}[]} outcomes @param {number | null} [critical] @param {number | null} [zeroDice] */
    constructor(id: string, name: string, sides: number, outcomes: readonly {
        name: string;
        low: number;
        high: number;
    }[], critical?: number | null, zeroDice?: number | null);
    id: string;
    name: string;
    sides: number;
    outcomes: {
        name: string;
        low: number;
        high: number;
    }[];
    critical: number | null;
    zeroDice: number | null;
    get names(): string[];
    /** @param {number} face */
    _band(face: number): string;
    /** @param {number} dice */
    _rolled(dice: number): number;
    /** @param {readonly number[]} faces @param {number | null} [dice] */
    judge(faces: readonly number[], dice?: number | null): Readonly<{
        dice: number[];
        read: number;
        outcome: string;
        critical: boolean;
    }>;
    /** @param {Rng} rng @param {number} dice */
    roll(rng: Rng, dice: number): Readonly<{
        dice: number[];
        read: number;
        outcome: string;
        critical: boolean;
    }>;
    /** The exact chance of each outcome with a pool of `dice`, in the order of `names`. @param {number} dice @returns {[string, Fraction][]} */
    chances(dice: number): [string, Fraction][];
}
/** Roll dice against a target from below: a total at most the target succeeds, graded by `grades` (the
 * hardest met); a total in `criticals` is a critical, in `fumbles` a fumble, where the band's targets allow. */
export class UnderMechanic {
    /** @param {string} id @param {string} name @param {Dice} dice @param {{grades?: readonly {divide: number, outcome: string}[], criticals?: readonly RollBand[], fumbles?: readonly RollBand[]}} [rules] */
    constructor(id: string, name: string, dice: Dice, rules?: {
        grades?: readonly {
            divide: number;
            outcome: string;
        }[];
        criticals?: readonly RollBand[];
        fumbles?: readonly RollBand[];
    });
    id: string;
    name: string;
    dice: Dice;
    grades: {
        divide: number;
        outcome: string;
    }[];
    criticals: {
        low: number;
        high: number;
        targets_low: number | null;
        targets_high: number | null;
    }[];
    fumbles: {
        low: number;
        high: number;
        targets_low: number | null;
        targets_high: number | null;
    }[];
    get names(): string[];
    /** @param {number} total @param {number} target @returns {[string, boolean]} */
    read(total: number, target: number): [string, boolean];
    /** @param {readonly number[]} faces @param {number} target */
    judge(faces: readonly number[], target: number): Readonly<{
        dice: number[];
        total: number;
        target: number;
        outcome: string;
        success: boolean;
        margin: number;
    }>;
    /** @param {Rng} rng @param {number} target */
    roll(rng: Rng, target: number): Readonly<{
        dice: number[];
        total: number;
        target: number;
        outcome: string;
        success: boolean;
        margin: number;
    }>;
    _distribution(): [number, Fraction][];
    /** The exact chance of each outcome against `target`, in the order of `names`. @param {number} target @returns {[string, Fraction][]} */
    chances(target: number): [string, Fraction][];
    /** The exact chance of a success of any grade against `target`. @param {number} target */
    chance(target: number): Fraction;
}
/** Lookups over the lifepaths that requirements need, built once per module. */
export class Catalog {
    /** @param {Record<string, Lifepath>} lifepaths */
    constructor(lifepaths: Record<string, Lifepath>);
    lifepaths: Record<string, Lifepath>;
    /** @type {Record<string, string>} */ settings: Record<string, string>;
    /** @type {Record<string, readonly string[]>} */ tags: Record<string, readonly string[]>;
    /** @type {Record<string, readonly string[]>} */ skills: Record<string, readonly string[]>;
    /** @type {Record<string, readonly string[]>} */ traits: Record<string, readonly string[]>;
    /** The id of the lifepath written as an id, a display name or an alias. @param {string} text */
    find(text: string): string;
}
/** @typedef {{traits?: readonly string[], age?: number | null, lifepaths?: number | null, gender?: string | null, held?: Record<string, readonly string[]>}} PathOptions */
/** The facts a requirement of `lifepath`, taken after `previous`, is judged on. @implements {Facts} */
export class PathFacts implements Facts {
    /** @param {Catalog} catalog @param {string} lifepath @param {readonly string[]} previous @param {PathOptions} [options] */
    constructor(catalog: Catalog, lifepath: string, previous: readonly string[], options?: PathOptions);
    catalog: Catalog;
    lifepath: string;
    previous: readonly string[];
    chosenTraits: Set<string>;
    age: number | null;
    ageAtEntry: number;
    lifepaths: number | null;
    gender: string | null;
    held: Record<string, readonly string[]>;
    /** @param {string} subject @returns {number | string | null} */
    fact(subject: string): number | string | null;
    /** @param {string} kind @param {string} entity @returns {Verdict} */
    holds(kind: string, entity: string): Verdict;
    /** @param {string} lifepath */ skillsOf(lifepath: string): readonly string[];
    /** @param {string} lifepath */ settingOf(lifepath: string): string;
    /** @param {string} lifepath */ tagsOf(lifepath: string): readonly string[];
}
/**
 * a function giving a number in [0, 1), as Math.random does
 */
export type Rng = () => number;
/**
 * a formula's number: whole, a truth value (1 or 0), or exact
 */
export type Num = number | boolean | Fraction;
/**
 * totals -> ways, ascending
 */
export type Finite = {
    finite: true;
    ways: [number, bigint][];
    outcomes: bigint;
};
export type Series = {
    finite: false;
    low: number;
    top: Fraction[];
    bottom: Fraction[];
    known: Fraction[];
};
export type Spread = Finite | Series;
/**
 * kind -> id -> display name
 */
export type Names = Record<string, Record<string, string>>;
/**
 * null: undecided (a fact it needs was not given)
 */
export type Verdict = boolean | null;
export type Facts = {
    previous: readonly string[];
    fact(subject: string): number | string | null;
    holds(kind: string, entity: string): Verdict;
    skillsOf(lifepath: string): readonly string[];
    settingOf(lifepath: string): string | null;
    tagsOf(lifepath: string): readonly string[];
};
export type RollBand = {
    low: number;
    high: number;
    targets_low: number | null;
    targets_high: number | null;
};
export type Lifepath = {
    id: string;
    name: string;
    setting: string;
    born: boolean;
    time: number;
    resources: number;
    stat: {
        mental: number;
        physical: number;
        either: number;
    } | null;
    leads: readonly string[];
    skills: {
        points: number;
        options: readonly (readonly string[])[];
    } | null;
    general: number | null;
    traits: {
        points: number;
        options: readonly (readonly string[])[];
    } | null;
    requires: Requirement | null;
    restrictions: Requirement | null;
    tags: readonly string[];
    aliases: readonly string[];
};
export type Sheet = {
    lifepaths: string[];
    stock: string | null;
    age: number;
    mental_pool: number | null;
    physical_pool: number | null;
    mental_bonus: number;
    physical_bonus: number;
    lifepath_skill_points: number;
    general_skill_points: number;
    required_skills: string[];
    trait_points: number;
    required_traits: string[];
    common_traits: string[];
    resource_points: number;
    violations: string[];
    undecided: string[];
};
export type BurnOptions = {
    either?: readonly string[];
    gender?: string | null;
    traits?: readonly string[];
    held?: Record<string, readonly string[]>;
    picks?: readonly string[];
};
export type DicePart = {
    kind: "scaled";
    dice: Dice;
    factor: number;
} | {
    kind: "divided";
    dice: Dice;
    divisor: number;
} | {
    kind: "bounded";
    dice: Dice;
    low: number | null;
    high: number | null;
};
/**
 * A roll on a table: the numbers rolled, the row they land on (of that table's rows: `R`).
 */
export type Rolled<R = any> = {
    table: string;
    numbers: number[];
    row: R;
    clamped: boolean;
    given: (number | string)[];
};
export type PathOptions = {
    traits?: readonly string[];
    age?: number | null;
    lifepaths?: number | null;
    gender?: string | null;
    held?: Record<string, readonly string[]>;
};
declare class Junction extends Requirement {
    /** @param {readonly Requirement[]} items @param {boolean} decisive @param {string} word */
    constructor(items: readonly Requirement[], decisive: boolean, word: string);
    items: readonly Requirement[];
    decisive: boolean;
    word: string;
}
export {};
