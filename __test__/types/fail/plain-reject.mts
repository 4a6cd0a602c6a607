// expect: TS2339
// Only calls of abort-aware tasks (abortSignal: { hasAborted: true }) have
// reject(); a plain task's call is a plain Promise.
import { createPool, task } from "knitting-native";

const double = task({ f: (n: number) => n * 2 });
const watch = task({ abortSignal: { hasAborted: true }, f: (n: number, signal) => (signal.hasAborted() ? 0 : n) });
const pool = createPool()({ double, watch });
pool.call.watch(1).reject();
pool.call.double(1).reject(); // error
