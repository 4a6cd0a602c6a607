// Payloads of the --report payload sweep (echo round trips). Each kind has
// VARIANTS distinct values, built once before the timed run; call i sends
// variant i % VARIANTS and checks that it got exactly that variant back, so a
// result delivered to the wrong call is caught as well as a damaged one.
import { fillBytes } from "../../__test__/helpers/prng.mjs";

/** A prime, so that variant numbers do not line up with lanes or windows. */
export const VARIANTS = 97;

/** Deterministic bytes (xorshift32) for variant `k`, so that every variant differs everywhere. */
const variantBytes = (u8, k) => fillBytes(u8, (k * 2654435761 + 1) >>> 0);

function makeString(k) {
  // 1,024 ASCII characters (so 1,024 bytes as UTF-8), different for every k.
  const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";
  let s = `variant ${String(k).padStart(4, "0")}:`;
  for (let i = 0; s.length < 1024; i++) s += alphabet[(i * 7 + k * 13) % alphabet.length];
  return s;
}

/** 20 fields: numbers, strings, booleans, and a nested array. */
function makeObject(k) {
  return {
    id: k,
    name: `item-${k}`,
    active: k % 2 === 0,
    price: 19.99 + k,
    quantity: 3 * k + 1,
    category: ["tools", "garden", "kitchen", "toys"][k % 4],
    inStock: true,
    rating: 4.5 - (k % 5) / 10,
    sku: `SKU-${(100000 + k * 37).toString(36)}`,
    weight: 0.125 * (k + 1),
    discontinued: false,
    createdAt: 1_700_000_000_000 + k * 1000,
    vendor: "ACME Corporation",
    views: k * 1009,
    featured: k % 3 === 0,
    ratio: k / 97,
    color: "#" + ((k * 0x10101) & 0xffffff).toString(16).padStart(6, "0"),
    tags: ["new", `batch-${k % 7}`, "sale"],
    matrix: [
      [k, k + 1, k + 2],
      [true, false],
      ["x", ["deep", k]],
    ],
    note: "plain object with mixed field types",
  };
}

/** Structural equality for the plain values above (objects, arrays, primitives). */
export function deepEqual(a, b) {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) {
    return typeof a === "number" && typeof b === "number" && Number.isNaN(a) && Number.isNaN(b);
  }
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b) || Object.getPrototypeOf(b) !== Object.prototype) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (const k of ka) if (!Object.hasOwn(b, k) || !deepEqual(a[k], b[k])) return false;
  return true;
}

const isU8 = (v) => Object.prototype.toString.call(v) === "[object Uint8Array]" && ArrayBuffer.isView(v);
const describe = (v) => {
  if (typeof v === "string") return `a string of ${v.length} chars starting ${JSON.stringify(v.slice(0, 16))}`;
  if (ArrayBuffer.isView(v)) return `${Object.prototype.toString.call(v).slice(8, -1)} of ${v.byteLength} bytes`;
  try {
    return JSON.stringify(v).slice(0, 80);
  } catch {
    return String(v);
  }
};

/**
 * The payload kinds: label, `bytes` (size of one value, one direction, for MB/s),
 * `values` (VARIANTS of them), check(result, k) -> null or a description of
 * what is wrong.
 */
export function makePayloads() {
  const strings = Array.from({ length: VARIANTS }, (_, k) => makeString(k));
  const arrays = Array.from({ length: VARIANTS }, (_, k) => variantBytes(new Uint8Array(64 * 1024), k + 1));
  const arrayBufs = arrays.map((u8) => Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength));
  const objects = Array.from({ length: VARIANTS }, (_, k) => makeObject(k));
  const objectBytes = Math.round(
    objects.reduce((n, o) => n + Buffer.byteLength(JSON.stringify(o)), 0) / objects.length,
  );
  return [
    {
      key: "str1k",
      label: "1 KiB string",
      bytes: 1024,
      values: strings,
      check: (r, k) => (r === strings[k] ? null : `expected variant ${k} (1,024 chars), got ${describe(r)}`),
    },
    {
      key: "u8_64k",
      label: "64 KiB Uint8Array",
      bytes: 64 * 1024,
      values: arrays,
      check: (r, k) => {
        if (!isU8(r) || r.byteLength !== 65536) return `expected a 65,536-byte Uint8Array, got ${describe(r)}`;
        if (!Buffer.from(r.buffer, r.byteOffset, r.byteLength).equals(arrayBufs[k])) {
          return `the bytes differ from variant ${k} (first bytes ${Array.from(r.subarray(0, 4))})`;
        }
        return null;
      },
    },
    {
      key: "obj20",
      label: "20-field object",
      bytes: objectBytes, // its JSON size, as a yardstick
      bytesNote: `~${objectBytes} bytes as JSON`,
      values: objects,
      check: (r, k) => (deepEqual(r, objects[k]) ? null : `expected object variant ${k}, got ${describe(r)}`),
    },
  ];
}

