#!/usr/bin/env bash
# Issue 39: crh's race release beside the machine's own limit. Builds
# bench/release_limit (no crh code: N connections released by a loop of
# writes, one io_uring_enter, sendmmsg...; the spread of the kernel's receive
# stamps at a sink on the other core), then alternates, TRIES times:
# release_limit (every method, interleaved round by round), `crh load
# --scenario race` over HTTP against `crh serve`, and the same with
# `--call-driver sip` against `crh serve --sip`. The generator and the
# releasing thread on CPU 0, the target and the sink on CPU 1.
# Prints per try each figure's p50 and p99 in µs, then the medians over the
# tries and crh's ratio to the limit's best method per percentile.
# What crh reports today is its *send* skew (the spread of its callers' send
# stamps); the limit's figures are its send span and its *arrival* skew.
# Until crh measures arrival at the target, the ratio is of crh's send skew to
# the limit's arrival skew, and says so.
#
# usage: bench/release_skew.sh [path/to/crh]
# env:   TRIES=3 DURATION=5 (s, each crh load) CONNS=8 (the race's callers per
#        round: crh's --callers, release_limit's --conns) ROUNDS=2000 (per method)
# Loopback only. About TRIES x (2 x DURATION + 15) s.
set -euo pipefail
crh=$(realpath "${1:-build/crh}")
TRIES=${TRIES:-3} DURATION=${DURATION:-5} CONNS=${CONNS:-8} ROUNDS=${ROUNDS:-2000}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
source "$here/lib.sh"
require_tools curl taskset "$crh"
cc=$(command -v cc || command -v gcc) || { echo "release_skew.sh: no C compiler" >&2; exit 2; }

uring=()
if [ -f /usr/include/liburing.h ]; then
  uring=(-DHAVE_LIBURING -luring)
else
  echo "release_skew.sh: no liburing (apt-get install liburing-dev): the io_uring methods are left out"
fi
"$cc" -O2 -std=gnu11 -o "$work/release_limit" "$here/release_limit/release_limit.c" -lpthread "${uring[@]}"

export CRH_API_KEY=bench-skew-$RANDOM$RANDOM
port=$(free_port) sip_port=$(free_port)
taskset -c 1 "$crh" serve --listen "127.0.0.1:$port" --sip "127.0.0.1:$sip_port" >"$work/serve.log" 2>&1 &
pids+=($!)
wait_for_url "http://127.0.0.1:$port/" "crh serve"

# crh's race skew percentiles in µs from a load document: "p50 p99".
crh_skew() {
  python3 - "$1" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    d = {}  # the load failed before writing its document: its output says why
def find(o):
    if isinstance(o, dict):
        if "skew" in o and isinstance(o["skew"], dict) and "p50_ns" in o["skew"]:
            return o["skew"]
        for v in o.values():
            r = find(v)
            if r: return r
    return None
s = find(d) or {}
print(f'{s.get("p50_ns", float("nan")) / 1e3:.1f} {s.get("p99_ns", float("nan")) / 1e3:.1f}')
PY
}

: >"$work/rows"  # try, what, p50, p99
for t in $(seq "$TRIES"); do
  "$work/release_limit" --conns "$CONNS" --rounds "$ROUNDS" --sender-cpu 0 --sink-cpu 1 >"$work/limit.out"
  echo "--- try $t: release_limit"
  cat "$work/limit.out"
  awk -v t="$t" 'NR > 2 { printf "%s %s_%s %s %s\n", t, $1, ($2 == "send" ? "send_span" : "arrival_skew"), $5, $7 }' \
    "$work/limit.out" >>"$work/rows"
  for driver in http sip; do
    flags=(--scenario race --callers "$CONNS" --duration "$DURATION" --quiet --json "$work/race-$driver.json")
    [ "$driver" = sip ] && flags+=(--call-driver sip --sip-target "127.0.0.1:$sip_port")
    taskset -c 0 "$crh" load --base-url "http://127.0.0.1:$port" "${flags[@]}" >"$work/race-$driver.out" 2>&1 || true
    read -r p50 p99 < <(crh_skew "$work/race-$driver.json")
    [ "$p50" != nan ] || { echo "--- try $t: crh race over $driver failed:"; tail -n 3 "$work/race-$driver.out"; }
    echo "--- try $t: crh race over $driver: send skew p50 $p50 µs, p99 $p99 µs"
    echo "$t crh-$driver send_skew $p50 $p99" | awk '{ printf "%s %s_%s %s %s\n", $1, $2, $3, $4, $5 }' >>"$work/rows"
  done
done

echo
python3 - "$work/rows" <<'PY'
import collections, statistics, sys
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    t, what, p50, p99 = line.split()
    rows[what].append((float(p50), float(p99)))
med = {w: (statistics.median(v[0] for v in vs), statistics.median(v[1] for v in vs)) for w, vs in rows.items()}
print(f"{'medians over the tries (µs)':42s} {'p50':>8s} {'p99':>8s}")
for w in sorted(med):
    print(f"{w:42s} {med[w][0]:8.1f} {med[w][1]:8.1f}")
for proto, kinds in (("http", ("tcp-",)), ("sip", ("udp-",))):
    limits = {w: m for w, m in med.items() if w.endswith("arrival_skew") and w.startswith(kinds)}
    crh = med.get(f"crh-{proto}_send_skew")
    if not limits or not crh:
        continue
    best = min(limits, key=lambda w: limits[w][1])
    b = limits[best]
    ratio = lambda c, l: f"{c / l:.1f}x" if l > 0 else "n/a"
    print(f"crh over {proto}: send skew p50 {crh[0]:.1f} µs, p99 {crh[1]:.1f} µs; the limit's best arrival skew ({best}) "
          f"p50 {b[0]:.1f} µs, p99 {b[1]:.1f} µs: crh {ratio(crh[0], b[0])} at p50, {ratio(crh[1], b[1])} at p99 "
          f"(crh's send skew against the limit's arrival skew: crh's arrival at the target is not measured yet)")
PY
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //') ($(nproc) cores online)"
