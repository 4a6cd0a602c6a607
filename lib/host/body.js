"use strict";
// pool.readBody(request, { maxBytes }): a request body read straight into
// shared bytes (payload/shared-bytes.js), ready to be the argument of a call,
// with a byte limit that is never passed:
// - a Content-Length over the limit is refused before a byte is read;
// - with a Content-Length, the block is made at that size and each chunk is
//   copied into it as it comes (a body longer than it said is refused);
// - without one (chunked), chunks are kept as they come, and refused as soon
//   as they pass the limit; the block is made at the end, at the size read.
// Either way nothing grows past `maxBytes`. A refused body rejects with a
// RangeError KNT_BODY_TOO_LARGE whose `status` is 413; the request is left
// unread (not destroyed) so that the server can still answer it.
//
// `request`: a node:http IncomingMessage (anything with `headers` and
// 'data'/'end'/'error' events), or a web Request (`headers.get`, `body`).

const { CODE, codedError } = require("../errors.js");

function tooLarge(detail, maxBytes) {
  const err = codedError(
    RangeError,
    CODE.BODY_TOO_LARGE,
    `knitting-native: the request body ${detail}, over readBody's maxBytes (${maxBytes})`,
  );
  err.status = 413;
  return err;
}

function badArgument(message, Ctor = TypeError) {
  return codedError(Ctor, CODE.INVALID_ARGUMENT, `knitting-native: ${message}`);
}

/** The declared length, or -1 when there is none; a malformed one is refused. */
function declaredLength(value) {
  if (value === undefined || value === null) return -1;
  const text = String(value).trim();
  if (!/^\d{1,16}$/.test(text))
    throw badArgument(`Content-Length must be a whole number, got ${JSON.stringify(text)}`, RangeError);
  return Number(text);
}

function checkMax(options) {
  const maxBytes = options !== null && typeof options === "object" ? options.maxBytes : undefined;
  if (typeof maxBytes !== "number" || !Number.isInteger(maxBytes) || maxBytes < 0) {
    throw badArgument(
      `readBody(request, { maxBytes }) needs maxBytes, a whole number of bytes >= 0 (the largest body accepted), ` +
        `got ${maxBytes === undefined ? "none" : String(maxBytes)}`,
    );
  }
  return maxBytes;
}

/**
 * Collects a body into shared bytes from `next(onChunk)`, a source that
 * calls onChunk(Uint8Array) per chunk and resolves at the end. `alloc(n)`
 * makes the shared bytes.
 */
class BodySink {
  constructor(alloc, declared, maxBytes) {
    this.alloc = alloc;
    this.declared = declared;
    this.maxBytes = maxBytes;
    this.size = 0;
    this.bytes = declared >= 0 ? alloc(declared) : null;
    this.chunks = declared >= 0 ? null : [];
  }

  /** One chunk; throws (after giving back what it made) when the body is too long. */
  add(chunk) {
    const n = chunk.byteLength;
    if (this.declared >= 0) {
      if (this.size + n > this.declared) {
        this.fail();
        throw tooLarge(`is longer than its Content-Length (${this.declared})`, this.maxBytes);
      }
      this.bytes.u8.set(chunk, this.size);
    } else {
      if (this.size + n > this.maxBytes) {
        this.fail();
        throw tooLarge(`passed ${this.maxBytes} bytes`, this.maxBytes);
      }
      this.chunks.push(chunk);
    }
    this.size += n;
  }

  end() {
    if (this.declared >= 0) {
      if (this.size !== this.declared) {
        this.fail();
        throw badArgument(`the request body ended after ${this.size} of its ${this.declared} bytes`, RangeError);
      }
      return this.bytes;
    }
    const bytes = this.alloc(this.size);
    let at = 0;
    for (const chunk of this.chunks) {
      bytes.u8.set(chunk, at);
      at += chunk.byteLength;
    }
    this.chunks = null;
    return bytes;
  }

  fail() {
    if (this.bytes !== null && !this.bytes.released) this.bytes.release();
    this.bytes = null;
    this.chunks = null;
  }
}

function asBytes(chunk) {
  if (chunk instanceof Uint8Array) return chunk;
  if (typeof chunk === "string") return Buffer.from(chunk);
  if (ArrayBuffer.isView(chunk)) return new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  if (chunk instanceof ArrayBuffer) return new Uint8Array(chunk);
  throw badArgument(`the request body gave a chunk that is not bytes (${typeof chunk})`);
}

/** An IncomingMessage: its 'data' events, paused (not destroyed) once refused. */
function readNodeStream(request, sink) {
  return new Promise((resolve, reject) => {
    const done = (err, value) => {
      request.off("data", onData);
      request.off("end", onEnd);
      request.off("error", onError);
      request.off("aborted", onAborted);
      if (err !== null) {
        if (typeof request.pause === "function") request.pause();
        reject(err);
      } else resolve(value);
    };
    const onData = (chunk) => {
      try {
        sink.add(asBytes(chunk));
      } catch (err) {
        done(err);
      }
    };
    const onEnd = () => {
      try {
        done(null, sink.end());
      } catch (err) {
        done(err);
      }
    };
    const onError = (err) => {
      sink.fail();
      done(err);
    };
    const onAborted = () => onError(badArgument("the request was aborted before its body ended", Error));
    request.on("data", onData);
    request.on("end", onEnd);
    request.on("error", onError);
    request.on("aborted", onAborted);
    if (typeof request.resume === "function") request.resume();
  });
}

/** A web Request's body stream: cancelled once refused. */
async function readWebStream(body, sink) {
  if (body === null) return sink.end();
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return sink.end();
      sink.add(asBytes(value));
    }
  } catch (err) {
    sink.fail();
    reader.cancel(err).catch(() => {});
    throw err;
  } finally {
    reader.releaseLock();
  }
}

/** pool.readBody: `alloc(n)` is the pool's sharedBytes. */
async function readBody(alloc, request, options) {
  const maxBytes = checkMax(options);
  if (
    request === null ||
    typeof request !== "object" ||
    request.headers === null ||
    typeof request.headers !== "object"
  ) {
    throw badArgument("readBody(request, { maxBytes }) needs a node:http IncomingMessage or a web Request");
  }
  const web = typeof request.headers.get === "function";
  const declared = declaredLength(web ? request.headers.get("content-length") : request.headers["content-length"]);
  if (declared > maxBytes) throw tooLarge(`is ${declared} bytes (its Content-Length)`, maxBytes);
  const sink = new BodySink(alloc, declared, maxBytes);
  if (web) {
    if (request.body !== null && (typeof request.body !== "object" || typeof request.body.getReader !== "function")) {
      sink.fail();
      throw badArgument("readBody: the Request's body is not a ReadableStream");
    }
    return readWebStream(request.body, sink);
  }
  if (typeof request.on !== "function" || request.readableEnded === true) {
    sink.fail();
    if (request.readableEnded === true) throw badArgument("readBody: the request's body was read already");
    throw badArgument("readBody(request, { maxBytes }) needs a node:http IncomingMessage or a web Request");
  }
  return readNodeStream(request, sink);
}

module.exports = { readBody };
