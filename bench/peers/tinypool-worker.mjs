// Tinypool worker for `node bench/run.mjs --report`: Tinypool calls its
// workers as Piscina does (pool.run(arg, { name })), so it runs the same
// adapter: see piscina-worker.mjs.
export { default, echo, spin, work } from "./piscina-worker.mjs";
