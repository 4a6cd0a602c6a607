// expect: TS2559
// inliner is an object ({} for the defaults), not `true`.
import { createPool } from "knitting-native";

createPool({ threads: 0, inliner: {} });
createPool({ inliner: true }); // error
