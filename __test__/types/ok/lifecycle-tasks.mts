// Tasks that use the lifecycle features: timeouts, abort-awareness, and
// importTask, as a user would export them from a tasks module.
import { importTask, task, type AbortSignalToolkit, type Task } from "knitting-native";

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

// timeout, in each of its forms.
export const slowDefault = task({
  timeout: { time: 50, default: "fallback" },
  f: async (ms: number) => (await sleep(ms), "finished"),
});
export const slowMaybe = task({
  timeout: { time: 50, maybe: true },
  f: async (ms: number) => (await sleep(ms), ms * 2),
});
export const slowError = task({
  timeout: { time: 50, error: new RangeError("custom timeout") },
  f: async (ms: number) => (await sleep(ms), ms),
});
export const slowNumber = task({ timeout: 50, f: async (ms: number) => (await sleep(ms), true) });
export const slowTimeOnly = task({ timeout: { time: 50 }, f: (s: string) => s.length });
// `default` may be any value of the result type, including a wider one's member.
export const nullableDefault = task({
  timeout: { time: 5, default: null },
  f: (id: number): { id: number } | null => ({ id }),
});
export const maybeNoArg = task({ timeout: { time: 5, maybe: true }, f: () => "x" });
// `default: undefined` resolves with undefined, as `maybe: true` does.
export const undefinedDefault = task({ timeout: { time: 5, default: undefined }, f: async (s: string) => s.length });

// abortSignal: the long form and the short one; `signal` is contextually typed.
export const watchAbort = task({
  abortSignal: { hasAborted: true },
  f: async (ms: number, signal) => {
    const start: number = signal.now();
    while (signal.now() - start < ms) {
      if (signal.hasAborted()) return "saw abort";
      await sleep(2);
    }
    return "not aborted";
  },
});
// An f that wants only the signal types its first parameter `void`: calls take no argument.
export const abortFlag = task({ abortSignal: true, f: (_arg: void, signal) => signal.hasAborted() });
// Left unannotated, that parameter is `any`, and so is the call's argument.
export const abortFlagAny = task({ abortSignal: true, f: (_arg, signal) => signal.hasAborted() });
// An abort-aware f need not take the signal.
export const abortIgnoresSignal = task({ abortSignal: true, f: (n: number) => n + 1 });
// Abort-aware with a timeout: `maybe` and `default`.
export const abortMaybe = task({
  abortSignal: { hasAborted: true },
  timeout: { time: 10, maybe: true },
  f: (n: number, signal: AbortSignalToolkit) => (signal.hasAborted() ? 0 : n),
});
export const abortDefault = task({ abortSignal: true, timeout: { time: 10, default: -1 }, f: async (n: number) => n });

// importTask: types given by the caller.
export const triple = importTask<number, number>({ href: "./imported-fn.mjs", name: "triple" });
export const describeNumber = importTask<number, string>({ href: "./imported-fn.mjs", name: "describe" });
export const importedDefault = importTask<string, string[]>({ href: "./imported-fn.mjs" });
export const importedUnknown = importTask({ href: "file:///abs/mod.mjs", name: "anything" });
export const importedTimeout = importTask<number, string>({
  href: "./imported-fn.mjs",
  name: "describe",
  timeout: { time: 10, default: "late" },
});
export const importedMaybe = importTask<number, string>({
  href: "./imported-fn.mjs",
  name: "describe",
  timeout: { time: 10, maybe: true },
});
export const importedAbort = importTask<number, string>({
  href: "./imported-fn.mjs",
  name: "watch",
  abortSignal: { hasAborted: true },
  timeout: 100,
});
export const importedAbortMaybe = importTask<void, boolean>({
  href: "./imported-fn.mjs",
  name: "flag",
  abortSignal: true,
  timeout: { time: 10, maybe: true },
});

// Annotations with the exported Task type: an abort-aware task is Task<A, R, true>.
export const annotatedAbort: Task<number, string, true> = task({ abortSignal: true, f: (n: number) => String(n) });
export const annotatedMaybe: Task<string, number | undefined> = task({
  timeout: { time: 1, maybe: true },
  f: (s: string) => s.length,
});
