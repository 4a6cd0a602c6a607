// The same kernel as piscina's users write it: a worker file whose default
// export is the task.
export { hash as default } from "./kernel.mjs";
