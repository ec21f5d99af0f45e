// @ts-check
// The runtime every generated `rules.js` carries, copied in verbatim (no dependencies, no network): exact
// fractions, dice and their exact odds, tables, formulas kept as data, requirements, mechanics and burning.
// It mirrors rulesdsl/runtime/ (core.py, odds.py, lifepaths.py) in JavaScript's spelling, and gives the same
// JSON for the same question (tests/test_javascript.py compares the two).
//
// Numbers: a whole number is a JS number (a result past Number.MAX_SAFE_INTEGER is a RangeError, never a
// rounded value); anything else is an exact `Fraction` of two BigInts, whose JSON form is the string
// "numerator/denominator" in lowest terms ("1/6"; a whole chance is "1/1" or "0/1").
// Random numbers: every roll takes `rng`, a function returning a number in [0, 1) like Math.random;
// `seeded(seed)` makes a reproducible one.

/** Raised by an entity the JavaScript target does not emit yet (listed in NOT_SUPPORTED). */
export class NotSupported extends Error {
  /** @param {string} kind @param {string} id @param {string} why */
  constructor(kind, id, why) {
    super(`${kind} ${id} is not supported in JavaScript yet: ${why}`);
    this.name = "NotSupported";
    this.kind = kind;
    this.id = id;
    this.why = why;
  }
}

/** The exact odds of a roll would take more work than MAX_WORK (or read past MAX_TAIL). */
export class OddsTooCostly extends RangeError {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = "OddsTooCostly";
  }
}

/** A number past the rows of a table the rules leave partial: no answer to give. */
export class PastRows extends RangeError {
  /** @param {string} table @param {string} message */
  constructor(table, message) {
    super(message);
    this.name = "PastRows";
    this.table = table;
  }
}

/** A formula's `ref KIND` parameter was given a name that is no id of that kind. */
export class UnknownId extends RangeError {
  /** @param {string} kind @param {string} param @param {unknown} given @param {readonly string[]} ids */
  constructor(kind, param, given, ids) {
    const shown = ids.slice(0, 12).join(", ") + (ids.length > 12 ? ", ..." : "");
    super(`${param}=${JSON.stringify(given)} is no ${kind}: give the id of one (${shown || "there are none"})`);
    this.name = "UnknownId";
    this.kind = kind;
    this.param = param;
    this.given = given;
    this.ids = ids;
  }
}

// ---------------------------------------------------------------- random numbers

/** @typedef {() => number} Rng a function giving a number in [0, 1), as Math.random does */

/**
 * A reproducible generator (sfc32, seeded through splitmix32) from a whole-number seed.
 * @param {number} seed
 * @returns {Rng}
 */
export function seeded(seed) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x9e3779b9) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
  let a = next(), b = next(), c = next(), d = next();
  return () => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = ((c << 21) | (c >>> 11)) >>> 0;
    c = (c + t) >>> 0;
    return t / 4294967296;
  };
}

/** @param {Rng} rng @param {number} low @param {number} high */
export function randint(rng, low, high) {
  return low + Math.floor(rng() * (high - low + 1));
}

// ---------------------------------------------------------------- exact numbers

/** @param {bigint} a @param {bigint} b @returns {bigint} */
function gcd(a, b) {
  a = a < 0n ? -a : a;
  b = b < 0n ? -b : b;
  while (b) [a, b] = [b, a % b];
  return a;
}

/** @param {bigint} n @param {bigint} d @returns {bigint} rounded towards minus infinity */
function floorDiv(n, d) {
  const q = n / d;
  return (n % d !== 0n && (n < 0n) !== (d < 0n)) ? q - 1n : q;
}

/** An exact fraction of two BigInts, in lowest terms with a positive denominator. */
export class Fraction {
  /** @param {bigint} n @param {bigint} [d] */
  constructor(n, d = 1n) {
    if (d === 0n) throw new RangeError("division by zero");
    if (d < 0n) [n, d] = [-n, -d];
    const g = gcd(n, d) || 1n;
    /** @readonly */ this.n = n / g;
    /** @readonly */ this.d = d / g;
    Object.freeze(this);
  }
  /** @param {Num | bigint} x */
  static of(x) {
    if (x instanceof Fraction) return x;
    if (typeof x === "bigint") return new Fraction(x);
    if (typeof x === "boolean") return new Fraction(x ? 1n : 0n);
    if (!Number.isInteger(x)) throw new TypeError(`${x} is not a whole number or a Fraction`);
    return new Fraction(BigInt(x));
  }
  /** @param {Fraction} o */ add(o) { return new Fraction(this.n * o.d + o.n * this.d, this.d * o.d); }
  /** @param {Fraction} o */ sub(o) { return new Fraction(this.n * o.d - o.n * this.d, this.d * o.d); }
  /** @param {Fraction} o */ mul(o) { return new Fraction(this.n * o.n, this.d * o.d); }
  /** @param {Fraction} o */ div(o) { return new Fraction(this.n * o.d, this.d * o.n); }
  neg() { return new Fraction(-this.n, this.d); }
  /** @param {Fraction} o */ cmp(o) { const x = this.n * o.d - o.n * this.d; return x < 0n ? -1 : x > 0n ? 1 : 0; }
  /** @param {number} k */ pow(k) { return new Fraction(this.n ** BigInt(k), this.d ** BigInt(k)); }
  isZero() { return this.n === 0n; }
  floor() { return floorDiv(this.n, this.d); }
  toString() { return `${this.n}/${this.d}`; }
  toJSON() { return this.toString(); }
}

export const ZERO = new Fraction(0n);
export const ONE = new Fraction(1n);

/** @typedef {number | boolean | Fraction} Num a formula's number: whole, a truth value (1 or 0), or exact */

/** @param {bigint} n a whole number as a JS number, or a RangeError past the safe ones */
function whole(n) {
  if (n > BigInt(Number.MAX_SAFE_INTEGER) || n < -BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new RangeError(`${n} is past the whole numbers JavaScript holds exactly`);
  }
  return Number(n);
}

/** @param {number} n */
function safe(n) {
  if (!Number.isSafeInteger(n)) throw new RangeError(`${n} is past the whole numbers JavaScript holds exactly`);
  return n;
}

/** @param {Num} x @returns {number | Fraction} */
function numeric(x) {
  return typeof x === "boolean" ? (x ? 1 : 0) : x;
}

/** @param {unknown} x @returns {x is Dice} */
function isDice(x) {
  return x instanceof Dice;
}

/** @param {bigint} n @param {bigint} d */
export function frac(n, d) {
  return new Fraction(n, d);
}

/** @param {any} a @param {any} b @returns {any} `a + b`: numbers exactly, dice as dice algebra */
export function add(a, b) {
  if (isDice(a)) return a.plus(b);
  if (isDice(b)) return b.plus(a);
  const x = numeric(a), y = numeric(b);
  if (typeof x === "number" && typeof y === "number") return safe(x + y);
  return Fraction.of(x).add(Fraction.of(y));
}

/** @param {any} a @param {any} b @returns {any} */
export function sub(a, b) {
  if (isDice(a) || isDice(b)) return add(a, neg(b));
  const x = numeric(a), y = numeric(b);
  if (typeof x === "number" && typeof y === "number") return safe(x - y);
  return Fraction.of(x).sub(Fraction.of(y));
}

/** @param {any} a @param {any} b @returns {any} */
export function mul(a, b) {
  if (isDice(a)) return a.times(wholeOf(b, "a roll's factor"));
  if (isDice(b)) return b.times(wholeOf(a, "a roll's factor"));
  const x = numeric(a), y = numeric(b);
  if (typeof x === "number" && typeof y === "number") return safe(x * y);
  return Fraction.of(x).mul(Fraction.of(y));
}

/** @param {any} a @returns {any} */
export function neg(a) {
  if (isDice(a)) return a.times(-1);
  const x = numeric(a);
  return typeof x === "number" ? (x === 0 ? 0 : -x) : x.neg();
}

/** Exact division: formulas never lose precision before an explicit floor, ceil or round. @param {Num} a @param {Num} b */
export function div(a, b) {
  return Fraction.of(numeric(a)).div(Fraction.of(numeric(b)));
}

/** `1d6 / 2`: a roll's totals divided, rounded down. @param {any} a @param {any} b @returns {any} */
export function floordiv(a, b) {
  if (isDice(a)) return a.dividedBy(wholeOf(b, "a roll's divisor"));
  return floor(div(a, b));
}

/** @param {Num} a @param {Num} b @returns {number} -1, 0 or 1 */
export function cmp(a, b) {
  const x = numeric(a), y = numeric(b);
  if (typeof x === "number" && typeof y === "number") return x < y ? -1 : x > y ? 1 : 0;
  return Fraction.of(x).cmp(Fraction.of(y));
}

/** @param {string} op @param {any} a @param {any} b @returns {boolean} */
export function compare(op, a, b) {
  if (typeof a === "string" || typeof b === "string") {
    if (op === "=") return a === b;
    if (op === "!=") return a !== b;
    return false;
  }
  const c = cmp(a, b);
  switch (op) {
    case "=": return c === 0;
    case "!=": return c !== 0;
    case "<": return c < 0;
    case "<=": return c <= 0;
    case ">": return c > 0;
    case ">=": return c >= 0;
    default: throw new TypeError(`no comparison ${op}`);
  }
}

/** Python's truth of a formula's value: a number is true unless 0; dice are true. @param {any} x */
export function truth(x) {
  if (typeof x === "boolean") return x;
  if (typeof x === "number") return x !== 0;
  if (x instanceof Fraction) return !x.isZero();
  return x !== null && x !== undefined;
}

/** @param {Num} x @returns {number} */
export function floor(x) {
  const v = numeric(x);
  return typeof v === "number" ? v : whole(v.floor());
}

/** @param {Num} x @returns {number} */
export function ceil(x) {
  const v = numeric(x);
  return typeof v === "number" ? v : whole(-v.neg().floor());
}

/** Rounding as a table does it: halves go up. @param {Num} x @returns {number} */
export function round(x) {
  return floor(add(x, new Fraction(1n, 2n)));
}

/** @param {Num} x @returns {number | Fraction} */
export function abs(x) {
  const v = numeric(x);
  return cmp(v, 0) < 0 ? neg(v) : v;
}

/** `min` of numbers: the first least one, as given. @param {...Num} xs @returns {Num} */
export function min(...xs) {
  return xs.reduce((best, x) => (cmp(x, best) < 0 ? x : best));
}

/** @param {...Num} xs @returns {Num} */
export function max(...xs) {
  return xs.reduce((best, x) => (cmp(x, best) > 0 ? x : best));
}

/** @param {any} value @param {string} what @returns {number} */
export function wholeOf(value, what) {
  const v = typeof value === "boolean" ? value : numeric(value);
  if (typeof v === "number" && Number.isInteger(v)) return v;
  if (v instanceof Fraction && v.d === 1n) return whole(v.n);
  throw new RangeError(`${what} is ${value}, not a whole number`);
}

/** `given`, when it is the id of an entity of `kind`. @param {string} kind @param {string} param @param {unknown} given @param {readonly string[]} ids */
export function knownId(kind, param, given, ids) {
  if (typeof given !== "string" || !ids.includes(given)) throw new UnknownId(kind, param, given, ids);
  return given;
}

/** A formula's arguments, in the order of `keys`: each must be given, and nothing else.
 * @param {Record<string, any>} given @param {readonly string[]} keys @param {string} formula @returns {any[]} */
export function argsOf(given, keys, formula) {
  const unknown = Object.keys(given ?? {}).filter((k) => !keys.includes(k));
  if (unknown.length) throw new TypeError(`${formula} takes no ${unknown.join(", ")} (it takes ${keys.join(", ") || "nothing"})`);
  const missing = keys.filter((k) => !Object.hasOwn(given ?? {}, k));
  if (missing.length) throw new TypeError(`${formula} needs ${missing.join(", ")}`);
  return keys.map((k) => given[k]);
}

/** An attribute's value by id, which a derived attribute needs. @param {Record<string, any>} values @param {string} id */
export function attribute(values, id) {
  if (!Object.hasOwn(values, id)) throw new TypeError(`no value given for the attribute ${id}`);
  return values[id];
}

