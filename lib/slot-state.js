"use strict";
// The STARTED word of a request slot (src/memory/layout.rs): the host
// writes NOT_STARTED with the request; the worker then records where the
// call is. The host's hard timeout reads it to tell the call that holds a
// worker's thread (RUNNING) from calls that merely wait on that worker.

const { L } = require("./lane.js");

const STARTED = {
  NOT_STARTED: 0,
  RUNNING: 1, // its task is executing on the worker's thread
  AWAITING: 2, // its task returned a promise: the thread is free meanwhile
  ANSWERED: 3, // its task ended; the answer is written or waiting for room
};

/** Word index of the STARTED word of the slot whose first word is `w`. */
const startedWord = (w) => w + L.slotWordStarted;

module.exports = { STARTED, startedWord };
