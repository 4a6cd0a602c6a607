"use strict";
// A worker's side of streaming calls and of calls that report progress: it
// runs the task, and sends what the task yields (or reports) through the
// call's channel (lib/protocol/stream.js) while the call runs. The call
// itself is an async call of worker/serve.js: its answer is the generator's
// return value, or what it threw, once every value is sent.
//
// Batching. Values go in batches (one payload block each): a batch is sent
// once it holds MAX_BATCH values or about MAX_BATCH_BYTES, once it holds all
// the credit the caller gave, or as soon as the generator waits for anything
// that is not a microtask (a timer, I/O): a setImmediate sends what it has
// then. A generator that yields synchronously thus fills batches, and one
// that yields now and then sends each value at once.

const { WorkerChannel, STOPS, MODES, CHANNEL_BYTES } = require("../protocol/stream.js");
const { CODE, codedError, placeValueError } = require("../errors.js");
const { NO_ROOM } = require("../payload/region.js");
const { invoke } = require("./invoke.js");

// Values per batch, at most. 1,000,000 small values from an async generator,
// median of 5 fresh processes (Node 20.20, 2 vCPUs, 2026-12-07,
// bench/user/stream.mjs): 603 ms with 64 per batch, 543 ms with 512, 459 ms
// with 1,024 (512 is what the benchmarks in docs/benchmarks.md ran with).
const MAX_BATCH = 512;
// A batch's bytes, about (binary values and strings count their length, others 16 bytes).
const MAX_BATCH_BYTES = 256 * 1024;
// Most values asked of an async generator at once (see the loop's `group`).
const MAX_GROUP = 64;
// How long a synchronous generator runs before what it yielded is sent: one
// that yields slowly is not held back for MAX_BATCH values.
const SYNC_BATCH_MS = 2;
// A batch that finds the payload region full waits this long, doubling, before it tries again.
const ROOM_RETRY_MS = [1, 2, 4, 8, 16];

/** About how many bytes `value` takes in a batch. */
function sizeOf(value) {
  if (typeof value === "string") return value.length;
  if (ArrayBuffer.isView(value)) return value.byteLength;
  if (value instanceof ArrayBuffer) return value.byteLength;
  return 16;
}

/**
 * `payload`: the worker's PayloadRegion; `buffer`: the region's buffer;
 * `encoder`, `shared`: as serve.js's; `announce()`: rings the doorbell
 * after a publication; `waitWord(index, value)`: a promise that resolves
 * once word `index` of the payload region no longer holds `value` (the
 * runtime's way: Atomics.waitAsync in threads, a Rust park thread in
 * processes).
 */
