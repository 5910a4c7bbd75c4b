#!/usr/bin/env bash
# Runs every unit-test binary of a build whole (one process each, two at a
# time) instead of one process per test as ctest does: under the sanitizers a
# process costs about 85 ms to start, and the ~1,050 unit tests paid it each
# (ASan: 72 oracle tests took 6.1 s one per process, 0.14 s in one). The
# sanitizer steps of .ci/run use this; `make test` keeps ctest's one process
# per test, so a test that leans on another's leftovers still shows there.
# Usage: run-unit-tests.sh BUILD_DIR [GTEST_NEGATIVE_FILTER]
#   GTEST_NEGATIVE_FILTER: tests left out, as gtest patterns joined by ':'.
# Prints a line per binary; on a failure, the failed tests' output. Exits 1
# if any binary failed or ran past its limit (900 s).
set -uo pipefail
build=${1:?usage: run-unit-tests.sh BUILD_DIR [GTEST_NEGATIVE_FILTER]}
skip=${2:-}
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

run_one() {  # BINARY LOG_DIR SKIP
  local bin=$1 name t0 code
  name=$(basename "$bin")
  t0=$(date +%s)
  (cd "$(dirname "$bin")" && timeout 900 "./$name" ${3:+--gtest_filter="-$3"}) >"$2/$name.log" 2>&1
  code=$?
  local ran
  ran=$(grep -oE '^\[==========\] [0-9]+ tests? from .* ran' "$2/$name.log" | grep -oE '[0-9]+' | head -n 1)
  if [ $code -eq 0 ]; then
    echo "passed  $name: ${ran:-?} tests, $(($(date +%s) - t0)) s"
  else
    echo "FAILED  $name (exit $code$([ $code -eq 124 ] && echo ', past 900 s')): the failed tests' output follows"
    # Each failed test from its RUN line to its FAILED line, then the summary;
    # a binary that died mid-test (a sanitizer report) shows its last lines.
    awk '/^\[ RUN      \]/ { buf = "" } { buf = buf $0 "\n" }
         /^\[  FAILED  \] .*\([0-9]+ ms\)$/ { printf "%s", buf; buf = "" }
         /^\[==========\] .* ran/ { ended = 1 }
         END { if (!ended) printf "%s", buf }' "$2/$name.log" | tail -n 400
    grep -A 40 '^\[==========\] .* ran' "$2/$name.log"
    echo "FAILED  $name"
    touch "$2/failed"
  fi
}
export -f run_one

# Largest first (about the longest), so the two at a time end together.
binaries=$(ls -S "$build"/tests/crh_*_tests 2>/dev/null)
[ -n "$binaries" ] || { echo "no unit-test binaries under $build/tests"; exit 1; }
t0=$(date +%s)
printf '%s\n' $binaries | xargs -P 2 -I{} bash -c 'run_one "$@"' _ {} "$logs" "$skip"
count=$(cat "$logs"/*.log | awk '/^\[  PASSED  \] [0-9]+/ { n += $4 } END { print n + 0 }')
if [ -e "$logs/failed" ]; then
  echo "unit tests under $build: FAILED (see above)"
  exit 1
fi
echo "unit tests under $build: ${count:-0} passed in $(($(date +%s) - t0)) s, $(printf '%s\n' $binaries | wc -l) binaries"
