// The ESM entry. It loads the CommonJS entry through createRequire rather
// than `import api from "./index.js"`: Deno treats a local .js file as an ES
// module (no default export to import), while require() loads it as
// CommonJS on Node, Bun and Deno alike.
import { createRequire } from "node:module";

const api = createRequire(import.meta.url)("./index.js");

export const {
  createPool,
  task,
  importTask,
  isMain,
  stableTaskID,
  WorkerExitError,
  CODEC_ERRORS,
  transfer,
  sharedBytes,
  isSharedBytes,
} = api;
export default api;
