// pool.stream: typed from what each task yields; onProgress on calls.
import { createPool, task, type PoolStream, type StreamOptions } from "knitting-native";
import type { Assert, Equal } from "./equal.mjs";

const rows = task({
  f: async function* (file: string) {
    for (const line of file.split("\n")) yield { line, length: line.length };
    return "done";
  },
});
const numbers = task({
  f: function* (n: number) {
    for (let i = 0; i < n; i++) yield i;
  },
});
const list = task({ f: (n: number) => Array.from({ length: n }, (_, i) => `#${i}`) });
const plain = task({ f: (n: number) => n * 2 });
const reporting = task({
  abortSignal: true,
  f: (n: number, signal) => {
    signal.progress(n / 2);
    return n;
  },
});

const pool = createPool({ threads: 2 })({ rows, numbers, list, plain, reporting });

for await (const row of pool.stream.rows("a\nbc")) {
  type _row = Assert<Equal<typeof row, { line: string; length: number }>>;
}
type _numbers = Assert<Equal<ReturnType<typeof pool.stream.numbers>, PoolStream<number>>>;
type _list = Assert<Equal<ReturnType<typeof pool.stream.list>, PoolStream<string>>>;
// A task that yields nothing has no streamer.
type _plain = Assert<Equal<typeof pool.stream.plain, never>>;
type _options = Assert<Equal<Parameters<typeof pool.stream.numbers>[1], StreamOptions | undefined>>;

const it = pool.stream.numbers(10, { window: 16, signal: AbortSignal.timeout(1000) });
const first: IteratorResult<number, undefined> = await it.next();
await it.return();
await pool.stream.numbers(3).throw(new Error("stop"));

const half: number = await pool.call.reporting(4, { onProgress: (p) => console.log(p) });
const single = numbers.createPool({ threads: 1 });
type _single = Assert<Equal<ReturnType<typeof single.stream>, PoolStream<number>>>;
void first;
void half;
await pool.shutdown();