/** A value as JSON text, the same in Python (`json_value`): a whole number as a number, a fraction as
 * "n/d", a truth value, dice as their text. @param {unknown} value */
export function jsonValue(value) {
  if (value instanceof Fraction) return value.d === 1n ? String(whole(value.n)) : JSON.stringify(value.toString());
  if (value instanceof Dice) return JSON.stringify(value.text);
  return JSON.stringify(value);
}

/** `Object.freeze`, all the way down through plain objects and arrays. @template T @param {T} value @returns {T} */
export function freeze(value) {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) freeze(inner);
  }
  return value;
}

/** The marker for a value the source does not give (`unknown`); `none` is null. */
export const UNKNOWN = Object.freeze({ unknown: true, toJSON: () => "unknown", toString: () => "unknown" });

// ---------------------------------------------------------------- names

// Full case folding, as Python's str.casefold: the characters whose folding is not their lowercase, as
// "code:folded,..." in hex (a folding of several characters joined by "."). Unicode 14 (Python 3.11);
// tests/test_javascript.py holds casefold to Python's for every character both know.
const FOLDINGS = "b5:3bc,df:73.73,149:2bc.6e,17f:73,1f0:6a.30c,345:3b9,390:3b9.308.301,3b0:3c5.308.301,3c2:3c3,3d0:3b2,3d1:3b8,3d5:3c6,3d6:3c0,3f0:3ba,3f1:3c1,3f5:3b5,587:565.582,13a0:13a0,13a1:13a1,13a2:13a2,13a3:13a3,13a4:13a4,13a5:13a5,13a6:13a6,13a7:13a7,13a8:13a8,13a9:13a9,13aa:13aa,13ab:13ab,13ac:13ac,13ad:13ad,13ae:13ae,13af:13af,13b0:13b0,13b1:13b1,13b2:13b2,13b3:13b3,13b4:13b4,13b5:13b5,13b6:13b6,13b7:13b7,13b8:13b8,13b9:13b9,13ba:13ba,13bb:13bb,13bc:13bc,13bd:13bd,13be:13be,13bf:13bf,13c0:13c0,13c1:13c1,13c2:13c2,13c3:13c3,13c4:13c4,13c5:13c5,13c6:13c6,13c7:13c7,13c8:13c8,13c9:13c9,13ca:13ca,13cb:13cb,13cc:13cc,13cd:13cd,13ce:13ce,13cf:13cf,13d0:13d0,13d1:13d1,13d2:13d2,13d3:13d3,13d4:13d4,13d5:13d5,13d6:13d6,13d7:13d7,13d8:13d8,13d9:13d9,13da:13da,13db:13db,13dc:13dc,13dd:13dd,13de:13de,13df:13df,13e0:13e0,13e1:13e1,13e2:13e2,13e3:13e3,13e4:13e4,13e5:13e5,13e6:13e6,13e7:13e7,13e8:13e8,13e9:13e9,13ea:13ea,13eb:13eb,13ec:13ec,13ed:13ed,13ee:13ee,13ef:13ef,13f0:13f0,13f1:13f1,13f2:13f2,13f3:13f3,13f4:13f4,13f5:13f5,13f8:13f0,13f9:13f1,13fa:13f2,13fb:13f3,13fc:13f4,13fd:13f5,1c80:432,1c81:434,1c82:43e,1c83:441,1c84:442,1c85:442,1c86:44a,1c87:463,1c88:a64b,1e96:68.331,1e97:74.308,1e98:77.30a,1e99:79.30a,1e9a:61.2be,1e9b:1e61,1e9e:73.73,1f50:3c5.313,1f52:3c5.313.300,1f54:3c5.313.301,1f56:3c5.313.342,1f80:1f00.3b9,1f81:1f01.3b9,1f82:1f02.3b9,1f83:1f03.3b9,1f84:1f04.3b9,1f85:1f05.3b9,1f86:1f06.3b9,1f87:1f07.3b9,1f88:1f00.3b9,1f89:1f01.3b9,1f8a:1f02.3b9,1f8b:1f03.3b9,1f8c:1f04.3b9,1f8d:1f05.3b9,1f8e:1f06.3b9,1f8f:1f07.3b9,1f90:1f20.3b9,1f91:1f21.3b9,1f92:1f22.3b9,1f93:1f23.3b9,1f94:1f24.3b9,1f95:1f25.3b9,1f96:1f26.3b9,1f97:1f27.3b9,1f98:1f20.3b9,1f99:1f21.3b9,1f9a:1f22.3b9,1f9b:1f23.3b9,1f9c:1f24.3b9,1f9d:1f25.3b9,1f9e:1f26.3b9,1f9f:1f27.3b9,1fa0:1f60.3b9,1fa1:1f61.3b9,1fa2:1f62.3b9,1fa3:1f63.3b9,1fa4:1f64.3b9,1fa5:1f65.3b9,1fa6:1f66.3b9,1fa7:1f67.3b9,1fa8:1f60.3b9,1fa9:1f61.3b9,1faa:1f62.3b9,1fab:1f63.3b9,1fac:1f64.3b9,1fad:1f65.3b9,1fae:1f66.3b9,1faf:1f67.3b9,1fb2:1f70.3b9,1fb3:3b1.3b9,1fb4:3ac.3b9,1fb6:3b1.342,1fb7:3b1.342.3b9,1fbc:3b1.3b9,1fbe:3b9,1fc2:1f74.3b9,1fc3:3b7.3b9,1fc4:3ae.3b9,1fc6:3b7.342,1fc7:3b7.342.3b9,1fcc:3b7.3b9,1fd2:3b9.308.300,1fd3:3b9.308.301,1fd6:3b9.342,1fd7:3b9.308.342,1fe2:3c5.308.300,1fe3:3c5.308.301,1fe4:3c1.313,1fe6:3c5.342,1fe7:3c5.308.342,1ff2:1f7c.3b9,1ff3:3c9.3b9,1ff4:3ce.3b9,1ff6:3c9.342,1ff7:3c9.342.3b9,1ffc:3c9.3b9,ab70:13a0,ab71:13a1,ab72:13a2,ab73:13a3,ab74:13a4,ab75:13a5,ab76:13a6,ab77:13a7,ab78:13a8,ab79:13a9,ab7a:13aa,ab7b:13ab,ab7c:13ac,ab7d:13ad,ab7e:13ae,ab7f:13af,ab80:13b0,ab81:13b1,ab82:13b2,ab83:13b3,ab84:13b4,ab85:13b5,ab86:13b6,ab87:13b7,ab88:13b8,ab89:13b9,ab8a:13ba,ab8b:13bb,ab8c:13bc,ab8d:13bd,ab8e:13be,ab8f:13bf,ab90:13c0,ab91:13c1,ab92:13c2,ab93:13c3,ab94:13c4,ab95:13c5,ab96:13c6,ab97:13c7,ab98:13c8,ab99:13c9,ab9a:13ca,ab9b:13cb,ab9c:13cc,ab9d:13cd,ab9e:13ce,ab9f:13cf,aba0:13d0,aba1:13d1,aba2:13d2,aba3:13d3,aba4:13d4,aba5:13d5,aba6:13d6,aba7:13d7,aba8:13d8,aba9:13d9,abaa:13da,abab:13db,abac:13dc,abad:13dd,abae:13de,abaf:13df,abb0:13e0,abb1:13e1,abb2:13e2,abb3:13e3,abb4:13e4,abb5:13e5,abb6:13e6,abb7:13e7,abb8:13e8,abb9:13e9,abba:13ea,abbb:13eb,abbc:13ec,abbd:13ed,abbe:13ee,abbf:13ef,fb00:66.66,fb01:66.69,fb02:66.6c,fb03:66.66.69,fb04:66.66.6c,fb05:73.74,fb06:73.74,fb13:574.576,fb14:574.565,fb15:574.56b,fb16:57e.576,fb17:574.56d";
/** @type {Map<string, string> | null} */
let foldings = null;

/** Python's `str.casefold`: lowercase, except where full case folding differs (`ß` -> `ss`, `ς` -> `σ`). @param {string} text */
export function casefold(text) {
  if (foldings === null) {
    /** @param {string} hex */
    const char = (hex) => String.fromCodePoint(parseInt(hex, 16));
    foldings = new Map(FOLDINGS.split(",").map((pair) => {
      const [from, to] = pair.split(":");
      return [char(from), to.split(".").map(char).join("")];
    }));
  }
  let folded = "";
  for (const c of text) folded += foldings.get(c) ?? c.toLowerCase();
  return folded;
}

/** The id a display name gets: `"Sergeant-at-Arms"` -> `sergeant_at_arms` (accents dropped). @param {string} text */
export function slug(text) {
  const ascii = text.normalize("NFKD").replace(/[^\x00-\x7f]/g, "");
  const result = ascii.toLowerCase().replace(/[^a-z0-9]+/g, "_").replace(/^_+|_+$/g, "");
  if (!result) {
    const letters = [...casefold(text.normalize("NFKC"))].filter((c) => /[\p{L}\p{N}]/u.test(c));
    return letters.length ? "u" + letters.map((c) => (c.codePointAt(0) ?? 0).toString(16)).join("_") : "_";
  }
  return /^[0-9]/.test(result) ? "n" + result : result;
}

// ---------------------------------------------------------------- exact odds (odds.py)

export const MAX_WORK = 2_000_000;
export const MAX_TAIL = 10_000;

/** @param {number} work */
function charge(work) {
  if (work > MAX_WORK) {
    throw new OddsTooCostly(`the exact odds of this roll take about ${work.toLocaleString("en")} steps; at most ${MAX_WORK.toLocaleString("en")}`);
  }
}

/** @typedef {{finite: true, ways: [number, bigint][], outcomes: bigint}} Finite totals -> ways, ascending */
/** @typedef {{finite: false, low: number, top: Fraction[], bottom: Fraction[], known: Fraction[]}} Series */
/** @typedef {Finite | Series} Spread */

/** @param {Map<number, bigint>} counts @param {bigint} outcomes @returns {Finite} */
function finite(counts, outcomes) {
  const ways = /** @type {[number, bigint][]} */ ([...counts.entries()].filter(([, w]) => w !== 0n).sort((a, b) => a[0] - b[0]));
  return { finite: true, ways, outcomes };
}

/** @param {number} value @returns {Finite} */
function constant(value) {
  return { finite: true, ways: [[value, 1n]], outcomes: 1n };
}

/** @param {number} count @param {number} sides @returns {Finite} */
function plainSpread(count, sides) {
  charge(count * count * sides);
  /** @type {bigint[]} */
  let ways = [1n];
  for (let c = 0; c < count; c++) {
    const result = new Array(ways.length + sides - 1).fill(0n);
    let running = 0n;
    for (let i = 0; i < result.length; i++) {
      running += i < ways.length ? ways[i] : 0n;
      running -= i >= sides ? ways[i - sides] : 0n;
      result[i] = running;
    }
    ways = result;
  }
  /** @type {[number, bigint][]} */
  const found = [];
  ways.forEach((w, i) => { if (w) found.push([count + i, w]); });
  return { finite: true, ways: found, outcomes: BigInt(sides) ** BigInt(count) };
}

/** @param {number} n @param {number} k */
function comb(n, k) {
  if (k < 0 || k > n) return 0n;
  let result = 1n;
  for (let i = 0; i < k; i++) result = (result * BigInt(n - i)) / BigInt(i + 1);
  return result;
}

/** The `keep` highest (or lowest) of `count` dice. @param {number} count @param {number} sides @param {number} keep @param {boolean} lowest */
function keptSpread(count, sides, keep, lowest) {
  charge(sides * keep * (keep * sides + 1) * (count + 1));
  /** @type {Map<number, bigint>} */
  let final = new Map();
  /** @type {Map<string, [number, number, bigint]>} */
  let states = new Map([["0,0", [0, 0, 1n]]]);
  for (let face = sides; face >= 1; face--) {
    /** @type {Map<string, [number, number, bigint]>} */
    const following = new Map();
    for (const [placed, total, ways] of states.values()) {
      const left = count - placed;
      for (let showing = 0; showing <= left; showing++) {
        const here = ways * comb(left, showing);
        if (placed + showing >= keep) {
          const keptTotal = total + (keep - placed) * face;
          final.set(keptTotal, (final.get(keptTotal) ?? 0n) + here * BigInt(face - 1) ** BigInt(left - showing));
        } else {
          const key = `${placed + showing},${total + showing * face}`;
          const old = following.get(key);
          following.set(key, [placed + showing, total + showing * face, (old ? old[2] : 0n) + here]);
        }
      }
    }
    states = following;
  }
  if (lowest) final = new Map([...final].map(([t, w]) => [keep * (sides + 1) - t, w]));
  return finite(final, BigInt(sides) ** BigInt(count));
}

