"use strict";
// knitting-native's value codec: JS values <-> bytes in a (Shared)ArrayBuffer-backed Uint8Array.
// One module per job under codec/: the wire format and what every part shares (format.js), the
// encoder (encode.js), the decoder (decode.js), and the encoder's cold paths: exact size and the
// errors that name what could not be sent (explain.js); transfer() markers (transfer.js) and the byte
// copy the payload region shares (copy.js). This file is the codec's one entry point: nothing outside
// codec/ requires another of its files (__test__/structure.test.mjs).

const { Encoder } = require("./encode.js");
const { decode } = require("./decode.js");
const { CODEC_ERRORS, codecError, placeOf, SEND_BYTES, SHARED_BYTES_ERROR, BytesDescriptor } = require("./format.js");
const { transfer, Transfer, TRANSFER_MIN_BYTES, TRANSFER_ERROR, movedCopy } = require("./transfer.js");
const { copyBytes } = require("./copy.js");

module.exports = {
  Encoder,
  decode,
  CODEC_ERRORS,
  codecError,
  placeOf,
  transfer,
  Transfer,
  TRANSFER_MIN_BYTES,
  TRANSFER_ERROR,
  movedCopy,
  copyBytes,
  SEND_BYTES,
  SHARED_BYTES_ERROR,
  BytesDescriptor,
};
