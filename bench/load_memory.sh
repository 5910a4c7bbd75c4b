#!/usr/bin/env bash
# Does `crh load` keep its memory flat as the run gets longer? Runs the same
# load (embedded reference service) for a short and a long duration and
# prints, for each, the resident set late in the measured time (sampled from
# /proc) and the peak of the whole process (with the result document built
# at the end), then the growth per second of run between the two. Fails when
# the growth during the load is above MAX_SLOPE_KB kB/s. The per-second series
# must grow: it keeps every second's histogram, packed about 1 kB a second at
# 60-90k requests/s (dense, it was 20 kB/s); the bound leaves room for the
# noise of sampling RSS by pages. The peak also holds the result document,
# whose JSON tree keeps each point's buckets (about 50 kB per second of run
# at that rate) for at most 600 points: a longer run keeps a coarser series
# (2, 4, ... seconds a point), so the peak stops growing after 10 minutes.
#
# usage: bench/load_memory.sh [path/to/crh]
# env:   SHORT=10 LONG=120 SCENARIO=get CONNECTIONS= MAX_SLOPE_KB=4
set -euo pipefail
crh=${1:-build/crh}
SHORT=${SHORT:-10}
LONG=${LONG:-120}
SCENARIO=${SCENARIO:-get}
CONNECTIONS=${CONNECTIONS:-}
MAX_SLOPE_KB=${MAX_SLOPE_KB:-4}
[ -x "$crh" ] || { echo "bench: $crh is missing (make build)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }
work=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ]; then kill -TERM "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# duration -> "late_kb peak_kb": VmRSS of crh one second before the measured
# time ends (the largest sample up to then), and time(1)'s maximum RSS.
measure() {
  local duration=$1 late=0 rss start now
  local args=(load --scenario "$SCENARIO" --duration "$duration" --quiet)
  [ -n "$CONNECTIONS" ] && args+=(--connections "$CONNECTIONS")
  /usr/bin/time -f %M -o "$work/peak" "$crh" "${args[@]}" >"$work/out" 2>&1 &
  pid=$!
  start=$(date +%s)
  while kill -0 "$pid" 2>/dev/null; do
    now=$(date +%s)
    if [ $((now - start)) -lt $((duration - 1)) ]; then
      for child in $(cat /proc/"$pid"/task/*/children 2>/dev/null || pgrep -P "$pid"); do
        rss=$(awk '/^VmRSS:/ {print $2}' /proc/"$child"/status 2>/dev/null || echo 0)
        [ "${rss:-0}" -gt "$late" ] && late=$rss
      done
    fi
    sleep 0.5
  done
  wait "$pid" || { echo "bench: crh load failed:" >&2; cat "$work/out" >&2; exit 1; }
  pid=
  [ "$late" -gt 0 ] || { echo "bench: could not sample the RSS of crh from /proc" >&2; exit 2; }
  echo "$late $(tail -n1 "$work/peak")"
}

echo "bench: crh load --scenario $SCENARIO for ${SHORT}s and ${LONG}s (embedded reference service)"
read -r short_late short_peak < <(measure "$SHORT")
echo "  ${SHORT}s: ${short_late} kB late in the load, ${short_peak} kB peak"
read -r long_late long_peak < <(measure "$LONG")
echo "  ${LONG}s: ${long_late} kB late in the load, ${long_peak} kB peak"

awk -v s="$SHORT" -v l="$LONG" -v sl="$short_late" -v ll="$long_late" -v sp="$short_peak" -v lp="$long_peak" \
    -v max="$MAX_SLOPE_KB" 'BEGIN {
  load = (ll - sl) / (l - s); peak = (lp - sp) / (l - s)
  printf "growth: %.2f kB/s during the load (ratio %.2f), %.2f kB/s at the peak (ratio %.2f)\n", load, ll / sl, peak, lp / sp
  if (load < max) { printf "PASS: under %s kB/s\n", max; exit 0 }
  printf "FAIL: memory grows %.2f kB/s during the load (limit %s kB/s)\n", load, max; exit 1
}'
