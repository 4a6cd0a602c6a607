#!/usr/bin/env node
// Runs a command while busy loops keep cores occupied, the way a shared CI
// machine often is: tests that pass only on an idle machine fail here.
//
//   node scripts/with-busy-core.mjs node --test __test__/scheduling.test.mjs
//   BUSY_CORES=2 node scripts/with-busy-core.mjs npm test
//
// Exits with the command's exit code; the busy loops end with it.
import { spawn } from "node:child_process";

const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error("usage: node scripts/with-busy-core.mjs COMMAND [ARGS...]");
  process.exit(2);
}
const cores = Number(process.env.BUSY_CORES || 1);
const hogs = [];
for (let i = 0; i < cores; i++) {
  // An hour at most, in case this script is killed before it can end them.
  hogs.push(
    spawn(process.execPath, ["-e", "const end = Date.now() + 3600e3; while (Date.now() < end);"], { stdio: "ignore" }),
  );
}
const stop = () => hogs.forEach((h) => h.kill("SIGKILL"));
const child = spawn(command, args, { stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => {
  stop();
  process.exit(code ?? (signal ? 1 : 0));
});
