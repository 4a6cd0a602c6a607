"use strict";
// Cold paths of the encoder: the exact encoded size (for the maxPayloadBytes error) and the errors
// that say which value could not be sent and where it sits in the argument; plus the graph walk
// that decides when a value must go through node:v8 whole (shared references, cycles).

const v8 = require("../lazy-v8.js");
const {
  CODEC_ERRORS,
  MAX_DEPTH,
  MAX_SHAPES,
  KIND_BY_TAG,
  typedArrayTag,
  ERROR_OWN_HANDLED,
  FALLBACK,
  ObjectProto,
  DateProto,
  ArrayBufferProto,
  getProto,
  hasOwn,
  isArray,
  isView,
  NON_LATIN1,
  I64_MIN,
  I64_MAX,
  isDetachedBuffer,
  Unsendable,
  codecError,
} = require("./format.js");

// --- exact encoded size (cold path: only for the maxPayloadBytes error message) --------------------

function sizeOf(root) {
  const n = sizeOfValue(root, 0, new Set(), new Map());
  if (n >= 0) return n;
  let blob;
  try {
    blob = v8.serialize(root);
  } catch (err) {
    throw v8Failure(err, root);
  }
  return 5 + blob.length;
}

function sizeOfString(s) {
  const n = s.length;
  if (NON_LATIN1.test(s)) return 5 + 2 * n;
  return n < 256 ? 2 + n : 5 + n;
}

function sizeOfValue(v, d, seen, shapes) {
  switch (typeof v) {
    case "number":
      return (v | 0) === v && (v !== 0 || 1 / v > 0) ? 5 : 9;
    case "string":
      return sizeOfString(v);
    case "boolean":
    case "undefined":
      return 1;
    case "bigint": {
      if (v >= I64_MIN && v <= I64_MAX) return 9;
      const hex = (v < 0n ? -v : v).toString(16);
      return 6 + ((hex.length + 1) >>> 1);
    }
    case "function":
      throw new Unsendable("function", v);
    case "symbol":
      throw new Unsendable("symbol", v);
    case "object":
      break;
    default:
      return FALLBACK;
  }
  if (v === null) return 1;
  if (d >= MAX_DEPTH || seen.has(v)) return FALLBACK;
  seen.add(v);
  let total = 0;
  if (isArray(v)) {
    total = 5;
    for (let i = 0; i < v.length; i++) {
      const e = v[i];
      if (e === undefined && !(i in v)) return FALLBACK;
      const n = sizeOfValue(e, d + 1, seen, shapes);
      if (n < 0) return n;
      total += n;
    }
    return total;
  }
  const proto = getProto(v);
  if (proto === ObjectProto && d !== 0) return sizeOfRecord(v, d, seen, shapes);
  if (proto === ObjectProto || proto === null) {
    total = 5;
    for (const k in v) {
      if (proto !== null && !hasOwn.call(v, k)) continue;
      const n = sizeOfValue(v[k], d + 1, seen, shapes);
      if (n < 0) return n;
      total += sizeOfString(k) + n;
    }
    return total;
  }
  if (isView(v)) {
    if (isDetachedBuffer(v.buffer)) throw new Unsendable("detached", v);
    const tag = v instanceof Buffer ? undefined : typedArrayTag.call(v);
    if (tag !== undefined && KIND_BY_TAG[tag] === undefined) return 5 + v8.serialize(v).length;
    return 8 + v.byteLength; // its header and padding take 7-14 bytes; 8 at an aligned offset
  }
  if (proto === DateProto) return 9;
  if (proto === ArrayBufferProto) {
    if (isDetachedBuffer(v)) throw new Unsendable("detached", v);
    return 8 + v.byteLength;
  }
  if (v instanceof Error) {
    total = 2;
    const parts = [v.name, v.message, v.stack];
    if (hasOwn.call(v, "cause")) parts.push(v.cause);
    if (v.code !== undefined) parts.push(v.code);
    if (isArray(v.errors)) parts.push(v.errors);
    const keys = Object.keys(v).filter((k) => !ERROR_OWN_HANDLED.has(k));
    if (keys.length > 0) total += 4;
    for (const k of keys) {
      total += sizeOfString(k);
      parts.push(v[k]);
    }
    for (const part of parts) {
      const n = sizeOfValue(part, d + 1, seen, shapes);
      if (n < 0) return n;
      total += n;
    }
    return total;
  }
  if (!trackGraph(v, new SetTracker(seen))) return FALLBACK;
  let blob;
  try {
    blob = v8.serialize(v);
  } catch (err) {
    throw new Unsendable("v8", err);
  }
  return 5 + blob.length;
}

