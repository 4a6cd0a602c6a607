// expect: TS2561
// A typo'd option: TypeScript reports the excess property with a
// "Did you mean 'threads'?" hint (TS2561, the suggesting form of TS2353).
import { createPool } from "knitting-native";

createPool({ thread: 2 }); // error
