// The payload sweep of `node bench/run.mjs` (workload "payload"), parent
// side: every pool of the --report set echoes strings, Uint8Arrays and
// objects at 64 B .. 4 MiB, each pool in a fresh child process per
// repetition (bench/lib/payload-child.mjs), the pools taking turns rep by
// rep; the medians go into tables (calls/s and MB/s), the targets of the
// payload path, and a chart (bench/payload.svg by default).
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { median, fmtInt, fmtUs, fmtRatio, renderTable } from "./stats.mjs";
import { superviseChild } from "./supervise.mjs";
import { addTarget, formatTargets } from "./targets.mjs";
import { REPORT_POOLS } from "./report-pools.mjs";
import { SWEEP_KINDS, SWEEP_SIZES, sizeLabel, windowFor } from "./payloads.mjs";
import { renderChart } from "./svg-chart.mjs";

const CHILD = fileURLToPath(new URL("./payload-child.mjs", import.meta.url));
const COLORS = {
  knitting: "#d9480f",
  baseline: "#f59f00",
  raw: "#495057",
  piscina: "#1971c2",
  tinypool: "#2f9e44",
  workerpool: "#ae3ec9",
};
const KIND_LABEL = { string: "ASCII string", u8: "Uint8Array", object: "object" };

export const PAYLOAD_USAGE = `payload sweep (--only-workload payload; knitting-native, raw postMessage, piscina,
tinypool,
workerpool; a fresh child process per pool per rep; ~6 min with the defaults):
  --payload-reps R   repetitions (default 3; --quick: 1)
  --payload-ms MS    measured time per cell and pool, roughly (default 250; --quick: 80):
                     after a warm-up of at least 200 ms (--quick: 50) whose last
                     round's rate decides the number of calls
  --payload-kinds L  subset of: ${SWEEP_KINDS.join(",")}
  --payload-sizes L  subset of the sizes in bytes: ${SWEEP_SIZES.join(",")}
  --payload-pools L  subset of: ${REPORT_POOLS.map((p) => p.key).join(",")}
  --payload-baseline DIR
                     also run knitting-native from another checkout DIR (say a worktree of an
                     earlier commit, built), as the row "knitting-native (baseline)": a
                     before/after ratio measured in the same run
  --svg FILE         the chart (default bench/payload.svg; "-" for none)`;

/** The sweep's configuration from the command line's options `o` (bench/run.mjs). */
export function payloadConfig(o) {
  const quick = o.quick;
  const calls = o.calls ?? (quick ? 20_000 : 100_000);
  const seq = o.seq ?? (quick ? 2_000 : 10_000);
  return {
    reps: o.payloadReps ?? (quick ? 1 : 3),
    timeoutSec: o.timeout,
    stallSec: o.stall,
    svg: o.svg ?? fileURLToPath(new URL("../payload.svg", import.meta.url)),
    pools: o.payloadPools ?? REPORT_POOLS.map((p) => p.key),
    baseline: o.payloadBaseline ?? null,
    job: {
      threads: o.threads,
      calls,
      window: o.window,
      seq,
      warmupCalls: Math.min(calls, quick ? 5_000 : 20_000),
      warmupSeq: Math.min(seq, quick ? 500 : 2_000),
      cellMs: o.payloadMs ?? (quick ? 80 : 250),
      warmMs: quick ? 50 : 200,
      warmupMs: quick ? 200 : 1_000,
      kinds: o.payloadKinds ?? SWEEP_KINDS,
      sizes: o.payloadSizes ?? SWEEP_SIZES,
    },
  };
}

