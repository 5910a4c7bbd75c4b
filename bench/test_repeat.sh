#!/usr/bin/env bash
# Is `make test` steady? Runs ctest over an existing build N times in a row
# (as `make test` runs it: every test, -j JOBS) and counts, per test, the runs
# it failed in. A test that fails at random fails a submission at random.
#
# usage: bench/test_repeat.sh [--runs N] [--jobs J] [--build DIR]   (default 10 runs, nproc jobs, build/)
# exit:  0 every run passed every test; 1 some test failed in some run
set -euo pipefail
runs=10 jobs=$(nproc) build=build
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    -h | --help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "test_repeat: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -f "$build/CTestTestfile.cmake" ] || { echo "test_repeat: $build is not a configured build (make test builds it)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bad_runs=0
for i in $(seq "$runs"); do
  start=$SECONDS
  if ctest --test-dir "$build" -j "$jobs" >"$work/run$i.log" 2>&1; then verdict=passed; else verdict=FAILED; bad_runs=$((bad_runs + 1)); fi
  summary=$(grep -E '^[0-9]+% tests passed' "$work/run$i.log" || echo "no ctest summary")
  echo "run $i/$runs: $verdict in $((SECONDS - start)) s: $summary"
  # grep finds nothing in a green run: not an error (set -e, pipefail)
  { sed -n '/The following tests FAILED/,$p' "$work/run$i.log" | grep -E '^\s+[0-9]+ - ' || true; } |
    sed 's/^\s*[0-9]* - //' >>"$work/failed"
done
echo "test_repeat: $((runs - bad_runs)) of $runs runs passed every test"
if [ -s "$work/failed" ]; then
  echo "test_repeat: failing tests (runs failed in):"
  sort "$work/failed" | uniq -c | sort -rn
  exit 1
fi
