// knitting-native as every benchmark loads it: the checkout's index.mjs and
// bench/tasks.mjs, with the failures that mean "this pool cannot run here"
// (no build yet, an import error, no createPool) as a LoadError, which the
// drivers print as an unavailable row instead of a crash.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { LoadError, firstLines } from "./child-job.mjs";

/** This checkout's root (a URL ending in "/"). */
export const ROOT = new URL("../../", import.meta.url);

/**
 * { mod, tasks } of the checkout at `root` (default: this one); `root` may
 * be another checkout, for a before/after ratio in one run.
 */
export async function importKnitting(root = ROOT) {
  const entry = new URL("index.mjs", root);
  if (!existsSync(entry)) throw new LoadError(`${fileURLToPath(entry)} does not exist yet`);
  let mod, tasks;
  try {
    mod = await import(entry.href);
    tasks = await import(new URL("bench/tasks.mjs", root).href);
  } catch (err) {
    throw new LoadError(firstLines(err.message, 4), err);
  }
  if (typeof mod.createPool !== "function") {
    throw new LoadError(`index.mjs exports no createPool (exports: ${Object.keys(mod).join(", ") || "none"})`);
  }
  if (mod.isMain === false) throw new LoadError("isMain is false in the bench driver");
  return { mod, tasks };
}

/** mod.createPool(options)(tasks), a failure as a LoadError. */
export function createOrFail(mod, options, tasks) {
  try {
    return mod.createPool(options)(tasks);
  } catch (err) {
    throw new LoadError(`createPool failed: ${firstLines(err.message, 4)}`, err);
  }
}