// ---- the payload sweep of `node bench/run.mjs --only-workload payload` ----------

/** Value kinds and sizes of the sweep (bytes of one value, one direction). */
export const SWEEP_KINDS = ["string", "u8", "object"];
export const SWEEP_SIZES = [64, 1024, 16 * 1024, 64 * 1024, 1024 * 1024, 4 * 1024 * 1024];

export const sizeLabel = (n) => (n >= 1 << 20 ? `${n / (1 << 20)} MiB` : n >= 1024 ? `${n / 1024} KiB` : `${n} B`);

/** How many distinct values a cell cycles through: fewer for large ones (memory). */
export const sweepVariants = (size) => Math.max(4, Math.min(VARIANTS, Math.floor((48 << 20) / size)));

/** An ASCII string of exactly `size` characters (= bytes as UTF-8), different for every k. */
function sweepString(size, k) {
  const head = `v${String(k).padStart(3, "0")}:`;
  const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";
  let unit = "";
  for (let i = 0; i < 256; i++) unit += alphabet[(i * 7 + k * 13) % alphabet.length];
  return (head + unit.repeat(Math.ceil(size / 256))).slice(0, size);
}

/**
 * An object whose JSON is about `size` bytes: a 4-field object at 64 B, else
 * { id, rows } with as many 20-field records (~480 B of JSON each) as fit.
 */
function sweepObject(size, k) {
  if (size < 480) return { id: k, name: `item-${k}`, ok: k % 2 === 0, price: 19.5 + k };
  const rows = [];
  const n = Math.max(1, Math.round(size / 490));
  for (let i = 0; i < n; i++) rows.push(makeObject(k * 1000 + i));
  return { id: k, rows };
}

/**
 * One cell of the sweep: { kind, size, bytes (JSON size for objects), values,
 * check(result, k) -> null | what is wrong }. An object result is checked in
 * full every 8th call and by its id and row count otherwise, so that checking
 * a 4 MiB object does not dominate the host's time; strings and bytes always
 * in full (a memcmp).
 */
export function makeSweepCell(kind, size) {
  const nv = sweepVariants(size);
  if (kind === "string") {
    const values = Array.from({ length: nv }, (_, k) => sweepString(size, k));
    return {
      kind,
      size,
      bytes: size,
      values,
      check: (r, k) => (r === values[k] ? null : `expected string variant ${k} (${size} chars), got ${describe(r)}`),
    };
  }
  if (kind === "u8") {
    const values = Array.from({ length: nv }, (_, k) => variantBytes(new Uint8Array(size), k + 1));
    const bufs = values.map((u8) => Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength));
    return {
      kind,
      size,
      bytes: size,
      values,
      check: (r, k) => {
        if (!isU8(r) || r.byteLength !== size) return `expected a ${size}-byte Uint8Array, got ${describe(r)}`;
        if (!Buffer.from(r.buffer, r.byteOffset, r.byteLength).equals(bufs[k]))
          return `the bytes differ from variant ${k}`;
        return null;
      },
    };
  }
  if (kind === "object") {
    const values = Array.from({ length: nv }, (_, k) => sweepObject(size, k));
    const bytes = Buffer.byteLength(JSON.stringify(values[0]));
    let n = 0;
    return {
      kind,
      size,
      bytes,
      values,
      check: (r, k) => {
        const full = (n++ & 7) === 0 || !values[k].rows;
        if (full) return deepEqual(r, values[k]) ? null : `expected object variant ${k}, got ${describe(r)}`;
        return r &&
          r.id === k &&
          Array.isArray(r.rows) &&
          r.rows.length === values[k].rows.length &&
          deepEqual(r.rows[r.rows.length - 1], values[k].rows[r.rows.length - 1])
          ? null
          : `expected object variant ${k}, got ${describe(r)}`;
      },
    };
  }
  throw new RangeError(`unknown payload kind ${kind}`);
}

/**
 * Calls in flight for a cell: 1,000 for small values (as the tiny-call
 * table), fewer for large ones so that the values in flight stay near
 * 16 MiB (1,000 x 4 MiB would need 4 GB in every pool).
 */
export const windowFor = (size, window) => Math.max(4, Math.min(window, Math.floor((16 << 20) / size)));
