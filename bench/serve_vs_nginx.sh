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
nginx=$(command -v nginx || echo /usr/sbin/nginx)
for tool in wrk curl "$nginx" "$crh"; do
  command -v "$tool" >/dev/null 2>&1 || [ -x "$tool" ] ||
    { echo "bench: $tool is missing (make deps installs wrk, curl and nginx-light)" >&2; exit 2; }
done

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

free_port() {
  local p
  for _ in $(seq 200); do
    p=$((20000 + RANDOM % 40000))
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
  done
  echo "bench: no free port found" >&2; exit 2
}

wait_for_url() {  # url, what
  for _ in $(seq 100); do
    curl -s -o /dev/null "$1" && return 0
    sleep 0.1
  done
  echo "bench: $2 did not answer $1 within 10 s" >&2; exit 2
}

export CRH_API_KEY=bench-$RANDOM$RANDOM
crh_port=$(free_port)
"$crh" serve --listen "127.0.0.1:$crh_port" --threads "$SERVER_THREADS" >"$work/crh.log" 2>&1 &
pids+=($!)
crh_url="http://127.0.0.1:$crh_port/api/v1/local-agents/101"
wait_for_url "$crh_url" "crh serve"
curl -s -H "Apikey: $CRH_API_KEY" "$crh_url" >"$work/101"
[ -s "$work/101" ] || { echo "bench: crh serve gave an empty body" >&2; exit 2; }

nginx_port=$(free_port)
mkdir -p "$work/www"
cp "$work/101" "$work/www/101"
cat >"$work/nginx.conf" <<CONF
worker_processes $SERVER_THREADS;
daemon off;
pid $work/nginx.pid;
error_log $work/nginx-error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$nginx_port;
    location / { root $work/www; default_type application/json; }
  }
}
CONF
"$nginx" -p "$work" -c "$work/nginx.conf" &
pids+=($!)
nginx_url="http://127.0.0.1:$nginx_port/101"
wait_for_url "$nginx_url" "nginx"

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
mean() { printf '%s\n' "$@" | awk '{s += $1} END {printf "%.0f", s / NR}'; }
n=$(mean "${nginx_rates[@]}"); c=$(mean "${crh_rates[@]}")
ratio=$(awk -v c="$c" -v n="$n" 'BEGIN {printf "%.2f", c / n}')
verdict=$(awk -v r="$ratio" 'BEGIN {print (r >= 0.8) ? "met" : "NOT met"}')
echo "nginx (static file):   $n req/s"
echo "crh serve (agent GET): $c req/s"
echo "ratio crh/nginx:       $ratio (target >= 0.80: $verdict)"
if [ "$ENFORCE" = 1 ] && [ "$verdict" != met ]; then exit 1; fi
