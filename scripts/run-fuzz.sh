#!/usr/bin/env bash
# Runs every libFuzzer target of a fuzz build for a bounded time each, JOBS at
# once, on a scratch copy of its seed corpus (fuzz/corpus/NAME), and fails if
# any finds a crash, leak or sanitizer report.
# Usage: run-fuzz.sh BUILD_DIR [SECONDS_EACH] [JOBS]
set -euo pipefail
build=$1
seconds=${2:-60}
jobs=${3:-1}
root=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# fuzz_one TARGET: its verdict in $scratch/NAME.verdict (ok or found).
fuzz_one() {
  local target=$1 name seeds
  name=$(basename "$target")
  seeds="$root/fuzz/corpus/${name#crh_fuzz_}"
  mkdir -p "$scratch/$name" "$scratch/$name-artifacts"
  if "$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$scratch/$name-artifacts/" "$scratch/$name" "$seeds" >"$scratch/$name.log" 2>&1; then
    echo ok >"$scratch/$name.verdict"
  else
    echo found >"$scratch/$name.verdict"
  fi
}

targets=()
for target in "$build"/fuzz/crh_fuzz_*; do [ -x "$target" ] && targets+=("$target"); done
running=0
for target in "${targets[@]}"; do
  echo "fuzz: $(basename "$target") for ${seconds} s (seeds: fuzz/corpus/$(basename "$target" | sed 's/^crh_fuzz_//'))"
  fuzz_one "$target" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n || true; running=$((running - 1)); fi
done
wait

status=0
for target in "${targets[@]}"; do
  name=$(basename "$target")
  if [ "$(cat "$scratch/$name.verdict" 2>/dev/null)" = ok ]; then
    echo "fuzz: $name: no problem found"
    grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' "$scratch/$name.log" | sed 's/^/  /'
  else
    echo "fuzz: $name FOUND A PROBLEM; the input that triggers it:"
    ls "$scratch/$name-artifacts/"
    for a in "$scratch/$name-artifacts"/*; do echo "--- $a"; od -c "$a" | head -n 20; done
    tail -n 60 "$scratch/$name.log"
    status=1
  fi
done
exit $status
