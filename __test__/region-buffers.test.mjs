// Shared byte regions, the native side: PayloadArena places region blocks
// (allocRegion), lists them (regions) and hands out an external ArrayBuffer
// over a region's data (regionBuffer) that detachBuffer can take away. The
// same checks run over a growable SharedArrayBuffer (thread pools) and over
// a ProcessMemory mapping (process pools), on every runtime.
import test from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const native = require("../lib/native/index.js");

const KIB = 1024;
const HEADER = 16; // region header bytes in front of the data
const runtime =
  typeof Bun !== "undefined" ? "Bun" : typeof Deno !== "undefined" ? "Deno" : `Node ${process.versions.node}`;

function sharedArena() {
  const sab = new SharedArrayBuffer(64 * KIB, { maxByteLength: 1024 * KIB });
  const arena = new native.PayloadArena(new Uint8Array(sab), sab.maxByteLength, true);
  return { arena, buffer: sab };
}

function mappedArena() {
  const memory = native.ProcessMemory.create(64 * KIB, "inherit");
  const buffer = memory.buffer(0, 64 * KIB);
  const arena = new native.PayloadArena(new Uint8Array(buffer), 64 * KIB, true);
  return { arena, buffer, memory };
}

const kinds = [["a growable SharedArrayBuffer", sharedArena]];
if (native.ProcessMemory) kinds.push(["a ProcessMemory mapping", mappedArena]);

// Why region buffers cannot work here, or null: the runtime must wrap
// external memory (not copy it) and detach what it wrapped.
function limitation() {
  const { arena, buffer } = sharedArena();
  const at = arena.allocRegion(16, 0);
  let ab;
  try {
    ab = arena.regionBuffer(at, 16);
  } catch (err) {
    return `${runtime} gives no external ArrayBuffers (${err.message})`;
  }
  new Uint8Array(ab)[0] = 0xab;
  if (new Uint8Array(buffer)[at + HEADER] !== 0xab) return `${runtime} copies external ArrayBuffers`;
  try {
    native.detachBuffer(ab);
  } catch (err) {
    return `${runtime} cannot detach external ArrayBuffers (${err.code}: ${err.message})`;
  }
  if (ab.byteLength !== 0) return `${runtime} leaves a detached external ArrayBuffer its bytes`;
  return null;
}
// false, not null: node:test skips on any value but undefined and false.
const limit = limitation() ?? false;
if (limit) console.log(`# region buffers skipped: ${limit}`);

const throwsCode = (fn, code, what) =>
  assert.throws(fn, (err) => {
    assert.equal(err.code, code, `${what}: ${err.message}`);
    return true;
  });

for (const [kind, make] of kinds) {
  test(`over ${kind}: a region's bytes are shared in place, detached, freed and listed`, { skip: limit }, () => {
    const { arena, buffer } = make();
    const main = new Uint8Array(buffer);
    const i32 = new Int32Array(buffer);
    const payload = arena.alloc(40);
    const at = arena.allocRegion(100, 5);
    assert.ok(at > 0 && at % 16 === 0, `header offset ${at}`);
    assert.equal((at + HEADER) % 16, 0, "data is 16-aligned");
    const state = Atomics.load(i32, at >> 2);
    assert.ok(state >>> 12 >= 1, `a generation is set (${state >>> 12})`);
    assert.equal(state & 0xfff, 5, "holder");
    assert.equal(Atomics.load(i32, (at >> 2) + 1), 100, "LEN");
    assert.equal(Atomics.load(i32, (at >> 2) + 2), 0, "reserved");
    assert.deepEqual(arena.regions(), [at], "the payload block is not a region");

    const ab = arena.regionBuffer(at, 100);
    assert.ok(ab instanceof ArrayBuffer);
    assert.equal(ab.byteLength, 100);
    const view = new Uint8Array(ab);
    for (let i = 0; i < 100; i++) view[i] = (i * 7 + 1) & 0xff;
    for (let i = 0; i < 100; i++) assert.equal(main[at + HEADER + i], (i * 7 + 1) & 0xff, `byte ${i}`);
    main[at + HEADER + 99] = 0xee;
    assert.equal(view[99], 0xee, "the main view's write is seen through the region buffer");
    assert.equal(Atomics.load(i32, (at >> 2) + 1), 100, "the data left the header alone");

    native.detachBuffer(ab);
    assert.equal(ab.byteLength, 0);
    assert.equal(view.length, 0);
    view[0] = 0x55;
    assert.equal(main[at + HEADER], 1, "a write through a detached view lands nowhere");
    native.detachBuffer(ab); // already detached: nothing left to take

    const again = new Uint8Array(arena.regionBuffer(at, 100));
    assert.equal(again[0], 1, "a second buffer over the same bytes after detaching the first");
    assert.equal(again[99], 0xee);
    assert.equal(arena.regionBuffer(at, 0).byteLength, 0, "zero length");
    assert.equal(arena.regionBuffer(at, 16 * 7).byteLength, 112, "the block's whole data room (rounded to 16)");

    const second = arena.allocRegion(10, 6);
    assert.deepEqual(arena.regions(), [at, second]);
    assert.notEqual(Atomics.load(i32, second >> 2) >>> 12, state >>> 12, "each region its own generation");
    arena.free(at);
    assert.deepEqual(arena.regions(), [second]);
    throwsCode(() => arena.regionBuffer(at, 1), "KNT_REGION_CORRUPT", "a freed region");
    throwsCode(() => arena.free(at), "KNT_REGION_CORRUPT", "a double free");
    arena.free(second);
    arena.free(payload);
    assert.deepEqual(arena.regions(), []);
    assert.equal(arena.stats().liveBlocks, 0);
  });

  test(`over ${kind}: regionBuffer and allocRegion refuse what is not a region or does not fit`, {
    skip: limit,
  }, () => {
    const { arena } = make();
    const payload = arena.alloc(64);
    const at = arena.allocRegion(32, 1);
    throwsCode(() => arena.regionBuffer(payload, 1), "KNT_REGION_CORRUPT", "a payload block");
    throwsCode(() => arena.regionBuffer(at, 33), "KNT_REGION_CORRUPT", "len past the block");
    throwsCode(() => arena.regionBuffer(at + 16, 1), "KNT_REGION_CORRUPT", "inside a region");
    throwsCode(() => arena.regionBuffer(0, 0), "KNT_REGION_CORRUPT", "the arena header");
    throwsCode(() => arena.regionBuffer(1 << 30, 0), "KNT_REGION_CORRUPT", "past the region");
    for (const bad of [-16, 1.5, Number.NaN]) {
      assert.throws(() => arena.regionBuffer(bad, 1), /region offset must be a whole number/);
    }
    assert.throws(() => arena.regionBuffer(at, -1), /region length must be a whole number/);
    assert.throws(() => arena.allocRegion(8, 4096), /region holder must be a whole number from 0 to 4095/);
    assert.throws(() => arena.allocRegion(arena.maxRegionRequest + 1, 0), /RangeError: a region of/);
    // Grow and retry (-n) over the growable buffer, full now (0) over the
    // fixed mapping: never a placement, never an error.
    assert.ok(arena.allocRegion(arena.maxRegionRequest, 0) <= 0, "the largest region is not placed beside others");
    assert.deepEqual(arena.regions(), [at]);
  });

  test(`over ${kind}: regions() refuses a forged block header with KNT_REGION_CORRUPT`, { skip: limit }, () => {
    const { arena, buffer } = make();
    const at = arena.allocRegion(32, 1);
    arena.allocRegion(32, 1);
    // Task code zeroes the block's SIZE word (16 bytes before the header).
    new Uint8Array(buffer).fill(0, at - 16, at - 8);
    throwsCode(() => arena.regions(), "KNT_REGION_CORRUPT", "a zero block size");
    throwsCode(() => arena.regionBuffer(at, 1), "KNT_REGION_CORRUPT", "the forged block");
  });
}

