"use strict";
// SharedArrayBuffers in calls, by reference. A call's bytes travel through
// the pool's shared regions, which can hold copies only; a
// SharedArrayBuffer itself can only reach another thread through a
// MessagePort. So the codec writes a reference (origin, seq) in its place
// (codec/index.js, tag 0x12) and the buffer goes over a MessagePort beside the
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
// region: there, the hook refuses (codec/index.js names the alternative).
//
// The same ports move the buffers of transfer() markers (codec/transfer.js),
// message { t: seq, buf } with buf in the transfer list, posted before the
// call or answer that names it (0x13 record) is published:
// - a result (worker to host): on that worker's port, in both topologies;
//   also, on runtimes that gain by it, a copy of any large binary result
//   (codec/transfer.js, movedCopy), so that the host does not copy it;
// - an argument: only to a worker known when the argument is encoded (a
//   private lane); with work stealing any worker may claim the call, and a
//   buffer moves to one thread only, so the argument is copied.
// A buffer is taken out of its port when its record is decoded, also when the
// host decodes a late answer only to discard it (host/slots.js discardAnswer).
// One that is never decoded is dropped with the port when its worker is
// replaced, or as the oldest of a store that holds more than any pool has
// slots (only forged slot words get there).

const { MessageChannel, receiveMessageOnPort } = require("node:worker_threads");
const { codecError, CODEC_ERRORS, Transfer, TRANSFER_MIN_BYTES, movedCopy } = require("../codec/index.js");
const { L } = require("../protocol/layout.js");

const HOST = 0;
// Moved buffers received and not claimed yet, per port: legitimately at most
// one per slot a worker answered or was given (L.slotCount per lane, the
// whole steal region at most); twice that is a bound only forgery reaches.
const MAX_MOVED = 2 * L.maxRegionLanes * L.slotCount;
const NO_SEQS = Object.freeze([]);

/** Keeps a received moved buffer until its record is decoded (bounded: see MAX_MOVED). */
function keepMoved(store, seq, buf) {
  if (store.size >= MAX_MOVED) store.delete(store.keys().next().value);
  store.set(seq, buf);
}

/** A pending transfer: consumed at commit (copied), or its buffer posted (moved). */
class PendingMove {
  constructor(marker, seq) {
    this.marker = marker;
    this.seq = seq; // 0: copied into the payload
  }

  /** Posts the buffer on `port` (transfer list: no copy), or drops it when there is none. */
  post(port) {
    const buf = Transfer.bufferOf(this.marker);
    Transfer.consume(this.marker);
    if (port !== null && buf !== null) port.postMessage({ t: this.seq, buf }, [buf]);
  }
}

class HostSharedRefs {
  constructor(lanes) {
    this.ports = new Array(lanes).fill(null); // the host's end of each worker's port
    this.seq = 0;
    this.live = new Map(); // seq -> buffer, for calls not settled yet
    this.pending = []; // [seq, sab] named by the encoding in progress
    this.fresh = []; // seqs of the call being encoded (take())
    this.received = new Map(); // "origin:seq" -> buffer, from workers, not decoded yet
    // transfer(): whether arguments may move (set by the pool: private lanes
    // of worker threads), the host's move seq, and per worker, the moved results received and not decoded yet.
    this.moveArguments = false;
    this.moveSeq = 0;
    this.moved = new Array(lanes).fill(null).map(() => new Map());
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
    // What the worker before sent and never published went with its port; a
    // replacement counts its seqs from 1 again, so none may be paired with its own.
    this.moved[lane].clear();
    const origin = `${lane + 1}:`;
    for (const key of this.received.keys()) if (key.startsWith(origin)) this.received.delete(key);
    for (const [seq, sab] of this.live) port1.postMessage({ seq, sab });
    return port2;
  }

  /** Encoder hook: names `sab`. */
  ref(sab) {
    const seq = (this.seq = (this.seq + 1) >>> 0);
    this.pending.push([seq, sab]);
    return [HOST, seq];
  }

  /**
   * Encoder hook for a transfer() marker of `n` bytes: [origin, seq] when its
   * buffer will move (take() posts it to the lane the call went to), null to copy.
   */
  transfer(marker, n) {
    if (!this.moveArguments || n < TRANSFER_MIN_BYTES) {
      this.pending.push(new PendingMove(marker, 0));
      return null;
    }
    const seq = (this.moveSeq = (this.moveSeq % 0xffffffff) + 1);
    this.pending.push(new PendingMove(marker, seq));
    return [HOST, seq];
  }

  /** The encoding is used: its buffers go to every worker, before the call is published. */
  commit() {
    for (const entry of this.pending) {
      if (entry instanceof PendingMove) {
        if (entry.seq === 0) entry.post(null);
        else this.fresh.push(entry); // posted by take(), to the lane the call went to
        continue;
      }
      const [seq, sab] = entry;
      this.live.set(seq, sab);
      this.fresh.push(seq);
      for (const port of this.ports) if (port !== null) port.postMessage({ seq, sab });
    }
    this.pending = [];
  }

  abort() {
    this.pending = [];
  }

  /**
   * The seqs the last encoding named (null when none): the call keeps them
   * until it settles. Its moved buffers go to the worker of `lanes` (a
   * private lane) now, before the call is published; without one (the call
   * failed) they are dropped.
   */
  take(lanes) {
    if (this.fresh.length === 0) return null;
    let seqs = this.fresh;
    this.fresh = [];
    if (seqs.some((entry) => entry instanceof PendingMove)) {
      const port = lanes === undefined || lanes.lane === undefined ? undefined : this.ports[lanes.lane];
      for (const entry of seqs) if (entry instanceof PendingMove) entry.post(port === undefined ? null : port);
      // Not null: a call whose argument moved is never taken back and placed again (host/hard-timeout.js).
      seqs = seqs.filter((entry) => !(entry instanceof PendingMove));
      if (seqs.length === 0) return NO_SEQS;
    }
    return seqs;
  }

