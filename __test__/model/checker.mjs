// An exhaustive interleaving checker for the protocol classes that ship
// (lib/protocol/steal.js, lib/protocol/lane.js): it runs their real methods, one shared-memory
// access at a time, over every interleaving of the parties.
//
// # How a party is interleaved without threads
// Each party (the host, each worker) is an event loop: it runs one callback
// ("op") at a time to completion, as a JS thread does. An op is plain code
// of the protocol classes; every access it makes to shared memory is an
// `Atomics` call, and while the checker runs, `globalThis.Atomics` is the
// checker's stand-in (`ModelAtomics`). One step of a party = run its op from
// the start, answering the accesses it already made from a log (no effect
// on memory), perform exactly one new access for real, and stop at the next
// one (the stand-in throws SUSPEND). The party's private state (its object's
// own fields) is restored to what it was when the op began before each such
// replay, so the replay takes the same path. What the environment does for
// an op (run a task, sleep, schedule a callback, wake a sleeper) goes
// through `effect()`, logged like an access; `choose()` is an access with
// several outcomes (a task that returns or never does, a spin that finds
// work or times out), and each outcome is a separate successor state.
// Interleaving single accesses is sequential consistency, which is what JS
// `Atomics` give.
//
// # What is checked
// A state is the memory's words that differ from the start, each party's
// private state, pending op and event queue, and the model's ghost
// bookkeeping; states are hashed (64 bits) and each is expanded once. The
// model's checks run inside effects (a step that sees something impossible
// throws ModelViolation) and in every terminal state (no party can move).
// Progress: once the graph is complete, every state must be able to reach a
// terminal state; a state that cannot (parties that spin or re-serve
// forever) is reported with the path that leads to it.

const REAL = globalThis.Atomics;

/** Thrown by the stand-in to end a step at its second live access. */
const SUSPEND = Symbol("suspend");
/** Thrown by a model's effect: the party never takes another step. */
export const STUCK = Symbol("stuck");

export class ModelViolation extends Error {}

// The step being run, or null outside steps (set-up code runs for real).
let cur = null;

// Words whose accesses commute with every other party's (the model says
// which: e.g. a counter only ever added to, a flag only ever read): an
// access to one is performed and logged but is not a step of its own.
let invisible = null;

function access(label, live, word = -1) {
  if (cur === null) return live();
  if (cur.pos < cur.log.length) return cur.log[cur.pos++];
  if (word >= 0 && invisible !== null && invisible.has(word)) {
    const result = live();
    cur.log.push(result === undefined ? null : result);
    cur.pos++;
    return result;
  }
  if (cur.live) throw SUSPEND;
  cur.live = true;
  cur.label = label;
  const result = live();
  cur.log.push(result === undefined ? null : result);
  cur.pos++;
  return result;
}

/** An environment effect: logged, performed once, replayed from the log. */
export function effect(label, live) {
  const r = access(label, live);
  return r === null ? undefined : r;
}

/**
 * An effect that commutes with every other party's steps (it touches only
 * what the party holds alone at that point, such as the bytes of a slot it
 * owns, or its own event queue): performed and logged, but not a step.
 */
export function localEffect(live) {
  if (cur === null) return live();
  if (cur.pos < cur.log.length) {
    const r = cur.log[cur.pos++];
    return r === null ? undefined : r;
  }
  const result = live();
  cur.log.push(result === undefined ? null : result);
  cur.pos++;
  return result;
}

/**
 * A choice among `n` outcomes (0..n-1), made once per path; `n` may be
 * computed from the state at the moment the choice is made.
 */
export function choose(label, options) {
  if (cur === null) return 0;
  if (cur.pos < cur.log.length) return cur.log[cur.pos++];
  if (cur.live) throw SUSPEND;
  const n = options();
  cur.branches = n;
  const k = cur.forced;
  cur.live = true;
  cur.label = `${label} -> ${k}`;
  cur.log.push(k);
  cur.pos++;
  return k;
}

let names = null; // word index -> name, for traces
const nameOf = (i) => (names && names.get(i)) || `w${i}`;

// The protocol code never uses what store/add/sub/and/or/xor return (the
// stand-in returns undefined, so code that did would fail here); not
// logging those results keeps two paths that differ only in them one state.
const done = (f) => () => {
  f();
  return null;
};

