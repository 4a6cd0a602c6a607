// What every benchmark child process shares (report-child.mjs,
// sched-child.mjs, proc-child.mjs): the job's result record with its
// fail/note bookkeeping, and the IPC loop that runs one job and reports
// phases, progress and the result to the parent's watchdog
// (bench/lib/supervise.mjs).
import { isMainThread } from "node:worker_threads";
import { progress } from "./workloads.mjs";

export const firstLines = (s, n) => String(s).split("\n").slice(0, n).join("\n");

/** A pool that could not be loaded or created: its row reports this message, the run goes on. */
export class LoadError extends Error {
  constructor(message, cause) {
    super(message, cause ? { cause } : undefined);
    this.name = "LoadError";
  }
}

/**
 * A job's result record: `result` (with `fields` and the status, error and
 * mismatch bookkeeping), `fail(status, msg)`, and `note(r, workload,
 * checked?)`, which records a workload's wrong results and returns `r`.
 */
export function jobRecord(fields, log) {
  const result = { ...fields, status: "ok", error: null, mismatches: 0, firstMismatch: null };
  const fail = (status, msg) => {
    result.status = status;
    result.error = msg;
    log(msg);
  };
  const note = (r, workload, checked) => {
    if (checked !== undefined) result.checked = (result.checked ?? 0) + checked;
    if (r.mismatches > 0) {
      result.mismatches += r.mismatches;
      const f = r.firstMismatch;
      const what = f.what ?? `returned ${JSON.stringify(f.got)}, expected ${JSON.stringify(f.expected)}`;
      result.firstMismatch ??= { workload, call: f.i, what };
      log(`ERROR: ${r.mismatches} wrong results in ${workload}; first: call ${f.i}: ${what}`);
    }
    return r;
  };
  return { result, fail, note };
}

/** Shuts a pool down; a failure there fails a job that was ok until then. */
export async function closePool(pool, result, fail) {
  try {
    await pool.close();
  } catch (err) {
    if (result.status === "ok") fail("error", `shutdown failed: ${firstLines(err.stack ?? err, 6)}`);
  }
}

/**
 * The child's entry: when started by the bench driver (over IPC), runs
 * `runJob(job, phase)` for the job in argv[2] and sends its result;
 * `crashed(job, err)` is the result when runJob itself throws.
 */
export function runChild(file, runJob, crashed) {
  if (!isMainThread) return;
  if (typeof process.send !== "function") {
    console.error(`${file} is started by \`node bench/run.mjs\``);
    process.exit(2);
  }
  const job = JSON.parse(process.argv[2]);
  (async () => {
    const send = (msg) => new Promise((res) => process.send(msg, () => res()));
    const heartbeat = setInterval(() => {
      process.send({ type: "progress", done: progress.done, total: progress.total });
    }, 1000);
    let result;
    try {
      result = await runJob(job, (p) => {
        progress.done = progress.total = 0;
        process.send({ type: "phase", phase: p });
      });
    } catch (err) {
      result = { ...crashed(job), status: "error", error: String(err.stack ?? err), mismatches: 0 };
    }
    clearInterval(heartbeat);
    await send({ type: "result", result });
    process.exit(0); // a broken pool's stray handle must not keep us alive
  })().catch((err) => {
    console.error(err?.stack ?? err);
    process.exit(1);
  });
}
