# shellcheck shell=bash
# Shared by the tests/sip scripts and bench/sip: start `crh serve --sip` on
# loopback with a generated API key (kept in a file, never printed), tag an
# alias over HTTP, read the HTTP view, and read SIPp's per-message counts.
# Callers set $work (a temp dir) and $crh, and kill "${pids[@]}" on exit.

# A test's scratch folder ($work), its processes ($pids, stopped on exit) and
# its failures (fail MESSAGE counts one).
begin_sip_test() {
  work=$(mktemp -d)
  pids=()
  trap 'for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$work"' EXIT
  failures=0
}
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# Starts crh serve with HTTP and SIP on ephemeral loopback ports; sets $url,
# $sip_addr (HOST:PORT), $serve_pid. Extra arguments go to crh serve.
start_serve() {
  local n=${#pids[@]}
  head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$work/key"
  chmod 600 "$work/key"
  printf 'Apikey: %s\n' "$(cat "$work/key")" >"$work/apikey.header"
  ${serve_prefix:-} "$crh" serve --listen 127.0.0.1:0 --sip 127.0.0.1:0 --api-key-file "$work/key" "$@" \
    >"$work/serve.$n.out" 2>"$work/serve.$n.err" &
  serve_pid=$!
  pids+=("$serve_pid")
  url='' sip_addr=''
  for _ in $(seq 200); do
    url=$(grep -o 'http://[^ ]*' "$work/serve.$n.out" | head -n1)
    sip_addr=$(sed -n 's/.*sip: udp+tcp \([^ ]*\).*/\1/p' "$work/serve.$n.out" | head -n1)
    [ -n "$url" ] && [ -n "$sip_addr" ] && return 0
    kill -0 "$serve_pid" 2>/dev/null || break
    sleep 0.05
  done
  echo "crh serve --sip did not start; its output:"; cat "$work/serve.$n.out" "$work/serve.$n.err"
  return 1
}

# Tags channel 1's least recently used alias; prints its number.
tag_alias() {
  curl -s --max-time 5 -H @"$work/apikey.header" -X POST -d "tag=${1:-sipp}&minutes=10" \
    "$url/channels/1/alias-numbers/tag" | python3 -c 'import json,sys; print(json.load(sys.stdin)["number"])'
}

# Prints the HTTP view's bound caller of the alias numbered $1 (empty: none).
bound_caller() {
  curl -s --max-time 5 -H @"$work/apikey.header" "$url/channels/1/alias-numbers" | python3 -c '
import json, sys
for a in json.load(sys.stdin)["aliases"]:
    if a["number"] == sys.argv[1]: print(a["bound_caller"] or "")' "$1"
}

# Prints the count of the column named $2 (e.g. 3_403_Recv... see below) in a
# SIPp -trace_counts CSV ($1): its last line, the cumulative counts.
sipp_count() {
  python3 - "$1" "$2" <<'PY'
import sys
rows = [l.rstrip("\n").split(";") for l in open(sys.argv[1]) if l.strip()]
head, last = rows[0], rows[-1]
cols = [i for i, name in enumerate(head) if name == sys.argv[2]]
print(sum(int(last[i] or 0) for i in cols) if cols else "missing")
PY
}
