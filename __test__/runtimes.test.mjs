// The core and lifecycle test files again, with worker processes instead of
// worker threads: KNITTING_WORKER_RUNTIME=process makes "process" the
// default `worker.runtime` of every pool they create. Files whose checks are
// about threads themselves (thread ids, resourceLimits, Worker.terminate)
// stay thread-only; worker processes have their own file for those
// (process-workers.test.mjs).
import test from "node:test";
import { skipOn } from "./fixtures/runtime.mjs";
import { runTestFiles } from "./helpers/children.mjs";

const FILES = ["pool.test.mjs", "stress.test.mjs", "lifecycle-options.test.mjs", "codec.test.mjs", "bare.test.mjs"];

const nodeTest =
  "runs the files again through node --test; process-workers.test.mjs covers this runtime's worker processes";
test(`with worker processes: ${FILES.join(", ")}`, { skip: skipOn({ bun: nodeTest, deno: nodeTest }) }, () => {
  runTestFiles(FILES, { KNITTING_WORKER_RUNTIME: "process" }, 40);
});