export async function runPayloadSweep(pc) {
  const defs = REPORT_POOLS.filter((p) => pc.pools.includes(p.key));
  if (pc.baseline) defs.splice(1, 0, { key: "baseline", label: "knitting-native (baseline)" });
  const reps = new Map(defs.map((d) => [d.key, []]));
  const broken = new Set();
  const t0 = Date.now();
  for (let rep = 1; rep <= pc.reps; rep++) {
    for (const def of defs) {
      if (broken.has(def.key)) continue;
      process.stderr.write(`bench: payload rep ${rep}/${pc.reps}: ${def.label}\n`);
      const job = { pool: def.key, rep, cfg: pc.job, baseline: pc.baseline };
      const r = await superviseChild(CHILD, [JSON.stringify(job)], def.label, pc, (how) => ({
        status: "error",
        error: how,
        mismatches: 0,
      }));
      reps.get(def.key).push(r);
      if (r.status !== "ok") broken.add(def.key);
    }
  }
  const wallS = (Date.now() - t0) / 1000;

  // ---- medians ----
  const sum = {};
  for (const def of defs) {
    const rs = reps.get(def.key);
    const cells = {};
    for (const kind of pc.job.kinds) {
      for (const size of pc.job.sizes) {
        const id = `${kind}:${size}`;
        const got = rs.map((r) => r.cells?.[id]).filter(Boolean);
        cells[id] = got.length
          ? {
              callsPerSec: median(got.map((c) => c.callsPerSec)),
              mbPerSec: median(got.map((c) => c.mbPerSec)),
              bytes: got[0].bytes,
              reps: got.map((c) => c.callsPerSec),
            }
          : null;
      }
    }
    const bad = rs.find((r) => r.status !== "ok");
    sum[def.key] = {
      key: def.key,
      label: def.label,
      status: bad ? bad.status : "ok",
      error: bad?.error ?? null,
      mismatches: rs.reduce((n, r) => n + (r.mismatches ?? 0), 0),
      firstMismatch: rs.find((r) => r.firstMismatch)?.firstMismatch ?? null,
      tiny: median(rs.map((r) => r.tiny?.callsPerSec)),
      p50: median(rs.map((r) => r.seq?.p50)),
      p99: median(rs.map((r) => r.seq?.p99)),
      seqReps: rs.map((r) => r.seq).filter(Boolean),
      foreignCores: median(rs.flatMap((r) => Object.values(r.cells ?? {}).map((c) => c.foreignCores))),
      cells,
    };
  }

  // ---- tables ----
  const out = [];
  const ours = sum.knitting;
  const raw = sum.raw;
  out.push("");
  out.push(
    `payload sweep: echo of the value (the task returns its argument), ${pc.job.threads} threads per pool, ` +
      `median of ${pc.reps} rep(s), a fresh process per pool per rep; every result checked`,
  );
  out.push(
    `calls in flight: ${pc.job.sizes.map((s) => `${sizeLabel(s)}: ${windowFor(s, pc.job.window)}`).join(", ")}; ` +
      `~${pc.job.cellMs} ms measured per cell after ${pc.job.warmMs} ms of warm-up; ` +
      "objects: 4 fields at 64 B, else { id, rows } of 20-field records (MB/s counts their JSON size)",
  );
  const ratioCols = [
    raw && "raw",
    ...defs.filter((d) => d.key !== "knitting" && d.key !== "raw").map((d) => d.key),
  ].filter(Boolean);
  for (const kind of pc.job.kinds) {
    const header = [
      [
        "size",
        ...defs.map((d) => `${d.label} calls/s (MB/s)`),
        ...(ours ? ratioCols.map((k) => `x ${sum[k].label}`) : []),
      ],
    ];
    const rows = pc.job.sizes.map((size) => {
      const id = `${kind}:${size}`;
      const row = [sizeLabel(size)];
      for (const d of defs) {
        const c = sum[d.key].cells[id];
        row.push(
          c ? `${fmtInt(c.callsPerSec)} (${c.mbPerSec >= 100 ? fmtInt(c.mbPerSec) : c.mbPerSec.toFixed(1)})` : "-",
        );
      }
      if (ours)
        for (const k of ratioCols) row.push(fmtRatio(ours.cells[id]?.callsPerSec / sum[k].cells[id]?.callsPerSec));
      return row;
    });
    out.push("");
    out.push(`${KIND_LABEL[kind]}:`);
    out.push(renderTable(header, rows));
  }
  out.push("");
  out.push(
    renderTable(
      [["pool", "tiny calls/s", "seq p50 µs", "seq p99 µs", "p99 per rep", "other load (cores)"]],
      defs.map((d) => {
        const r = sum[d.key];
        return [
          d.label,
          fmtInt(r.tiny),
          fmtUs(r.p50),
          fmtUs(r.p99),
          r.seqReps.map((s) => fmtUs(s.p99)).join(", "),
          Number.isFinite(r.foreignCores) ? r.foreignCores.toFixed(2) : "-",
        ];
      }),
    ),
  );
  out.push(
    `(tiny calls: ${fmtInt(pc.job.calls)} x add([i, 1]), ${fmtInt(pc.job.window)} in flight; sequential: ` +
      `${fmtInt(pc.job.seq)} x await add([i, 1]); ` +
      '"other load": CPU used by other processes during the cells, median; ' +
      `whole sweep ${wallS.toFixed(0)} s)`,
  );
  const notes = [];
  for (const d of defs) {
    const r = sum[d.key];
    if (r.status !== "ok")
      notes.push(`${d.label}: ${r.status === "unavailable" ? "NOT AVAILABLE" : "FAILED"}: ${r.error}`);
    if (r.mismatches > 0)
      notes.push(
        `${d.label}: ${r.mismatches} WRONG RESULTS; first in ${r.firstMismatch?.workload}: ${r.firstMismatch?.what}`,
      );
  }
  for (const n of notes) out.push(`note: ${n.replace(/\n/g, "\n      ")}`);

  // ---- targets ----
  const targets = [];
  if (ours && raw) {
    for (const kind of pc.job.kinds) {
      for (const size of pc.job.sizes.filter((s) => s <= 1 << 20)) {
        const id = `${kind}:${size}`;
        const need = size === 1024 && kind !== "u8" ? 2 : 1.5;
        addTarget(
          targets,
          `${KIND_LABEL[kind]} ${sizeLabel(size)} >= ${need}x raw postMessage`,
          ours.cells[id]?.callsPerSec / raw.cells[id]?.callsPerSec,
          need,
          ">=",
          `${fmtInt(ours.cells[id]?.callsPerSec)} vs ${fmtInt(raw.cells[id]?.callsPerSec)} calls/s`,
        );
      }
    }
    addTarget(
      targets,
      "sequential p99 <= 5 µs",
      ours.p99,
      5,
      "<=",
      `raw postMessage ${fmtUs(raw.p99)} µs`,
      (v) => `${fmtUs(v)} µs`,
    );
    addTarget(
      targets,
      "tiny calls >= 3x raw postMessage",
      ours.tiny / raw.tiny,
      3,
      ">=",
      `${fmtInt(ours.tiny)} vs ${fmtInt(raw.tiny)} calls/s`,
    );
    out.push("");
    out.push(...formatTargets(targets, ours));
  }

  // ---- chart ----
  if (pc.svg && pc.svg !== "-") {
    const pools = defs.map((d) => ({
      key: d.key,
      label: d.label,
      color: COLORS[d.key] ?? "#888",
      bold: d.key === "knitting",
    }));
    const panels = [];
    for (const kind of pc.job.kinds) {
      for (const size of pc.job.sizes) {
        const id = `${kind}:${size}`;
        const values = {};
        for (const d of defs) values[d.key] = sum[d.key].cells[id]?.callsPerSec;
        const bytes = ours?.cells[id]?.bytes ?? size;
        panels.push({
          title: `${KIND_LABEL[kind]}, ${sizeLabel(size)}`,
          note:
            `echo, calls/s (${windowFor(size, pc.job.window)} in flight` +
            `${kind === "object" ? `, ${fmtInt(bytes)} B JSON` : ""})`,
          values,
          fmt: (v) => `${fmtInt(v)}/s · ${((v * bytes) / 1e6).toFixed(v * bytes >= 1e8 ? 0 : 1)} MB/s`,
        });
      }
    }
    const p99 = {};
    for (const d of defs) p99[d.key] = sum[d.key].p99;
    panels.push({
      title: "sequential latency p99",
      note: "await add([i, 1]), µs, lower is better",
      values: p99,
      fmt: (v) => `${fmtUs(v)} µs`,
    });
    const tiny = {};
    for (const d of defs) tiny[d.key] = sum[d.key].tiny;
    panels.push({
      title: "tiny calls",
      note: `add([i, 1]), calls/s, ${pc.job.window} in flight`,
      values: tiny,
      fmt: (v) => `${fmtInt(v)}/s`,
    });
    const svg = renderChart({
      title: "knitting-native payload sweep: echo calls/s by value kind and size",
      subtitle:
        `Node ${process.version}, ${pc.job.threads} threads per pool, median of ${pc.reps} rep(s), ` +
        `${new Date().toISOString().slice(0, 16)} UTC; other processes used ` +
        `${Number.isFinite(ours?.foreignCores) ? ours.foreignCores.toFixed(2) : "?"} cores meanwhile`,
      pools,
      panels,
      columns: 3,
    });
    writeFileSync(pc.svg, svg);
    process.stderr.write(`bench: wrote ${pc.svg}\n`);
  }

  const wrong = defs.filter((d) => sum[d.key].mismatches > 0).map((d) => `${d.label} (payload sweep)`);
  const failed = defs.filter((d) => sum[d.key].status === "error").map((d) => `${d.label} (payload sweep)`);
  return { lines: out, json: { config: pc, results: sum, targets }, wrong, failed };
}