const ModelAtomics = {
  load: (a, i) => access(`load ${nameOf(i)}`, () => REAL.load(a, i), i),
  store: (a, i, v) =>
    access(
      `store ${nameOf(i)} = ${v}`,
      done(() => REAL.store(a, i, v)),
      i,
    ) ?? undefined,
  add: (a, i, v) =>
    access(
      `add ${nameOf(i)} += ${v}`,
      done(() => REAL.add(a, i, v)),
      i,
    ) ?? undefined,
  sub: (a, i, v) =>
    access(
      `sub ${nameOf(i)} -= ${v}`,
      done(() => REAL.sub(a, i, v)),
      i,
    ) ?? undefined,
  and: (a, i, v) =>
    access(
      `and ${nameOf(i)} &= ${(v >>> 0).toString(2)}`,
      done(() => REAL.and(a, i, v)),
      i,
    ) ?? undefined,
  or: (a, i, v) =>
    access(
      `or ${nameOf(i)} |= ${(v >>> 0).toString(2)}`,
      done(() => REAL.or(a, i, v)),
      i,
    ) ?? undefined,
  xor: (a, i, v) =>
    access(
      `xor ${nameOf(i)} ^= ${v}`,
      done(() => REAL.xor(a, i, v)),
      i,
    ) ?? undefined,
  exchange: (a, i, v) => access(`exchange ${nameOf(i)} = ${v}`, () => REAL.exchange(a, i, v), i),
  compareExchange: (a, i, e, v) => access(`cas ${nameOf(i)} ${e} -> ${v}`, () => REAL.compareExchange(a, i, e, v), i),
  isLockFree: REAL.isLockFree,
  notify() {
    throw new ModelViolation("protocol code must wake through its notify callback, not Atomics.notify");
  },
  wait() {
    throw new ModelViolation("protocol code must sleep through its env, not Atomics.wait");
  },
  waitAsync() {
    throw new ModelViolation("protocol code must sleep through its env, not Atomics.waitAsync");
  },
};

// ---- private state of a party ----------------------------------------------

const SKIP = new Set(["i32", "env", "notify", "wakeWorker"]);

function snapValue(v) {
  if (ArrayBuffer.isView(v)) return Array.from(v);
  if (Array.isArray(v)) return v.map(snapValue);
  return v;
}

function same(a, b) {
  if (a === b) return true;
  if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!same(a[i], b[i])) return false;
  return true;
}

/**
 * The fields of a protocol object that make up a party's private state:
 * those that differ from `base` (the object's fields as constructed, from
 * `baseOf`), so that a state holds only what moved.
 */
export function snapshot(obj, base) {
  const out = {};
  for (const key of Object.keys(obj)) {
    if (SKIP.has(key) || typeof obj[key] === "function") continue;
    const v = snapValue(obj[key]);
    if (base !== undefined && key in base && same(base[key], v)) continue;
    out[key] = v;
  }
  return out;
}

/** The fields of a freshly constructed object (see `snapshot`). */
export function baseOf(obj) {
  return snapshot(obj);
}

function restoreValue(current, saved) {
  if (ArrayBuffer.isView(current)) {
    current.set(saved);
    return current;
  }
  if (Array.isArray(saved)) {
    if (Array.isArray(current) && current.length === saved.length && current.every((x) => ArrayBuffer.isView(x))) {
      current.forEach((x, i) => x.set(saved[i]));
      return current;
    }
    return saved.map((x) => (Array.isArray(x) ? x.slice() : x));
  }
  return saved;
}

/** Puts `obj` back in the state `saved` (a `snapshot` against `base`). */
export function restore(obj, saved, base) {
  if (base !== undefined) {
    for (const key of Object.keys(base)) if (!(key in saved)) obj[key] = restoreValue(obj[key], base[key]);
    // A field the object gained after construction, absent from this state.
    for (const key of Object.keys(obj)) {
      if (!(key in base) && !(key in saved) && !SKIP.has(key) && typeof obj[key] !== "function") delete obj[key];
    }
  }
  for (const key of Object.keys(saved)) obj[key] = restoreValue(obj[key], saved[key]);
}

// ---- hashing ---------------------------------------------------------------

function hash64(s) {
  let h1 = 0x811c9dc5;
  let h2 = 0x9e3779b9;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x5bd1e995);
    h2 ^= h2 >>> 15;
  }
  return (h1 >>> 0).toString(36) + ":" + (h2 >>> 0).toString(36);
}

// ---- the search ------------------------------------------------------------

