import api from "./index.js";

export const { createPool, task, isMain, stableTaskID, WorkerExitError, CODEC_ERRORS } = api;
export default api;
