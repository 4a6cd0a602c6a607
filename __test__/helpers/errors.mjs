// Checking what an error message says.

/** Matches `key` (an option path like "worker.timers") as a whole word of a message, not inside a longer path. */
export const keyPattern = (key) => new RegExp(`(^|[^\\w.])${key.replace(/\./g, "\\.")}\\b`);
