// expect: TS2353
// An option that PoolOptions does not have.
import { createPool } from "knitting-native";

createPool({ concurrency: 2 }); // error
