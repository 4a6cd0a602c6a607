// A killed host takes its worker processes with it at once: a host with
// calls queued is killed (SIGKILL, SIGINT, SIGTERM), and its workers start
// no call after that, are gone, and leave nothing in /dev/shm.
//
// KNITTING_TEST_PROCESS_RUNTIME=bun|deno (with KNITTING_TEST_PROCESS_EXECUTABLE)
// runs it with worker processes of that runtime (process-runtimes.test.mjs).
import test from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runtime as hostRuntime } from "./fixtures/runtime.mjs";
import { fixture } from "./helpers/children.mjs";
import { sleep, until } from "./helpers/wait.mjs";

const linux = process.platform === "linux";
const childRuntime = process.env.KNITTING_TEST_PROCESS_RUNTIME || hostRuntime;
const childExecutable = process.env.KNITTING_TEST_PROCESS_EXECUTABLE || undefined;
const runtimeOptions =
  childRuntime === hostRuntime ? {} : { processRuntime: childRuntime, processExecutable: childExecutable };
const THREADS = 2; // the fixture's pool

/** Lines in the log (0 while it does not exist). */
function lines(log) {
  if (!existsSync(log)) return 0;
  return readFileSync(log, "utf8").split("\n").filter(Boolean).length;
}

/** Pids whose parent is `ppid` (from /proc). */
function childrenOf(ppid) {
  const found = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[1]) === ppid) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** Whether process `pid` still runs (a zombie waiting to be reaped has ended). */
function running(pid) {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

const shmNames = (prefix) => readdirSync("/dev/shm").filter((n) => n.startsWith(prefix));

const cases = [
  { signal: "SIGKILL", memory: "inherit" },
  { signal: "SIGINT", memory: "inherit" },
  { signal: "SIGTERM", memory: "inherit" },
  { signal: "SIGKILL", memory: "named" },
];

for (const { signal, memory } of cases) {
  test(`a host killed by ${signal} (${memory} memory) with calls queued: its workers start no call after, and end`, {
    skip: linux ? false : "process workers need Linux",
  }, async () => {
    // Before: ~54 calls ran after the host died and the workers lived ~2.2 s on.
    const dir = mkdtempSync(join(tmpdir(), "knt-host-death-"));
    const log = join(dir, "calls.log");
    const prefix = `knt-test-death-${process.pid}`;
    const shmBefore = new Set(shmNames("knitting-native"));
    const worker = { ...runtimeOptions };
    if (memory === "named") worker.processSharedMemory = { mode: "named", namePrefix: prefix };
    const host = spawn(process.execPath, [fixture("host-death-host.mjs"), log, JSON.stringify(worker)], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    host.stdout.on("data", (chunk) => (out += chunk));
    const exited = new Promise((resolve) => host.on("exit", (code, sig) => resolve({ code, sig })));
    try {
      await until(() => out.includes("queued"), 60_000, "the host to queue its calls");
      // Both workers are at work (a few calls done) when the host dies.
      await until(() => lines(log) >= 6, 60_000, "the first calls to run");
      const workers = childrenOf(host.pid);
      assert.equal(workers.length, THREADS, `the host's worker processes: ${workers}`);
      host.kill(signal);
      const how = await exited;
      assert.equal(how.sig, signal, `the host ended by ${signal}: ${JSON.stringify(how)}`);
      const atDeath = lines(log);
      // Wide bounds: a call that had started may finish; none may start.
      await sleep(1500);
      const soon = lines(log);
      await sleep(2500);
      const later = lines(log);
      assert.ok(
        soon - atDeath <= THREADS,
        `${soon - atDeath} calls finished after the host died (at most the ${THREADS} running may)`,
      );
      assert.equal(later, soon, "the log still grew seconds after the host died");
      await until(() => workers.every((p) => !running(p)), 30_000, `worker processes ${workers} to end`);
      assert.deepEqual(shmNames(prefix), [], "a named region left in /dev/shm");
      const added = shmNames("knitting-native").filter((n) => !shmBefore.has(n));
      assert.deepEqual(added, [], "a region of the package left in /dev/shm");
    } finally {
      if (host.exitCode === null && host.signalCode === null) host.kill("SIGKILL");
      for (const p of childrenOf(host.pid)) process.kill(p, "SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