/** @param {number} low @param {Fraction[]} top @param {Fraction[]} bottom @returns {Series} */
function series(low, top, bottom) {
  return { finite: false, low, top, bottom, known: [] };
}

/** @param {number} sides */
function exploding(sides) {
  const chance = new Fraction(1n, BigInt(sides));
  return series(1, Array(sides - 1).fill(chance), [ONE, ...Array(sides - 1).fill(ZERO), chance.neg()]);
}

/** @param {Fraction[]} a @param {Fraction[]} b */
function multiply(a, b) {
  charge(a.length * b.length);
  const result = Array(a.length + b.length - 1).fill(ZERO);
  a.forEach((x, i) => {
    if (!x.isZero()) b.forEach((y, j) => { result[i + j] = result[i + j].add(x.mul(y)); });
  });
  return result;
}

/** @param {Finite} spread */
function asSeries(spread) {
  const low = spread.ways[0][0], high = spread.ways[spread.ways.length - 1][0];
  const top = Array(high - low + 1).fill(ZERO);
  for (const [total, ways] of spread.ways) top[total - low] = new Fraction(ways, spread.outcomes);
  return series(low, top, [ONE]);
}

/** @param {Spread} a @param {Spread} b @returns {Spread} */
function addSpreads(a, b) {
  if (a.finite && b.finite) {
    charge(a.ways.length * b.ways.length);
    /** @type {Map<number, bigint>} */
    const counts = new Map();
    for (const [x, u] of a.ways) for (const [y, v] of b.ways) counts.set(x + y, (counts.get(x + y) ?? 0n) + u * v);
    return finite(counts, a.outcomes * b.outcomes);
  }
  const first = a.finite ? asSeries(a) : a, second = b.finite ? asSeries(b) : b;
  return series(first.low + second.low, multiply(first.top, second.top), multiply(first.bottom, second.bottom));
}

/** @param {Spread} spread @param {number} factor @returns {Spread} */
function scaleSpread(spread, factor) {
  if (spread.finite) return finite(new Map(spread.ways.map(([t, w]) => [t * factor, w])), spread.outcomes);
  if (factor < 1) throw new RangeError("an exploding roll has no highest total, so it cannot be taken away or turned over");
  /** @param {Fraction[]} poly */
  const spaced = (poly) => {
    const result = Array((poly.length - 1) * factor + 1).fill(ZERO);
    poly.forEach((c, i) => { result[i * factor] = c; });
    return result;
  };
  return series(spread.low * factor, spaced(spread.top), spaced(spread.bottom));
}

/** @param {Map<number, bigint>} counts @param {number} key @param {bigint} ways */
function bump(counts, key, ways) {
  counts.set(key, (counts.get(key) ?? 0n) + ways);
}

/** @param {Spread} spread @param {number} divisor @returns {Spread} */
function divideSpread(spread, divisor) {
  if (!spread.finite) throw new RangeError("an exploding roll has no highest total, so it cannot be divided");
  /** @type {Map<number, bigint>} */
  const counts = new Map();
  for (const [t, w] of spread.ways) bump(counts, Math.floor(t / divisor), w);
  return finite(counts, spread.outcomes);
}

/** @param {Spread} spread @param {number | null} low @param {number | null} high @returns {Spread} */
function boundSpread(spread, low, high) {
  if (low !== null && high !== null && low > high) return constant(high);
  if (spread.finite) {
    /** @type {Map<number, bigint>} */
    const counts = new Map();
    for (const [t, w] of spread.ways) {
      let here = low !== null ? Math.max(low, t) : t;
      here = high !== null ? Math.min(high, here) : here;
      bump(counts, here, w);
    }
    return finite(counts, spread.outcomes);
  }
  if (high !== null) {
    const below = head(spread, high - 1);
    let denominator = 1n;
    for (const [, c] of below) denominator = (denominator * c.d) / gcd(denominator, c.d);
    /** @type {Map<number, bigint>} */
    const counts = new Map(below.map(([t, c]) => [t, (c.n * denominator) / c.d]));
    let rest = denominator;
    for (const w of counts.values()) rest -= w;
    counts.set(high, rest);
    const capped = finite(counts, denominator);
    return low !== null ? boundSpread(capped, low, null) : capped;
  }
  if (low === null || low <= spread.low) return spread;
  const coefficients = coefficientsOf(spread, low - spread.low - 1);
  const moved = multiply(spread.bottom, coefficients);
  const top = [...spread.top, ...Array(Math.max(0, moved.length - spread.top.length)).fill(ZERO)];
  moved.forEach((c, i) => { top[i] = top[i].sub(c); });
  const total = coefficients.reduce((a, c) => a.add(c), ZERO);
  const mass = [...Array(low - spread.low).fill(ZERO), ...spread.bottom.map((b) => total.mul(b))];
  while (top.length < mass.length) top.push(ZERO);
  mass.forEach((c, i) => { top[i] = top[i].add(c); });
  const shift = low - spread.low;
  while (top.length > 1 && top[top.length - 1].isZero()) top.pop();
  return top.slice(0, shift).every((c) => c.isZero()) ? series(low, top.slice(shift), spread.bottom) : spread;
}

/** The chances of totals low .. low + last. @param {Series} spread @param {number} last */
function coefficientsOf(spread, last) {
  if (last < 0) return [];
  if (last > MAX_TAIL) {
    throw new OddsTooCostly(`the odds ${last.toLocaleString("en")} totals into an exploding roll; at most ${MAX_TAIL.toLocaleString("en")} are read`);
  }
  const { top, bottom, known } = spread;
  charge(last * bottom.length);
  while (known.length <= last) {
    const i = known.length;
    let value = i < top.length ? top[i] : ZERO;
    for (let k = 1; k <= Math.min(i, bottom.length - 1); k++) {
      if (!bottom[k].isZero()) value = value.sub(bottom[k].mul(known[i - k]));
    }
    known.push(value.div(bottom[0]));
  }
  return known.slice(0, last + 1);
}

/** @param {Spread} spread @param {number} upTo @returns {[number, Fraction][]} */
function head(spread, upTo) {
  if (spread.finite) {
    return spread.ways.filter(([t]) => t <= upTo).map(([t, w]) => [t, new Fraction(w, spread.outcomes)]);
  }
  /** @type {[number, Fraction][]} */
  const found = [];
  coefficientsOf(spread, upTo - spread.low).forEach((c, i) => { if (!c.isZero()) found.push([spread.low + i, c]); });
  return found;
}

/** @param {Spread} spread @param {number} total */
function atMost(spread, total) {
  if (spread.finite) {
    let ways = 0n;
    for (const [t, w] of spread.ways) if (t <= total) ways += w;
    return new Fraction(ways, spread.outcomes);
  }
  return coefficientsOf(spread, total - spread.low).reduce((a, c) => a.add(c), ZERO);
}

// ---------------------------------------------------------------- dice

/** `count` dice of `sides` sides; `keep` of them count (the highest, or `lowest`); `explode`: a top face rolls again. */
export class DiceTerm {
  /** @param {number} count @param {number} sides @param {number | null} [keep] @param {boolean} [lowest] @param {boolean} [explode] */
  constructor(count, sides, keep = null, lowest = false, explode = false) {
    if (count < 0 || sides < 1 || (keep !== null && !(keep > 0 && keep <= count))) throw new RangeError(`cannot roll ${count}d${sides}`);
    if (explode && sides < 2) throw new RangeError(`${count}d${sides}! would explode for ever`);
    this.count = count;
    this.sides = sides;
    this.keep = keep;
    this.lowest = lowest;
    this.explode = explode;
    Object.freeze(this);
  }
  get plain() { return this.keep === null && !this.explode; }
  get text() {
    const suffix = this.keep !== null ? `k${this.lowest ? "l" : "h"}${this.keep}` : this.explode ? "!" : "";
    return `${this.count}d${this.sides}${suffix}`;
  }
  /** @param {Rng} rng @returns {[number, number[]]} the total and every face rolled, in order */
  throw(rng) {
    /** @type {number[]} */ const faces = [];
    /** @type {number[]} */ let counted = [];
    for (let i = 0; i < this.count; i++) {
      let face = randint(rng, 1, this.sides);
      faces.push(face);
      let value = face;
      while (this.explode && face === this.sides) {
        face = randint(rng, 1, this.sides);
        faces.push(face);
        value += face;
      }
      counted.push(value);
    }
    if (this.keep !== null) counted = counted.sort((a, b) => (this.lowest ? a - b : b - a)).slice(0, this.keep);
    return [counted.reduce((a, b) => a + b, 0), faces];
  }
}

/** @typedef {{kind: "scaled", dice: Dice, factor: number} | {kind: "divided", dice: Dice, divisor: number} | {kind: "bounded", dice: Dice, low: number | null, high: number | null}} DicePart */

/** @type {WeakMap<Dice, Spread>} */
const SPREADS = new WeakMap();

/** A dice expression (`1d10`, `2d6+3`, `4d6kh3`, `3d6 * 5 - 1d6`): its terms, a modifier and parts added on. */
export class Dice {
  /** @param {string} text @param {readonly DiceTerm[]} terms @param {number} [modifier] @param {readonly DicePart[]} [parts] */
  constructor(text, terms, modifier = 0, parts = []) {
    this.text = text;
    this.terms = Object.freeze([...terms]);
    this.modifier = modifier;
    this.parts = Object.freeze(parts.map((p) => Object.freeze({ ...p })));
    Object.freeze(this);
  }
  get plain() { return this.parts.length === 0 && this.terms.every((t) => t.plain); }
  /** @returns {Spread} */
  spread() {
    let found = SPREADS.get(this);
    if (found === undefined) {
      /** @type {Spread} */
      let spread = constant(this.modifier);
      for (const term of this.terms) {
        if (term.explode) {
          const one = exploding(term.sides);
          for (let i = 0; i < term.count; i++) spread = addSpreads(spread, one);
        } else if (term.keep !== null) {
          spread = addSpreads(spread, keptSpread(term.count, term.sides, term.keep, term.lowest));
        } else {
          spread = addSpreads(spread, plainSpread(term.count, term.sides));
        }
      }
      for (const part of this.parts) {
        const inner = part.dice.spread();
        switch (part.kind) {
          case "scaled": spread = addSpreads(spread, scaleSpread(inner, part.factor)); break;
          case "divided": spread = addSpreads(spread, divideSpread(inner, part.divisor)); break;
          case "bounded": spread = addSpreads(spread, boundSpread(inner, part.low, part.high)); break;
        }
      }
      found = spread;
      SPREADS.set(this, found);
    }
    return found;
  }
  get minimum() {
    const s = this.spread();
    return s.finite ? s.ways[0][0] : s.low;
  }
  /** @returns {number | null} the highest total; null when a die explodes */
  get maximum() {
    const s = this.spread();
    return s.finite ? s.ways[s.ways.length - 1][0] : null;
  }
  /** @param {Rng} rng @returns {{total: number, faces: number[]}} */
  throw(rng) {
    let total = this.modifier;
    /** @type {number[]} */ const faces = [];
    for (const term of this.terms) {
      const [value, rolled] = term.throw(rng);
      total += value;
      faces.push(...rolled);
    }
    for (const part of this.parts) {
      const inner = part.dice.throw(rng);
      faces.push(...inner.faces);
      switch (part.kind) {
        case "scaled": total += inner.total * part.factor; break;
        case "divided": total += Math.floor(inner.total / part.divisor); break;
        case "bounded": {
          const value = part.low === null ? inner.total : Math.max(part.low, inner.total);
          total += part.high === null ? value : Math.min(part.high, value);
        }
      }
    }
    return { total, faces };
  }
  /** @param {Rng} rng */
  roll(rng) { return this.throw(rng).total; }
  /** The exact chance that a roll lands in low..high (null: open). @param {number | null} low @param {number | null} high */
  chance(low, high) {
    const s = this.spread();
    const below = high !== null ? atMost(s, high) : ONE;
    return below.sub(low !== null ? atMost(s, low - 1) : ZERO);
  }
  /** The chance of every total (up to `upTo`: needed when a die explodes), as [total, Fraction] pairs, ascending.
   * @param {number | null} [upTo] @returns {[number, Fraction][]} */
  distribution(upTo = null) {
    const s = this.spread();
    if (upTo === null) {
      if (!s.finite) throw new RangeError(`${this.text} explodes: its totals have no end; give upTo`);
      upTo = s.ways[s.ways.length - 1][0];
    }
    return head(s, upTo);
  }
  /** The distribution as JSON text, the same as Python's `distribution_json`. @param {number | null} [upTo] */
  distributionJson(upTo = null) {
    return JSON.stringify(this.distribution(upTo).map(([t, c]) => [t, c.toString()]));
  }
  /** @param {Dice | Num} other @returns {Dice} */
  plus(other) {
    if (!(other instanceof Dice)) return makeDice(this.terms, this.modifier + wholeOf(other, "a number added to a roll"), this.parts);
    /** @type {Map<number, number>} */ const counts = new Map();
    /** @type {DiceTerm[]} */ const kept = [];
    for (const term of [...this.terms, ...other.terms]) {
      if (term.plain) counts.set(term.sides, (counts.get(term.sides) ?? 0) + term.count);
      else kept.push(term);
    }
    const plain = [...counts].filter(([, c]) => c).map(([s, c]) => new DiceTerm(c, s));
    return makeDice([...plain, ...kept], this.modifier + other.modifier, [...this.parts, ...other.parts]);
  }
  /** @param {number} factor @returns {Dice} */
  times(factor) {
    if (factor === 1) return this;
    if (factor === 0) return makeDice([], 0);
    return makeDice([], 0, [{ kind: "scaled", dice: this, factor }]);
  }
  /** @param {number} divisor @returns {Dice} */
  dividedBy(divisor) {
    if (divisor < 1) throw new RangeError(`cannot divide a roll by ${divisor}`);
    return divisor === 1 ? this : makeDice([], 0, [{ kind: "divided", dice: this, divisor }]);
  }
  toString() { return this.text; }
  toJSON() { return this.text; }
}

