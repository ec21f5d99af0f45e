// The JavaScript side of tests/test_javascript.py: loads a generated rules.js, answers each question of a
// JSON file (one per line of output, in order) with the same JSON the Python package gives, or an error.
//   node differential.mjs path/to/rules.js questions.json
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [modulePath, questionsPath] = process.argv.slice(2);
const rules = await import(pathToFileURL(modulePath).href);
const questions = JSON.parse(readFileSync(questionsPath, "utf-8"));

/** An argument as JSON carries it: {"fraction": "n/d"} is an exact Fraction. */
function argument(value) {
  if (value !== null && typeof value === "object" && "fraction" in value) {
    const [n, d] = value.fraction.split("/");
    return new rules.Fraction(BigInt(n), BigInt(d));
  }
  return value;
}

/** Follows a path of keys from the module's exports (`["TABLES", "loot", "dice", "dice", 0]`). */
function reach(path) {
  let here = rules;
  for (const key of path) here = here[key];
  return here;
}

function answer(q) {
  switch (q.op) {
    case "unsupported":
      return JSON.stringify(rules.NOT_SUPPORTED);
    case "chances":
      return rules.TABLES[q.table].chancesJson(q.modifier, q.given);
    case "distribution":
      return reach(q.path).distributionJson(q.up_to);
    case "formula": {
      const args = Object.fromEntries(Object.entries(q.args).map(([k, v]) => [k, argument(v)]));
      return rules.jsonValue(rules.FORMULAS[q.id](args));
    }
    case "cell": {
      const args = Object.fromEntries(Object.entries(q.args).map(([k, v]) => [k, argument(v)]));
      return rules.jsonValue(reach(q.path).evaluate(args));
    }
    case "derive": {
      const derived = rules.deriveAttributes(q.values);
      return JSON.stringify(Object.fromEntries(Object.entries(derived).map(([k, v]) => [k, JSON.parse(rules.jsonValue(v))])));
    }
    case "mechanic": {
      const found = rules.MECHANICS[q.id][q.method](...q.args);
      return JSON.stringify(Array.isArray(found) ? found.map(([k, c]) => [k, c.toString()]) : found.toString());
    }
    case "burn":
      return JSON.stringify(rules.burn(q.path, q.options));
    case "names":
      // escaped to ASCII: an answer is one line, and U+2028 or U+0085 would split it for Python
      return JSON.stringify(q.texts.map((t) => [rules.casefold(t), rules.slug(t)])).replace(
        /[\u007f-\uffff]/g,
        (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"),
      );
    case "met":
      return JSON.stringify([
        rules.requirementMet(q.lifepath, q.previous, q.options),
        rules.unmetRequirements(q.lifepath, q.previous, q.options),
      ]);
    default:
      throw new Error(`no question ${q.op}`);
  }
}

const out = [];
for (const q of questions) {
  try {
    out.push(answer(q));
  } catch (error) {
    out.push(`error: ${error instanceof Error ? error.name : typeof error}`);
  }
}
process.stdout.write(out.join("\n") + "\n");
