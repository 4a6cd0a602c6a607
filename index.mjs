import api from "./index.js";

export const { createPool, task, importTask, isMain, stableTaskID, WorkerExitError, CODEC_ERRORS } = api;
export default api;
