// The permission option: its string forms and a policy with knitting's keys.
import { createPool, type PermissionPolicy, type PoolOptions } from "knitting-native";

const policy: PermissionPolicy = {
  mode: "strict",
  console: true,
  cwd: "/srv/app",
  read: ["./data", new URL("file:///srv/shared/")],
  write: ["./out"],
  net: true,
  env: { allow: true },
  run: true,
  workers: false,
  ffi: true,
  sys: ["hostname"],
  wasi: false,
  allowImport: true,
  node: { allowWorker: false },
  deno: { lock: false, frozen: true },
};
const options: PoolOptions[] = [
  { permission: "unsafe" },
  { permission: "strict" },
  { permission: policy, worker: { runtime: "process" } },
];
void options;
createPool({ permission: { mode: "unsafe", console: false } });
