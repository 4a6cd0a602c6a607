// piscina's worker for bench/user/startup.mjs.
export default ([a, b]) => a + b;
