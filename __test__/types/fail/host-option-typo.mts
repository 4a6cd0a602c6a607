// expect: TS2561
// A misspelt key inside host (TS2561: "Did you mean 'steal'?").
import { createPool } from "knitting-native";

createPool({ host: { steel: true } }); // error
createPool({ host: { stealRegionLane: 2 } }); // error
