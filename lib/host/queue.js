"use strict";
// The calls waiting for a free slot, oldest first: the pool's queue (and the
// inline lane's). Every call that finds the slots full passes through it, so
// it is an array read from a head index: push and shift are O(1) and
// allocate nothing per call (Array#shift moves every element; a linked list
// allocates a node per call). A taken call's entry is cleared at once, so
// the array never keeps a settled call alive; the array is dropped when it
// empties and sliced when its cleared front is over half of it and long.

/** Front entries cleared before the array is sliced (below it, emptying resets it). */
const COMPACT_AFTER = 4096;

class CallQueue {
  constructor() {
    this.items = [];
    this.head = 0;
  }

  /** Calls waiting. */
  get size() {
    return this.items.length - this.head;
  }

  push(call) {
    this.items.push(call);
  }

  /** The oldest call, left in place; undefined when none waits. */
  peek() {
    return this.items[this.head];
  }

  /** Takes the oldest call (undefined when none waits). */
  shift() {
    const items = this.items;
    const call = items[this.head];
    items[this.head++] = undefined;
    if (this.head >= items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head > COMPACT_AFTER && this.head * 2 > items.length) {
      this.items = items.slice(this.head);
      this.head = 0;
    }
    return call;
  }

  /** `calls` wait again ahead of every other, in their order (a dead worker's unstarted ones). */
  putBack(calls) {
    if (calls.length > 0) this.items.splice(this.head, 0, ...calls);
  }

  /** Empties the queue and returns what waited, oldest first (shutdown, failure). */
  takeAll() {
    const waiting = this.head === 0 ? this.items : this.items.slice(this.head);
    this.items = [];
    this.head = 0;
    return waiting;
  }
}

module.exports = { CallQueue };