/** @param {Dice} dice */
function grouped(dice) {
  return dice.terms.length + dice.parts.length === 1 && !dice.modifier ? dice.text : `(${dice.text})`;
}

/** @param {DicePart} part */
function partText(part) {
  switch (part.kind) {
    case "scaled": return part.factor === -1 ? `-${grouped(part.dice)}` : `${grouped(part.dice)} * ${part.factor}`;
    case "divided": return `${grouped(part.dice)} / ${part.divisor}`;
    case "bounded": {
      const text = part.low === null ? part.dice.text : `max(${part.low}, ${part.dice.text})`;
      return part.high === null ? text : `min(${part.high}, ${text})`;
    }
  }
}

/** Dice with their text written the usual way (`10d6 + 2`, `3d6 * 5 - 1d6`), as Python writes it.
 * @param {readonly DiceTerm[]} terms @param {number} modifier @param {readonly DicePart[]} [parts] */
export function makeDice(terms, modifier, parts = []) {
  let text = "";
  for (const piece of [...terms.map((t) => t.text), ...parts.map(partText)]) {
    if (!text) text = piece;
    else text += piece.startsWith("-") ? ` - ${piece.slice(1)}` : ` + ${piece}`;
  }
  if (!text) text = String(modifier);
  else if (modifier) text += ` ${modifier > 0 ? "+" : "-"} ${Math.abs(modifier)}`;
  return new Dice(text, terms, modifier, parts);
}

/** `(n)d6`, `dice(n, 6)`, `(n)d6kh3`: dice whose count a formula computes. @param {Num} count @param {Num} sides @param {string} [suffix] */
export function dice(count, sides, suffix = "") {
  const c = numeric(count), s = numeric(sides);
  if (!(typeof c === "number" ? Number.isInteger(c) : c.d === 1n) || !(typeof s === "number" ? Number.isInteger(s) : s.d === 1n) || cmp(c, 0) < 0 || cmp(s, 1) < 0) {
    throw new RangeError(`cannot roll ${c} dice of ${s} sides`);
  }
  const n = wholeOf(c, "a count"), sides_ = wholeOf(s, "sides");
  if (suffix === "!") return makeDice(n ? [new DiceTerm(n, sides_, null, false, true)] : [], 0);
  if (!suffix) return makeDice(n ? [new DiceTerm(n, sides_)] : [], 0);
  const how = suffix.slice(0, 2), number = suffix.slice(2);
  if (!["kh", "kl", "dh", "dl"].includes(how) || !/^[0-9]+$/.test(number)) {
    throw new RangeError(`cannot roll ${n}d${sides_}${suffix}: keep (kh3, kl1), drop (dh1, dl1) or explode (!)`);
  }
  const keep = how[0] === "k" ? Number(number) : n - Number(number);
  if (!(keep > 0 && keep <= n)) throw new RangeError(`cannot roll ${n}d${sides_}${suffix}: it would keep ${Math.max(keep, 0)} of ${n} dice`);
  return makeDice([new DiceTerm(n, sides_, keep, how === "kl" || how === "dh")], 0);
}

/** @param {readonly (Dice | Num)[]} values @param {boolean} low */
function bounded(values, low) {
  const rolls = values.filter(isDice);
  const numbers = /** @type {Num[]} */ (values.filter((v) => !isDice(v))).map((v) => wholeOf(v, "a bound"));
  if (rolls.length !== 1) throw new RangeError("max and min take one roll among whole numbers");
  if (!numbers.length) return rolls[0];
  const bound = low ? Math.max(...numbers) : Math.min(...numbers);
  return makeDice([], 0, [{ kind: "bounded", dice: rolls[0], low: low ? bound : null, high: low ? null : bound }]);
}

/** `max(1, 1d8 + CON)`. @param {...(Dice | Num)} values */
export function diceMax(...values) { return bounded(values, true); }
/** `min(10, 2d6 * 2)`. @param {...(Dice | Num)} values */
export function diceMin(...values) { return bounded(values, false); }

// ---------------------------------------------------------------- formulas kept as data

/** A formula kept as data (a table cell such as `6 - PRS`): `evaluate({PRS: 4})` computes it (names in any case).
 * `T`: what it yields. @template [T=unknown] */
export class Formula {
  /** @param {string} text @param {readonly string[]} names @param {(values: Record<string, Num>) => T} compute */
  constructor(text, names, compute) {
    this.text = text;
    this.names = Object.freeze([...names]);
    this.compute = compute;
    Object.freeze(this);
  }
  /** @param {Record<string, Num>} [values] @returns {T} */
  evaluate(values = {}) {
    /** @type {Record<string, Num>} */ const given = {};
    for (const [k, v] of Object.entries(values)) given[casefold(k)] = v;
    const missing = this.names.filter((n) => !(casefold(n) in given));
    if (missing.length) throw new RangeError(`${this.text} needs a value for ${missing.join(", ")}`);
    return this.compute(given);
  }
  toString() { return this.text; }
  toJSON() { return this.text; }
}

// ---------------------------------------------------------------- tables

/** One key of a row: a range (either end open: null), a name, or a parity (1 odd, 0 even). */
export class Key {
  /** @param {number | null} low @param {number | null} high @param {string | null} [name] @param {number | null} [parity] */
  constructor(low, high, name = null, parity = null) {
    this.low = low;
    this.high = high;
    this.name = name;
    this.parity = parity;
    Object.freeze(this);
  }
  /** @param {number | string | Fraction} key */
  matches(key) {
    if (typeof key === "string") return this.name !== null && casefold(this.name) === casefold(key);
    if (this.name !== null) return false;
    if (this.parity !== null) {
      const value = Fraction.of(key);
      return value.d === 1n && (((value.n % 2n) + 2n) % 2n) === BigInt(this.parity);
    }
    return (this.low === null || cmp(key, this.low) >= 0) && (this.high === null || cmp(key, this.high) <= 0);
  }
  get text() {
    if (this.name !== null) return this.name;
    if (this.parity !== null) return this.parity ? "odd" : "even";
    if (this.low === null) return `<=${this.high}`;
    if (this.high === null) return `${this.low}+`;
    return this.low === this.high ? String(this.low) : `${this.low}-${this.high}`;
  }
}

/** @template R */
export class Row {
  /** @param {readonly Key[]} keys @param {R} value @param {string | null} [source] */
  constructor(keys, value, source = null) {
    this.keys = Object.freeze([...keys]);
    this.value = freeze(value);
    this.source = source;
    Object.freeze(this);
  }
  /** @param {readonly (number | string | Fraction)[]} keys */
  matches(keys) { return keys.length === this.keys.length && this.keys.every((k, i) => k.matches(keys[i])); }
  /** @param {readonly (number | string | Fraction)[]} given */
  matchesGiven(given) { return given.length <= this.keys.length && given.every((g, i) => this.keys[i].matches(g)); }
  get keyText() { return this.keys.length ? this.keys.map((k) => k.text).join(", ") : "otherwise"; }
}

/** What a table is rolled on: dice per key (`d66`: tens and units), the modifiers its rows cover, the keys it is given. */
export class Roll {
  /** @param {string} text @param {readonly Dice[]} dice @param {number} [modifierLow] @param {number} [modifierHigh] @param {boolean} [tensUnits] @param {readonly string[]} [given] */
  constructor(text, dice, modifierLow = 0, modifierHigh = 0, tensUnits = false, given = []) {
    this.text = text;
    this.dice = Object.freeze([...dice]);
    this.modifierLow = modifierLow;
    this.modifierHigh = modifierHigh;
    this.tensUnits = tensUnits;
    this.given = Object.freeze([...given]);
    Object.freeze(this);
  }
  /** @param {Rng} rng @param {number} [modifier] @returns {number[]} */
  roll(rng, modifier = 0) {
    if (this.tensUnits) return [10 * randint(rng, 1, 6) + randint(rng, 1, 6) + modifier];
    return this.dice.map((d, i) => d.roll(rng) + (i === 0 ? modifier : 0));
  }
  /** @param {number} key @param {number | null} low @param {number | null} high @param {number} [modifier] */
  chance(key, low, high, modifier = 0) {
    const shift = key === 0 ? modifier : 0;
    if (this.tensUnits) {
      let hits = 0;
      for (let tens = 1; tens <= 6; tens++) {
        for (let units = 1; units <= 6; units++) {
          const n = 10 * tens + units + shift;
          if ((low === null || n >= low) && (high === null || n <= high)) hits++;
        }
      }
      return new Fraction(BigInt(hits), 36n);
    }
    return this.dice[key].chance(low === null ? null : low - shift, high === null ? null : high - shift);
  }
  /** @param {number} key @param {number} parity @param {number} [modifier] */
  parityChance(key, parity, modifier = 0) {
    const d = this.dice[key];
    const highest = d.maximum;
    if (highest === null) throw new RangeError(`${d.text} has no highest total to read odd and even rows by`);
    const [low, high] = this.tensUnits ? [11, 66] : [d.minimum, highest];
    const shift = key === 0 ? modifier : 0;
    let total = ZERO;
    for (let n = low; n <= high; n++) if ((((n + shift) % 2) + 2) % 2 === parity) total = total.add(this.chance(key, n, n));
    return total;
  }
  toString() { return this.text; }
}

/** `2 x treasure` in a `rolls` cell: roll on that table `times` times. */
export class Rolls {
  /** @param {number} times @param {string} table */
  constructor(times, table) {
    this.times = times;
    this.table = table;
    Object.freeze(this);
  }
}

export const MAX_CHAIN = 1000;

/** A roll on a table: the numbers rolled, the row they land on (of that table's rows: `R`).
 * @template [R=any] @typedef {{table: string, numbers: number[], row: R, clamped: boolean, given: (number | string)[]}} Rolled */

