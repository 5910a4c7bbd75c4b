#!/usr/bin/env bash
# How often the contract's race (binding.race) catches a check-then-bind
# window of one event-loop turn: `crh serve --fault binding-racy-turn` checks
# the alias, yields once to its event loop, then binds, so only callers whose
# requests are read within that turn slip through. Runs the check RUNS times
# and prints how many runs caught it (target: at least 99 of 100, issue 13),
# and in which round each run first caught it, from which the per-round catch
# rate follows (runs caught / rounds played).
#
#
# With WINDOWS (issue 39), the race's power instead: for each window W (µs),
# `crh serve --bind-window-us W` binds a caller W µs after its check passed,
# and every call checked in between connects too; `crh load --scenario race`
# (one slot, the generator on CPU 0, the target on CPU 1, as
# bench/release_skew.sh) plays rounds for DURATION s over HTTP and over SIP,
# and a round catches the window when more than one caller connects. Prints
# per window and driver the rounds, the rounds caught and the per-round
# catch rate with its 95% interval (Clopper-Pearson). DRIVERS may add
# `limit`: bench/release_limit (no crh code) racing the same calls (8
# connections, all but the last byte written, the last bytes by a write loop
# and by one io_uring_enter, at real-time priority throughout when root) on
# aliases tagged beforehand: the machine's own catch rate beside crh's.
#
# usage: bench/race_catch_rate.sh [path/to/crh]
# env:   RUNS=100 FAULT=binding-racy-turn SERVER_THREADS=0 (0: one per core)
#        WINDOWS="5 10 20 50" DURATION=5 DRIVERS="http sip limit" LIMIT_ROUNDS=500 (window mode)
set -euo pipefail
crh=${1:-build/crh}
RUNS=${RUNS:-100}
FAULT=${FAULT:-binding-racy-turn}
SERVER_THREADS=${SERVER_THREADS:-0}
work=$(mktemp -d)
source "$(dirname "$0")/lib.sh"
require_tools curl "$crh"

if [ -n "${WINDOWS:-}" ]; then
  export CRH_API_KEY=bench-$RANDOM$RANDOM
  require_tools taskset python3
  limit_rounds=${LIMIT_ROUNDS:-500}
  aliases=$((2 * (limit_rounds + 20) + 10))  # the bare program's rounds and warm-up, two methods
  if [[ " ${DRIVERS:-http sip} " == *" limit "* ]]; then
    build_bare release_limit
    realtime=0
    [ "$(id -u)" = 0 ] && realtime=1  # the bare program at real-time priority throughout: its best
  fi
  printf '%-8s %-11s %8s %8s %10s %s\n' window over rounds caught "per round" "95% interval"
  for w in $WINDOWS; do
    port=$(free_port) sip_port=$(free_port)
    taskset -c 1 "$crh" serve --threads 1 --listen "127.0.0.1:$port" --sip "127.0.0.1:$sip_port" \
      --bind-window-us "$w" --aliases "$aliases" >"$work/serve.log" 2>&1 &
    serve=$!
    wait_for_url "http://127.0.0.1:$port/" "crh serve --bind-window-us $w"
    for driver in ${DRIVERS:-http sip}; do
      : >"$work/counts"  # "label rounds caught" per line
      if [ "$driver" = limit ]; then
        # The bare program (no crh code) races real calls: each round on an
        # alias tagged here beforehand, untagged after.
        python3 "$(dirname "$0")/tag_aliases.py" tag "$port" "$aliases" >"$work/aliases"
        taskset -c 0 "$work/release_limit" --http-target "$port" --conns 8 --rounds "$limit_rounds" --warmup 20 \
          --methods tcp-write,tcp-uring --call-aliases "$work/aliases" --realtime "$realtime" >"$work/limit.out" 2>&1 || true
        python3 "$(dirname "$0")/tag_aliases.py" untag "$port" <"$work/aliases"
        awk '/calls raced/ {sub("tcp-", "", $1); print "limit-" $1, $4, $6}' "$work/limit.out" >"$work/counts"
        [ -s "$work/counts" ] || { echo "$w limit: release_limit failed: $(tail -n 2 "$work/limit.out")"; continue; }
      else
        flags=(--scenario race --connections 1 --threads 1 --duration "${DURATION:-5}" --quiet --json "$work/race.json")
        [ "$driver" = sip ] && flags+=(--call-driver sip --sip-target "127.0.0.1:$sip_port")
        taskset -c 0 "$crh" load --base-url "http://127.0.0.1:$port" "${flags[@]}" >"$work/race.out" 2>&1 || true
        python3 - "$work/race.json" "$driver" >"$work/counts" <<'PY' || { echo "$w $driver: the load wrote no race document"; continue; }
