// The server workload of `node bench/run.mjs`, parent side:
// 1. what pool statistics cost: tiny-call throughput with `stats: true`
//    against without, the two taking turns rep by rep (a fresh child process
//    each), so both sides see the same machine load;
// 2. an HTTP-style open-loop workload: requests arrive at 1.5x what the
//    workers can serve, with and without `maxQueue`: how many are shed
//    against the latency of those answered.
import { fileURLToPath } from "node:url";
import { median, fmtInt, renderTable } from "./stats.mjs";
import { superviseChild } from "./supervise.mjs";

const CHILD = fileURLToPath(new URL("./server-child.mjs", import.meta.url));

export function serverConfig(o) {
  const quick = o.quick;
  const calls = o.serverCalls ?? (quick ? 20_000 : 200_000);
  const serviceMs = 1;
  return {
    reps: o.serverReps ?? (quick ? 1 : 5),
    timeoutSec: o.timeout,
    stallSec: o.stall,
    threads: o.threads,
    window: o.window,
    calls,
    warmupCalls: Math.min(calls, 20_000),
    serviceMs,
    // 1.5x what `threads` workers serve at `serviceMs` each.
    rate: Math.round((1.5 * o.threads * 1000) / serviceMs),
    durationMs: quick ? 1000 : 3000,
    queues: [null, "auto", 8],
  };
}

const fmtMs = (v) => (Number.isFinite(v) ? v.toFixed(1) : "-");

export async function runServer(sc) {
  const watch = { timeoutSec: sc.timeoutSec, stallSec: sc.stallSec };
  const failed = [];
  const run = async (job, label) => {
    process.stderr.write(`bench: server: ${label}\n`);
    const r = await superviseChild(CHILD, [JSON.stringify({ ...job, cfg: sc })], label, watch, (how) => ({
      status: "error",
      error: how,
    }));
    if (r.status !== "ok") failed.push(`server ${label}: ${r.error}`);
    return r;
  };

  const on = [];
  const off = [];
  for (let rep = 1; rep <= sc.reps; rep++) {
    // Alternate which side goes first, so a drift in load favours neither.
    const order = rep % 2 === 1 ? [false, true] : [true, false];
    for (const stats of order) {
      const r = await run({ kind: "stats", stats }, `stats ${stats ? "on" : "off"}, rep ${rep}/${sc.reps}`);
      if (r.status === "ok") (stats ? on : off).push(r);
    }
  }
  const rate = (rs) => median(rs.map((r) => r.callsPerSec));
  const load = (rs) => median(rs.map((r) => r.noise?.foreignCores).filter(Number.isFinite));
  const lines = [];
  lines.push("");
  lines.push(
    `server: pool statistics, ${fmtInt(sc.calls)} x add([i, 1]) with ${fmtInt(sc.window)} in flight, ` +
      `${sc.threads} threads; ` +
      `medians of ${sc.reps} rep(s), the two sides taking turns`,
  );
  const ratio = rate(on) / rate(off);
  lines.push(
    renderTable(
      [["stats", "calls/s", "per rep", "other load (cores)"]],
      [
        [
          "off (default)",
          fmtInt(rate(off)),
          off.map((r) => fmtInt(r.callsPerSec)).join(", "),
          load(off)?.toFixed(2) ?? "-",
        ],
        [
          "on (stats: true)",
          fmtInt(rate(on)),
          on.map((r) => fmtInt(r.callsPerSec)).join(", "),
          load(on)?.toFixed(2) ?? "-",
        ],
      ],
    ),
  );
  const known = Number.isFinite(ratio);
  const slower = known ? ((1 - ratio) * 100).toFixed(1) : "-";
  lines.push(`  on/off: ${known ? ratio.toFixed(3) : "-"} (${slower}% slower with stats on)`);

  lines.push("");
  lines.push(
    `server: HTTP-style, ${fmtInt(sc.rate)} requests/s for ${sc.durationMs / 1000} s ` +
      `(1.5x what ${sc.threads} workers serve), ` +
      `each a ${sc.serviceMs} ms busy call; latency from arrival to answer of the requests not shed`,
  );
  const rows = [];
  for (const maxQueue of sc.queues) {
    const r = await run({ kind: "shed", maxQueue }, `maxQueue ${maxQueue === null ? "none" : maxQueue}`);
    const name = maxQueue === null ? "none (unbounded)" : JSON.stringify(maxQueue);
    if (r.status !== "ok") {
      rows.push([name, "FAILED", "", "", "", "", ""]);
      continue;
    }
    rows.push([
      name,
      fmtInt(r.offered),
      `${fmtInt(r.shed)} (${((100 * r.shed) / r.offered).toFixed(0)}%)`,
      fmtInt(r.peakQueue),
      fmtMs(r.p50),
      fmtMs(r.p99),
      r.noise ? r.noise.foreignCores.toFixed(2) : "-",
    ]);
  }
  lines.push(renderTable([["maxQueue", "requests", "shed", "peak queue", "p50 ms", "p99 ms", "other load"]], rows));
  return {
    lines,
    failed,
    json: { statsOn: on.map((r) => r.callsPerSec), statsOff: off.map((r) => r.callsPerSec), ratio },
  };
}