/** @template R */
export class Table {
  /** @param {{id: string, name: string, dice: Roll | null, rows: readonly Row<R>[], source?: string | null, clamp?: boolean, partial?: boolean, chains?: readonly string[], registry?: Record<string, Table<any>>, otherwise?: Row<R> | null}} spec */
  constructor(spec) {
    this.id = spec.id;
    this.name = spec.name;
    this.dice = spec.dice;
    this.rows = Object.freeze([...spec.rows]);
    this.source = spec.source ?? null;
    this.clamp = spec.clamp ?? false;
    this.partial = spec.partial ?? false;
    this.chains = Object.freeze([...(spec.chains ?? [])]);
    this.registry = spec.registry ?? {};
    this.otherwise = spec.otherwise ?? null;
    Object.freeze(this);
  }
  /** @param {readonly (number | string | Fraction)[]} keys */
  _row(keys) { return this.rows.find((r) => r.matches(keys)) ?? null; }
  /** The row for a number or a name per key (`lookup("III", 2)`); the otherwise row where no row has them. @param {...(number | string)} keys @returns {R} */
  lookup(...keys) {
    const row = this._row(keys) ?? this.otherwise;
    if (row !== null) return row.value;
    throw new RangeError(`${this.name}: no row for ${keys.map((k) => (typeof k === "string" ? `'${k}'` : String(k))).join(", ")}`);
  }
  /** @param {number} key @param {readonly Row<R>[]} rows @returns {[number | null, number | null]} */
  _bounds(key, rows) {
    const numbered = rows.map((r) => r.keys[key]).filter((k) => k.name === null && k.parity === null);
    const lows = numbered.filter((k) => k.low !== null).map((k) => /** @type {number} */ (k.low));
    const highs = numbered.filter((k) => k.high !== null).map((k) => /** @type {number} */ (k.high));
    return [
      numbered.length && lows.length === numbered.length ? Math.min(...lows) : null,
      numbered.length && highs.length === numbered.length ? Math.max(...highs) : null,
    ];
  }
  /** @param {Record<string, number | string>} given @returns {(number | string)[]} */
  _given(given) {
    const names = this.dice !== null ? this.dice.given : [];
    const unknown = Object.keys(given).filter((n) => !names.includes(n)).sort();
    if (unknown.length) throw new TypeError(`${this.name} is not given ${unknown.join(", ")}` + (names.length ? ` (only ${names.join(", ")})` : ""));
    const missing = names.filter((n) => !(n in given));
    if (missing.length) throw new TypeError(`${this.name} is rolled for a ${missing[0]}: roll(rng, 0, {${missing[0]}: ...})`);
    return names.map((n) => given[n]);
  }
  /** Roll the dice (plus `modifier`) after the keys it is given, and look the numbers up.
   * @param {Rng} rng @param {number} [modifier] @param {Record<string, number | string>} [given] @returns {Rolled<R>} */
  roll(rng, modifier = 0, given = {}) {
    if (this.dice === null) throw new TypeError(`${this.name} is not rolled on dice; use lookup()`);
    const values = this._given(given);
    const numbers = this.dice.roll(rng, modifier);
    const [row, clamped] = this._find([...values, ...numbers], values.length);
    return Object.freeze({ table: this.id, numbers, row, clamped, given: values });
  }
  /** The row a formula looks up. @param {...(number | Fraction)} numbers @returns {R} */
  at(...numbers) {
    try {
      return this._find(numbers, 0)[0];
    } catch (error) {
      if (this.partial && error instanceof RangeError && !(error instanceof PastRows)) throw new PastRows(this.id, error.message);
      throw error;
    }
  }
  /** @param {readonly (number | string | Fraction)[]} keys @param {number} given @returns {[R, boolean]} */
  _find(keys, given) {
    const row = this._row(keys);
    if (row !== null) return [row.value, false];
    if (this.clamp) {
      const same = this.rows.filter((r) => r.matchesGiven(keys.slice(0, given)));
      const clamped = [...keys.slice(0, given)];
      keys.slice(given).forEach((number, i) => {
        const [low, high] = this._bounds(given + i, same);
        if (typeof number !== "string") {
          if (low !== null && cmp(number, low) < 0) number = low;
          if (high !== null && cmp(number, high) > 0) number = high;
        }
        clamped.push(number);
      });
      const found = this._row(clamped);
      if (found !== null) return [found.value, clamped.some((k, i) => k !== keys[i])];
    }
    if (this.otherwise !== null) return [this.otherwise.value, false];
    const shown = keys.map(String).join(", ");
    throw new RangeError(this.clamp ? `${this.name}: no row for ${shown}` : `${this.name}: ${shown} is past its rows (it does not clamp)`);
  }
  /** Roll here, then on every table the row names, and so on to the end.
   * @param {Rng} rng @param {number} [modifier] @param {Record<string, number | string>} [given] @returns {Rolled[]} */
  rollChain(rng, modifier = 0, given = {}) {
    /** @type {Rolled[]} */ const steps = [];
    /** @type {[Table<any>, number][]} */ const pending = [[this, modifier]];
    while (pending.length) {
      const [table, extra] = /** @type {[Table<any>, number]} */ (pending.shift());
      if (steps.length >= MAX_CHAIN) throw new RangeError(`${this.name}: still rolling after ${MAX_CHAIN} tables`);
      const names = table.dice !== null ? table.dice.given : [];
      /** @type {Record<string, number | string>} */ const passed = {};
      for (const n of names) if (n in given) passed[n] = given[n];
      const rolled = table.roll(rng, extra, passed);
      steps.push(rolled);
      /** @type {[Table<any>, number][]} */ const following = [];
      for (const column of table.chains) {
        const cell = rolled.row[column];
        if (typeof cell === "string") following.push([table.registry[cell], 0]);
        else if (cell instanceof Rolls) for (let i = 0; i < cell.times; i++) following.push([table.registry[cell.table], 0]);
      }
      pending.unshift(...following);
    }
    return steps;
  }
  /** Each row (for the keys given) with the exact chance a roll with this modifier lands on it; the otherwise row last.
   * @param {number} [modifier] @param {Record<string, number | string>} [given] @returns {{row: Row<R>, chance: Fraction}[]} */
  chances(modifier = 0, given = {}) {
    const roll = this.dice;
    if (roll === null) throw new TypeError(`${this.name} is not rolled on dice`);
    const values = this._given(given);
    const rows = this.rows.filter((r) => r.matchesGiven(values));
    const bounds = roll.dice.map((_, i) => this._bounds(values.length + i, rows));
    /** @type {{row: Row<R>, chance: Fraction}[]} */ const result = [];
    for (const row of rows) {
      let chance = ONE;
      row.keys.slice(values.length, values.length + roll.dice.length).forEach((key, index) => {
        if (key.parity !== null) {
          chance = chance.mul(roll.parityChance(index, key.parity, modifier));
          return;
        }
        let low = key.low, high = key.high;
        if (this.clamp) {
          if (low !== null && low === bounds[index][0]) low = null;
          if (high !== null && high === bounds[index][1]) high = null;
        }
        chance = chance.mul(roll.chance(index, low, high, modifier));
      });
      result.push({ row, chance });
    }
    if (this.otherwise !== null) result.push({ row: this.otherwise, chance: result.reduce((a, r) => a.sub(r.chance), ONE) });
    return result;
  }
  /** The chances as JSON text, the same as Python's `chances_json`: [[row keys, "n/d"], ...].
   * @param {number} [modifier] @param {Record<string, number | string>} [given] */
  chancesJson(modifier = 0, given = {}) {
    return JSON.stringify(this.chances(modifier, given).map(({ row, chance }) => [row.keyText, chance.toString()]));
  }
}

// ---------------------------------------------------------------- requirements

/** @typedef {Record<string, Record<string, string>>} Names kind -> id -> display name */
/** @typedef {boolean | null} Verdict null: undecided (a fact it needs was not given) */
/** @typedef {{previous: readonly string[], fact(subject: string): number | string | null, holds(kind: string, entity: string): Verdict, skillsOf(lifepath: string): readonly string[], settingOf(lifepath: string): string | null, tagsOf(lifepath: string): readonly string[]}} Facts */

/** @param {Names} names @param {string} kind @param {string} id */
export function nameOf(names, kind, id) {
  return names[kind]?.[id] ?? id;
}

/** @abstract */
export class Requirement {
  /** @param {Facts} facts @returns {Verdict} */
  judge(facts) { throw new Error(`judge ${facts}`); }
  /** @param {Names} names @returns {string} */
  describe(names) { throw new Error(`describe ${names}`); }
}

export class TookLifepath extends Requirement {
  /** @param {string} lifepath */
  constructor(lifepath) { super(); this.lifepath = lifepath; Object.freeze(this); }
  /** @param {Facts} facts */ judge(facts) { return facts.previous.includes(this.lifepath); }
  /** @param {Names} names */ describe(names) { return nameOf(names, "lifepath", this.lifepath); }
}

export class HasTrait extends Requirement {
  /** @param {string} trait */
  constructor(trait) { super(); this.trait = trait; Object.freeze(this); }
  /** @param {Facts} facts */ judge(facts) { return facts.holds("trait", this.trait); }
  /** @param {Names} names */ describe(names) { return `the ${nameOf(names, "trait", this.trait)} trait`; }
}

export class HasSkill extends Requirement {
  /** @param {string} skill */
  constructor(skill) { super(); this.skill = skill; Object.freeze(this); }
  /** @param {Facts} facts */ judge(facts) { return facts.previous.some((lp) => facts.skillsOf(lp).includes(this.skill)); }
  /** @param {Names} names */ describe(names) { return `an earlier lifepath with the ${nameOf(names, "skill", this.skill)} skill`; }
}

export class Holds extends Requirement {
  /** @param {string} kind @param {string} entity */
  constructor(kind, entity) { super(); this.kind = kind; this.entity = entity; Object.freeze(this); }
  /** @param {Facts} facts */ judge(facts) { return facts.holds(this.kind, this.entity); }
  /** @param {Names} names */ describe(names) { return `the ${nameOf(names, this.kind, this.entity)} ${this.kind.replaceAll("_", " ")}`; }
}

export class Previous extends Requirement {
  /** @param {string} lifepath */
  constructor(lifepath) { super(); this.lifepath = lifepath; Object.freeze(this); }
  /** @param {Facts} facts */ judge(facts) { return facts.previous.length > 0 && facts.previous[facts.previous.length - 1] === this.lifepath; }
  /** @param {Names} names */ describe(names) { return `${nameOf(names, "lifepath", this.lifepath)} just before`; }
}

export class CountOf extends Requirement {
  /** @param {number} count @param {string | null} [setting] @param {string | null} [tag] @param {readonly string[]} [lifepaths] */
  constructor(count, setting = null, tag = null, lifepaths = []) {
    super();
    this.count = count;
    this.setting = setting;
    this.tag = tag;
    this.lifepaths = Object.freeze([...lifepaths]);
    Object.freeze(this);
  }
  /** @param {string} lifepath @param {Facts} facts */
  _selects(lifepath, facts) {
    if (this.lifepaths.length && !this.lifepaths.includes(lifepath)) return false;
    if (this.setting !== null && facts.settingOf(lifepath) !== this.setting) return false;
    return this.tag === null || facts.tagsOf(lifepath).includes(this.tag);
  }
  /** @param {Facts} facts */ judge(facts) { return facts.previous.filter((lp) => this._selects(lp, facts)).length >= this.count; }
  /** @param {Names} names */
  describe(names) {
    let what = "lifepath" + (this.count !== 1 ? "s" : "");
    if (this.lifepaths.length) {
      const listed = this.lifepaths.map((i) => nameOf(names, "lifepath", i)).join(", ");
      what = this.lifepaths.length > 1 ? `${what} among ${listed}` : `${what}: ${listed}`;
    }
    if (this.setting !== null) what = `${nameOf(names, "setting", this.setting)} ${what}`;
    if (this.tag !== null) what = `${what} tagged ${this.tag}`;
    return `${this.count === 1 ? "any" : this.count} ${what}`;
  }
}

