#!/usr/bin/env bash
# CI for Bun and Deno (called by .ci/run after the Node suites, addon built):
# installs both from the npm registry into a temporary folder (not as project
# dependencies), then
#   1. runs the quick start on each,
#   2. runs the JS suite on each (bun test / deno test; runtime-only skips
#      say why in their message),
#   3. runs the process-worker tests from a Node host with worker processes
#      of each (worker.processRuntime "bun" and "deno").
set -euo pipefail
cd "$(dirname "$0")/.."

# Pinned: the versions the README's "Supported runtimes" table lists.
BUN_VERSION=1.4.4
DENO_VERSION=2.9.6

dir="${TMPDIR:-/tmp}/knitting-native-runtimes"
mkdir -p "$dir"
if [ ! -f "$dir/package.json" ]; then echo '{"private":true}' > "$dir/package.json"; fi
npm install --prefix "$dir" --no-audit --no-fund --no-save --ignore-scripts \
  "@oven/bun-linux-x64@$BUN_VERSION" "@deno/linux-x64-glibc@$DENO_VERSION" >/dev/null
bun="$dir/node_modules/@oven/bun-linux-x64/bin/bun"
deno="$dir/node_modules/@deno/linux-x64-glibc/deno"
echo "bun $("$bun" --version)"
"$deno" --version | head -1

timed() {
  local label=$1; shift
  local start=$SECONDS
  "$@"
  echo "== $label: $((SECONDS - start)) s"
}

# Test files, in the order node --test runs them.
mapfile -t files < <(ls __test__/*.test.mjs __test__/*.test.cjs | sort)

echo "== quick start on Bun and Deno"
(cd examples && "$bun" quick-start.mjs)
(cd examples && "$deno" run -A quick-start.mjs)

# Each test file in a process of its own, as node --test runs them: a file's
# leftovers (a pool it did not shut down) cannot disturb another's CPU or
# descriptor counts. A runtime's run ends with "N passed, N failed".
suite() {
  local label=$1; shift
  local passed=0 failed=0 start=$SECONDS
  for f in "${files[@]}"; do
    if "$@" "$f"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "!! $label: $f failed"; fi
  done
  echo "== $label suite: $((SECONDS - start)) s"
  echo "$label: $passed passed, $failed failed"  # test files
  [ "$failed" -eq 0 ]
}

status=0
echo "== JS tests on Bun $BUN_VERSION"
# bun test stops a test after 5 s by default; the suite's own bounds apply instead.
suite Bun "$bun" test --timeout 600000 || status=1

echo "== JS tests on Deno $DENO_VERSION"
suite Deno "$deno" test -A || status=1

echo "== process workers of Bun and Deno under a Node host"
timed "process runtimes" env KNITTING_TEST_BUN="$bun" KNITTING_TEST_DENO="$deno" KNITTING_TEST_REQUIRE_RUNTIMES=1 \
  node --test --test-concurrency=1 --test-reporter=tap __test__/process-runtimes.test.mjs || status=1
exit "$status"
