// expect: TS2322
// permission is "unsafe", "strict" or a policy object.
import { createPool } from "knitting-native";

createPool({ permission: "strict" });
createPool({ permission: "open" }); // error