/** `age > 50`, `position in 2..3`, `gender = female`. */
export class Condition extends Requirement {
  /** @param {string} subject @param {string} [op] @param {number | string | null} [value] @param {number | null} [low] @param {number | null} [high] */
  constructor(subject, op = "=", value = null, low = null, high = null) {
    super();
    this.subject = subject;
    this.op = op;
    this.value = value;
    this.low = low;
    this.high = high;
    Object.freeze(this);
  }
  /** @param {Facts} facts */
  judge(facts) {
    const fact = facts.fact(this.subject);
    if (fact === null) return null;
    if (this.value === null) {
      return typeof fact === "number" && (this.low === null || fact >= this.low) && (this.high === null || fact <= this.high);
    }
    return compare(this.op, fact, this.value);
  }
  /** @param {Names} names */
  describe(names) {
    const subject = this.subject.replaceAll("_", " ");
    if (this.value === null) return `${subject} ${this.low ?? ""}..${this.high ?? ""}`;
    return `${subject} ${this.op} ${this.value}`;
  }
}

export class GmPermission extends Requirement {
  constructor() { super(); Object.freeze(this); }
  /** @param {Facts} facts */ judge(facts) { return true; }
  /** @param {Names} names */ describe(names) { return "the GM's permission"; }
}

class Junction extends Requirement {
  /** @param {readonly Requirement[]} items @param {boolean} decisive @param {string} word */
  constructor(items, decisive, word) {
    super();
    this.items = Object.freeze([...items]);
    this.decisive = decisive;
    this.word = word;
  }
  /** @param {Facts} facts @returns {Verdict} */
  judge(facts) {
    const verdicts = this.items.map((i) => i.judge(facts));
    if (verdicts.includes(this.decisive)) return this.decisive;
    return verdicts.includes(null) ? null : !this.decisive;
  }
  /** @param {Names} names */ describe(names) { return this.items.map((i) => grouped_(i, names)).join(this.word); }
}

export class AllOf extends Junction {
  /** @param {readonly Requirement[]} items */
  constructor(items) { super(items, false, " and "); Object.freeze(this); }
}

export class AnyOf extends Junction {
  /** @param {readonly Requirement[]} items */
  constructor(items) { super(items, true, " or "); Object.freeze(this); }
}

export class Not extends Requirement {
  /** @param {Requirement} item */
  constructor(item) { super(); this.item = item; Object.freeze(this); }
  /** @param {Facts} facts */ judge(facts) { const v = this.item.judge(facts); return v === null ? null : !v; }
  /** @param {Names} names */ describe(names) { return `not ${grouped_(this.item, names)}`; }
}

/** @param {Requirement} item @param {Names} names */
function grouped_(item, names) {
  const text = item.describe(names);
  return item instanceof Junction ? `(${text})` : text;
}

// ---------------------------------------------------------------- values of fields

/** What a `choices of ref KIND` field gives: the ids `fixed`, and picks among others. */
export class Offer {
  /** @param {readonly string[]} fixed @param {readonly {count: number, options: readonly string[]}[]} picks */
  constructor(fixed, picks) {
    this.fixed = Object.freeze([...fixed]);
    this.picks = freeze(picks.map((p) => ({ count: p.count, options: [...p.options] })));
    Object.freeze(this);
  }
  get options() { return [...new Set([...this.fixed, ...this.picks.flatMap((p) => p.options)])]; }
  /** @param {...readonly string[]} chosen */
  choose(...chosen) {
    if (chosen.length !== this.picks.length) throw new RangeError(`${this.picks.length} pick(s) to make, ${chosen.length} given`);
    const result = [...this.fixed];
    this.picks.forEach((pick, i) => {
      const ids = chosen[i];
      const wrong = ids.filter((id) => !pick.options.includes(id));
      if (wrong.length || ids.length !== pick.count || new Set(ids).size !== ids.length) {
        throw new RangeError(`choose ${pick.count} of ${pick.options.join(", ")}; not ${ids.join(", ") || "none"}`);
      }
      result.push(...ids);
    });
    return result;
  }
}

/** A check a field names (`check END 5+`): its mechanic, the modifier (a formula) and the target. */
export class Check {
  /** @param {CheckMechanic} mechanic @param {Formula} modifier @param {number} target */
  constructor(mechanic, modifier, target) {
    this.mechanic = mechanic;
    this.modifier = modifier;
    this.target = target;
    Object.freeze(this);
  }
  /** @param {Record<string, Num>} values */
  _modifier(values) { return wholeOf(this.modifier.evaluate(values), `the modifier ${this.modifier}`); }
  /** @param {Rng} rng @param {Record<string, Num>} [values] */
  roll(rng, values = {}) { return this.mechanic.roll(rng, this._modifier(values), this.target); }
  /** @param {Record<string, Num>} [values] */
  chance(values = {}) { return this.mechanic.chance(this._modifier(values), this.target); }
  toString() { return `${this.modifier} ${this.target}+`; }
}

// ---------------------------------------------------------------- mechanics

/** A pool of dice against a target number: each die at or over it is a success. */
export class PoolMechanic {
  /** @param {string} id @param {string} name @param {number} sides @param {{stack_on?: number | null, fumble_ones?: number | null}} [rules] */
  constructor(id, name, sides, rules = {}) {
    this.id = id;
    this.name = name;
    this.sides = sides;
    this.stackOn = rules.stack_on ?? null;
    this.fumbleOnes = rules.fumble_ones ?? null;
    Object.freeze(this);
  }
  /** Read dice already rolled; a stacked die is given as its faces. @param {readonly (number | readonly number[])[]} dice @param {number} target */
  judge(dice, target) {
    const totals = dice.map((d) => (typeof d === "number" ? d : d.reduce((a, b) => a + b, 0)));
    const successes = totals.filter((t) => t >= target).length;
    const ones = dice.filter((d) => (typeof d === "number" ? d : d[0]) === 1).length;
    const fumble = this.fumbleOnes !== null && successes === 0 && ones >= this.fumbleOnes;
    return Object.freeze({ totals, successes, fumble });
  }
  /** @param {Rng} rng @param {number} dice @param {number} target */
  roll(rng, dice, target) {
    /** @type {(number | number[])[]} */ const rolled = [];
    for (let i = 0; i < dice; i++) {
      const faces = [randint(rng, 1, this.sides)];
      while (this.stackOn !== null && faces[faces.length - 1] === this.stackOn && faces.reduce((a, b) => a + b, 0) < target) {
        faces.push(randint(rng, 1, this.sides));
      }
      rolled.push(faces.length === 1 ? faces[0] : faces);
    }
    return this.judge(rolled, target);
  }
  /** The exact chance that one die reaches `target`, stacking where it may. @param {number} target */
  successChance(target) {
    let chance = ZERO, weight = ONE;
    while (target > 1) {
      chance = chance.add(weight.mul(new Fraction(BigInt(Math.max(0, this.sides - target + 1)), BigInt(this.sides))));
      if (this.stackOn === null || this.stackOn >= target) return chance;
      weight = weight.div(Fraction.of(this.sides));
      target -= this.stackOn;
    }
    return chance.add(weight);
  }
  /** @param {number} dice @param {number} target @returns {[number, Fraction][]} */
  successChances(dice, target) {
    const one = this.successChance(target);
    /** @type {[number, Fraction][]} */ const result = [];
    for (let k = 0; k <= dice; k++) result.push([k, Fraction.of(comb(dice, k)).mul(one.pow(k)).mul(ONE.sub(one).pow(dice - k))]);
    return result;
  }
}

/** Dice added to a base; with one die `explode_on` rolls again and adds, `fumble_on` subtracts; `floor` bounds it. */
export class TotalMechanic {
  /** @param {string} id @param {string} name @param {Dice} dice @param {{explode_on?: number | null, fumble_on?: number | null, floor?: number | null}} [rules] */
  constructor(id, name, dice, rules = {}) {
    this.id = id;
    this.name = name;
    this.dice = dice;
    this.explodeOn = rules.explode_on ?? null;
    this.fumbleOn = rules.fumble_on ?? null;
    this.floor = rules.floor ?? null;
    Object.freeze(this);
  }
  get sides() { return this.dice.terms[0].sides; }
  /** @param {readonly number[]} faces @param {number} [base] */
  total(faces, base = 0) {
    let result;
    if (this.explodeOn === null && this.fumbleOn === null) {
      result = base + faces.reduce((a, b) => a + b, 0) + this.dice.modifier;
    } else {
      const [first, ...rest] = faces;
      if (this.fumbleOn !== null && first === this.fumbleOn) result = base - this._chain(rest);
      else if (this.explodeOn !== null && first === this.explodeOn) result = base + first + this._chain(rest);
      else result = base + first;
    }
    return this.floor === null ? result : Math.max(this.floor, result);
  }
  /** @param {readonly number[]} faces */
  _chain(faces) {
    let total = 0;
    for (const face of faces) {
      total += face;
      if (face !== this.explodeOn) break;
    }
    return total;
  }
  /** @param {Rng} rng @param {number} [base] @returns {[number, number[]]} */
  roll(rng, base = 0) {
    if (this.explodeOn === null && this.fumbleOn === null) {
      const faces = this.dice.terms.flatMap((t) => Array.from({ length: t.count }, () => randint(rng, 1, t.sides)));
      return [this.total(faces, base), faces];
    }
    const faces = [randint(rng, 1, this.sides)];
    if (faces[0] === this.explodeOn || faces[0] === this.fumbleOn) {
      faces.push(randint(rng, 1, this.sides));
      while (faces[faces.length - 1] === this.explodeOn) faces.push(randint(rng, 1, this.sides));
    }
    return [this.total(faces, base), faces];
  }
}

/** Dice plus a modifier against a target number: made when the total reaches it. */
export class CheckMechanic {
  /** @param {string} id @param {string} name @param {Dice} dice */
  constructor(id, name, dice) {
    this.id = id;
    this.name = name;
    this.dice = dice;
    Object.freeze(this);
  }
  /** @param {readonly number[]} faces @param {number} modifier @param {number} target */
  judge(faces, modifier, target) {
    const total = faces.reduce((a, b) => a + b, 0) + this.dice.modifier + modifier;
    return Object.freeze({ numbers: [...faces], total, target, success: total >= target, effect: total - target });
  }
  /** @param {Rng} rng @param {number} [modifier] @param {number} [target] */
  roll(rng, modifier = 0, target = 0) {
    return this.judge(this.dice.terms.flatMap((t) => Array.from({ length: t.count }, () => randint(rng, 1, t.sides))), modifier, target);
  }
  /** @param {number} modifier @param {number} target */
  chance(modifier, target) { return this.dice.chance(target - modifier, null); }
}

/** Two sides each roll the dice plus their modifier; the higher total wins, by the difference. */
export class ContestMechanic {
  /** @param {string} id @param {string} name @param {Dice} dice */
  constructor(id, name, dice) {
    this.id = id;
    this.name = name;
    this.dice = dice;
    Object.freeze(this);
  }
  /** @param {number} first @param {number} second */
  judge(first, second) {
    return Object.freeze({ first, second, winner: first === second ? null : first > second ? 0 : 1, margin: Math.abs(first - second) });
  }
  /** @param {Rng} rng @param {number} [first] @param {number} [second] */
  roll(rng, first = 0, second = 0) { return this.judge(this.dice.roll(rng) + first, this.dice.roll(rng) + second); }
  /** The exact chance that the first side wins outright. @param {number} [first] @param {number} [second] */
  chance(first = 0, second = 0) {
    return this.dice.distribution().reduce((a, [total, p]) => a.add(p.mul(this.dice.chance(null, total + first - second - 1))), ZERO);
  }
}

/** Roll a number of one kind of die and read the highest (a Blades in the Dark action roll): `outcomes` are
 * the bands the highest die falls in; `critical` dice showing the top face read as "critical"; `zeroDice`:
 * with no dice, roll that many and read the lowest. */
