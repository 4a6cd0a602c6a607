// The task module of bench/user/startup.mjs.
import { task } from "knitting-native";

export const add = task({ f: ([a, b]) => a + b });