// A nested plain object, as Encoder#_record writes it: without its keys when an earlier object of
// the payload had the same key sequence (0x15), else with them (0x0c / 0x14), then remembered.
function sizeOfRecord(v, d, seen, shapes) {
  const keys = [];
  for (const k in v) if (hasOwn.call(v, k)) keys.push(k);
  const shape = keys.length === 0 ? undefined : shapes.get(keys[0]);
  const same = shape !== undefined && shape.length === keys.length && shape.every((k, i) => k === keys[i]);
  let total = 5;
  for (const k of keys) {
    const n = sizeOfValue(v[k], d + 1, seen, shapes);
    if (n < 0) return n;
    total += same ? n : sizeOfString(k) + n;
  }
  if (!same && keys.length >= 2 && shapes.size < MAX_SHAPES) shapes.set(keys[0], keys);
  return total;
}

// --- error reporting (cold path) --------------------------------------------------------------------

function describeThrown(err) {
  if (err instanceof Error) return err.message;
  try {
    return String(err);
  } catch {
    return "unknown error";
  }
}

// The message says where when the path is known; the detail alone is kept for the pool to put
// the task and the argument or result in front (codecError).
function placedError(Ctor, code, head, tail, path, cause) {
  const where = path === null ? "" : path === "" ? " (at top level)" : ` (at ${path})`;
  return codecError(Ctor, code, `knitting-native: ${head}${where}${tail}`, cause, head + tail, path);
}

function unsendableError(kind, value, path) {
  if (kind === "function") {
    let name = "";
    try {
      if (typeof value.name === "string" && value.name !== "") name = ` "${value.name}"`;
    } catch {}
    return placedError(
      TypeError,
      CODEC_ERRORS.FUNCTION,
      `cannot send a function${name}`,
      "; send data, not code",
      path,
    );
  }
  if (kind === "shared") {
    return placedError(
      TypeError,
      CODEC_ERRORS.SERIALIZE,
      "cannot send a SharedArrayBuffer",
      " here: it passes by reference only between the threads of one process (worker threads); copy it into " +
        "an ArrayBuffer or a typed array to send it by value",
      path,
    );
  }
  if (kind === "symbol") {
    return placedError(
      TypeError,
      CODEC_ERRORS.SYMBOL,
      `cannot send a symbol (${value.toString()})`,
      "; symbols cannot be serialized",
      path,
    );
  }
  return placedError(
    TypeError,
    CODEC_ERRORS.SERIALIZE,
    "serialization failed",
    `: ${isView(value) ? "the ArrayBuffer behind this view" : "an ArrayBuffer"} is detached and cannot be sent`,
    path,
  );
}

// node:v8 rejected the value. Functions/symbols/detached buffers reachable through data containers
// (arrays, plain objects, Map, Set, Error fields) get their specific error; anything else (a class
// instance holding a function, WeakMap, Promise, ...) is a serialization failure carrying v8's error.
function v8Failure(err, root) {
  let found = null;
  try {
    found = scan(root, null, false);
  } catch {}
  if (found !== null) return unsendableError(found.kind, found.value, found.path);
  let path = null;
  try {
    const inner = scan(root, null, true);
    if (inner !== null) path = inner.path;
  } catch {}
  return placedError(TypeError, CODEC_ERRORS.SERIALIZE, "serialization failed", `: ${describeThrown(err)}`, path, err);
}

function findPath(root, target) {
  try {
    const r = scan(root, target, true);
    return r === null ? null : r.path;
  } catch {
    return null;
  }
}

const IDENT = /^[A-Za-z_$][\w$]*$/;

function keyPath(path, k) {
  return IDENT.test(k) ? `${path}.${k}` : `${path}[${JSON.stringify(k)}]`;
}

