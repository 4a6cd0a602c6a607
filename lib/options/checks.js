"use strict";
// What every option check shares: the error every bad option raises (with
// its code) and the checks of a value's type and range.

const { CODE } = require("../errors.js");

/**
 * An invalid option: a TypeError (wrong type, unknown key) or RangeError
 * (out of bounds) whose `code` lets callers tell it from other errors.
 */
function optionError(Ctor, message) {
  const err = new Ctor(message);
  err.code = CODE.INVALID_OPTION;
  return err;
}

function describe(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "number" || typeof value === "boolean") return `${typeof value} ${value}`;
  if (typeof value === "string") return `string ${JSON.stringify(value)}`;
  return typeof value;
}

function checkKeys(object, allowed, where) {
  for (const key of Object.keys(object)) {
    if (!allowed.includes(key)) {
      throw optionError(
        TypeError,
        `knitting-native: unknown option ${where}${key}; allowed: ${allowed.map((k) => where + k).join(", ")}`,
      );
    }
  }
}

function checkObject(value, name) {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw optionError(TypeError, `knitting-native: ${name} must be an object, got ${describe(value)}`);
  }
}

function integerIn(value, name, min, max) {
  if (typeof value !== "number" || !Number.isInteger(value)) {
    throw optionError(TypeError, `knitting-native: ${name} must be an integer, got ${describe(value)}`);
  }
  if (value < min || value > max) {
    throw optionError(RangeError, `knitting-native: ${name} must be between ${min} and ${max}, got ${value}`);
  }
  return value;
}

/** A finite number in [min, max] (a duration in `unit`). */
function numberIn(value, name, min, max, unit) {
  if (typeof value !== "number")
    throw optionError(TypeError, `knitting-native: ${name} must be a number of ${unit}, got ${describe(value)}`);
  if (!(value >= min && value <= max)) {
    throw optionError(RangeError, `knitting-native: ${name} must be between ${min} and ${max} (${unit}), got ${value}`);
  }
  return value;
}

const quoteList = (names) => names.map((n) => JSON.stringify(n)).join(", ");

function oneOf(value, name, allowed) {
  if (typeof value !== "string" || !allowed.includes(value)) {
    throw optionError(
      TypeError,
      `knitting-native: ${name} must be one of ${quoteList(allowed)}, got ${describe(value)}`,
    );
  }
  return value;
}

function boolean(value, name) {
  if (typeof value !== "boolean")
    throw optionError(TypeError, `knitting-native: ${name} must be a boolean, got ${describe(value)}`);
  return value;
}

module.exports = { optionError, describe, checkKeys, checkObject, integerIn, numberIn, oneOf, boolean, quoteList };
