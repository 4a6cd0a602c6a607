// The quick start from the README, as CommonJS.
const { createPool, task, isMain } = require("knitting-native");

exports.add = task({ f: ([a, b]) => a + b });
exports.square = task({ f: (v) => v * v });

if (isMain) {
  (async () => {
    const pool = createPool({ threads: 2 })({ add: exports.add, square: exports.square });
    console.log("add([1, 2]) =", await pool.call.add([1, 2]));
    console.log("square(7)   =", await pool.call.square(7));
    const many = await Promise.all(Array.from({ length: 10_000 }, (_, i) => pool.call.add([i, i])));
    console.log("10,000 calls, last =", many.at(-1));
    await pool.shutdown();
  })();
}
