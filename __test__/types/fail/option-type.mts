// expect: TS2322
// threads must be a number.
import { createPool } from "knitting-native";

createPool({ threads: "2" }); // error
