// A user's task module: imports the package by its name, as an installed
// package is imported, and exports its task. Nothing here knows about the
// benchmark (bench/user/cpu-burst.mjs runs it).
import { task } from "knitting-native";
import { hash } from "./kernel.mjs";

export const cpu = task({ f: hash });
