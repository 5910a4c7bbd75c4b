# Shared by the bench scripts: ports, readiness, and the two servers they
# measure against (crh serve and nginx serving the same body as a static
# file). Source it after setting crh, SERVER_THREADS and work; PIN_TARGET
# (e.g. "taskset -c 0") pins both servers.
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

require_tools() {
  for tool in "$@"; do
    command -v "$tool" >/dev/null 2>&1 || [ -x "$tool" ] ||
      { echo "bench: $tool is missing (make deps installs wrk, curl and nginx-light)" >&2; exit 2; }
  done
}

# build_bare NAME: compiles bench/NAME/NAME.c (a bare C program, no crh
# code) into $work/NAME, with its io_uring methods when liburing is
# installed; bare_uring is then 1, else 0 (the caller says what it leaves out).
build_bare() {
  local cc uring=()
  cc=$(command -v cc || command -v gcc) || { echo "bench: no C compiler for bench/$1" >&2; exit 2; }
  bare_uring=0
  if [ -f /usr/include/liburing.h ]; then uring=(-DHAVE_LIBURING -luring); bare_uring=1; fi
  "$cc" -O2 -std=gnu11 -o "$work/$1" "$(dirname "${BASH_SOURCE[0]}")/$1/$1.c" -lpthread "${uring[@]}"
}

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

# Sets crh_url: one agent's GET on `crh serve`, and saves its body in $work/101.
start_crh_serve() {
  export CRH_API_KEY=bench-$RANDOM$RANDOM
  local port; port=$(free_port)
  ${PIN_TARGET:-} "$crh" serve --listen "127.0.0.1:$port" --threads "$SERVER_THREADS" >"$work/crh.log" 2>&1 &
  pids+=($!)
  crh_base="http://127.0.0.1:$port"
  crh_url="$crh_base/api/v1/local-agents/101"
  wait_for_url "$crh_url" "crh serve"
  curl -s -H "Apikey: $CRH_API_KEY" "$crh_url" >"$work/101"
  [ -s "$work/101" ] || { echo "bench: crh serve gave an empty body" >&2; exit 2; }
}

# Sets nginx_base and nginx_url: the same body as a static file.
start_nginx() {
  local nginx port
  nginx=$(command -v nginx || echo /usr/sbin/nginx)
  port=$(free_port)
  mkdir -p "$work/www"
  chmod 755 "$work" "$work/www"  # nginx workers run as nobody when started as root
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
    listen 127.0.0.1:$port;
    location / { root $work/www; default_type application/json; }
  }
}
CONF
  ${PIN_TARGET:-} "$nginx" -p "$work" -c "$work/nginx.conf" &
  pids+=($!)
  nginx_base="http://127.0.0.1:$port"
  nginx_url="$nginx_base/101"
  wait_for_url "$nginx_url" "nginx"
}

mean() { printf '%s\n' "$@" | awk '{s += $1} END {printf "%.0f", s / NR}'; }
