// expect: TS2353
// An unknown key inside payload.
import { createPool } from "knitting-native";

createPool({ payload: { maxBytes: 1024 } }); // error
