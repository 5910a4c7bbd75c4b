#!/usr/bin/env bash
# Measures `crh serve` on a single-agent GET against nginx serving a static
# file of the same body size, both driven by wrk with the same connections
# and threads, alternating in one run. Prints both rates and the ratio
# (target: crh serve >= 0.8 x nginx, DESIGN.md §8).
#
# usage: bench/serve_vs_nginx.sh [path/to/crh]
# env:   ROUNDS=3 DURATION=5s CONNECTIONS=50 WRK_THREADS=1 SERVER_THREADS=1 ENFORCE=0
set -euo pipefail
crh=${1:-build/crh}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5s}
CONNECTIONS=${CONNECTIONS:-50}
WRK_THREADS=${WRK_THREADS:-1}
SERVER_THREADS=${SERVER_THREADS:-1}
ENFORCE=${ENFORCE:-0}
work=$(mktemp -d)
source "$(dirname "$0")/lib.sh"
require_tools wrk curl "$(command -v nginx || echo /usr/sbin/nginx)" "$crh"
start_crh_serve
start_nginx

run_wrk() {  # url -> requests/s
  wrk -t "$WRK_THREADS" -c "$CONNECTIONS" -d "$DURATION" -H "Apikey: $CRH_API_KEY" "$1" |
    awk '/^Requests\/sec:/ {print $2}'
}

echo "bench: body $(wc -c <"$work/101") bytes; wrk -t$WRK_THREADS -c$CONNECTIONS -d$DURATION;" \
     "server threads/workers $SERVER_THREADS; $ROUNDS alternating rounds"
crh_rates=() nginx_rates=()
for r in $(seq "$ROUNDS"); do
  n=$(run_wrk "$nginx_url"); c=$(run_wrk "$crh_url")
  nginx_rates+=("$n"); crh_rates+=("$c")
  printf '  round %d: nginx %10.0f req/s   crh serve %10.0f req/s\n' "$r" "$n" "$c"
done
n=$(mean "${nginx_rates[@]}"); c=$(mean "${crh_rates[@]}")
ratio=$(awk -v c="$c" -v n="$n" 'BEGIN {printf "%.2f", c / n}')
verdict=$(awk -v r="$ratio" 'BEGIN {print (r >= 0.8) ? "met" : "NOT met"}')
echo "nginx (static file):   $n req/s"
echo "crh serve (agent GET): $c req/s"
echo "ratio crh/nginx:       $ratio (target >= 0.80: $verdict)"
if [ "$ENFORCE" = 1 ] && [ "$verdict" != met ]; then exit 1; fi
