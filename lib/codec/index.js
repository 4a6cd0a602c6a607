"use strict";
// knitting-native's value codec: JS values <-> bytes in a (Shared)ArrayBuffer-backed Uint8Array.
// One module per job under codec/: the wire format and what every part shares (format.js), the
// encoder (encode.js), the decoder (decode.js), and the encoder's cold paths: exact size and the
// errors that name what could not be sent (explain.js). This file is the codec's one entry point.

const { Encoder } = require("./encode.js");
const { decode } = require("./decode.js");
const { CODEC_ERRORS, codecError, placeOf } = require("./format.js");

module.exports = { Encoder, decode, CODEC_ERRORS, codecError, placeOf };
