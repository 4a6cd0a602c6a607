#!/usr/bin/env node
// What `threads` should default to: cores or cores minus one. Runs, for
// each size, the three shapes a pool is used in:
//   cpu-bound  bench/user/cpu-burst.mjs: bursts of 2,000 x ~1 ms calls (ms per burst)
//   tiny       `node bench/run.mjs --only knitting --only-workload calls` (calls/s)
//   http       bench/user/http-server.mjs: 32 keep-alive clients, each request a
//              ~0.5 ms task, for 5 s (requests/s)
//
//   node bench/threads-default.mjs [--reps N]
import { spawn, execFileSync } from "node:child_process";
import { request, Agent } from "node:http";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { median } from "./lib/stats.mjs";

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const reps = Number(process.argv[process.argv.indexOf("--reps") + 1]) || 3;
const cores = availableParallelism();
const sizes = [...new Set([Math.max(1, cores - 1), cores])];

function cpuBound(threads) {
  const out = execFileSync(process.execPath, [here("./user/cpu-burst.mjs"), JSON.stringify({ threads, bursts: 3 })]);
  const r = JSON.parse(out.toString().trim().split("\n").pop());
  return { n: r.n, ms: median(r.pools.knitting.bursts.map((b) => b.wallMs)) };
}

function tiny(threads) {
  const out = execFileSync(
    process.execPath,
    [here("./run.mjs"), "--only", "knitting", "--only-workload", "calls", "--threads", String(threads), "--reps", "1"],
    { stdio: ["ignore", "pipe", "ignore"] },
  ).toString();
  // The results table's row: "| knitting-native |  1,281,153 |   2.50 |   8.32 |" (calls/s, p50, p99).
  const m = out.match(/^\| knitting-native \|\s*([\d,]+)\s*\|/m);
  if (!m) throw new Error(`no knitting-native row in bench/run.mjs output:\n${out}`);
  return Number(m[1].replace(/,/g, ""));
}

async function http(threads, n) {
  const child = spawn(process.execPath, [here("./user/http-server.mjs"), String(threads), String(n)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const port = await new Promise((resolve) => {
    child.stdout.on("data", (d) => {
      const m = String(d).match(/listening (\d+)/);
      if (m) resolve(Number(m[1]));
    });
  });
  const agent = new Agent({ keepAlive: true, maxSockets: 32 });
  const get = () =>
    new Promise((resolve, reject) => {
      const req = request({ host: "127.0.0.1", port, agent, path: "/" }, (res) => {
        res.resume();
        res.on("end", resolve);
      });
      req.on("error", reject);
      req.end();
    });
  let done = 0;
  const end = performance.now() + 5_000;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (performance.now() < end) {
        await get();
        done++;
      }
    }),
  );
  agent.destroy();
  child.kill("SIGTERM");
  return done / 5;
}

const results = {};
for (const t of sizes) results[t] = { cpu: [], tiny: [], http: [] };
for (let r = 0; r < reps; r++) {
  for (const t of sizes) {
    const c = cpuBound(t);
    results[t].cpu.push(c.ms);
    results[t].tiny.push(tiny(t));
    results[t].http.push(await http(t, Math.round(c.n / 2)));
    process.stderr.write(`rep ${r + 1}, threads ${t}: ${JSON.stringify(results[t])}\n`);
  }
}
console.log(`threads-default: ${cores} cores, Node ${process.versions.node}, ${reps} reps, medians`);
for (const t of sizes) {
  const x = results[t];
  console.log(
    `  threads ${t}: cpu-bound burst ${median(x.cpu).toFixed(0)} ms, tiny ${Math.round(median(x.tiny))} calls/s, ` +
      `http ${Math.round(median(x.http))} req/s`,
  );
}
