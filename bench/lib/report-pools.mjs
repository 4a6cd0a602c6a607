// The five pools compared by `node bench/run.mjs --report`, behind one adapter
// shape so that every workload drives them the same way:
//
//   const make = await def.load();   // import the library / task modules (not timed)
//   const pool = make(threads);      // construct: start-up is timed from here...
//   await pool.add(1, 2);            // ...to this first result
//   pool.add(a, b), pool.echo(v), pool.spin(i, ms), await pool.close()
//
// Each peer is used the way its documentation shows, with the same number of
// threads as ours and its defaults otherwise.
import { fileURLToPath } from "node:url";
import { LoadError } from "./child-job.mjs";
import { ROOT, importKnitting } from "./knitting.mjs";

export { LoadError };

const PEERS = new URL("../peers/", import.meta.url);

/** piscina and tinypool share one API: run(arg, { name }) and destroy(). */
function runPoolAdapter(pool) {
  const echo = { name: "echo" };
  const spin = { name: "spin" };
  return {
    add: (a, b) => pool.run([a, b]),
    echo: (v) => pool.run(v, echo),
    spin: (i, ms) => pool.run([i, ms], spin),
    close: () => pool.destroy(),
  };
}

/**
 * knitting-native from the checkout at `root` (a URL ending in "/"): its
 * index.mjs and bench/tasks.mjs. The payload sweep's --payload-baseline
 * loads another checkout (an earlier commit) this way, for a before/after
 * ratio measured in one run.
 */
export async function loadKnitting(root) {
  const { mod, tasks } = await importKnitting(root);
  return (threads) => {
    const pool = mod.createPool({ threads })({ add: tasks.add, echo: tasks.echo, spin: tasks.spin });
    const call = pool.call;
    return {
      add: (a, b) => call.add([a, b]),
      echo: (v) => call.echo(v),
      spin: (i, ms) => call.spin([i, ms]),
      close: () => pool.shutdown(),
    };
  };
}

export const REPORT_POOLS = [
  {
    key: "knitting",
    label: "knitting-native",
    load: () => loadKnitting(ROOT),
  },
  {
    key: "raw",
    label: "raw postMessage",
    async load() {
      const { createRawPool } = await import("../peers/raw-postmessage.mjs");
      return (threads) => {
        const pool = createRawPool({ threads });
        return {
          add: (a, b) => pool.add(a, b),
          echo: (v) => pool.echo(v),
          spin: (i, ms) => pool.spin(i, ms),
          close: () => pool.shutdown(),
        };
      };
    },
  },
  {
    key: "piscina",
    label: "piscina",
    async load() {
      const mod = await import("piscina");
      const Piscina = mod.Piscina ?? mod.default;
      const filename = new URL("piscina-worker.mjs", PEERS).href;
      return (threads) => runPoolAdapter(new Piscina({ filename, minThreads: threads, maxThreads: threads }));
    },
  },
  {
    key: "tinypool",
    label: "tinypool",
    async load() {
      const mod = await import("tinypool");
      const Tinypool = mod.Tinypool ?? mod.default;
      const filename = new URL("tinypool-worker.mjs", PEERS).href;
      return (threads) => runPoolAdapter(new Tinypool({ filename, minThreads: threads, maxThreads: threads }));
    },
  },
  {
    key: "workerpool",
    label: "workerpool",
    async load() {
      const mod = await import("workerpool");
      const workerpool = mod.default ?? mod;
      const file = fileURLToPath(new URL("workerpool-worker.mjs", PEERS));
      return (threads) => {
        const pool = workerpool.pool(file, { minWorkers: threads, maxWorkers: threads, workerType: "thread" });
        return {
          add: (a, b) => pool.exec("add", [[a, b]]),
          echo: (v) => pool.exec("echo", [v]),
          spin: (i, ms) => pool.exec("spin", [[i, ms]]),
          close: () => pool.terminate(),
        };
      };
    },
  },
];

export const POOL_KEYS = REPORT_POOLS.map((p) => p.key);
