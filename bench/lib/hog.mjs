// A busy loop in another process, to measure a workload on a loaded
// machine (random-load-loaded in bench/lib/sched.mjs): it keeps one core
// occupied, as another job on a shared CI machine would.
import { spawn } from "node:child_process";

/** Starts the busy loop; stop() kills it and resolves once it has exited. */
export function startHog() {
  const child = spawn(process.execPath, ["-e", "for (;;);"], { stdio: "ignore" });
  const exited = new Promise((res) => child.once("exit", res));
  // If this process dies first, the loop must not outlive it.
  const onExit = () => child.kill("SIGKILL");
  process.once("exit", onExit);
  return {
    stop() {
      process.off("exit", onExit);
      child.kill("SIGKILL");
      return exited;
    },
  };
}
