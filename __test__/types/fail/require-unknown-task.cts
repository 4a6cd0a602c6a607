// expect: TS2339
// The CommonJS form reports unknown task names too.
import kn = require("knitting-native");

const add = kn.task({ f: ([a, b]: [number, number]) => a + b });
const pool = kn.createPool()({ add });
void pool.call.sub([1, 2]); // error
