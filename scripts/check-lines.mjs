// No source line over 120 characters (JS, TypeScript, Rust), run by
// `npm run lint`. Files written before the rule keep their current count of
// long lines as a ceiling (BEFORE_THE_RULE): a file may only lose long
// lines, and drops off the list once it has none.
//
// Usage: node scripts/check-lines.mjs [--baseline]
//   --baseline  print the current counts in BEFORE_THE_RULE's form

import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const MAX = 120;
const root = fileURLToPath(new URL("..", import.meta.url));

// Long lines per file when the rule came in; only ever lowered.
const BEFORE_THE_RULE = {
  "__test__/bad-input.test.mjs": 3,
  "__test__/codec-fuzz.test.mjs": 3,
  "__test__/faults.test.mjs": 5,
  "__test__/fixtures/codec-fuzz-worker.mjs": 1,
  "__test__/hard-timeout.test.mjs": 1,
  "__test__/host-safety.test.mjs": 2,
  "__test__/options-scheduling.test.mjs": 3,
  "__test__/pack.test.mjs": 2,
  "__test__/payload-room.test.mjs": 1,
  "__test__/permission.test.mjs": 4,
  "__test__/pool.test.mjs": 1,
  "__test__/region-fuzz.test.mjs": 1,
  "__test__/scheduling.test.mjs": 3,
  "__test__/traps.test.mjs": 14,
  "bench/lib/report-child.mjs": 1,
  "bench/lib/sched-child.mjs": 1,
  "bench/lib/sched-pools.mjs": 2,
  "bench/lib/sched.mjs": 15,
  "bench/lib/svg-chart.mjs": 5,
  "bench/report.mjs": 16,
  "bench/run.mjs": 1,
  "index.d.ts": 9,
  "lib/errors.js": 2,
  "lib/exit-guard.js": 1,
  "lib/native.js": 1,
  "lib/payload.js": 2,
  "lib/permission.js": 11,
  "lib/process-worker.js": 2,
  "lib/startup.js": 1,
  "lib/task-table.js": 1,
  "lib/thread-runtime.js": 1,
  "lib/worker-context.js": 2,
  "scripts/check-lines.mjs": 1,
  "scripts/soak.mjs": 8,
  "src/bindings.rs": 3,
  "src/process/mapping.rs": 1,
};

const tracked = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
  cwd: root,
  encoding: "utf8",
})
  .split("\0")
  .filter((f) => /\.(js|mjs|cjs|ts|mts|cts|rs)$/.test(f));

const long = new Map();
for (const file of tracked) {
  let text;
  try {
    text = readFileSync(join(root, file), "utf8");
  } catch {
    continue; // deleted in the work tree, not yet in git
  }
  const lines = text.split("\n").flatMap((line, i) => ([...line].length > MAX ? [i + 1] : []));
  if (lines.length > 0) long.set(file, lines);
}

if (process.argv.includes("--baseline")) {
  const sorted = [...long].sort(([a], [b]) => (a < b ? -1 : 1));
  console.log(JSON.stringify(Object.fromEntries(sorted.map(([f, l]) => [f, l.length])), null, 2));
  process.exit(0);
}

const problems = [];
for (const [file, lines] of long) {
  const allowed = BEFORE_THE_RULE[file] ?? 0;
  if (lines.length > allowed) {
    problems.push(
      `${file}: ${lines.length} lines over ${MAX} characters (allowed ${allowed}): lines ${lines.join(", ")}`,
    );
  }
}
const stale = Object.entries(BEFORE_THE_RULE).filter(([f, n]) => (long.get(f)?.length ?? 0) < n);
for (const [file, n] of stale) {
  problems.push(
    `${file}: now ${long.get(file)?.length ?? 0} long lines: lower its ceiling from ${n} in ${"scripts/check-lines.mjs"}`,
  );
}
if (problems.length > 0) {
  console.error(problems.join("\n"));
  process.exit(1);
}
console.log(`check-lines: ${tracked.length} files, no line over ${MAX} characters beyond the recorded ceilings`);
