// An HTTP server in the user's shape for bench/threads-default.mjs: each
// request runs a ~`ms` ms task on the pool and answers with its result.
//
//   <runtime> bench/user/http-server.mjs <threads> <n>
// Prints "listening <port>" once ready; ends on SIGTERM.
import { createServer } from "node:http";
import { createPool } from "knitting-native";
import { cpu } from "./cpu-tasks.mjs";

const threads = Number(process.argv[2]);
const n = Number(process.argv[3]);
const pool = createPool({ threads })({ cpu });
await pool.ready;
const server = createServer(async (_req, res) => {
  res.end(String(await pool.call.cpu(n)));
});
server.listen(0, "127.0.0.1", () => console.log(`listening ${server.address().port}`));
process.on("SIGTERM", () => {
  server.close();
  pool.shutdown().then(() => process.exit(0));
});
