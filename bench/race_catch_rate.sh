#!/usr/bin/env bash
# How often the contract's race (binding.race) catches a check-then-bind
# window of one event-loop turn: `crh serve --fault binding-racy-turn` checks
# the alias, yields once to its event loop, then binds, so only callers whose
# requests are read within that turn slip through. Runs the check RUNS times
# and prints how many runs caught it (target: at least 99 of 100, issue 13),
# and in which round each run first caught it, from which the per-round catch
# rate follows (runs caught / rounds played).
#
# usage: bench/race_catch_rate.sh [path/to/crh]
# env:   RUNS=100 FAULT=binding-racy-turn SERVER_THREADS=0 (0: one per core)
set -euo pipefail
crh=${1:-build/crh}
RUNS=${RUNS:-100}
FAULT=${FAULT:-binding-racy-turn}
SERVER_THREADS=${SERVER_THREADS:-0}
work=$(mktemp -d)
source "$(dirname "$0")/lib.sh"
require_tools curl "$crh"

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