import json, sys
race = json.load(open(sys.argv[1]))["race"]
print(sys.argv[2], race["rounds"], sum(v for c, v in race["winners"].items() if int(c) >= 2))  # rounds with more than one winner
PY
      fi
      while read -r label n k; do
        python3 - "$w" "$label" "$n" "$k" <<'PY'
import math, sys
w, label, n, k = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])

def cdf(k, n, p):  # P(X <= k), X ~ Binomial(n, p), summed in log space
    if k < 0: return 0.0
    if k >= n: return 1.0
    lp, lq = math.log(p), math.log1p(-p)
    terms = [math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * lp + (n - i) * lq for i in range(k + 1)]
    top = max(terms)
    return min(1.0, math.exp(top) * sum(math.exp(t - top) for t in terms))

def solve(f):  # the root of an increasing f on (0, 1)
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) < 0 else (lo, mid)
    return (lo + hi) / 2

# Clopper-Pearson, 95%: P(X >= k | lower) = 2.5%, P(X <= k | upper) = 2.5%.
lower = 0.0 if k == 0 else solve(lambda p: (1 - cdf(k - 1, n, p)) - 0.025)
upper = 1.0 if k == n else solve(lambda p: 0.025 - cdf(k, n, p))
rate = k / n if n else float("nan")
print(f"{w:<8s} {label:<11s} {n:8d} {k:8d} {rate:10.4f} [{lower:.4f}, {upper:.4f}]")
PY
      done <"$work/counts"
    done
    kill "$serve"; wait "$serve" 2>/dev/null || true
  done
  exit 0
fi

export CRH_API_KEY=bench-$RANDOM$RANDOM
port=$(free_port)
"$crh" serve --listen "127.0.0.1:$port" --threads "$SERVER_THREADS" --fault "$FAULT" >"$work/serve.log" 2>&1 &
pids+=($!)
wait_for_url "http://127.0.0.1:$port/" "crh serve --fault $FAULT"

rounds=$("$crh" contract --list-checks | grep -A2 'binding.race ' | grep -o 'in each of [0-9]* rounds' | grep -o '[0-9]*')
caught=0 played=0
declare -A first_round=()
for _ in $(seq "$RUNS"); do
  out=$("$crh" contract --base-url "http://127.0.0.1:$port" --check binding.race --quiet 2>&1 || true)
  if echo "$out" | grep -q '^FAIL *binding.race'; then
    caught=$((caught + 1))
    r=$(echo "$out" | grep -o 'round [0-9]*' | head -n 1 | grep -o '[0-9]*')
    first_round[$r]=$((${first_round[$r]:-0} + 1))
    played=$((played + r))
  else
    played=$((played + rounds))
  fi
done
echo "bench: binding.race ($rounds rounds) against crh serve --fault $FAULT (server threads: $SERVER_THREADS; 0 = one per core)"
echo "caught in $caught of $RUNS runs"
printf 'first caught in round:'
for r in $(printf '%s\n' "${!first_round[@]}" | sort -n); do printf ' %s:%s' "$r" "${first_round[$r]}"; done
echo
awk -v c="$caught" -v p="$played" 'BEGIN { printf "per-round catch rate: %.2f (%d catches in %d rounds played)\n", c / p, c, p }'
