#!/usr/bin/env bash
# CI for Bun and Deno (called by .ci/run after the Node suites, addon built):
# installs both from the npm registry into a temporary folder (not as project
# dependencies), then
#   1. runs the quick start on each,
#   2. runs the JS suite on each (bun test / deno test; runtime-only skips
#      say why in their message), the two runtimes side by side (each file
#      in a process of its own, one file at a time per runtime),
#   3. runs the process-worker tests from a Node host with worker processes
#      of each (worker.processRuntime "bun" and "deno").
# Each runtime's run ends with a line "<runtime>: N files passed, N failed;
# tests: N passed, N failed, N skipped".
set -euo pipefail
cd "$(dirname "$0")/.."

# Pinned: the versions the README's and docs/api.md's runtime tables list.
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

start_all=$SECONDS
FILE_LIMIT=${KNITTING_CI_FILE_LIMIT:-600}

echo "== quick start on Bun and Deno"
(cd examples && "$bun" quick-start.mjs)
(cd examples && "$deno" run -A quick-start.mjs)

# Test files, in the order node --test runs them.
mapfile -t files < <(ls __test__/*.test.mjs __test__/*.test.cjs | sort)
logs=$(mktemp -d)

# suite <label> <command...>: every file in its own process, as node --test
# runs them (a file's leftovers cannot disturb another's CPU or descriptor
# counts); the output goes to $logs/<label>.log, printed when done.
suite() {
  local label=$1; shift
  local out="$logs/$label.log"
  local passed=0 failed=0 start=$SECONDS
  for f in "${files[@]}"; do
    # A file that hangs fails on its own after FILE_LIMIT seconds instead of
    # holding CI until its overall limit.
    local one="$logs/$label.current"
    if timeout -k 10 "$FILE_LIMIT" "$@" "$f" >"$one" 2>&1; then
      passed=$((passed + 1))
    else
      failed=$((failed + 1))
      echo "!! $label: $f failed" >>"$one"
      cp "$one" "$logs/failed.$label.$(basename "$f").log"
    fi
    cat "$one" >>"$out"
  done
  # Test counts from the runners' own summaries (bun: " N pass/skip/fail";
  # deno: "ok | N passed | N failed | N ignored").
  local clean tp tf ts
  clean=$(sed 's/\x1b\[[0-9;]*m//g' "$out")
  if [ "$label" = Bun ]; then
    tp=$(awk '/^ *[0-9]+ pass$/ {s+=$1} END {print s+0}' <<<"$clean")
    tf=$(awk '/^ *[0-9]+ fail$/ {s+=$1} END {print s+0}' <<<"$clean")
    ts=$(awk '/^ *[0-9]+ skip$/ {s+=$1} END {print s+0}' <<<"$clean")
  else
    # "ok | 13 passed | 0 failed | 2 ignored (1s)"
    tp=$(awk -F'|' '/ passed \| / {for (i = 2; i <= NF; i++) if ($i ~ / passed/) s+=$i+0} END {print s+0}' <<<"$clean")
    tf=$(awk -F'|' '/ passed \| / {for (i = 2; i <= NF; i++) if ($i ~ / failed/) s+=$i+0} END {print s+0}' <<<"$clean")
    ts=$(awk -F'|' '/ passed \| / {for (i = 2; i <= NF; i++) if ($i ~ / ignored/) s+=$i+0} END {print s+0}' <<<"$clean")
  fi
  echo "== $label suite: $((SECONDS - start)) s" >>"$out"
  echo "$label: $passed files passed, $failed failed; tests: $tp passed, $tf failed, $ts skipped" >>"$out"
  [ "$failed" -eq 0 ]
}

echo "== JS tests on Bun $BUN_VERSION and Deno $DENO_VERSION (side by side)"
# bun test stops a test after 5 s by default; the suite's own bounds apply instead.
suite Bun "$bun" test --timeout 600000 &
bun_pid=$!
suite Deno "$deno" test -A &
deno_pid=$!
status=0
wait "$bun_pid" || status=1
wait "$deno_pid" || status=1
cat "$logs/Bun.log" "$logs/Deno.log"
tail -n 1 "$logs/Bun.log"
tail -n 1 "$logs/Deno.log"

echo "== process workers of Bun and Deno under a Node host"
start=$SECONDS
env KNITTING_TEST_BUN="$bun" KNITTING_TEST_DENO="$deno" KNITTING_TEST_REQUIRE_RUNTIMES=1 \
  node --test --test-concurrency=1 --test-reporter=tap __test__/process-runtimes.test.mjs || status=1
echo "== process runtimes: $((SECONDS - start)) s"
echo "== Bun and Deno in all: $((SECONDS - start_all)) s"
# The failures again, last, so that the end of CI's output names them (the
# whole logs above are long enough to push them out of a short tail).
for failure in "$logs"/failed.*.log; do
  [ -e "$failure" ] || continue
  name=$(basename "$failure" .log)
  name=${name#failed.}
  echo "== failed on ${name%%.*}: __test__/${name#*.}, its last 80 lines"
  tail -n 80 "$failure" | sed 's/\x1b\[[0-9;]*m//g'
done
rm -rf "$logs"
exit "$status"