function mapKeyRepr(k, i) {
  if (typeof k === "string") return JSON.stringify(k);
  if (typeof k === "number" || typeof k === "boolean" || k === null || k === undefined) return String(k);
  if (typeof k === "bigint") return `${k}n`;
  return `<key #${i}>`;
}

// Depth-first search for the first unsendable value (target === null) or for `target` itself.
// `intoInstances` also descends into the own enumerable properties of class instances.
function scan(root, target, intoInstances) {
  const seen = new Set();
  const hit = (v) => {
    if (target !== null) return v === target ? "target" : null;
    if (typeof v === "function") return "function";
    if (typeof v === "symbol") return "symbol";
    if (v !== null && typeof v === "object") {
      if (getProto(v) === ArrayBufferProto && isDetachedBuffer(v)) return "detached";
      if (isView(v) && isDetachedBuffer(v.buffer)) return "detached";
    }
    return null;
  };
  const visit = (v, path, depth) => {
    const kind = hit(v);
    if (kind !== null) return { kind, value: v, path };
    if (v === null || typeof v !== "object" || seen.has(v) || depth > 2000) return null;
    seen.add(v);
    let r;
    if (isArray(v)) {
      for (let i = 0; i < v.length; i++) if ((r = visit(v[i], `${path}[${i}]`, depth + 1))) return r;
      return null;
    }
    if (v instanceof Map) {
      let i = 0;
      for (const [k, val] of v) {
        if ((r = visit(k, `${path}.keys()[${i}]`, depth + 1))) return r;
        if ((r = visit(val, `${path}.get(${mapKeyRepr(k, i)})`, depth + 1))) return r;
        i++;
      }
      return null;
    }
    if (v instanceof Set) {
      let i = 0;
      for (const val of v) {
        if ((r = visit(val, `${path}.values()[${i}]`, depth + 1))) return r;
        i++;
      }
      return null;
    }
    if (isView(v)) return null;
    const proto = getProto(v);
    const isError = v instanceof Error;
    if (!(proto === ObjectProto || proto === null || isError || intoInstances)) return null;
    if (isError) {
      if (hasOwn.call(v, "cause") && (r = visit(v.cause, `${path}.cause`, depth + 1))) return r;
      if (isArray(v.errors) && (r = visit(v.errors, `${path}.errors`, depth + 1))) return r;
      if (v.code !== undefined && (r = visit(v.code, `${path}.code`, depth + 1))) return r;
    }
    for (const k of Object.keys(v)) {
      if ((r = visit(v[k], keyPath(path, k), depth + 1))) return r;
    }
    return null;
  };
  return visit(root, "", 0);
}

// Adds every object reachable from `root` (excluding root itself, which the caller tracked) the way
// node:v8 would walk it: Map keys/values, Set values, own enumerable data properties, Error cause.
// Returns false as soon as an object is reached twice. Accessors are not called here (v8.serialize
// calls them once); objects only reachable through them are not tracked.
function trackGraph(root, tracker) {
  const stack = [root];
  while (stack.length > 0) {
    const o = stack.pop();
    const children = [];
    if (o instanceof Map) {
      for (const [k, val] of o) children.push(k, val);
    } else if (o instanceof Set) {
      for (const val of o) children.push(val);
    } else if (isView(o) || o instanceof ArrayBuffer || o instanceof Date || o instanceof RegExp) {
      continue;
    } else if (isArray(o)) {
      for (let i = 0; i < o.length; i++) if (i in o) children.push(o[i]);
    } else {
      const descs = Object.getOwnPropertyDescriptors(o);
      for (const k of Object.keys(descs)) {
        const desc = descs[k];
        if ("value" in desc && (desc.enumerable || (k === "cause" && o instanceof Error))) children.push(desc.value);
      }
    }
    for (let i = 0; i < children.length; i++) {
      const c = children[i];
      if (c === null || typeof c !== "object") continue;
      if (!tracker._track(c)) return false;
      stack.push(c);
    }
  }
  return true;
}

class SetTracker {
  constructor(seen) {
    this.seen = seen;
  }

  _track(o) {
    if (this.seen.has(o)) return false;
    this.seen.add(o);
    return true;
  }
}

module.exports = {
  describeThrown,
  findPath,
  sizeOf,
  trackGraph,
  unsendableError,
  v8Failure,
};
