#!/usr/bin/env bash
# What capturing costs a load, and what the harness itself costs a latency
# (issue 14). Side by side in one run, against `crh serve` and against nginx
# serving the same body, alternating ROUNDS times:
#   crh load --scenario get ...                    the rate without capture
#   crh load --scenario get ... --capture F.pcap   the rate with it (goal: at most 5% less)
#   crh load --scenario get ... beside tcpdump -w  the reference: what a plain capture costs
#                                                  (tcpdump pinned to the generator's core too)
# and from the captured runs the harness overhead (client latency minus wire
# latency, p50 and p99) that the result document reports per operation.
#
# usage: bench/capture_overhead.sh [path/to/crh]     (root: capture needs it)
# env:   ROUNDS=3 DURATION=5 CONNECTIONS=32 SERVER_THREADS=1 TARGET_CPU=0 GENERATOR_CPU=1
set -euo pipefail
crh=${1:-build/crh}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5}
CONNECTIONS=${CONNECTIONS:-32}
SERVER_THREADS=${SERVER_THREADS:-1}
TARGET_CPU=${TARGET_CPU:-0}
GENERATOR_CPU=${GENERATOR_CPU:-1}
work=$(mktemp -d)
source "$(dirname "$0")/lib.sh"
require_tools curl taskset tcpdump "$(command -v nginx || echo /usr/sbin/nginx)" "$crh"
[ "$(id -u)" = 0 ] || { echo "bench: capture needs root (or CAP_NET_RAW)" >&2; exit 2; }
PIN_TARGET="taskset -c $TARGET_CPU"
pin_generator="taskset -c $GENERATOR_CPU"
start_crh_serve
start_nginx

# base path capture? -> "rate overhead_p50_us overhead_p99_us wire_p50_us client_p50_us", read from the
# terminal summary (the JSON keeps histograms, not percentiles); "-" where there is no capture.
run_load() {
  local base=$1 path=$2 capture=$3 args=() tcpdump_pid=
  [ "$capture" = yes ] && args=(--capture "$work/c.pcap" --capture-required)
  if [ "$capture" = tcpdump ]; then
    # The same buffer, snap length and filter as crh's capture; started once it listens.
    $pin_generator tcpdump -i lo -s 262144 -B 32768 -w "$work/t.pcap" "tcp port ${base##*:}" 2>"$work/tcpdump.log" &
    tcpdump_pid=$!
    for _ in $(seq 100); do grep -q "listening on" "$work/tcpdump.log" && break; sleep 0.05; done
  fi
  $pin_generator "$crh" load --base-url "$base" --path "$path" --scenario get --connections "$CONNECTIONS" \
    --threads 1 --duration "$DURATION" "${args[@]}" >"$work/out" 2>&1 ||
    { echo "bench: crh load failed:" >&2; cat "$work/out" >&2; exit 1; }
  if [ -n "$tcpdump_pid" ]; then kill -INT "$tcpdump_pid"; wait "$tcpdump_pid" 2>/dev/null || true; fi
  awk '
    function us(v, unit) { return unit == "ms" ? v * 1000 : unit == "s" ? v * 1e6 : unit == "ns" ? v / 1000 : v }
    /^generator:/ { rate = $2 }
    /harness overhead/ { for (i = 1; i <= NF; i++) { if ($i == "p50") o50 = us($(i + 1), $(i + 2)); if ($i == "p99") o99 = us($(i + 1), $(i + 2)) } }
    /^  operation +paired/ { table = 1; next }
    table && $1 == "get" && $2 ~ /^[0-9]+$/ { c50 = us($3, $4); w50 = us($5, $6); table = 0 }
    END { printf "%s %s %s %s %s\n", rate, (o50 == "" ? "-" : o50), (o99 == "" ? "-" : o99), (w50 == "" ? "-" : w50), (c50 == "" ? "-" : c50) }
  ' "$work/out"
}

echo "bench: $ROUNDS rounds of ${DURATION}s, $CONNECTIONS connections, 1 generator thread;" \
     "target on CPU $TARGET_CPU, generator on CPU $GENERATOR_CPU"
for target in serve nginx; do
  if [ $target = serve ]; then base=$crh_base; path=/api/v1/local-agents/101; else base=$nginx_base; path=/101; fi
  plain=() captured=() dumped=() o50=() o99=()
  for r in $(seq "$ROUNDS"); do
    read -r rate _ < <(run_load "$base" "$path" no)
    read -r crate p50 p99 w50 c50 < <(run_load "$base" "$path" yes)
    read -r trate _ < <(run_load "$base" "$path" tcpdump)
    plain+=("$rate"); captured+=("$crate"); dumped+=("$trate"); o50+=("$p50"); o99+=("$p99")
    printf '  round %d, %s: without capture %8.0f req/s, with %8.0f req/s, beside tcpdump %8.0f req/s; overhead p50 %s µs p99 %s µs (wire p50 %s µs, client p50 %s µs)\n' \
      "$r" "$target" "$rate" "$crate" "$trate" "$p50" "$p99" "$w50" "$c50"
  done
  p=$(mean "${plain[@]}"); c=$(mean "${captured[@]}"); t=$(mean "${dumped[@]}")
  awk -v p="$p" -v c="$c" -v d="$t" -v t="$target" 'BEGIN {
    printf "%s: with capture %.0f req/s vs %.0f without: %.1f%% fewer (goal: under 5%%); beside tcpdump %.0f: %.1f%% fewer\n",
      t, c, p, (p - c) * 100 / p, d, (p - d) * 100 / p }'
  printf '%s: harness overhead (client - wire), mean over rounds: p50 %s µs, p99 %s µs\n' "$target" \
    "$(printf '%s\n' "${o50[@]}" | awk '{s += $1} END {printf "%.1f", s / NR}')" \
    "$(printf '%s\n' "${o99[@]}" | awk '{s += $1} END {printf "%.1f", s / NR}')"
done