function streamRunner({ payload, buffer, encoder, shared, announce, waitWord }) {
  // A fixed-length view of the channel's own words: a view that tracks a growable buffer's length
  // is several times slower per Atomics access (room() took 18% of a worker's time over one, 2026-12-07).
  const channelAt = (offset) => new WorkerChannel(new Int32Array(buffer, offset, CHANNEL_BYTES / 4), 0);

  /** Encodes `batch` into a block of the region, waiting for room when it is full; returns [ext, len]. */
  async function place(batch) {
    for (let attempt = 0; ; attempt++) {
      const at = payload.tryPlace(encoder, batch);
      if (at !== NO_ROOM) return [at, payload.placed];
      const ms = ROOM_RETRY_MS[Math.min(attempt, ROOM_RETRY_MS.length - 1)];
      await new Promise((resolve) => setTimeout(resolve, ms));
    }
  }

  /** The error the caller threw into the stream (STOPS.THROW), decoded from its block. */
  function thrownIn(stop) {
    try {
      return payload.readSlot(null, 0, stop.len, stop.ext, shared);
    } catch (err) {
      return err;
    }
  }

  /** A streaming call: runs `fn(arg)` and sends what it yields. */
  async function stream(fn, name, channel, arg, toolkit) {
    const ch = channelAt(channel);
    let source = invoke(fn, arg, toolkit);
    if (source !== null && typeof source === "object" && typeof source.then === "function") source = await source;
    const { it, sync } = iteratorOf(source, name);
    let batch = [];
    let bytes = 0;
    let sending = null; // the batch being placed and published
    let awaitingNext = false;
    let flushTimer = null;
    let unsent = false; // a batch could not be sent: nothing after it is
    // Sends the values held. Only where room() allowed them: at the loop's top, or from the
    // timer while the generator waits (nothing was published since the loop's last look).
    const publish = ([ext, len], count) => {
      ch.publish(ext, len, count);
      announce();
    };
    const flush = () => {
      const values = batch;
      batch = [];
      bytes = 0;
      sending = place(values).then(
        (at) => publish(at, values.length),
        async (err) => {
          // A value cannot be sent: the ones before it are, then the stream fails with where it was.
          unsent = true;
          let first = -1;
          let why = err;
          for (let i = 0; i < values.length && first < 0; i++) {
            try {
              encoder.encode(values[i]);
            } catch (e) {
              first = i;
              why = e;
            }
          }
          if (first > 0) publish(await place(values.slice(0, first)), first);
          throw placeValueError(why, name, "yield", first < 0);
        },
      );
      sending.catch(() => {}); // awaited by settle(); a failure there is this call's answer
    };
    const settle = async () => {
      if (sending === null) return;
      const done = sending;
      sending = null;
      await done;
    };
    // The generator waits for more than microtasks: send what it yielded so far, when the ring
    // has room for it (its values are within the credit room() gave); else look again later.
    let flushes = 0;
    const flushIfWaiting = () => {
      flushTimer = null;
      if (!awaitingNext || batch.length === 0) return;
      const room = ch.room();
      if (sending === null && room > 0) {
        flushes++;
        flush();
      } else if (room !== -1) flushTimer = setImmediate(flushIfWaiting);
    };
    /**
     * Asks the generator for `count` values at once, each held as it comes
     * (and the timer armed); resolves with its final result if it finished,
     * else null; rejects with what it threw (the values before it are held).
     */
    let group = 1;
    let lastSize = 16; // about a value's bytes, as the last group's were
    const pull = (count) =>
      new Promise((resolve, reject) => {
        let left = count;
        let end = null;
        let failed = false;
        const one = () => {
          if (--left === 0 && !failed) resolve(end);
        };
        for (let k = 0; k < count; k++) {
          it.next().then(
            (r) => {
              if (failed || end !== null) return one(); // past its end: nothing
              if (r.done) end = r;
              else {
                batch.push(r.value);
                bytes += sizeOf(r.value);
                if (flushTimer === null) flushTimer = setImmediate(flushIfWaiting);
              }
              one();
            },
            (err) => {
              if (!failed && end === null) {
                failed = true;
                reject(err);
              }
              one();
            },
          );
        }
      });
    /** Sends what is held, waiting for room; false when the caller stopped the stream meanwhile. */
    const sendRest = async () => {
      for (;;) {
        await settle();
        if (batch.length === 0) return true;
        const room = ch.room();
        if (room === -1) return false;
        if (room === 0) await waitWord((channel >> 2) + ch.seqWord, ch.seq);
        else flush();
      }
    };
    const end = async () => {
      if (typeof it.return !== "function") return;
      try {
        await it.return();
      } catch {
        // It failed already: its first error is the answer.
      }
    };
    try {
      for (;;) {
        if (sending !== null) await settle();
        const room = ch.room();
        if (room === -1) break;
        if (room === 0) {
          await waitWord((channel >> 2) + ch.seqWord, ch.seq);
          continue;
        }
        if (batch.length >= room || batch.length >= MAX_BATCH || bytes >= MAX_BATCH_BYTES) {
          flush();
          continue;
        }
        if (sync) {
          // A synchronous generator: a batch is pulled with no await per value (at most SYNC_BATCH_MS of it).
          const limit = Math.min(room, MAX_BATCH);
          const started = performance.now();
          let last = null;
          try {
            while (batch.length < limit && bytes < MAX_BATCH_BYTES) {
              const r = it.next();
              if (r.done) {
                last = r;
                break;
              }
              batch.push(r.value);
              bytes += sizeOf(r.value);
              if ((batch.length & 15) === 0 && performance.now() - started > SYNC_BATCH_MS) break;
            }
          } catch (err) {
            await sendRest();
            throw err;
          }
          if (last !== null) {
            await sendRest();
            return last.value;
          }
          flush();
          continue;
        }
        // Values up to the batch's room, room() read once for them (the words are looked at
        // again once the batch is full, or the timer sent what it held; a stop is seen there).
        // They are asked for `group` at a time: an async generator runs through the requests
        // queued for it without coming back here for each; `group` doubles while values come
        // within microtasks, and falls back to 1 once the timer has had to send.
        const limit = Math.min(room, MAX_BATCH);
        let last = null;
        while (batch.length < limit && bytes < MAX_BATCH_BYTES && sending === null) {
          // No more than the batch's bytes hold at the values' size so far.
          const perValue = batch.length === 0 ? lastSize : bytes / batch.length;
          const fits = Math.max(1, Math.floor((MAX_BATCH_BYTES - bytes) / Math.max(1, perValue)));
          const count = Math.min(group, limit - batch.length, fits);
          const timerBefore = flushes;
          awaitingNext = true;
          try {
            last = await pull(count);
          } catch (err) {
            // The generator threw: what it yielded before goes first, then its error.
            awaitingNext = false;
            await sendRest();
            throw err;
          }
          awaitingNext = false;
          if (last !== null) break;
          group = flushes === timerBefore ? Math.min(MAX_GROUP, group * 2) : 1;
          if (batch.length !== 0) lastSize = bytes / batch.length;
        }
        if (last !== null) {
          await sendRest();
          return last.value;
        }
      }
      // The caller stopped the stream: end the generator (its finally runs).
      const stop = ch.stopped();
      if (stop.how === STOPS.THROW && typeof it.throw === "function") {
        const r = await it.throw(thrownIn(stop));
        if (!r.done) await end();
        return undefined;
      }
      if (typeof it.return === "function") await it.return();
      return undefined;
    } catch (err) {
      if (unsent) await end(); // a value could not be sent: the generator ends here
      throw err;
    } finally {
      if (flushTimer !== null) clearImmediate(flushTimer);
    }
  }

  /**
   * A call that reports progress: `fn(arg, signal)`, where `signal.progress(value)`
   * sends `value` when the channel has room, else keeps it in place of the
   * last one kept (the caller sees the latest, never a backlog).
   */
  async function withProgress(fn, channel, arg, toolkit) {
    const ch = channelAt(channel);
    let kept;
    let hasKept = false;
    let watching = false;
    let done = false;
    const sendNow = (value) => {
      const at = payload.tryPlace(encoder, [value]);
      if (at === NO_ROOM) return; // progress is best effort: the next report tries again
      ch.publish(at, payload.placed, 1);
      announce();
    };
    const watch = () => {
      if (watching || done) return;
      watching = true;
      waitWord((channel >> 2) + ch.seqWord, ch.seq).then(() => {
        watching = false;
        if (!done && hasKept) progress(kept);
      });
    };
    function progress(value) {
      if (done) return;
      if (ch.room() > 0) {
        hasKept = false;
        kept = undefined;
        sendNow(value);
      } else {
        kept = value;
        hasKept = true;
        watch();
      }
    }
    const kit = toolkit === undefined ? { hasAborted: () => false, now: () => performance.now() } : toolkit;
    try {
      return await invoke(fn, arg, { ...kit, progress });
    } finally {
      done = true;
    }
  }

  /** Runs a call of `mode` (protocol/stream.js MODES): `arg` is [channel, window, the caller's argument]. */
  function run(mode, fn, name, arg, toolkit) {
    const [channel, , value] = arg;
    if (mode === MODES.STREAM) return stream(fn, name, channel, value, toolkit);
    return withProgress(fn, channel, value, toolkit);
  }

  return { run };
}

/**
 * The iterator of what a streaming task returned: `{ it, sync }`, an async
 * iterator, or a synchronous one (a generator function*, an array, any
 * iterable) that the loop pulls a batch at a time.
 */
function iteratorOf(source, name) {
  if (source !== null && (typeof source === "object" || typeof source === "function")) {
    if (typeof source[Symbol.asyncIterator] === "function") return { it: source[Symbol.asyncIterator](), sync: false };
    if (typeof source[Symbol.iterator] === "function") return { it: source[Symbol.iterator](), sync: true };
  }
  throw codedError(
    TypeError,
    CODE.NOT_A_STREAM,
    `knitting-native: task "${name}" was called with pool.stream but returned ${
      source === null ? "null" : typeof source
    }, not an iterable; make it a generator (function*, async function*) or return an (async) iterable`,
  );
}

module.exports = { streamRunner };
