#!/usr/bin/env bash
# Measures `crh load --scenario get` against wrk: both drive the same nginx
# static file and the same `crh serve` agent GET, with the same connections
# and threads, alternating in one run. Prints both rates and the ratio
# (target: crh load >= 1.0 x wrk, DESIGN.md §8), then a race's release skew.
#
# usage: bench/load_vs_wrk.sh [path/to/crh]
# env:   ROUNDS=3 DURATION=5 CONNECTIONS=50 THREADS=1 SERVER_THREADS=1 ENFORCE=0
set -euo pipefail
crh=${1:-build/crh}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5}
CONNECTIONS=${CONNECTIONS:-50}
THREADS=${THREADS:-1}
SERVER_THREADS=${SERVER_THREADS:-1}
ENFORCE=${ENFORCE:-0}
work=$(mktemp -d)
source "$(dirname "$0")/lib.sh"
require_tools wrk curl "$(command -v nginx || echo /usr/sbin/nginx)" "$crh"
start_crh_serve
start_nginx

run_wrk() {  # url -> requests/s
  wrk -t "$THREADS" -c "$CONNECTIONS" -d "${DURATION}s" -H "Apikey: $CRH_API_KEY" "$1" |
    awk '/^Requests\/sec:/ {print $2}'
}
run_crh() {  # base path -> requests/s (from the result document)
  "$crh" load --base-url "$1" --path "$2" --scenario get --connections "$CONNECTIONS" --threads "$THREADS" \
    --duration "$DURATION" --quiet --json "$work/load.json" >/dev/null
  grep -o '"achieved_rate":[0-9.eE+-]*' "$work/load.json" | cut -d: -f2
}

echo "bench: $ROUNDS alternating rounds of ${DURATION}s; $CONNECTIONS connections, $THREADS generator thread(s)" \
     "for both; server threads/workers $SERVER_THREADS"
report() {  # name, wrk rates..., --, crh rates...
  local name=$1; shift
  local w=() c=() side=w
  for x in "$@"; do
    if [ "$x" = -- ]; then side=c; continue; fi
    if [ $side = w ]; then w+=("$x"); else c+=("$x"); fi
  done
  local wm cm ratio verdict
  wm=$(mean "${w[@]}"); cm=$(mean "${c[@]}")
  ratio=$(awk -v c="$cm" -v w="$wm" 'BEGIN {printf "%.2f", c / w}')
  verdict=$(awk -v r="$ratio" 'BEGIN {print (r >= 1.0) ? "met" : "NOT met"}')
  printf '%-22s wrk %10s req/s   crh load %10s req/s   ratio crh/wrk %s (target >= 1.00: %s)\n' \
    "$name" "$wm" "$cm" "$ratio" "$verdict"
  [ "$verdict" = met ]
}

nginx_w=() nginx_c=() serve_w=() serve_c=()
for r in $(seq "$ROUNDS"); do
  a=$(run_wrk "$nginx_url"); b=$(run_crh "$nginx_base" /101)
  c=$(run_wrk "$crh_url"); d=$(run_crh "$crh_base" /api/v1/local-agents/101)
  nginx_w+=("$a"); nginx_c+=("$b"); serve_w+=("$c"); serve_c+=("$d")
  printf '  round %d: nginx: wrk %9.0f  crh %9.0f req/s   crh serve: wrk %9.0f  crh %9.0f req/s\n' "$r" "$a" "$b" "$c" "$d"
done
ok=1
report "nginx static file:" "${nginx_w[@]}" -- "${nginx_c[@]}" || ok=0
report "crh serve agent GET:" "${serve_w[@]}" -- "${serve_c[@]}" || ok=0

# The race's release skew on the same machine, for the record.
"$crh" load --base-url "$crh_base" --scenario race --duration "$DURATION" --quiet --json "$work/race.json" >/dev/null
skew=$(grep -o '"skew":{[^}]*' "$work/race.json" | grep -o '"p[0-9]*_ns":[0-9.]*' | tr '\n' ' ')
echo "race release skew (ns): $skew"
if [ "$ENFORCE" = 1 ] && [ $ok = 0 ]; then exit 1; fi