test("detachBuffer refuses what it cannot detach with KNT_NOT_DETACHABLE", () => {
  for (const [what, value] of [
    ["a SharedArrayBuffer", new SharedArrayBuffer(8)],
    ["a WebAssembly memory's buffer", new WebAssembly.Memory({ initial: 1 }).buffer],
    ["a Uint8Array", new Uint8Array(8)],
    ["a number", 42],
  ]) {
    assert.throws(
      () => native.detachBuffer(value),
      (err) => {
        assert.ok(err instanceof TypeError, what);
        assert.equal(err.code, "KNT_NOT_DETACHABLE", what);
        assert.match(err.message, /needs a detachable ArrayBuffer/);
        return true;
      },
    );
  }
  const plain = new ArrayBuffer(8);
  native.detachBuffer(plain);
  assert.equal(plain.byteLength, 0);
});

function collector() {
  if (typeof globalThis.gc === "function") return globalThis.gc;
  if (typeof Bun !== "undefined") return () => Bun.gc(true);
  try {
    require("node:v8").setFlagsFromString("--expose-gc");
    return require("node:vm").runInNewContext("gc");
  } catch {
    return null;
  }
}
const gc = collector();
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

for (const [kind, make] of kinds) {
  test(`over ${kind}: collected region buffers run their finalizers, a live one keeps its memory`, {
    skip: limit || (gc ? false : `${runtime} exposes no gc()`),
  }, async () => {
    // Only a region buffer survives: the arena and its buffer are dropped,
    // and the region buffer's finalizer hint must keep the memory alive.
    const collected = [];
    const registry = new FinalizationRegistry((what) => collected.push(what));
    const survivor = (() => {
      const { arena, buffer } = make();
      registry.register(buffer, "the buffer under a live region buffer");
      const at = arena.allocRegion(256, 2);
      const view = new Uint8Array(arena.regionBuffer(at, 256));
      view.fill(0x3c);
      return view;
    })();
    const { arena, buffer } = make();
    const main = new Uint8Array(buffer);
    const at = arena.allocRegion(64, 3);
    for (let round = 0; round < 5; round++) {
      (() => {
        for (let i = 0; i < 50; i++) new Uint8Array(arena.regionBuffer(at, 64))[i] = round;
      })();
      gc();
      await settle();
      gc();
    }
    assert.equal(main[at + HEADER + 49], 4, "every buffer wrote the region's bytes");
    assert.equal(arena.regionBuffer(at, 64).byteLength, 64, "buffers over the bytes are made after collection");
    assert.deepEqual(collected, [], "nothing a live region buffer needs was collected");
    assert.ok(
      survivor.every((b) => b === 0x3c),
      "the surviving buffer's bytes are intact",
    );
    survivor[0] = 1;
    assert.equal(survivor[0], 1);
    arena.free(at);
    assert.equal(arena.stats().liveBlocks, 0);
  });
}
