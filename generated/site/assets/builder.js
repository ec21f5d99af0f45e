/* The character builder (builder.html): burns a character with the ruleset's own rules, rules.global.js
 * (rules.js as a classic script, since browsers run no ES module from file://), so every total, violation
 * and undecided rule is the one the Python package's burn() gives. The state lives in the address:
 * ?path=born_peasant,farmer&either=M&pick=farming&seed=7. Nothing here throws on bad input: a problem is
 * said in words on the page. */
(function () {
  "use strict";
  const root = document.getElementById("builder");
  const dataNode = document.getElementById("b-data");
  if (!root || !dataNode) return;
  const problem = document.getElementById("b-problem");
  const data = JSON.parse(dataNode.textContent || "{}");
  const R = (window.rulesdsl || {})[data.ruleset];
  const $ = (id) => document.getElementById(id);

  function say(text) {
    problem.textContent = text;
    problem.hidden = !text;
  }
  if (!R) {
    say("The rules of " + data.title + " (rules.global.js, beside this page) did not load, so nothing can be worked out here.");
    return;
  }

  /** An element with attributes and children (text or nodes). */
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "text") node.textContent = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? "" : v);
    }
    for (const child of children.flat()) if (child !== null && child !== undefined) node.append(child);
    return node;
  }

  const names = R.NAMES || {};
  const registries = { table: R.TABLES, attribute: R.ATTRIBUTES };
  /** The name people know an entry by: rules.js's display names, else its registry's name. */
  const named = (kind, id) => (names[kind] && names[kind][id]) || ((registries[kind] || {})[id] || {}).name || id;
  /** A link to an entry in the reference, else its name. */
  function link(kind, id) {
    const href = ((data.links || {})[kind] || {})[id];
    return href ? el("a", { href, text: named(kind, id) }) : el("span", { text: named(kind, id) });
  }
  function listed(words, last) {
    return words.length < 2 ? words.join("") : words.slice(0, -1).join(", ") + " " + last + " " + words[words.length - 1];
  }

  const query = new URLSearchParams(location.search);
  const notes = [];
  /** A parameter's comma-separated values (empty ones kept: `either=M,,P` leaves the second open). */
  function values(name) {
    const raw = query.get(name);
    return raw === null || raw === "" ? [] : raw.split(",").map((v) => v.trim());
  }

  function setAddress(params) {
    const parts = [];
    for (const [name, list] of params) if (list.length && list.some((v) => v !== "")) parts.push(name + "=" + list.map(encodeURIComponent).join(","));
    const search = parts.length ? "?" + parts.join("&") : "";
    try {
      history.replaceState(null, "", location.pathname + search + location.hash);
    } catch (error) {
      // some browsers refuse to change the address of a file:// page; the page works on without it
    }
  }

  // ------------------------------------------------------------------ lifepaths
  const LP = R.LIFEPATHS;
  const lifepathState = LP ? setUpLifepaths() : null;

  function setUpLifepaths() {
    const all = Object.values(LP);
    const born = all.filter((lp) => lp.born);
    const settingName = (id) => named("setting", id);
    const stockOf = (lp) => ((R.SETTINGS || {})[lp.setting] || {}).stock || null;
    const state = { path: [], either: [], picks: [] };

    // the address: unknown ids are left out and said so
    function find(text) {
      if (Object.hasOwn(LP, text)) return text;
      const key = R.slug(text);
      if (Object.hasOwn(LP, key)) return key;
      const found = all.filter((lp) => [lp.name, ...lp.aliases].some((n) => R.slug(n) === key));
      if (found.length > 1) return found.map((lp) => lp.id).sort();
      return found.length === 1 ? found[0].id : null;
    }
    for (const given of values("path")) {
      if (!given) continue;
      const id = find(given);
      if (id === null) notes.push(`“${given}” in the address is no lifepath of ${data.title}: it is left out.`);
      else if (Array.isArray(id)) notes.push(`“${given}” in the address could mean several lifepaths (${id.join(", ")}): it is left out; give its id.`);
      else state.path.push(id);
    }
    for (const given of values("either")) {
      const upper = given.toUpperCase();
      if (upper === "M" || upper === "P" || upper === "") state.either.push(upper);
      else {
        notes.push(`“${given}” in the address is no stat choice (M or P): that +1 is left open.`);
        state.either.push("");
      }
    }
    const choosable = new Set(all.flatMap((lp) => [lp.skills, lp.traits]).filter(Boolean).flatMap((c) => c.options.flat()));
    for (const given of values("pick")) {
      if (!given) continue;
      const id = choosable.has(given) ? given : R.slug(given);
      if (!choosable.has(id)) notes.push(`“${given}” in the address is no skill or trait a lifepath offers: it is left out.`);
      else state.picks.push(id);
    }

    /** A repeated lifepath earns by the lifepath_repeats table (Burning Wheel's second and third time). */
    function factor(times, column) {
      const table = R.TABLES.lifepath_repeats;
      if (!table) return true;
      try {
        const row = table.lookup(times);
        return !(column in row) || !R.Fraction.of(row[column]).isZero();
      } catch (error) {
        return true;
      }
    }
    const timesAt = (path, i) => path.slice(0, i + 1).filter((id) => id === path[i]).length;

    /** The +1 M/P bonuses of the path (where each is), in the order burn() takes `either`. */
    function eitherSlots(path) {
      const slots = [];
      path.forEach((id, i) => {
        const lp = LP[id];
        if (lp.stat && factor(timesAt(path, i), "stat")) for (let k = 0; k < lp.stat.either; k++) slots.push(i);
      });
      return slots;
    }

    /** The required skills and traits that are a choice, walked as burn() walks them: per lifepath the first
     * entry not yet held; an alternative the picks settle is held from then on. */
    function openChoices(path, picks) {
      const found = [];
      const owned = { skill: new Set(), trait: new Set() };
      const open = { skill: new Set(), trait: new Set() };
      path.forEach((id, i) => {
        const lp = LP[id];
        const times = timesAt(path, i);
        for (const [kind, choices, column] of [["skill", lp.skills, "skill_points"], ["trait", lp.traits, "trait_points"]]) {
          if (!choices || !factor(times, column) || (kind === "trait" && !choices.points)) continue;
          const entry = choices.options.find((o) => !o.some((x) => owned[kind].has(x)) && !open[kind].has(JSON.stringify(o)));
          if (!entry) continue;
          const picked = entry.length > 1 ? entry.filter((o) => picks.includes(o)) : [...entry];
          if (entry.length > 1) found.push({ kind, at: i, options: entry });
          if (picked.length === 1) owned[kind].add(picked[0]);
          else open[kind].add(JSON.stringify(entry));
        }
      });
      return found;
    }

    /** The lifepaths that may follow `path`: in its setting or one its last lifepath leads to, not born, and
     * not refused by their requirements (null, "depends on a fact left out", is offered). */
    const inSetting = new Map();
    for (const lp of all) if (!lp.born) (inSetting.get(lp.setting) || inSetting.set(lp.setting, []).get(lp.setting)).push(lp);
    const after = new Map();
    /** The lifepaths that may follow `id` by setting alone: in its setting or one it leads to, not born. */
    function candidates(id) {
      if (!after.has(id)) {
        const last = LP[id];
        after.set(id, [...new Set([last.setting, ...last.leads])].flatMap((s) => inSetting.get(s) || []));
      }
      return after.get(id);
    }
    /** requirementMet, with no work for a lifepath that has no requirement (most have none). */
    const allowed = (lp, path) => (lp.requires === null && lp.restrictions === null ? true : R.requirementMet(lp.id, path));

    function following(path) {
      const offered = [], refused = [];
      for (const lp of candidates(path[path.length - 1])) {
        const verdict = allowed(lp, path);
        (verdict === false ? refused : offered).push([lp, verdict]);
      }
      return { offered, refused };
    }

    /** Every path from `start` to a lifepath named `target` in at most `steps` lifepaths after it, shortest
     * first; a path stops at the first lifepath so named. A lifepath is walked only when the leads let it
     * reach a target in the steps left (`more`: the fewest lifepaths after it to a target, requirements aside). */
    const FINDER_WORK = 200000, FINDER_PATHS = 1000, FINDER_STOP = {};  // at most that many checks, paths
    const before = new Map();  // lifepath -> those it may follow by setting (made on the first search)
    function findPaths(start, targetName, steps) {
      const targets = new Set(all.filter((lp) => lp.name === targetName).map((lp) => lp.id));
      if (!before.size) for (const lp of all) for (const c of candidates(lp.id)) (before.get(c.id) || before.set(c.id, []).get(c.id)).push(lp.id);
      const more = new Map([...targets].map((id) => [id, 0]));
      let frontier = [...targets];
      for (let d = 1; frontier.length && d <= steps; d++) {
        const next = [];
        for (const id of frontier) for (const p of before.get(id) || []) if (!more.has(p)) (more.set(p, d), next.push(p));
        frontier = next;
      }
      // a step at a time (every path of one lifepath more), so that what is found first is shortest, and
      // within a budget: long searches on a big ruleset stop, and say so, rather than hang the page
      const found = [];
      let work = 0, complete = true;
      const walk = (path, left) => {
        for (const lp of candidates(path[path.length - 1])) {
          const target = targets.has(lp.id);
          if (target ? left !== 1 : !(left > 1 && more.has(lp.id) && more.get(lp.id) <= left - 1)) continue;
          if (++work > FINDER_WORK || found.length >= FINDER_PATHS) throw FINDER_STOP;
          if (allowed(lp, path) === false) continue;
          if (target) found.push([...path, lp.id]);
          else walk([...path, lp.id], left - 1);
        }
      };
      try {
        for (let length = 1; length <= steps; length++) walk([start], length);
      } catch (error) {
        if (error !== FINDER_STOP) throw error;
        complete = false;
      }
      return { found, complete, capped: found.length >= FINDER_PATHS };
    }

    return { all, born, state, settingName, stockOf, eitherSlots, openChoices, following, findPaths };
  }

  function lifepathLabel(id) {
    return named("lifepath", id);
  }

  function renderPath() {
    const { state } = lifepathState;
    const list = $("b-path");
    list.replaceChildren(
      ...state.path.map((id, i) => {
        const lp = LP[id];
        return el("li", {}, link("lifepath", id), el("small", { text: ` ${lifepathState.settingName(lp.setting)}, ${lp.time} yrs` }));
      }),
    );
    if (!state.path.length) list.append(el("li", { class: "b-empty", text: "No lifepath yet." }));
    $("b-undo").disabled = !state.path.length;
    $("b-clear").disabled = !state.path.length;
  }

  /** A lifepath's button; in a list under its setting's name, by its own name where that tells it apart. */
  function offerButton(lp, verdict, then, shortName) {
    const label = shortName ? lp.name : lifepathLabel(lp.id);
    return el(
      "li",
      {},
      el("button", { type: "button", class: "b-offer", "data-id": lp.id, onclick: () => then(lp.id) }, label),
      el("small", { text: ` ${lp.time} yrs` + (verdict === null ? "; depends on a fact not known yet (the final age, say)" : "") }),
    );
  }

  function renderNext(focusNext) {
    const { state, born, following, settingName } = lifepathState;
    const box = $("b-next");
    box.replaceChildren();
    const add = (id) => {
      state.path.push(id);
      changed("add");
    };
    if (!state.path.length) {
      box.append(el("h3", { id: "b-next-h", tabindex: "-1", text: "Born lifepaths" }));
      if (!born.length) {
        box.append(el("p", { class: "b-problem", text: `No lifepath of ${data.title} is a born lifepath (born: yes), and a character's first lifepath must be one: there is nothing to start from.` }));
        return;
      }
      const groups = new Map();
      for (const lp of born) {
        const stock = lifepathState.stockOf(lp);
        const key = stock ? named("stock", stock) : settingName(lp.setting);
        if (!groups.has(key)) groups.set(key, []);
        groups.get(key).push(lp);
      }
      for (const [head, lps] of groups) {
        box.append(el("p", { class: "b-group", text: head }), el("ul", { class: "b-offers", "aria-label": `Born lifepaths: ${head}` }, lps.map((lp) => offerButton(lp, true, add))));
      }
    } else {
      const { offered, refused } = following(state.path);
      const last = LP[state.path[state.path.length - 1]];
      box.append(el("h3", { id: "b-next-h", tabindex: "-1", text: `What may follow ${lifepathLabel(last.id)}` }));
      if (!offered.length) box.append(el("p", { text: "No lifepath may follow this one." }));
      const bySetting = new Map();
      for (const [lp, verdict] of offered) {
        if (!bySetting.has(lp.setting)) bySetting.set(lp.setting, []);
        bySetting.get(lp.setting).push([lp, verdict]);
      }
      const order = [last.setting, ...last.leads].filter((s) => bySetting.has(s));
      for (const setting of order) {
        const head = setting === last.setting ? `${settingName(setting)} (the same setting)` : `${settingName(setting)} (a lead)`;
        box.append(el("p", { class: "b-group", text: head }), el("ul", { class: "b-offers", "aria-label": settingName(setting) }, bySetting.get(setting).map(([lp, v], _, group) => offerButton(lp, v, add, group.filter(([o]) => o.name === lp.name).length === 1))));
      }
      if (refused.length) {
        const list = el("ul", { class: "b-refused" });
        const details = el("details", { class: "b-why-not" }, el("summary", { text: `Why not the others? ${refused.length} lifepath${refused.length === 1 ? "" : "s"} of these settings may not follow` }), list);
        details.addEventListener("toggle", () => {
          if (!details.open || list.childElementCount) return;
          for (const [lp] of refused) {
            const reasons = R.unmetRequirements(lp.id, state.path);
            list.append(el("li", {}, el("details", {}, el("summary", { text: lifepathLabel(lp.id) }), el("ul", {}, reasons.map((r) => el("li", { text: r }))))));
          }
        });
        box.append(details);
      }
      const leads = last.leads.map(settingName);
      box.append(el("p", { class: "hint", text: leads.length ? `${lifepathLabel(last.id)} leads to ${listed(leads, "and")}; other settings' lifepaths may not follow it.` : `${lifepathLabel(last.id)} leads to no other setting.` }));
    }
    // after a pick, on to what may follow it; after removing, only where the button pressed is gone
    if (focusNext && (focusNext === "add" || document.activeElement === null || document.activeElement.disabled || document.activeElement === document.body)) {
      const first = box.querySelector("button.b-offer");
      (first || $("b-next-h")).focus();
    }
  }

  function renderChoices() {
    const { state, eitherSlots, openChoices } = lifepathState;
    const box = $("b-choices");
    box.replaceChildren();
    const slots = eitherSlots(state.path);
    slots.forEach((at, k) => {
      const name = `b-either-${k}`;
      const where = `${lifepathLabel(state.path[at])} (lifepath ${at + 1})`;
      const pick = (value) => {
        while (state.either.length <= k) state.either.push("");
        state.either[k] = value;
        changed(false);
      };
      box.append(
        el("fieldset", { class: "b-choice" }, el("legend", { text: `${where}: +1 to which stat?` }),
          ["M", "P"].map((v) => el("label", {}, el("input", { type: "radio", name, id: `${name}-${v}`, value: v, checked: (state.either[k] || "") === v, onchange: () => pick(v) }), v === "M" ? " Mental" : " Physical"))),
      );
    });
    openChoices(state.path, state.picks).forEach((choice, k) => {
      const where = `${lifepathLabel(state.path[choice.at])} (lifepath ${choice.at + 1})`;
      const pick = (value) => {
        state.picks = state.picks.filter((p) => !choice.options.includes(p)).concat([value]);
        changed(false);
      };
      box.append(
        el("fieldset", { class: "b-choice" }, el("legend", { text: `${where}: which required ${choice.kind}?` }),
          choice.options.map((o) => el("label", {}, el("input", { type: "radio", name: `b-pick-${k}`, id: `b-pick-${k}-${o}`, value: o, checked: state.picks.includes(o), onchange: () => pick(o) }), " " + named(choice.kind, o)))),
      );
    });
    if (!box.childElementCount) box.append(el("p", { class: "hint", text: state.path.length ? "None: this path leaves nothing to choose." : "None yet." }));
  }

  let sheet = null;
  function renderSheet() {
    const { state } = lifepathState;
    const list = $("b-sheet");
    const rules = $("b-rules");
    list.replaceChildren();
    rules.replaceChildren();
    sheet = null;
    if (!state.path.length) {
      $("b-summary").textContent = "Pick a born lifepath to start.";
      $("b-json").textContent = "";
      $("b-print").disabled = $("b-download").disabled = true;
      return;
    }
    try {
      sheet = R.burn(state.path, { either: state.either, picks: state.picks });
    } catch (error) {
      $("b-summary").textContent = "";
      say(`This path cannot be burnt: ${error.message}`);
      return;
    }
    $("b-print").disabled = $("b-download").disabled = false;
    const row = (term, ...value) => list.append(el("div", {}, el("dt", { text: term }), el("dd", {}, ...value)));
    const entries = (kind, ids) => (ids.length ? ids.flatMap((id, i) => (i ? [", ", link(kind, id)] : [link(kind, id)])) : ["none"]);
    const pool = (base, bonus) => (base === null ? "none (the stock has no table)" : `${base + bonus}` + (bonus ? ` (${base} by age + ${bonus})` : ""));
    row("Stock", sheet.stock ? link("stock", sheet.stock) : "none");
    row("Lifepaths", `${sheet.lifepaths.length}`);
    row("Age", `${sheet.age}`);
    row("Mental pool", pool(sheet.mental_pool, sheet.mental_bonus));
    row("Physical pool", pool(sheet.physical_pool, sheet.physical_bonus));
    row("Lifepath skill points", `${sheet.lifepath_skill_points}`);
    row("General skill points", `${sheet.general_skill_points}`);
    row("Required skills", ...entries("skill", sheet.required_skills));
    row("Trait points", `${sheet.trait_points}`);
    row("Required traits", ...entries("trait", sheet.required_traits));
    if (Array.isArray(sheet.common_traits)) row("Common traits of the stock", ...entries("trait", sheet.common_traits));
    row("Resource points", `${sheet.resource_points}`);
    const block = (head, items, cls) => {
      rules.append(el("h3", { text: `${head} (${items.length})` }), items.length ? el("ul", { class: cls }, items.map((t) => el("li", { text: t }))) : el("p", { class: "hint", text: "None." }));
    };
    block("Broken rules", sheet.violations, "b-violations");
    block("Still undecided", sheet.undecided, "b-undecided");
    const pools = sheet.mental_pool === null ? "" : `, pools ${sheet.mental_pool + sheet.mental_bonus} mental and ${sheet.physical_pool + sheet.physical_bonus} physical`;
    const broken = sheet.violations.length ? `${sheet.violations.length} broken rule${sheet.violations.length === 1 ? "" : "s"}` : "no broken rule";
    $("b-summary").textContent =
      `${sheet.lifepaths.length} lifepath${sheet.lifepaths.length === 1 ? "" : "s"}: age ${sheet.age}${pools}, ` +
      `${sheet.lifepath_skill_points} + ${sheet.general_skill_points} skill points, ${sheet.trait_points} trait points, ` +
      `${sheet.resource_points} resource points; ${broken}` + (sheet.undecided.length ? `, ${sheet.undecided.length} undecided.` : ".");
    $("b-json").textContent = JSON.stringify(sheet);
  }

  function address() {
    const { state } = lifepathState || { state: { path: [], either: [], picks: [] } };
    const params = [["path", state.path], ["either", state.either], ["pick", state.picks]];
    if (rollState && rollState.kept) params.push(["seed", [String(rollState.seed)]]);
    setAddress(params);
  }

  /** After the player changes the path or a choice: what no longer applies is dropped, then all is shown. */
  function changed(pathChanged) {  // "add", true (another change of the path) or false (a choice)
    say("");
    const { state, eitherSlots, openChoices } = lifepathState;
    if (pathChanged) {
      state.either = state.either.slice(0, eitherSlots(state.path).length);
      const offered = new Set(openChoices(state.path, state.picks).flatMap((c) => c.options));
      state.picks = state.picks.filter((p) => offered.has(p));
    }
    const focused = document.activeElement && document.activeElement.id;  // a choice's radio is made anew
    guarded(() => {
      renderPath();
      renderNext(pathChanged);
      renderChoices();
      renderSheet();
      address();
    });
    const again = focused && !pathChanged ? document.getElementById(focused) : null;
    if (again && document.activeElement !== again) again.focus();
  }

  function guarded(work) {
    try {
      work();
    } catch (error) {
      say(`Something went wrong working this out: ${error && error.message ? error.message : error}`);
    }
  }

  function setUpFinder() {
    const { state, born, all, findPaths } = lifepathState;
    const from = $("b-from"), to = $("b-to"), steps = $("b-steps");
    for (const lp of born) from.append(el("option", { value: lp.id, text: lifepathLabel(lp.id) }));
    const targetNames = [...new Set(all.filter((lp) => !lp.born).map((lp) => lp.name))].sort((a, b) => a.localeCompare(b));
    for (const n of targetNames) to.append(el("option", { value: n, text: n }));
    if (state.path.length && LP[state.path[0]].born) from.value = state.path[0];
    if (!born.length) $("b-finder").querySelector("button").disabled = true;
    $("b-finder").addEventListener("submit", (event) => {
      event.preventDefault();
      guarded(() => {
        const n = Math.max(1, Math.min(6, Math.floor(Number(steps.value)) || 3));
        steps.value = String(n);
        const { found, complete, capped } = findPaths(from.value, to.value, n);
        const list = $("b-found");
        const shown = found.slice(0, 200);
        list.replaceChildren(
          ...shown.map((p) => {
            const href = "?path=" + p.map(encodeURIComponent).join(",");
            return el("li", {}, el("a", { href, text: p.map(lifepathLabel).join(" → ") }));
          }),
        );
        const what = `from ${lifepathLabel(from.value)} to ${to.value} in at most ${n} step${n === 1 ? "" : "s"}`;
        const count = `${found.length} path${found.length === 1 ? "" : "s"} ${what}`;
        $("b-found-status").textContent = complete
          ? (found.length ? `${count}, shortest first` : `No path ${what}`) + (found.length > shown.length ? `; the first ${shown.length} are listed.` : ".")
          : capped
            ? `At least ${found.length} paths ${what}; the search stopped there, and the ${shown.length} shortest are listed. Fewer steps find them all.`
            : `The search stopped, with too many ways left to try: ${found.length ? `${count} found so far, shortest first` : "no path found so far"}. Fewer steps search them all.`;
      });
    });
  }

  // ------------------------------------------------------------------ rolling: attributes and tables
  let rollState = null;

  function text(value) {
    if (value === null || value === undefined) return "none";
    if (value instanceof R.Fraction) return value.d === 1n ? String(value.n) : `${value.n}/${value.d}`;
    if (value instanceof R.Rolls) return `${value.times} × ${named("table", value.table)}`;
    if (typeof value === "object" && typeof value.text === "string") return value.text;
    if (Array.isArray(value)) return value.map(text).join(", ");
    if (typeof value === "object" && value.constructor === Object) return Object.entries(value).map(([k, v]) => `${k}: ${text(v)}`).join("; ");
    return String(value);
  }

  function setUpRolling() {
    const attributes = Object.values(R.ATTRIBUTES || {});
    const base = attributes.filter((a) => a.formula === null);
    const derived = attributes.filter((a) => a.formula !== null);
    const tables = Object.values(R.TABLES).filter((t) => t.dice && !t.notSupported);
    if (!attributes.length && !tables.length) return;
    $("b-roller").hidden = false;
    const seedInput = $("b-seed");
    const seedGiven = values("seed")[0];
    let seed = seedGiven !== undefined && /^\d+$/.test(seedGiven) ? Number(seedGiven) : 1;
    if (seedGiven !== undefined && !/^\d+$/.test(seedGiven)) notes.push(`“${seedGiven}” in the address is no seed (a whole number): seed 1 is used.`);
    rollState = { seed, kept: seedGiven !== undefined };  // in the address once given or chosen
    seedInput.value = String(seed);
    const setSeed = (value) => {
      rollState.seed = value;
      rollState.kept = true;
      seedInput.value = String(value);
      address();
    };
    seedInput.addEventListener("change", () => {
      const n = Math.floor(Number(seedInput.value));
      setSeed(Number.isFinite(n) && n >= 0 ? n : 1);
    });
    $("b-new-seed").addEventListener("click", () => setSeed(Math.floor(Math.random() * 1e9)));

    if (attributes.length) {
      const box = $("b-attributes");
      const inputs = {};
      const dice = data.dice || {};
      const out = el("dl", { class: "b-derived", id: "b-derived" });
      const status = el("p", { class: "b-summary", "aria-live": "polite", id: "b-attr-status" });
      const derive = () => {
        out.replaceChildren();
        const given = {};
        for (const a of base) {
          const n = Math.floor(Number(inputs[a.id].value));
          if (!Number.isFinite(n)) {
            status.textContent = `${a.name} is not a number.`;
            return;
          }
          given[a.id] = n;
        }
        let result;
        try {
          result = R.deriveAttributes(given);
        } catch (error) {
          status.textContent = `The derived attributes cannot be worked out from these: ${error.message}`;
          return;
        }
        for (const a of derived) out.append(el("div", {}, el("dt", {}, link("attribute", a.id)), el("dd", { text: R.jsonValue(result[a.id]).toString() })));
        status.textContent = derived.length ? derived.map((a) => `${a.name} ${R.jsonValue(result[a.id])}`).join(", ") : "";
      };
      const rows = base.map((a) => {
        const low = a.range ? a.range.low : null, high = a.range ? a.range.high : null;
        const start = low !== null && high !== null ? Math.floor((low + high) / 2) : low ?? high ?? 0;
        const input = (inputs[a.id] = el("input", { type: "number", id: `b-attr-${a.id}`, value: String(start), min: low, max: high, step: 1, onchange: derive }));
        const how = dice[a.id] ? R.TABLES[dice[a.id][0]].lookup(dice[a.id][1])[dice[a.id][2]] : null;
        return el("tr", {}, el("th", { scope: "row" }, el("label", { for: input.id, text: a.name + (a.abbr ? ` (${a.abbr})` : "") })), el("td", {}, input), el("td", { text: how ? `rolled ${how.text}` : low !== null ? `${low} to ${high ?? "…"}` : "" }));
      });
      const rollAll = () =>
        guarded(() => {
          const rng = R.seeded(rollState.seed);
          for (const a of base) if (dice[a.id]) inputs[a.id].value = String(R.TABLES[dice[a.id][0]].lookup(dice[a.id][1])[dice[a.id][2]].roll(rng));
          derive();
        });
      box.append(el("h3", { text: "Attributes" }));
      if (base.length) {
        box.append(el("table", { class: "b-attributes" }, el("thead", {}, el("tr", {}, el("th", { text: "Attribute" }), el("th", { text: "Value" }), el("th", { text: "From" }))), el("tbody", {}, rows)));
        if (base.some((a) => dice[a.id])) box.append(el("p", {}, el("button", { type: "button", id: "b-roll-attributes", onclick: rollAll }, "Roll the characteristics")));
      }
      if (derived.length) box.append(el("h4", { text: "Derived" }), out);
      box.append(status);
      guarded(derive);
    }

    if (tables.length) {
      const box = $("b-tables");
      const select = el("select", { id: "b-table" }, tables.map((t) => el("option", { value: t.id, text: t.name })));
      const result = el("ol", { class: "b-rolled", id: "b-rolled" });
      const status = el("p", { class: "b-summary", "aria-live": "polite", id: "b-table-status" });
      // a table rolled for a key it is given (`roll: region, 1d20`): a choice of its rows' names, else a number
      const givenBox = el("span", { class: "b-given" });
      const showGiven = () => {
        const table = R.TABLES[select.value];
        const options = (data.given || {})[table.id] || [];
        givenBox.replaceChildren(
          ...table.dice.given.map((name, i) => {
            const id = `b-given-${i}`;
            const named = options[i] || [];
            const control = named.length
              ? el("select", { id, "data-given": name }, named.map(([value, label]) => el("option", { value, text: label })))
              : el("input", { id, "data-given": name, type: "number", step: 1, value: "0" });
            return el("span", {}, " ", el("label", { for: id, text: `for ${name.replace(/_/g, " ")} ` }), control);
          }),
        );
      };
      select.addEventListener("change", () => guarded(showGiven));
      const roll = () =>
        guarded(() => {
          const table = R.TABLES[select.value];
          const given = {};
          for (const control of givenBox.querySelectorAll("[data-given]")) {
            given[control.dataset.given] = control.tagName === "SELECT" ? control.value : Math.floor(Number(control.value)) || 0;
          }
          const steps = table.rollChain(R.seeded(rollState.seed), 0, given);
          result.replaceChildren(
            ...steps.map((s) =>
              el("li", {}, link("table", s.table), el("span", { text: ` rolled ${s.numbers.join(", ")}${s.clamped ? " (past its rows: the nearest row)" : ""}: ` }), el("span", { class: "b-row", text: text(s.row) })),
            ),
          );
          status.textContent = `${steps.length} roll${steps.length === 1 ? "" : "s"}, starting on ${table.name} with seed ${rollState.seed}.`;
        });
      showGiven();
      box.append(el("h3", { text: "Tables" }), el("p", {}, el("label", { for: "b-table", text: "Table " }), select, givenBox, " ", el("button", { type: "button", id: "b-roll-table", onclick: roll }, "Roll, and on every table it leads to")), status, result);
    }
  }

  // ------------------------------------------------------------------ start
  guarded(setUpRolling);
  if (lifepathState) {
    const { state } = lifepathState;
    $("b-undo").addEventListener("click", () => {
      state.path.pop();
      changed(true);
    });
    $("b-clear").addEventListener("click", () => {
      state.path = [];
      state.either = [];
      state.picks = [];
      changed(true);
    });
    $("b-print").addEventListener("click", () => window.print());
    $("b-download").addEventListener("click", () => {
      if (!sheet) return;
      const blob = new Blob([JSON.stringify(sheet) + "\n"], { type: "application/json" });
      const a = el("a", { href: URL.createObjectURL(blob), download: `${data.ruleset}-${state.path[state.path.length - 1] || "character"}.json` });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(a.href), 1000);
    });
    guarded(setUpFinder);
    guarded(() => {
      renderPath();
      renderNext(false);
      renderChoices();
      renderSheet();
    });
  }
  if (notes.length) say(notes.join(" "));
  guarded(address);
})();