export class HighestMechanic {
  /** @param {string} id @param {string} name @param {number} sides @param {readonly {name: string, low: number, high: number}[]} outcomes @param {number | null} [critical] @param {number | null} [zeroDice] */
  constructor(id, name, sides, outcomes, critical = null, zeroDice = null) {
    this.id = id;
    this.name = name;
    this.sides = sides;
    this.outcomes = freeze(outcomes.map((o) => ({ ...o })));
    this.critical = critical;
    this.zeroDice = zeroDice;
    Object.freeze(this);
  }
  get names() { return [...this.outcomes.map((o) => o.name), ...(this.critical !== null ? ["critical"] : [])]; }
  /** @param {number} face */
  _band(face) { return /** @type {{name: string}} */ (this.outcomes.find((o) => o.low <= face && face <= o.high)).name; }
  /** @param {number} dice */
  _rolled(dice) {
    if (dice < 0) throw new RangeError(`${this.name}: a pool of ${dice} dice`);
    if (dice > 0) return dice;
    if (this.zeroDice === null) throw new RangeError(`${this.name}: a pool of no dice, and no zero_dice rule`);
    return this.zeroDice;
  }
  /** @param {readonly number[]} faces @param {number | null} [dice] */
  judge(faces, dice = null) {
    if (!faces.length || faces.some((f) => !(f >= 1 && f <= this.sides))) throw new RangeError(`${this.name}: ${JSON.stringify(faces)} are not faces of d${this.sides}`);
    const zero = dice === 0;
    const read = zero ? Math.min(...faces) : Math.max(...faces);
    const critical = !zero && this.critical !== null && faces.filter((f) => f === this.sides).length >= this.critical;
    return Object.freeze({ dice: [...faces], read, outcome: critical ? "critical" : this._band(read), critical });
  }
  /** @param {Rng} rng @param {number} dice */
  roll(rng, dice) { return this.judge(Array.from({ length: this._rolled(dice) }, () => randint(rng, 1, this.sides)), dice); }
  /** The exact chance of each outcome with a pool of `dice`, in the order of `names`. @param {number} dice @returns {[string, Fraction][]} */
  chances(dice) {
    const rolled = this._rolled(dice), s = this.sides;
    charge(rolled * rolled * s);
    /** @type {Fraction[]} */ const read = [ZERO];
    let critical = ZERO;
    if (dice === 0) {
      const atLeast = Array.from({ length: s + 1 }, (_, k) => new Fraction(BigInt(s - k), BigInt(s)).pow(rolled));
      for (let k = 1; k <= s; k++) read.push(atLeast[k - 1].sub(atLeast[k]));
    } else {
      const atMost_ = Array.from({ length: s + 1 }, (_, k) => new Fraction(BigInt(k), BigInt(s)).pow(rolled));
      for (let k = 1; k <= s; k++) read.push(atMost_[k].sub(atMost_[k - 1]));
      if (this.critical !== null) {
        const top = new Fraction(1n, BigInt(s));
        for (let j = this.critical; j <= rolled; j++) critical = critical.add(Fraction.of(comb(rolled, j)).mul(top.pow(j)).mul(ONE.sub(top).pow(rolled - j)));
        read[s] = read[s].sub(critical);
      }
    }
    /** @type {[string, Fraction][]} */
    const result = this.outcomes.map((o) => [o.name, read.slice(o.low, o.high + 1).reduce((a, c) => a.add(c), ZERO)]);
    if (this.critical !== null) result.push(["critical", critical]);
    return result;
  }
}

/** Roll dice against a target from below: a total at most the target succeeds, graded by `grades` (the
 * hardest met); a total in `criticals` is a critical, in `fumbles` a fumble, where the band's targets allow. */
export class UnderMechanic {
  /** @param {string} id @param {string} name @param {Dice} dice @param {{grades?: readonly {divide: number, outcome: string}[], criticals?: readonly RollBand[], fumbles?: readonly RollBand[]}} [rules] */
  constructor(id, name, dice, rules = {}) {
    if (!dice.plain || !dice.terms.length) throw new RangeError(`${name}: a roll-under total is dice added up, not ${dice.text}`);
    this.id = id;
    this.name = name;
    this.dice = dice;
    this.grades = freeze((rules.grades ?? []).map((g) => ({ ...g })));
    this.criticals = freeze((rules.criticals ?? []).map((b) => ({ ...b })));
    this.fumbles = freeze((rules.fumbles ?? []).map((b) => ({ ...b })));
    Object.freeze(this);
  }
  get names() {
    const grades = [...this.grades].sort((a, b) => a.divide - b.divide).map((g) => g.outcome);
    return [...(this.fumbles.length ? ["fumble"] : []), "failure", "success", ...grades, ...(this.criticals.length ? ["critical"] : [])];
  }
  /** @param {number} total @param {number} target @returns {[string, boolean]} */
  read(total, target) {
    /** @param {RollBand} b */
    const holds = (b) => b.low <= total && total <= b.high && (b.targets_low === null || target >= b.targets_low) && (b.targets_high === null || target <= b.targets_high);
    if (this.criticals.some(holds)) return ["critical", true];
    if (this.fumbles.some(holds)) return ["fumble", false];
    if (total > target) return ["failure", false];
    const made = this.grades.filter((g) => total <= Math.floor(target / g.divide));
    if (!made.length) return ["success", true];
    return [made.reduce((best, g) => (g.divide > best.divide ? g : best)).outcome, true];
  }
  /** @param {readonly number[]} faces @param {number} target */
  judge(faces, target) {
    target = wholeOf(target, `${this.name}: the target`);
    const sides = this.dice.terms.flatMap((t) => Array(t.count).fill(t.sides));
    if (faces.length !== sides.length || faces.some((f, i) => !(f >= 1 && f <= sides[i]))) throw new RangeError(`${this.name}: ${JSON.stringify(faces)} are not faces of ${this.dice.text}`);
    const total = faces.reduce((a, b) => a + b, 0) + this.dice.modifier;
    const [outcome, success] = this.read(total, target);
    return Object.freeze({ dice: [...faces], total, target, outcome, success, margin: target - total });
  }
  /** @param {Rng} rng @param {number} target */
  roll(rng, target) { return this.judge(this.dice.terms.flatMap((t) => Array.from({ length: t.count }, () => randint(rng, 1, t.sides))), target); }
  _distribution() {
    const spread = /** @type {number} */ (this.dice.maximum) - this.dice.minimum + 1;
    charge(this.dice.terms.reduce((a, t) => a + t.count, 0) * spread);
    return this.dice.distribution();
  }
  /** The exact chance of each outcome against `target`, in the order of `names`. @param {number} target @returns {[string, Fraction][]} */
  chances(target) {
    target = wholeOf(target, `${this.name}: the target`);
    /** @type {Map<string, Fraction>} */ const result = new Map(this.names.map((n) => [n, ZERO]));
    for (const [total, chance] of this._distribution()) {
      const name = this.read(total, target)[0];
      result.set(name, /** @type {Fraction} */ (result.get(name)).add(chance));
    }
    return [...result];
  }
  /** The exact chance of a success of any grade against `target`. @param {number} target */
  chance(target) {
    target = wholeOf(target, `${this.name}: the target`);
    return this._distribution().filter(([total]) => this.read(total, target)[1]).reduce((a, [, p]) => a.add(p), ZERO);
  }
}

/** @typedef {{low: number, high: number, targets_low: number | null, targets_high: number | null}} RollBand */

/** A mechanic (or any entity) the JavaScript target does not emit yet: every use throws NotSupported.
 * @param {string} kind @param {string} id @param {string} why */
export function notSupported(kind, id, why) {
  const fail = () => { throw new NotSupported(kind, id, why); };
  return Object.freeze({ id, notSupported: why, roll: fail, judge: fail, chance: fail, chances: fail, lookup: fail, rollChain: fail, at: fail, evaluate: fail });
}

// ---------------------------------------------------------------- lifepaths and burning (lifepaths.py)

/** @typedef {{id: string, name: string, setting: string, born: boolean, time: number, resources: number, stat: {mental: number, physical: number, either: number} | null, leads: readonly string[], skills: {points: number, options: readonly (readonly string[])[]} | null, general: number | null, traits: {points: number, options: readonly (readonly string[])[]} | null, requires: Requirement | null, restrictions: Requirement | null, tags: readonly string[], aliases: readonly string[]}} Lifepath */

/** @param {{options: readonly (readonly string[])[]} | null} choices */
function optionsOf(choices) {
  return choices !== null ? choices.options : [];
}

/** Lookups over the lifepaths that requirements need, built once per module. */
export class Catalog {
  /** @param {Record<string, Lifepath>} lifepaths */
  constructor(lifepaths) {
    this.lifepaths = lifepaths;
    const all = Object.values(lifepaths);
    /** @type {Record<string, string>} */ this.settings = Object.fromEntries(all.map((lp) => [lp.id, lp.setting]));
    /** @type {Record<string, readonly string[]>} */ this.tags = Object.fromEntries(all.map((lp) => [lp.id, lp.tags]));
    /** @type {Record<string, readonly string[]>} */ this.skills = Object.fromEntries(all.map((lp) => [lp.id, optionsOf(lp.skills).flat()]));
    /** @type {Record<string, readonly string[]>} */ this.traits = Object.fromEntries(all.map((lp) => [lp.id, optionsOf(lp.traits).flat()]));
  }
  /** The id of the lifepath written as an id, a display name or an alias. @param {string} text */
  find(text) {
    if (Object.hasOwn(this.lifepaths, text)) return text;
    const key = slug(text);
    if (Object.hasOwn(this.lifepaths, key)) return key;
    const found = Object.values(this.lifepaths).filter((lp) => [lp.name, ...lp.aliases].some((n) => slug(n) === key)).map((lp) => lp.id).sort();
    if (found.length === 1) return found[0];
    if (found.length) throw new RangeError(`'${text}' could mean several lifepaths: ${found.join(", ")}`);
    throw new RangeError(`no lifepath named '${text}'`);
  }
}

/** @typedef {{traits?: readonly string[], age?: number | null, lifepaths?: number | null, gender?: string | null, held?: Record<string, readonly string[]>}} PathOptions */

/** The facts a requirement of `lifepath`, taken after `previous`, is judged on. @implements {Facts} */
export class PathFacts {
  /** @param {Catalog} catalog @param {string} lifepath @param {readonly string[]} previous @param {PathOptions} [options] */
  constructor(catalog, lifepath, previous, options = {}) {
    this.catalog = catalog;
    this.lifepath = lifepath;
    this.previous = Object.freeze([...previous]);
    this.chosenTraits = new Set(options.traits ?? []);
    this.age = options.age ?? null;
    this.ageAtEntry = ageBefore(catalog, previous, lifepath);
    this.lifepaths = options.lifepaths ?? null;
    this.gender = options.gender ?? null;
    this.held = options.held ?? {};
  }
  /** @param {string} subject @returns {number | string | null} */
  fact(subject) {
    switch (subject) {
      case "age": return this.age;
      case "age_at_entry": return this.ageAtEntry;
      case "lifepaths": return this.lifepaths;
      case "gender": return this.gender === null ? null : slug(this.gender);
      case "position": return this.previous.length + 1;
      case "times_taken": return this.previous.filter((lp) => lp === this.lifepath).length + 1;
      default: throw new RangeError(`no fact ${subject}`);
    }
  }
  /** @param {string} kind @param {string} entity @returns {Verdict} */
  holds(kind, entity) {
    if (kind === "lifepath") return this.previous.includes(entity);
    if (kind === "trait") return this.chosenTraits.has(entity) || this.previous.some((lp) => (this.catalog.traits[lp] ?? []).includes(entity));
    const held = this.held[kind];
    return held === undefined ? null : held.includes(entity);
  }
  /** @param {string} lifepath */ skillsOf(lifepath) { return this.catalog.skills[lifepath] ?? []; }
  /** @param {string} lifepath */ settingOf(lifepath) { return this.catalog.settings[lifepath] ?? null; }
  /** @param {string} lifepath */ tagsOf(lifepath) { return this.catalog.tags[lifepath] ?? []; }
}

/** Years lived before `lifepath` (or after all of `previous`). @param {Catalog} catalog @param {readonly string[]} previous @param {string | null} [lifepath] */
export function ageBefore(catalog, previous, lifepath = null) {
  const known = previous.filter((lp) => Object.hasOwn(catalog.lifepaths, lp)).map((lp) => catalog.lifepaths[lp]);
  const here = lifepath !== null && Object.hasOwn(catalog.lifepaths, lifepath) ? catalog.lifepaths[lifepath] : null;
  const chain = here !== null ? [...known, here] : known;
  let leads = 0;
  for (let i = 1; i < chain.length; i++) if (chain[i - 1].setting !== chain[i].setting) leads++;
  return known.reduce((a, lp) => a + lp.time, 0) + leads;
}

