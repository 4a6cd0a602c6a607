// Child side of the child_process.fork + process.send baseline (body:
// bench/lib/task-bodies.mjs). add: {id, a, b} -> {id, r: a + b}
//
// An ES module like the other peers' workers: Node leaves IPC messages in
// the channel until the child listens for them, so calls sent while this
// module is still loading wait for it (1,000 messages sent right after
// fork() all came back, from a child that began to listen 200 ms late too).
import { add } from "../lib/task-bodies.mjs";

process.on("message", (m) => {
  process.send({ id: m.id, r: add(m.a, m.b) });
});
