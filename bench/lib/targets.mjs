// The knitting-native targets, shared by the default table (bench/run.mjs) and
// the --report run (bench/report.mjs), so that both judge them the same way.
import { fmtInt, fmtUs, fmtRatio } from "./stats.mjs";

/**
 * A target list. `ours`, `raw`, `pisc` are summarized results with
 * callsPerSec, p50 (µs), tiny[], seq[] (any of them may be missing).
 */
export function computeTargets(ours, raw, pisc) {
  const targets = [];
  const oursOk = ours && (ours.tiny?.length || ours.seq?.length);
  addTarget(
    targets,
    "tiny-call throughput >= 50x piscina",
    oursOk && pisc ? ours.callsPerSec / pisc.callsPerSec : NaN,
    50,
    ">=",
    oursOk && pisc ? `${fmtInt(ours.callsPerSec)} vs ${fmtInt(pisc.callsPerSec)} calls/s` : "",
  );
  addTarget(
    targets,
    "tiny-call throughput >= 8x raw postMessage",
    oursOk && raw ? ours.callsPerSec / raw.callsPerSec : NaN,
    8,
    ">=",
    oursOk && raw ? `${fmtInt(ours.callsPerSec)} vs ${fmtInt(raw.callsPerSec)} calls/s` : "",
  );
  addTarget(
    targets,
    "sequential p50 <= 0.5 x raw postMessage p50",
    oursOk && raw ? ours.p50 / raw.p50 : NaN,
    0.5,
    "<=",
    oursOk && raw ? `${fmtUs(ours.p50)} vs ${fmtUs(raw.p50)} µs` : "",
  );
  return targets;
}

/**
 * The stream workload's targets for one runtime and shape (bench/lib/stream-user.mjs):
 * knitting-native's median values/s with the default window over piscina's
 * (a MessagePort per call). `failed`: knitting-native failed a rep there.
 */
export function streamTargets(targets, label, shape, ours, pisc, failed) {
  const [what, limit] =
    shape.key === "ints"
      ? [`stream of ${fmtInt(shape.n)} small values >= 5x the MessagePort way (piscina)`, 5]
      : [`stream of ${fmtInt(shape.n)} x 64 KiB >= the MessagePort way (piscina)`, 1];
  addTarget(
    targets,
    `${label}: ${what}`,
    ours / pisc,
    limit,
    ">=",
    Number.isFinite(ours / pisc) ? `${fmtInt(ours)} vs ${fmtInt(pisc)} values/s` : "",
  );
  targets[targets.length - 1].failed = failed;
}

/** cmp: ">=", "<=" or "<"; fmt formats the value (default: as a ratio). */
export function addTarget(targets, name, value, limit, cmp, detail, fmt) {
  const ok = Number.isFinite(value)
    ? cmp === ">="
      ? value >= limit
      : cmp === "<"
        ? value < limit
        : value <= limit
    : null;
  targets.push({ name, value, limit, cmp, met: ok, detail, ...(fmt ? { fmt } : {}) });
}

/**
 * The "targets (knitting-native):" lines; `ours` decides INVALID / failed
 * verdicts, or a target's own `failed` (a workload run once per runtime marks
 * only that runtime's targets).
 */
export function formatTargets(targets, ours) {
  const out = ["targets (knitting-native):"];
  const tw = Math.max(...targets.map((t) => t.name.length));
  for (const t of targets) {
    const verdict =
      t.met === null
        ? "n/a (not measured)"
        : ours.mismatches > 0
          ? "INVALID (wrong results)"
          : (t.failed ?? ours.status !== "ok")
            ? t.met
              ? "MET (but the pool failed later)"
              : "NOT MET (and the pool failed)"
            : t.met
              ? "MET"
              : "NOT MET";
    const val = Number.isFinite(t.value) ? `${(t.fmt ?? fmtRatio)(t.value)}`.padStart(7) : "      -";
    out.push(`  ${t.name.padEnd(tw)}  ${val}  ${verdict.padEnd(7)}${t.detail ? `  (${t.detail})` : ""}`);
  }
  return out;
}
