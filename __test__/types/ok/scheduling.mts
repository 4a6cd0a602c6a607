// The scheduling options (host, balancer, inliner, threads: 0) and tasks
// given as an array, with assertions that the inferred types are exact.
import {
  createPool,
  task,
  type Balancer,
  type CallOptions,
  type HostOptions,
  type InlinerOptions,
  type Pool,
  type PoolFactory,
  type PoolOptions,
} from "knitting-native";
import { add, hello, square, noArg } from "./tasks.mjs";
import type { Assert, Equal } from "./equal.mjs";

// Every new option at once.
const host: HostOptions = {
  steal: true,
  stealRegionLanes: 4,
  dispatcher: "serial-channel",
  doorbell: false,
  stallFreeLoops: 64,
  maxBackoffMs: 2,
};
const balancer: Balancer = "firstIdleOrRandom";
const inliner: InlinerOptions = { position: "first", batchSize: 8, dispatchThreshold: 4 };
const all: PoolOptions = { threads: 2, host, balancer, inliner };
void all;
createPool({ threads: 4, host: { steal: false, dispatcher: "per-thread" }, balancer: "roundRobin" })({ add });
createPool({ threads: 0, inliner: {} })({ add });
createPool({ host: {}, inliner: { position: "last" } })({ add });
for (const name of ["roundRobin", "firstIdle", "randomLane", "firstIdleOrRandom", "robinRound"] as const) {
  createPool({ balancer: name });
}
type _host = Assert<Equal<PoolOptions["host"], HostOptions | undefined>>;
type _dispatcher = Assert<Equal<HostOptions["dispatcher"], "per-thread" | "serial-channel" | undefined>>;
type _position = Assert<Equal<InlinerOptions["position"], "first" | "last" | undefined>>;

// Tasks as an array: call by index, each index with its own types.
const byIndex = createPool({ threads: 2 })([add, hello, square, noArg]);
const three: number = await byIndex.call[0]([1, 2]);
const hi: string = await byIndex.call[1]("x");
const nine: number = await byIndex.call[2](Promise.resolve(3));
const one: number = await byIndex.call[3]();
void [three, hi, nine, one];
type _len = Assert<Equal<(typeof byIndex.call)["length"], 4>>;
type _first = Assert<
  Equal<
    Parameters<(typeof byIndex.call)[0]>,
    [arg: [number, number] | Promise<[number, number]>, options?: CallOptions]
  >
>;
type _second = Assert<Equal<ReturnType<(typeof byIndex.call)[1]>, Promise<string>>>;

// An abort-aware task in an array keeps its reject().
const watch = task({ abortSignal: true, f: (n: number, signal) => (signal.hasAborted() ? 0 : n) });
const mixed = createPool()([watch, add]);
mixed.call[0](1).reject(new Error("stop"));
type _abortable = Assert<
  Equal<ReturnType<(typeof mixed.call)[0]>, Promise<number> & { reject(reason?: unknown): void }>
>;

// A non-tuple array: every index has the element's types.
const many: (typeof square)[] = [square, square];
const pooled: Pool<(typeof square)[]> = createPool()(many);
const r: number = await pooled.call[5](2);
void r;

// The object form is unchanged, and the factory can be named.
const factory: PoolFactory = createPool();
const named = factory({ add, hello });
type _names = Assert<Equal<keyof typeof named.call, "add" | "hello">>;

await byIndex.shutdown();
await mixed.shutdown();
