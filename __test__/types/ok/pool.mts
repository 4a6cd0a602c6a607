// The README example, with assertions that inference is exact.
import {
  createPool,
  isMain,
  stableTaskID,
  type BroadcastError,
  type BroadcastOptions,
  type CallOptions,
  type Pool,
  type PoolOptions,
  type Task,
} from "knitting-native";
import {
  add,
  hello,
  square,
  noArg,
  asyncNoArg,
  optionalArg,
  toDate,
  sum,
  big,
  bytes,
  now,
  user,
  len,
} from "./tasks.mjs";
import type { Assert, Equal } from "./equal.mjs";

const pool = createPool({ threads: 2 })({
  add,
  hello,
  square,
  noArg,
  asyncNoArg,
  optionalArg,
  toDate,
  sum,
  big,
  bytes,
  now,
  user,
  len,
});

const three: number = await pool.call.add([1, 2]);
const s: string = await pool.call.hello(Promise.resolve("x"));
const s2: string = await pool.call.hello("y");
const sq: number = await pool.call.square(3);
const sq2: number = await pool.call.square(Promise.resolve(4));
const one: number = await pool.call.noArg();
const ready: string = await pool.call.asyncNoArg();
const opt1: number = await pool.call.optionalArg();
const opt2: number = await pool.call.optionalArg(5);
const d: Date = await pool.call.toDate(0);
const total: number = await pool.call.sum(new Float64Array([1, 2]));
const b: bigint = await pool.call.big(21n);
const u8: Uint8Array = await pool.call.bytes(Buffer.from("hi"));
const t: number = await pool.call.now();
const u = await pool.call.user(1);
const l: number = await pool.call.len("four");
u.name.toUpperCase();
u.joined.getTime();

// Task<A, R> as inferred by task().
type _addTask = Assert<Equal<typeof add, Task<[number, number], number>>>;
type _helloTask = Assert<Equal<typeof hello, Task<string, string>>>;
type _noArgTask = Assert<Equal<typeof noArg, Task<void, number>>>;
type _asyncNoArgTask = Assert<Equal<typeof asyncNoArg, Task<void, string>>>;
type _optTask = Assert<Equal<typeof optionalArg, Task<number | undefined, number>>>;

// Results, exactly.
type _hello = Assert<Equal<Awaited<ReturnType<typeof pool.call.hello>>, string>>;
type _add = Assert<Equal<Awaited<ReturnType<typeof pool.call.add>>, number>>;
type _square = Assert<Equal<Awaited<ReturnType<typeof pool.call.square>>, number>>;
type _bytes = Assert<Equal<Awaited<ReturnType<typeof pool.call.bytes>>, Uint8Array>>;
type _user = Assert<Equal<typeof u, { id: number; name: string; tags: string[]; joined: Date }>>;
type _callReturnsPromise = Assert<Equal<ReturnType<typeof pool.call.add>, Promise<number>>>;

// Arguments, exactly.
type _addArg = Assert<
  Equal<Parameters<typeof pool.call.add>, [arg: [number, number] | Promise<[number, number]>, options?: CallOptions]>
>;
type _helloArg = Assert<Equal<Parameters<typeof pool.call.hello>[0], string | Promise<string>>>;
type _squareArg = Assert<Equal<Parameters<typeof pool.call.square>[0], number | Promise<number>>>;

// Broadcasts: the same argument types as call (no Promise), an array of results.
const sums: number[] = await pool.broadcast.add([1, 2]);
const kept: string[] = await pool.broadcast.hello("x", { keep: true });
const counts: number[] = await pool.broadcast.noArg();
type _bcastAdd = Assert<Equal<ReturnType<typeof pool.broadcast.add>, Promise<number[]>>>;
type _bcastArg = Assert<
  Equal<Parameters<typeof pool.broadcast.add>, [arg: [number, number], options?: BroadcastOptions]>
>;
type _bcastUser = Assert<
  Equal<Awaited<ReturnType<typeof pool.broadcast.user>>, { id: number; name: string; tags: string[]; joined: Date }[]>
>;
type _bcastNames = Assert<Equal<keyof typeof pool.broadcast, keyof typeof pool.call>>;
try {
  await pool.broadcast.square(2);
} catch (err) {
  const failed = err as BroadcastError<number>;
  const others: (number | undefined)[] = failed.results;
  const lanes: number[] = failed.lanes;
  void others;
  void lanes;
}
const single = add.createPool({ threads: 1 });
type _singleBcast = Assert<Equal<ReturnType<typeof single.broadcast>, Promise<number[]>>>;
await single.shutdown();
void sums;
void kept;
void counts;

// Only the given names exist on call.
type _names = Assert<
  Equal<
    keyof typeof pool.call,
    | "add"
    | "hello"
    | "square"
    | "noArg"
    | "asyncNoArg"
    | "optionalArg"
    | "toDate"
    | "sum"
    | "big"
    | "bytes"
    | "now"
    | "user"
    | "len"
  >
>;

// The pool type can be named.
const named: Pool<{ add: typeof add; square: typeof square }> = createPool()({ add, square });
type _shutdown = Assert<Equal<ReturnType<typeof named.shutdown>, Promise<void>>>;
type _dispose = Assert<Equal<ReturnType<(typeof named)[typeof Symbol.dispose]>, void>>;

// All options, and none.
const options: PoolOptions = {
  threads: 4,
  payload: { payloadInitialBytes: 4194304, payloadMaxByteLength: 67108864, maxPayloadBytes: 8388608 },
  debug: true,
};
createPool(options)({ add });
createPool({})({ add });
createPool({ payload: {} })({ add });

// `using` disposes the pool (Symbol.dispose) at scope exit.
{
  using scoped = createPool({ threads: 1 })({ hello });
  const hi: string = await scoped.call.hello("scoped");
  void hi;
}

const id: number = stableTaskID("file:///tasks.mjs", 0);
const onMain: boolean = isMain;

await pool.shutdown();
pool[Symbol.dispose]();

void [three, s, s2, sq, sq2, one, ready, opt1, opt2, d, total, b, u8, t, l, id, onMain];
