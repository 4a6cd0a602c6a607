// Runs one benchmark child process under a watchdog: a phase that runs too
// long, calls that stop completing, or a child whose event loop stops
// answering at all gets the child killed and reported instead of hanging the
// whole run. The child sends {type: "phase"|"progress"|"result"} messages.
import { fork } from "node:child_process";
import os from "node:os";

/**
 * Resolves with the child's result, or with `failed(how)` when it died or
 * was killed without one. `cfg` has `timeoutSec` and `stallSec`.
 */
export function superviseChild(script, args, label, cfg, failed) {
  return new Promise((resolve) => {
    let result = null;
    let phase = "starting";
    let killedFor = null;
    let phaseStart = Date.now();
    let lastBeat = Date.now();
    let lastAdvance = Date.now();
    let done = 0;
    let total = 0;
    const child = fork(script, args, {
      execArgv: [...process.execArgv, "--expose-gc"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    const where = () => `phase "${phase}"${total ? ` after ${done} of ${total} calls` : ""}`;
    const kill = (why) => {
      if (killedFor) return;
      killedFor = `${why}; process killed`;
      process.stderr.write(`[${label}] ${killedFor}\n`);
      child.kill("SIGKILL");
    };
    const watchdog = setInterval(() => {
      const now = Date.now();
      if (now - phaseStart > cfg.timeoutSec * 1000) {
        kill(`timed out: ${where()}: the phase ran longer than ${cfg.timeoutSec} s`);
      } else if (now - lastBeat > cfg.stallSec * 1000) {
        kill(`hung: ${where()}: the child's event loop gave no sign of life for ${cfg.stallSec} s (blocked?)`);
      } else if (total > 0 && done < total && now - lastAdvance > cfg.stallSec * 1000) {
        kill(`stalled: ${where()}: no call completed for ${cfg.stallSec} s (event loop idle, calls never settle)`);
      }
    }, 500);
    child.on("message", (m) => {
      lastBeat = Date.now();
      if (m.type === "phase") {
        phase = m.phase; // the child logs it itself
        phaseStart = lastAdvance = lastBeat;
        done = total = 0;
      } else if (m.type === "progress") {
        if (m.done !== done || m.total !== total) lastAdvance = lastBeat;
        done = m.done;
        total = m.total;
      } else if (m.type === "result") {
        result = m.result;
      }
    });
    child.on("exit", (code, signal) => {
      clearInterval(watchdog);
      if (result) return resolve(result);
      resolve(
        failed(killedFor ?? `process ${signal ? `killed by ${signal}` : `exited with code ${code}`} during ${where()}`),
      );
    });
  });
}

/** CPU model and counts, for report headers. */
export function cpuInfo() {
  const cpus = os.cpus();
  const par = typeof os.availableParallelism === "function" ? os.availableParallelism() : cpus.length;
  return { count: cpus.length, availableParallelism: par, model: cpus[0]?.model?.trim() ?? "unknown" };
}
