#!/usr/bin/env bash
# Runs every libFuzzer target of a fuzz build for a bounded time each, on a
# scratch copy of its seed corpus (fuzz/corpus/NAME), and fails on the first
# crash, leak or sanitizer report. Usage: run-fuzz.sh BUILD_DIR [SECONDS_EACH]
set -euo pipefail
build=$1
seconds=${2:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
status=0
for target in "$build"/fuzz/crh_fuzz_*; do
  [ -x "$target" ] || continue
  name=$(basename "$target")
  seeds="$root/fuzz/corpus/${name#crh_fuzz_}"
  mkdir -p "$scratch/$name" "$scratch/$name-artifacts"
  echo "fuzz: $name for ${seconds} s (seeds: ${seeds#"$root"/})"
  if ! "$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$scratch/$name-artifacts/" "$scratch/$name" "$seeds" >"$scratch/$name.log" 2>&1; then
    echo "fuzz: $name FOUND A PROBLEM; the input that triggers it:"
    ls "$scratch/$name-artifacts/"
    for a in "$scratch/$name-artifacts"/*; do echo "--- $a"; od -c "$a" | head -n 20; done
    tail -n 60 "$scratch/$name.log"
    status=1
  else
    grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' "$scratch/$name.log" | sed 's/^/  /'
  fi
done
exit $status
