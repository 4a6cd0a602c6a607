// The pools of the scheduling workloads of `node bench/run.mjs`
// (random-load, dispatcher-scaling and cpu-bound): which options each row passes to
// createPool, and the topology the pool must end up with. Shared by the
// parent (bench/lib/sched.mjs) and its children (bench/lib/sched-child.mjs).
import { LoadError, firstLines } from "./child-job.mjs";
import { importKnitting, createOrFail } from "./knitting.mjs";

export { LoadError };

/**
 * random-load rows. `options`: what createPool gets besides `threads`;
 * `steal(threads)`: whether the pool must steal.
 */
export const RANDOM_POOLS = [
  { key: "steal", label: "knitting-native, stealing (default)", options: {}, steal: () => true },
  {
    key: "roundRobin",
    label: 'knitting-native, balancer "roundRobin"',
    options: { balancer: "roundRobin" },
    steal: () => false,
  },
  {
    key: "firstIdle",
    label: 'knitting-native, balancer "firstIdle"',
    options: { balancer: "firstIdle" },
    steal: () => false,
  },
  { key: "piscina", label: "piscina", peer: true },
];

/** dispatcher-scaling rows; the first is the default every other row is compared with. */
export const SCALING_CONFIGS = [
  { key: "default", label: "default (stealing; 1 thread: private lanes)", options: {}, steal: (t) => t >= 2 },
  {
    key: "perThread",
    label: 'private lanes, dispatcher "per-thread"',
    options: { host: { dispatcher: "per-thread" } },
    steal: () => false,
  },
  {
    key: "serial",
    label: 'private lanes, dispatcher "serial-channel"',
    options: { host: { dispatcher: "serial-channel" } },
    steal: () => false,
  },
  {
    key: "doorbellOff",
    label: "default, doorbell: false (polling)",
    options: { host: { doorbell: false } },
    steal: (t) => t >= 2,
  },
  {
    key: "narrow",
    label: "default, stallFreeLoops 32 (narrow)",
    options: { host: { stallFreeLoops: 32 } },
    steal: (t) => t >= 2,
  },
  {
    key: "wide",
    label: "default, stallFreeLoops 1024 (wide)",
    options: { host: { stallFreeLoops: 1024 } },
    steal: (t) => t >= 2,
  },
];

/** The pool of a row with `peer` (true or "piscina": piscina; "raw": raw postMessage). */
export async function createPeer(row, threads) {
  return row.peer === "raw" ? createRaw(threads) : createPiscina(threads);
}

/**
 * A knitting-native pool with `options`: { add(a, b), work(i, iters),
 * topology, close() }. `topology` is what the pool actually runs, read from
 * the pool itself: KNITTING_STEAL and KNITTING_DISPATCHER change the
 * defaults, and checkTopology() tells a row that measured something else.
 */
export async function createKnitting(threads, options) {
  const { mod, tasks } = await importKnitting();
  const pool = createOrFail(mod, { threads, ...options }, { add: tasks.add, work: tasks.work });
  const call = pool.call;
  return {
    add: (a, b) => call.add([a, b]),
    work: (i, iters) => call.work([i, iters]),
    topology: topologyOf(pool),
    close: () => pool.shutdown(),
  };
}

/** piscina with the same thread count and its defaults otherwise, as in the other workloads. */
export async function createPiscina(threads) {
  let Piscina;
  try {
    const mod = await import("piscina");
    Piscina = mod.Piscina ?? mod.default;
  } catch (err) {
    throw new LoadError(firstLines(err.message, 4), err);
  }
  const pool = new Piscina({
    filename: new URL("../peers/piscina-worker.mjs", import.meta.url).href,
    minThreads: threads,
    maxThreads: threads,
  });
  const work = { name: "work" };
  return {
    add: (a, b) => pool.run([a, b]),
    work: (i, iters) => pool.run([i, iters], work),
    topology: null,
    close: () => pool.destroy(),
  };
}

/** The raw worker_threads + postMessage pool (bench/peers/raw-postmessage.mjs). */
export async function createRaw(threads) {
  const { createRawPool } = await import("../peers/raw-postmessage.mjs");
  const pool = createRawPool({ threads });
  await pool.ready;
  return {
    add: (a, b) => pool.add(a, b),
    work: (i, iters) => pool.work(i, iters),
    topology: null,
    close: () => pool.shutdown(),
  };
}

/**
 * The topology a knitting-native pool runs, read from the pool object
 * behind the public one (null when that is not reachable).
 */
function topologyOf(pool) {
  const inner = pool[Symbol.for("knitting-native.pool")];
  if (!inner) return null;
  return {
    steal: inner.topology?.steal === true,
    dispatcher: inner.topology?.serialChannel ? "serial-channel" : "per-thread",
    doorbell: inner.loop?.useDoorbell === true,
    stallFreeLoops: inner.loop?.freeHops,
    runtime: inner.runtime?.constructor?.name === "ProcessRuntime" ? "process" : "thread",
  };
}

/** null when `topology` is what `row` asks for with `threads`, else what differs. */
export function checkTopology(row, threads, topology) {
  if (topology === null) return "the pool's topology could not be read";
  const wrong = [];
  if (topology.steal !== row.steal(threads)) {
    wrong.push(
      `expected ${row.steal(threads) ? "work stealing" : "private lanes"}, got ` +
        `${topology.steal ? "work stealing" : "private lanes"} ` +
        `(KNITTING_STEAL=${process.env.KNITTING_STEAL ?? "unset"}, ` +
        `KNITTING_DISPATCHER=${process.env.KNITTING_DISPATCHER ?? "unset"})`,
    );
  }
  const host = row.options.host ?? {};
  if (host.dispatcher !== undefined && topology.dispatcher !== host.dispatcher) {
    wrong.push(`expected dispatcher ${host.dispatcher}, got ${topology.dispatcher}`);
  }
  if (topology.doorbell !== (host.doorbell ?? true))
    wrong.push(`expected doorbell ${host.doorbell ?? true}, got ${topology.doorbell}`);
  if (host.stallFreeLoops !== undefined && topology.stallFreeLoops !== host.stallFreeLoops) {
    wrong.push(`expected stallFreeLoops ${host.stallFreeLoops}, got ${topology.stallFreeLoops}`);
  }
  return wrong.length ? wrong.join("; ") : null;
}
