// Child side of the child_process.fork + process.send baseline.
// add: {id, a, b} -> {id, r: a + b}
"use strict";
process.on("message", (m) => {
  process.send({ id: m.id, r: m.a + m.b });
});
