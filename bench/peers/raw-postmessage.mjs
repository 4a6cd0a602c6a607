// The "plain postMessage" baseline: a minimal worker_threads pool.
//
// N workers, round-robin dispatch, one message per call ({id, a, b}), one
// promise per call, a Map id -> pending call on the host; the worker answers
// {id, r}. No batching, no shared memory: just what a careful hand-written
// postMessage pool does.
import { Worker } from "node:worker_threads";

const WORKER_URL = new URL("./raw-postmessage-worker.mjs", import.meta.url);

export class RawPostMessagePool {
  /** @param {{threads?: number}} [opts] */
  constructor({ threads = 2 } = {}) {
    if (!(threads >= 1)) throw new RangeError(`threads must be >= 1, got ${threads}`);
    this.workers = [];
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
    const onFailure = (err) => this.#failAll(err);

    for (let i = 0; i < threads; i++) {
      const w = new Worker(WORKER_URL);
      w.on("message", onMessage);
      w.on("error", onFailure);
      w.on("exit", (code) => {
        if (!this.closed) onFailure(new Error(`raw-postmessage worker ${i} exited with code ${code}`));
      });
      this.workers.push(w);
    }
    this.ready = Promise.all(
      this.workers.map(
        (w) =>
          new Promise((res, rej) => {
            w.once("online", res);
            w.once("error", rej);
          }),
      ),
    );
  }

  #failAll(err) {
    const pending = this.pending;
    this.pending = new Map();
    for (const p of pending.values()) p.reject(err);
  }

  #send(msg) {
    const worker = this.workers[this.rr];
    this.rr = this.rr + 1 === this.workers.length ? 0 : this.rr + 1;
    return new Promise((resolve, reject) => {
      this.pending.set(msg.id, { resolve, reject });
      worker.postMessage(msg);
    });
  }

  /** add(a, b) -> Promise<a + b> */
  add(a, b) {
    if (this.closed) return Promise.reject(new Error("pool is shut down"));
    return this.#send({ id: this.nextId++, a, b });
  }

  /** echo(v) -> Promise<v> */
  echo(v) {
    if (this.closed) return Promise.reject(new Error("pool is shut down"));
    return this.#send({ id: this.nextId++, v });
  }

  /** spin(i, ms) -> Promise<i>, after the worker busy-spins ms milliseconds */
  spin(i, ms) {
    if (this.closed) return Promise.reject(new Error("pool is shut down"));
    return this.#send({ id: this.nextId++, i, ms });
  }

  /** work(i, iters) -> Promise<[i, µs]>, after iters rounds of CPU work (bench/lib/busy.mjs) */
  work(i, iters) {
    if (this.closed) return Promise.reject(new Error("pool is shut down"));
    return this.#send({ id: this.nextId++, i, iters });
  }

  async shutdown() {
    this.closed = true;
    await Promise.all(this.workers.map((w) => w.terminate()));
    this.#failAll(new Error("pool is shut down"));
  }
}

export function createRawPool(opts) {
  return new RawPostMessagePool(opts);
}
