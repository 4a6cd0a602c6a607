// A user's task module for streaming: imports the package by its name and
// exports its streaming tasks (bench/user/stream.mjs calls them with
// `pool.stream.<name>(n)`).
import { task } from "knitting-native";
import { ints as intsGen, chunks as chunksGen } from "./stream-gens.mjs";

export const ints = task({ f: intsGen });
export const chunks = task({ f: chunksGen });
