// No source line over 120 characters (JS, TypeScript, Rust), run by
// `npm run lint`. No exceptions: a long string is split into a
// concatenation, a long comment reflowed.
//
// Usage: node scripts/check-lines.mjs

import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const MAX = 120;
const root = fileURLToPath(new URL("..", import.meta.url));

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

const problems = [...long].map(
  ([file, lines]) => `${file}: ${lines.length} lines over ${MAX} characters: lines ${lines.join(", ")}`,
);
if (problems.length > 0) {
  console.error(problems.join("\n"));
  process.exit(1);
}
console.log(`check-lines: ${tracked.length} files, no line over ${MAX} characters`);