  /** A call settled: workers forget its buffers. */
  release(seqs) {
    if (seqs.length === 0) return;
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
        const m = msg.message;
        if (m.t !== undefined) {
          keepMoved(this.moved[origin - 1], m.t, m.buf);
          continue;
        }
        this.received.set(`${origin}:${m.seq}`, m.sab);
        if (m.seq === seq) break;
      }
      sab = this.received.get(key);
    }
    this.received.delete(key);
    return sab;
  }

  /** Decoder hook, for results: the buffer worker `origin - 1` moved as `seq` (undefined if none). */
  claim(origin, seq) {
    const store = this.moved[origin - 1];
    if (store === undefined) return undefined;
    let buf = store.get(seq);
    if (buf === undefined) {
      const port = this.ports[origin - 1];
      if (port === null) return undefined;
      for (let msg; (msg = receiveMessageOnPort(port)) !== undefined; ) {
        const m = msg.message;
        if (m.t === undefined) {
          this.received.set(`${origin}:${m.seq}`, m.sab);
          continue;
        }
        if (m.t === seq) {
          buf = m.buf;
          break;
        }
        keepMoved(store, m.t, m.buf);
      }
      if (buf === undefined) return undefined;
    }
    store.delete(seq);
    return buf;
  }

  close() {
    for (const port of this.ports) if (port !== null) port.close();
    this.ports.fill(null);
    this.live.clear();
    this.received.clear();
    for (const store of this.moved) store.clear();
  }
}

/**
 * A task's result as it is to be encoded: a large binary value becomes a
 * marker over a copy of it, which then moves (WorkerSharedRefs#transfer);
 * anything else, and a value that cannot be copied that way, is returned as
 * it is (the encoder then copies it, or says why it cannot).
 */
function largeResult(value, maxBytes) {
  try {
    return movedCopy(value, maxBytes) ?? value;
  } catch {
    return value; // a view whose own getters throw or lie: the encoder reports it
  }
}

/**
 * A worker thread's side: `port` is the one the host attached for it;
 * `moveCopies`: whether large binary results leave as moved copies.
 */
class WorkerSharedRefs {
  constructor(port, lane, moveCopies) {
    this.port = port;
    // worker/serve.js passes each result through it when there is one: null where results are not moved.
    this.largeResult = moveCopies === true ? largeResult : null;
    this.origin = lane + 1;
    this.seq = 0;
    this.pending = [];
    this.known = new Map(); // host seq -> buffer
    this.moveSeq = 0;
    this.moved = new Map(); // host move seq -> moved argument buffer, not decoded yet
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
    if (message.t !== undefined) keepMoved(this.moved, message.t, message.buf);
    else if (message.release !== undefined) for (const seq of message.release) this.known.delete(seq);
    else this.known.set(message.seq, message.sab);
  }

  /** Decoder hook, for arguments: the buffer the host moved as `seq` (undefined if none). */
  claim(origin, seq) {
    if (origin !== HOST) return undefined;
    if (!this.moved.has(seq)) {
      for (let msg; (msg = receiveMessageOnPort(this.port)) !== undefined; ) {
        this.take(msg.message);
        if (this.moved.has(seq)) break;
      }
    }
    const buf = this.moved.get(seq);
    this.moved.delete(seq);
    return buf;
  }

  /** Encoder hook, for results: moved on this worker's port once the encoding is used, or copied. */
  transfer(marker, n) {
    if (n < TRANSFER_MIN_BYTES) {
      this.pending.push(new PendingMove(marker, 0));
      return null;
    }
    const seq = (this.moveSeq = (this.moveSeq % 0xffffffff) + 1);
    this.pending.push(new PendingMove(marker, seq));
    return [this.origin, seq];
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
    for (const entry of this.pending) {
      if (entry instanceof PendingMove) entry.post(entry.seq === 0 ? null : this.port);
      else this.port.postMessage({ seq: entry[0], sab: entry[1] });
    }
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
    let n = this.held.length;
    for (const entry of this.pending) if (!(entry instanceof PendingMove)) n++;
    return [HOST, n - 1];
  }

  /** transfer() markers are copied here (encode and decode are back to back on one thread). */
  transfer(marker) {
    this.pending.push(new PendingMove(marker, 0));
    return null;
  }

  commit() {
    for (const entry of this.pending) {
      if (entry instanceof PendingMove) entry.post(null);
      else this.held.push(entry);
    }
    this.pending = [];
  }

  abort() {
    this.pending = [];
  }

  resolve(origin, seq) {
    return this.held[seq];
  }
}

/**
 * Worker processes: a SharedArrayBuffer cannot reach another process, and a
 * buffer cannot move to one: transfer() markers are copied.
 */
class ProcessRefs {
  constructor() {
    this.pending = [];
  }

  transfer(marker) {
    this.pending.push(new PendingMove(marker, 0));
    return null;
  }

  commit() {
    for (const entry of this.pending) entry.post(null);
    this.pending = [];
  }

  abort() {
    this.pending = [];
  }

  ref() {
    throw codecError(
      TypeError,
      CODEC_ERRORS.SERIALIZE,
      'knitting-native: a SharedArrayBuffer cannot be sent to or from a worker process (worker.runtime "process"): ' +
        "processes do not share its memory. Copy it into an ArrayBuffer or a typed array to send it by value, " +
        'or use worker.runtime "thread", where it passes by reference',
    );
  }

  resolve() {
    return undefined;
  }
}

module.exports = { HostSharedRefs, WorkerSharedRefs, SameThreadRefs, ProcessRefs };
