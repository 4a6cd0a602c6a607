// An HTTP server that offloads a CPU-heavy computation per request to the
// pool, so the event loop stays free to accept connections.
//
//   node examples/http-server.mjs               serve until Ctrl-C (PORT, default: any free port)
//   node examples/http-server.mjs --self-test   start, send requests to itself, check, exit
//
//   GET /primes?below=N   -> {"below":N,"count":<primes below N>}
//
// This module is the task module (imported by every worker too), so the
// server and the pool are created behind `isMain`.
import { createServer } from "node:http";
import { createPool, task, isMain } from "knitting-native";

const MAX_BELOW = 20_000_000;

/** Number of primes below `n` (sieve of Eratosthenes). */
export function countPrimes(n) {
  if (n < 3) return 0;
  const composite = new Uint8Array(n);
  let count = 1; // 2
  for (let i = 3; i < n; i += 2) {
    if (composite[i]) continue;
    count++;
    for (let j = i * i; j < n; j += 2 * i) composite[j] = 1;
  }
  return count;
}

export const primes = task({ f: (below) => countPrimes(below) });

function send(res, status, body) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

function startServer(pool, port) {
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, "http://localhost");
    if (req.method !== "GET" || url.pathname !== "/primes")
      return send(res, 404, { error: "try GET /primes?below=1000000" });
    const below = Number(url.searchParams.get("below"));
    if (!Number.isSafeInteger(below) || below < 0 || below > MAX_BELOW) {
      return send(res, 400, { error: `below must be an integer from 0 to ${MAX_BELOW}` });
    }
    try {
      send(res, 200, { below, count: await pool.call.primes(below) });
    } catch (err) {
      send(res, 500, { error: err.message });
    }
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve(server));
  });
}

async function selfTest(base, requests) {
  // pi(10^k) is well known; the others are checked against the host's sieve.
  const known = new Map([
    [10, 4],
    [1_000, 168],
    [100_000, 9_592],
    [1_000_000, 78_498],
    [2_000_000, 148_933],
  ]);
  const limits = Array.from(
    { length: requests },
    (_, i) => [...known.keys()][i % known.size] + (i < known.size ? 0 : i * 7919),
  );
  const t0 = performance.now();
  const answers = await Promise.all(
    limits.map(async (below) => {
      const res = await fetch(`${base}/primes?below=${below}`);
      return { below, status: res.status, body: await res.json() };
    }),
  );
  const ms = performance.now() - t0;
  const wrong = answers.filter(({ below, status, body }) => {
    const expected = known.get(below) ?? countPrimes(below);
    return status !== 200 || body.below !== below || body.count !== expected;
  });
  const bad = await fetch(`${base}/primes?below=-1`);
  await bad.arrayBuffer();
  console.log(`self-test: ${answers.length - wrong.length}/${answers.length} answers correct in ${ms.toFixed(0)} ms`);
  console.log(`self-test: bad input -> HTTP ${bad.status}`);
  if (wrong.length) console.error("wrong:", JSON.stringify(wrong));
  return wrong.length === 0 && bad.status === 400;
}

if (isMain) {
  const pool = createPool({ threads: 2 })({ primes });
  const testing = process.argv.includes("--self-test");
  const server = await startServer(pool, testing ? 0 : Number(process.env.PORT ?? 0));
  const base = `http://127.0.0.1:${server.address().port}`;
  console.log(`listening on ${base} (try ${base}/primes?below=1000000)`);

  const stop = async () => {
    await new Promise((resolve) => {
      server.close(resolve);
      server.closeAllConnections();
    });
    await pool.shutdown();
  };

  if (testing) {
    let ok = false;
    try {
      ok = await selfTest(base, 24);
    } finally {
      await stop();
    }
    console.log(ok ? "self-test: ok" : "self-test: FAILED");
    process.exitCode = ok ? 0 : 1;
  } else {
    process.once("SIGINT", () => {
      console.log("\nshutting down");
      stop();
    });
  }
}