/** @param {Lifepath} lifepath @param {Facts} path @returns {Verdict} */
export function verdict(lifepath, path) {
  const verdicts = [lifepath.requires, lifepath.restrictions].filter((r) => r !== null).map((r) => /** @type {Requirement} */ (r).judge(path));
  if (verdicts.includes(false)) return false;
  return verdicts.includes(null) ? null : true;
}

/** @param {Lifepath} lifepath @param {Facts} path @param {Names} names @param {Verdict} decided */
export function reasons(lifepath, path, names, decided) {
  /** @type {string[]} */ const found = [];
  for (const [requirement, label] of /** @type {[Requirement | null, string][]} */ ([[lifepath.requires, "requires"], [lifepath.restrictions, "restricted to"]])) {
    if (requirement !== null && requirement.judge(path) === decided) found.push(`${label}: ${requirement.describe(names)}`);
  }
  return found;
}

const REPEAT_COLUMNS = ["years", "skill_points", "general_points", "trait_points", "resources", "stat"];

/** @param {Record<string, Table<any>>} tables @param {number} times @returns {Record<string, Fraction>} */
function repeatFactors(tables, times) {
  const table = tables.lifepath_repeats;
  if (table === undefined) return {};
  let row;
  try {
    row = table.lookup(times);
  } catch (error) {
    if (error instanceof RangeError) return {};
    throw error;
  }
  return Object.fromEntries(REPEAT_COLUMNS.filter((n) => Object.hasOwn(row, n)).map((n) => [n, Fraction.of(row[n])]));
}

/** @param {readonly string[]} words @param {string} last */
function listed(words, last) {
  return words.length === 1 ? words[0] : `${words.slice(0, -1).join(", ")} ${last} ${words[words.length - 1]}`;
}

/** @param {Record<string, Fraction>} factor @param {string} name */
function factorOf(factor, name) {
  return factor[name] ?? ONE;
}

/** The character's stock: the stock of the setting of its born lifepath (the first of `lifepaths`); null when
 * that lifepath or its setting is unknown (lifepaths.py born_stock).
 * @param {Catalog} catalog @param {Record<string, {stock: string}>} settings @param {readonly string[]} lifepaths
 * @returns {string | null} */
export function bornStock(catalog, settings, lifepaths) {
  const first = lifepaths.length && Object.hasOwn(catalog.lifepaths, lifepaths[0]) ? catalog.lifepaths[lifepaths[0]] : null;
  return first !== null && Object.hasOwn(settings, first.setting) ? settings[first.setting].stock : null;
}

/** The common traits of the character's stock, in the stock's order: had from birth (lifepaths.py common_traits).
 * @param {Catalog} catalog @param {Record<string, {stock: string}>} settings
 * @param {Record<string, {common_traits: readonly string[]}>} stocks @param {readonly string[]} lifepaths
 * @returns {string[]} */
export function commonTraits(catalog, settings, stocks, lifepaths) {
  const stock = bornStock(catalog, settings, lifepaths);
  return stock !== null && Object.hasOwn(stocks, stock) ? [...stocks[stock].common_traits] : [];
}

/** @typedef {{lifepaths: string[], stock: string | null, age: number, mental_pool: number | null, physical_pool: number | null, mental_bonus: number, physical_bonus: number, lifepath_skill_points: number, general_skill_points: number, required_skills: string[], trait_points: number, required_traits: string[], common_traits: string[], resource_points: number, violations: string[], undecided: string[]}} Sheet */
/** @typedef {{either?: readonly string[], gender?: string | null, traits?: readonly string[], held?: Record<string, readonly string[]>, picks?: readonly string[]}} BurnOptions */

/**
 * Burn a character from lifepath ids (born lifepath first): the sheet is a plain frozen object whose
 * `JSON.stringify` is the Python sheet's `to_json()`.
 * @param {Catalog} catalog @param {Record<string, {stock: string}>} settings @param {Record<string, {common_traits: readonly string[], stat_pools: string | null}>} stocks
 * @param {Record<string, Table<any>>} tables @param {Names} names @param {readonly string[]} lifepaths @param {BurnOptions} [options]
 * @returns {Readonly<Sheet>}
 */
export function burnCharacter(catalog, settings, stocks, tables, names, lifepaths, options = {}) {
  const traits = options.traits ?? [];
  /** @type {string[]} */ const violations = [];
  /** @type {string[]} */ const undecided = [];
  const path = lifepaths.map((lp) => catalog.lifepaths[lp]);
  /** @param {Lifepath} lp */
  const label = (lp) => nameOf(names, "lifepath", lp.id);
  if (!path.length) violations.push("a character needs at least a born lifepath");
  path.forEach((lp, i) => {
    if (i === 0 && !lp.born) violations.push(`${label(lp)} is not a born lifepath, and the first lifepath must be one`);
    if (i > 0 && lp.born) violations.push(`${label(lp)} is a born lifepath and can only be the first`);
    if (i > 0 && lp.setting !== path[i - 1].setting && !path[i - 1].leads.includes(lp.setting)) {
      violations.push(`${label(path[i - 1])} has no lead to the ${nameOf(names, "setting", lp.setting)}, so ${label(lp)} cannot follow it`);
    }
  });
  /** @param {number} i */
  const timesAt = (i) => lifepaths.slice(0, i + 1).filter((id) => id === lifepaths[i]).length;
  const factors = path.map((_, i) => repeatFactors(tables, timesAt(i)));
  let age = path.reduce((a, lp, i) => a + whole(Fraction.of(lp.time).mul(factorOf(factors[i], "years")).floor()), 0);
  for (let i = 1; i < path.length; i++) if (path[i - 1].setting !== path[i].setting) age++;
  const stock = bornStock(catalog, settings, lifepaths);
  // The stock's common traits are the character's from birth: requirements naming a trait see them
  const common = commonTraits(catalog, settings, stocks, lifepaths);
  const had = [...traits, ...common];
  path.forEach((lp, i) => {
    const facts = new PathFacts(catalog, lp.id, lifepaths.slice(0, i), { traits: had, age, lifepaths: path.length, gender: options.gender ?? null, held: options.held });
    violations.push(...reasons(lp, facts, names, false).map((r) => `${label(lp)} (lifepath ${i + 1}) ${r}`));
    undecided.push(...reasons(lp, facts, names, null).map((r) => `${label(lp)} (lifepath ${i + 1}) ${r}`));
  });
  /** @type {number | null} */ let mentalPool = null;
  /** @type {number | null} */ let physicalPool = null;
  const poolsTable = stock !== null && Object.hasOwn(stocks, stock) ? stocks[stock].stat_pools : null;
  if (poolsTable !== null && Object.hasOwn(tables, poolsTable)) {
    try {
      const row = tables[poolsTable].lookup(age);
      mentalPool = wholeOf(row.mental, "a mental pool");
      physicalPool = wholeOf(row.physical, "a physical pool");
    } catch (error) {
      if (!(error instanceof RangeError)) throw error;
      violations.push(`no stat pools for age ${age} in ${tables[poolsTable].name}`);
    }
  }
  let mentalBonus = 0, physicalBonus = 0, skillPoints = 0, general = 0, traitPoints = 0, resources = 0;
  const choices = [...(options.either ?? [])];
  // the player's picks: as given -> the id each names; the ids that settled an alternative
  const known = new Set([...Object.values(catalog.skills), ...Object.values(catalog.traits)].flat());
  /** @type {Map<string, string>} */ const picks = new Map((options.picks ?? []).map((p) => [p, known.has(p) ? p : slug(p)]));
  const pickIds = new Set(picks.values());
  /** @type {Set<string>} */ const used = new Set();
  /** @typedef {{kind: string, owned: Set<string>, required: string[], open: Set<string>}} Required */
  /** @type {Required} */ const skillEntries = { kind: "skill", owned: new Set(), required: [], open: new Set() };
  /** @type {Required} */ const traitEntries = { kind: "trait", owned: new Set(had), required: [], open: new Set() }; // a trait already had: the next is required
  /** @param {Required} required @param {{options: readonly (readonly string[])[]} | null} lpChoices */
  const next = (required, lpChoices) => {
    for (const options_ of optionsOf(lpChoices)) {
      if (!options_.some((o) => required.owned.has(o)) && !required.open.has(JSON.stringify(options_))) return options_;
    }
    return null;
  };
  /** @param {Required} required @param {readonly string[]} entry @param {string} where */
  const settle = (required, entry, where) => {
    let picked = [...entry];
    if (entry.length > 1) {
      picked = entry.filter((o) => pickIds.has(o));
      for (const p of picked) used.add(p);
    }
    if (picked.length === 1) {
      required.required.push(picked[0]);
      required.owned.add(picked[0]);
      return;
    }
    required.open.add(JSON.stringify(entry));
    const options_ = listed(entry.map((o) => nameOf(names, required.kind, o)), "or");
    if (!picked.length) {
      undecided.push(`choose ${options_} for ${where}, its required ${required.kind}`);
    } else {
      const several = listed(picked.map((o) => nameOf(names, required.kind, o)), "and");
      violations.push(`${where} requires one ${required.kind} of ${options_}, but ${several} were picked: keep one`);
    }
  };
  path.forEach((lp, i) => {
    const factor = factors[i];
    const times = timesAt(i);
    /** @param {string} name @param {number} amount */
    const earned = (name, amount) => whole(Fraction.of(amount).mul(factorOf(factor, name)).floor());
    const stat = lp.stat ?? { mental: 0, physical: 0, either: 0 };
    if (!factorOf(factor, "stat").isZero()) {
      mentalBonus += stat.mental;
      physicalBonus += stat.physical;
      const step = stat.either > 0 ? 1 : -1; // a `-1 M/P` (Born Slave) takes one from the pool chosen
      for (let k = 0; k < Math.abs(stat.either); k++) {
        const choice = choices.length ? /** @type {string} */ (choices.shift()).toUpperCase() : null;
        if (choice === "M") mentalBonus += step;
        else if (choice === "P") physicalBonus += step;
        else violations.push(`choose M or P for the ${step > 0 ? "+" : "-"}1 M/P of ${label(lp)} (lifepath ${i + 1})`);
      }
    }
    skillPoints += earned("skill_points", lp.skills ? lp.skills.points : 0);
    general += earned("general_points", lp.general ?? 0);
    traitPoints += earned("trait_points", lp.traits ? lp.traits.points : 0);
    resources += earned("resources", lp.resources);
    const where = `${label(lp)} (lifepath ${i + 1})`;
    const skill = next(skillEntries, lp.skills);
    if (skill !== null && !factorOf(factor, "skill_points").isZero()) settle(skillEntries, skill, where);
    const trait = next(traitEntries, lp.traits);
    const hasPoints = Boolean(lp.traits && lp.traits.points);
    if (trait !== null && hasPoints && !factorOf(factor, "trait_points").isZero()) settle(traitEntries, trait, where);
    else if (trait === null && times > 1 && optionsOf(lp.traits).length && !factorOf(factor, "trait_points").isZero()) traitPoints -= 1;
  });
  if (choices.length) violations.push(`${choices.length} stat choice(s) left over: the path has fewer M/P bonuses`);
  for (const [given, id] of picks) {
    if (used.has(id)) continue;
    const shown = ["skill", "trait"].map((k) => names[k]?.[id]).find((n) => n !== undefined) ?? `'${given}'`;
    violations.push(`${shown} was picked, but no skill or trait this path requires offers it as a choice`);
  }
  return freeze({
    lifepaths: [...lifepaths],
    stock,
    age,
    mental_pool: mentalPool,
    physical_pool: physicalPool,
    mental_bonus: mentalBonus,
    physical_bonus: physicalBonus,
    lifepath_skill_points: skillPoints,
    general_skill_points: general,
    required_skills: skillEntries.required,
    trait_points: traitPoints,
    required_traits: traitEntries.required,
    common_traits: common,
    resource_points: resources,
    violations,
    undecided,
  });
}
