// The command-line parser of the bench scripts (run.mjs, report.mjs and the
// smaller tools beside them): each script declares its options as a table,
// and every script answers an unknown option, a missing value or a bad
// number the same way, naming what is allowed, and prints its usage on -h.

/** Ends the run with `bench: msg` on stderr and exit code 2 (a usage error). */
export function die(msg) {
  console.error(`bench: ${msg}`);
  process.exit(2);
}

/** "a, b,c" -> ["a", "b", "c"] (empty items dropped). */
export const list = (v) =>
  v
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

// Value readers: (text, option name) -> value, or die() naming the option.

export function positiveInt(v, name) {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) die(`${name} needs a positive integer, got ${JSON.stringify(v)}`);
  return n;
}

export function nonNegativeInt(v, name) {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) die(`${name} needs an integer >= 0, got ${JSON.stringify(v)}`);
  return n;
}

export function positiveNumber(v, name) {
  const n = Number(v);
  if (!(n > 0)) die(`${name} needs a number > 0, got ${JSON.stringify(v)}`);
  return n;
}

export const text = (v) => v;

export const json = (v, name) => {
  try {
    return JSON.parse(v);
  } catch (err) {
    return die(`${name} needs JSON: ${err.message}`);
  }
};

/** A comma-separated list, each item read by `item`. */
export const listOf = (item) => (v, name) => list(v).map((x) => item(x, name));

/** A non-empty comma-separated subset of `known`. */
export const subsetOf = (known) => (v, name) => {
  const l = list(v);
  const unknown = l.filter((x) => !known.includes(x));
  if (unknown.length || !l.length) die(`${name}: unknown value(s) ${unknown.join(", ")} (known: ${known.join(", ")})`);
  return l;
};

/**
 * Reads `argv` against `spec`:
 *   options     { "--name": [key, read] }: `read(text, name)` gives the value of
 *               `key`; `read` true: a flag (key set to true); key null: accepted
 *               and ignored. Unknown options end the run, listing the allowed ones.
 *   internal    option names left out of that list (parent-to-child options)
 *   defaults    the values of keys no option set
 *   usage       printed for -h / --help (then exit 0)
 *   positionals how many arguments not starting with "-" are allowed (default 0),
 *               returned in order as `_`
 *   required    the names of the leading positionals that must be given ("DIR")
 */
export function parseArgs(argv, { options, internal = [], defaults = {}, usage, positionals = 0, required = [] }) {
  const o = { ...defaults, _: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "-h" || a === "--help") {
      console.log(usage);
      process.exit(0);
    }
    if (!a.startsWith("-")) {
      if (o._.length >= positionals)
        die(`unexpected argument ${JSON.stringify(a)} (options start with --; see --help)`);
      o._.push(a);
      continue;
    }
    if (!Object.hasOwn(options, a)) {
      const allowed = Object.keys(options).filter((k) => !internal.includes(k));
      die(`unknown option ${a}; allowed: ${allowed.join(" ")} -h --help`);
    }
    const [key, read] = options[a];
    if (read === true) {
      if (key !== null) o[key] = true;
      continue;
    }
    if (i + 1 >= argv.length) die(`${a} needs a value`);
    const value = read(argv[++i], a);
    if (key !== null) o[key] = value;
  }
  if (o._.length < required.length) die(`${required[o._.length]} is missing\n${usage}`);
  return o;
}
