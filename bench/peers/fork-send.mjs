// The IPC baseline for worker processes: a minimal child_process pool.
//
// N children from child_process.fork, round-robin dispatch, one message per
// call ({id, a, b}) over Node's IPC channel (process.send, JSON on a pipe),
// one promise per call, a Map id -> pending call on the host; the child
// answers {id, r}. No batching, no shared memory: what a careful hand-written
// fork pool does, as raw-postmessage.mjs is for threads.
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";

const WORKER = fileURLToPath(new URL("./fork-send-worker.mjs", import.meta.url));

export class ForkSendPool {
  /** @param {{processes?: number}} [opts] */
  constructor({ processes = 2 } = {}) {
    if (!(processes >= 1)) throw new RangeError(`processes must be >= 1, got ${processes}`);
    this.children = [];
    this.pending = new Map(); // id -> {resolve, reject}
    this.nextId = 0;
    this.rr = 0;
    this.closed = false;

    const onMessage = (m) => {
      const p = this.pending.get(m.id);
      if (p === undefined) return;
      this.pending.delete(m.id);
      p.resolve(m.r);
    };
    for (let i = 0; i < processes; i++) {
      // No inherited --expose-gc or inspector flags: a plain child.
      const c = fork(WORKER, [], { execArgv: [], stdio: ["ignore", "inherit", "inherit", "ipc"] });
      c.on("message", onMessage);
      c.on("error", (err) => this.#failAll(err));
      c.on("exit", (code, signal) => {
        if (!this.closed) this.#failAll(new Error(`fork-send child ${i} exited (code ${code}, signal ${signal})`));
      });
      this.children.push(c);
    }
    this.ready = Promise.all(
      this.children.map(
        (c) =>
          new Promise((res, rej) => {
            c.once("spawn", res);
            c.once("error", rej);
          }),
      ),
    );
  }

  #failAll(err) {
    const pending = this.pending;
    this.pending = new Map();
    for (const p of pending.values()) p.reject(err);
  }

  /** add(a, b) -> Promise<a + b> */
  add(a, b) {
    if (this.closed) return Promise.reject(new Error("pool is shut down"));
    const child = this.children[this.rr];
    this.rr = this.rr + 1 === this.children.length ? 0 : this.rr + 1;
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      child.send({ id, a, b });
    });
  }

  /** Closes the IPC channels (the children then exit) and waits for the exits. */
  async shutdown() {
    this.closed = true;
    await Promise.all(
      this.children.map(
        (c) =>
          new Promise((res) => {
            if (c.exitCode !== null || c.signalCode !== null) return res();
            c.once("exit", res);
            c.disconnect();
          }),
      ),
    );
    this.#failAll(new Error("pool is shut down"));
  }
}

export function createForkSendPool(opts) {
  return new ForkSendPool(opts);
}