/**
 * Explores every interleaving of `model`'s parties. The model provides:
 * - `mem`: the Int32Array the protocol objects use; `names`: Map of word
 *   index -> name (traces).
 * - `init()`: puts the model in its initial state (memory, parties, ghost).
 * - `save()` / `load(state)`: the whole state as a JSON-able value (its
 *   JSON is the state's identity); `load` must not let a move change
 *   `state` (it is loaded again for each move), nor `save` share anything
 *   a later move changes.
 * - `invisible` (optional): a Set of word indexes whose accesses commute
 *   with every other party's (see `access`).
 * - `moves()`: the moves possible now: [{ label, run(forced) }], where
 *   `run` performs one step (through `step()` below for a party's op).
 * - `terminal()`: checks a state with no moves (throws ModelViolation).
 * Returns { states, edges, terminals, maxDepth, ms }; throws ModelViolation
 * with a trace on the first violation.
 */
export function explore(model, { maxStates = 3_000_000 } = {}) {
  const t0 = Date.now();
  names = model.names;
  invisible = model.invisible || null;
  globalThis.Atomics = ModelAtomics;
  try {
    model.init();
    const first = model.save();
    const ids = new Map([[hash64(JSON.stringify(first)), 0]]);
    const parent = [-1];
    const via = [""];
    const depth = [0];
    const succ = [];
    const stack = [[0, first]];
    let terminals = 0;
    let edges = 0;
    let maxDepth = 0;
    const fail = (id, label, err) => {
      const trace = [];
      if (label) trace.push(label);
      for (let s = id; s > 0; s = parent[s]) trace.push(via[s]);
      trace.reverse();
      const e = new ModelViolation(`${err.message}\n  after ${trace.length} steps:\n    ${trace.join("\n    ")}`);
      e.trace = trace;
      throw e;
    };
    while (stack.length > 0) {
      const [id, state] = stack.pop();
      model.load(state);
      const moves = model.moves();
      const out = [];
      if (moves.length === 0) {
        terminals++;
        try {
          model.terminal();
        } catch (err) {
          if (!(err instanceof ModelViolation)) throw err;
          fail(id, "", err);
        }
      }
      for (const move of moves) {
        for (let forced = 0, branches = 1; forced < branches; forced++) {
          model.load(state);
          let label;
          try {
            const r = move.run(forced);
            branches = r.branches || 1;
            label = `${move.label}: ${r.label}`;
          } catch (err) {
            if (!(err instanceof ModelViolation)) throw err;
            fail(id, `${move.label}: ${cur ? cur.label : ""}`, err);
          } finally {
            cur = null;
          }
          const next = model.save();
          const key = hash64(JSON.stringify(next));
          let nid = ids.get(key);
          if (nid === undefined) {
            nid = parent.length;
            if (nid >= maxStates) throw new Error(`more than ${maxStates} states: make the configuration smaller`);
            ids.set(key, nid);
            parent.push(id);
            via.push(label);
            depth.push(depth[id] + 1);
            if (depth[id] + 1 > maxDepth) maxDepth = depth[id] + 1;
            stack.push([nid, next]);
          }
          out.push(nid);
          edges++;
        }
      }
      succ[id] = out;
    }
    // Progress: every state reaches a terminal state.
    const n = parent.length;
    const preds = Array.from({ length: n }, () => []);
    const reach = new Uint8Array(n);
    const queue = [];
    for (let s = 0; s < n; s++) {
      if (succ[s].length === 0) {
        reach[s] = 1;
        queue.push(s);
      }
      for (const t of succ[s]) preds[t].push(s);
    }
    while (queue.length > 0) {
      const t = queue.pop();
      for (const s of preds[t]) {
        if (!reach[s]) {
          reach[s] = 1;
          queue.push(s);
        }
      }
    }
    for (let s = 0; s < n; s++) {
      if (!reach[s])
        fail(
          s,
          "",
          new ModelViolation(
            "no progress: from this state no run of the parties ever ends (a party spins or re-serves for ever)",
          ),
        );
    }
    return { states: n, edges, terminals, maxDepth, ms: Date.now() - t0 };
  } finally {
    globalThis.Atomics = REAL;
    names = null;
    invisible = null;
    cur = null;
  }
}

/**
 * Runs one step of a party's op: `op()` re-runs it from its start (the
 * caller restored the party's private state first); returns whether the op
 * completed, the label of the access this step performed and how many
 * outcomes its choice had.
 */
export function step(log, forced, op) {
  cur = { log: log.slice(), pos: 0, live: false, forced, branches: 0, label: "(no shared access)" };
  let done;
  let stuck = false;
  try {
    op();
    done = true;
  } catch (err) {
    if (err === SUSPEND) done = false;
    else if (err === STUCK) {
      done = false;
      stuck = true;
    } else throw err;
  }
  // live: whether the step made a shared access or effect (not replayed from the log).
  const r = { done, stuck, live: cur.live, log: cur.log, label: cur.label, branches: cur.branches };
  return r;
}
