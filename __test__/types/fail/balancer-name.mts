// expect: TS2322
// balancer takes only the listed names, and host.dispatcher and
// inliner.position theirs.
import { createPool } from "knitting-native";

createPool({ balancer: "leastBusy" }); // error
createPool({ balancer: "fastest" }); // error
createPool({ host: { dispatcher: "shared" } }); // error
createPool({ inliner: { position: "middle" } }); // error
