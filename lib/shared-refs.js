"use strict";
// SharedArrayBuffers in calls, by reference. A call's bytes travel through
// the pool's shared regions, which can hold copies only; a
// SharedArrayBuffer itself can only reach another thread through a
// MessagePort. So the codec writes a reference (origin, seq) in its place
// (codec.js, tag 0x12) and the buffer goes over a MessagePort beside the
// call, posted before the call is published: the reader finds it in its
// port's queue, synchronously (receiveMessageOnPort), when it decodes the
// reference.
//
// - Host to workers: a call may be run by any worker (stealing), so the
//   buffer is posted to every worker, and a replacement gets those still in
//   use when it starts; once the call settles, every worker is told to
//   forget it. Origin 0, seq counted by the host.
// - Worker to host (a result): posted on that worker's port. Origin
//   lane + 1, seq counted by the worker.
// Worker processes share no memory with the host besides the pool's
// region: there, the hook refuses (codec.js names the alternative).

const { MessageChannel, receiveMessageOnPort } = require("node:worker_threads");
const { codecError, CODEC_ERRORS } = require("./codec.js");

const HOST = 0;

class HostSharedRefs {
  constructor(lanes) {
    this.ports = new Array(lanes).fill(null); // the host's end of each worker's port
    this.seq = 0;
    this.live = new Map(); // seq -> buffer, for calls not settled yet
    this.pending = []; // [seq, sab] named by the encoding in progress
    this.fresh = []; // seqs of the call being encoded (take())
    this.received = new Map(); // "origin:seq" -> buffer, from workers, not decoded yet
  }

  /**
   * A port for the worker about to start on `lane`; returns its end for the
   * worker (to transfer), with the buffers of unsettled calls queued on it.
   */
  attach(lane) {
    const old = this.ports[lane];
    if (old !== null) old.close();
    const { port1, port2 } = new MessageChannel();
    port1.unref(); // read synchronously only: never holds the event loop
    this.ports[lane] = port1;
    for (const [seq, sab] of this.live) port1.postMessage({ seq, sab });
    return port2;
  }

  /** Encoder hook: names `sab`. */
  ref(sab) {
    const seq = (this.seq = (this.seq + 1) >>> 0);
    this.pending.push([seq, sab]);
    return [HOST, seq];
  }

  /** The encoding is used: its buffers go to every worker, before the call is published. */
  commit() {
    for (const [seq, sab] of this.pending) {
      this.live.set(seq, sab);
      this.fresh.push(seq);
      for (const port of this.ports) if (port !== null) port.postMessage({ seq, sab });
    }
    this.pending = [];
  }

  abort() {
    this.pending = [];
  }

  /** The seqs the last encoding named (null when none): the call keeps them until it settles. */
  take() {
    if (this.fresh.length === 0) return null;
    const seqs = this.fresh;
    this.fresh = [];
    return seqs;
  }

  /** A call settled: workers forget its buffers. */
  release(seqs) {
    for (const seq of seqs) this.live.delete(seq);
    for (const port of this.ports) if (port !== null) port.postMessage({ release: seqs });
  }

  /** Decoder hook, for results: the buffer worker `origin - 1` sent as `seq`. */
  resolve(origin, seq) {
    const key = `${origin}:${seq}`;
    let sab = this.received.get(key);
    if (sab === undefined) {
      const port = this.ports[origin - 1];
      if (port === undefined || port === null) return undefined;
      for (let msg; (msg = receiveMessageOnPort(port)) !== undefined; ) {
        this.received.set(`${origin}:${msg.message.seq}`, msg.message.sab);
        if (msg.message.seq === seq) break;
      }
      sab = this.received.get(key);
    }
    this.received.delete(key);
    return sab;
  }

  close() {
    for (const port of this.ports) if (port !== null) port.close();
    this.ports.fill(null);
    this.live.clear();
    this.received.clear();
  }
}

/** A worker thread's side: `port` is the one the host attached for it. */
class WorkerSharedRefs {
  constructor(port, lane) {
    this.port = port;
    this.origin = lane + 1;
    this.seq = 0;
    this.pending = [];
    this.known = new Map(); // host seq -> buffer
    // The port is read only synchronously, never through a "message"
    // listener: on Deno a listener's pending receive takes a message off the
    // port before its event fires, so a call decoded in between would not
    // find its buffer (receiveMessageOnPort sees nothing). Releases sent
    // while the worker idles are applied when it parks (drain()).
    port.unref();
  }

  /** Applies what the host sent (buffers, releases); the worker calls it before it parks. */
  drain() {
    for (let msg; (msg = receiveMessageOnPort(this.port)) !== undefined; ) this.take(msg.message);
  }

  take(message) {
    if (message.release !== undefined) for (const seq of message.release) this.known.delete(seq);
    else this.known.set(message.seq, message.sab);
  }

  /** Decoder hook, for arguments: the host's buffer `seq`. */
  resolve(origin, seq) {
    if (origin !== HOST) return undefined;
    if (!this.known.has(seq)) {
      for (let msg; (msg = receiveMessageOnPort(this.port)) !== undefined; ) {
        this.take(msg.message);
        if (this.known.has(seq)) break;
      }
    }
    return this.known.get(seq);
  }

  /** Encoder hook, for results: sent to the host on this worker's port once the encoding is used. */
  ref(sab) {
    const seq = (this.seq = (this.seq + 1) >>> 0);
    this.pending.push([seq, sab]);
    return [this.origin, seq];
  }

  commit() {
    for (const [seq, sab] of this.pending) this.port.postMessage({ seq, sab });
    this.pending = [];
  }

  abort() {
    this.pending = [];
  }
}

/** The host's inline lane: encode and decode happen on one thread, back to back. */
class SameThreadRefs {
  constructor() {
    this.held = [];
    this.pending = [];
  }

  /** Before each copy: nothing from the last one is still needed. */
  reset() {
    this.held.length = 0;
    this.pending = [];
  }

  ref(sab) {
    this.pending.push(sab);
    return [HOST, this.held.length + this.pending.length - 1];
  }

  commit() {
    for (const sab of this.pending) this.held.push(sab);
    this.pending = [];
  }

  abort() {
    this.pending = [];
  }

  resolve(origin, seq) {
    return this.held[seq];
  }
}

/** Worker processes: a SharedArrayBuffer cannot reach another process. */
const PROCESS_REFUSAL = Object.freeze({
  pending: Object.freeze([]),
  commit() {},
  abort() {},
  ref() {
    throw codecError(
      TypeError,
      CODEC_ERRORS.SERIALIZE,
      'knitting-native: a SharedArrayBuffer cannot be sent to or from a worker process (worker.runtime "process"): ' +
        "processes do not share its memory. Copy it into an ArrayBuffer or a typed array to send it by value, " +
        'or use worker.runtime "thread", where it passes by reference',
    );
  },
  resolve() {
    return undefined;
  },
});

module.exports = { HostSharedRefs, WorkerSharedRefs, SameThreadRefs, PROCESS_REFUSAL };
