#!/usr/bin/env bash
# What splitting a load costs (issue 15): against the same nginx, side by
# side in one run, alternating ROUNDS times:
#   crh load --scenario get --threads 2 --connections C           one process, two threads
#   crh load ... --threads 1 --shard 0/2 and --shard 1/2          two processes started with one --start-at
# The shards' rates add up (their results merged by crh report); goal: at
# least 0.95 of the one process's rate. Also prints the shards' start skew.
#
# usage: bench/shard_split.sh [path/to/crh]
# env:   ROUNDS=3 DURATION=5 CONNECTIONS=32 SERVER_THREADS=1
set -euo pipefail
crh=${1:-build/crh}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5}
CONNECTIONS=${CONNECTIONS:-32}
SERVER_THREADS=${SERVER_THREADS:-1}
work=$(mktemp -d)
source "$(dirname "$0")/lib.sh"
require_tools curl "$(command -v nginx || echo /usr/sbin/nginx)" "$crh"
start_crh_serve  # the body nginx serves
start_nginx

rate_of() { awk '/^generator:/ {print $2; exit}' "$1"; }

one_process() {
  "$crh" load --base-url "$nginx_base" --path /101 --scenario get --connections "$CONNECTIONS" --threads 2 \
    --duration "$DURATION" >"$work/one" 2>&1 || { echo "bench: crh load failed:" >&2; cat "$work/one" >&2; exit 1; }
  rate_of "$work/one"
}

# Prints "rate skew_us": the merged rate of the two shards and how far apart they began.
two_shards() {
  local start pids_shards=() i
  start=$(($(date +%s) + 2))
  for i in 0 1; do
    "$crh" load --base-url "$nginx_base" --path /101 --scenario get --connections "$CONNECTIONS" --threads 1 \
      --duration "$DURATION" --shard "$i/2" --start-at "$start" --json "$work/s$i.json" >"$work/s$i" 2>&1 &
    pids_shards+=($!)
  done
  for i in 0 1; do
    wait "${pids_shards[$i]}" || { echo "bench: shard $i failed:" >&2; cat "$work/s$i" >&2; exit 1; }
  done
  "$crh" report "$work/s0.json" "$work/s1.json" >"$work/merged" 2>&1 ||
    { echo "bench: crh report failed:" >&2; cat "$work/merged" >&2; exit 1; }
  awk '/^generator:/ && !r {r = $2} /^shards: .*start skew/ {s = $(NF - 1); u = $NF}
       END {v = u == "ns" ? s / 1000 : u == "ms" ? s * 1000 : s; print r, v}' "$work/merged"
}

echo "bench: $ROUNDS rounds of ${DURATION}s, $CONNECTIONS connections in all, --scenario get against nginx ($SERVER_THREADS worker)"
ones=() twos=() skews=()
for r in $(seq "$ROUNDS"); do
  one=$(one_process)
  read -r two skew < <(two_shards)
  ones+=("$one"); twos+=("$two"); skews+=("$skew")
  printf '  round %d: one process, 2 threads %8.0f req/s; 2 shards, 1 thread each %8.0f req/s (start skew %s µs)\n' \
    "$r" "$one" "$two" "$skew"
done
o=$(mean "${ones[@]}"); t=$(mean "${twos[@]}")
awk -v o="$o" -v t="$t" 'BEGIN { printf "2 shards reach %.3f of one process (%.0f vs %.0f req/s; goal: at least 0.95)\n", t / o, t, o }'
printf 'start skew over rounds: %s µs\n' "$(printf '%s ' "${skews[@]}")"
