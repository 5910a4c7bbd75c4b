#!/usr/bin/env bash
# `crh serve` as a user runs it: key sources, the printed URL, exit codes,
# and a graceful stop on SIGTERM. Loopback only; every wait is bounded.
set -uo pipefail
crh=$1
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# Starts crh serve with the given arguments; sets $pid and $url (stdout in $work/out.N).
start() {
  local n=${#pids[@]}
  "$crh" serve --listen 127.0.0.1:0 --threads 1 "$@" >"$work/out.$n" 2>"$work/err.$n" &
  pid=$!
  pids+=("$pid")
  out="$work/out.$n" err="$work/err.$n" url=
  for _ in $(seq 100); do
    url=$(grep -o 'http://[^ ]*' "$out" | head -n1)
    [ -n "$url" ] && return 0
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}
status_of() { curl -s -o /dev/null -w '%{http_code}' "$@"; }

# 1. No key configured: a random one is generated and printed once to stderr.
unset CRH_API_KEY
start || fail "crh serve did not start without a key"
key=$(sed -n 's/.*generated API key: \([0-9a-f]*\).*/\1/p' "$err")
[ ${#key} -eq 32 ] || fail "expected a 32-hex-digit generated key on stderr, got: $(cat "$err")"
[ "$(status_of -H "Apikey: $key" "$url/api/v1/local-agents")" = 200 ] || fail "the generated key is not accepted"
[ "$(status_of -H "Apikey: x$key" "$url/api/v1/local-agents")" = 401 ] || fail "a wrong key is not refused"
grep -q "$key" "$out" && fail "the generated key leaked to stdout"
kill -TERM "$pid"; wait "$pid"; code=$?
[ $code -eq 0 ] || fail "SIGTERM should stop crh serve with exit 0, got $code"
grep -q "stopped on signal" "$out" || fail "no stop message after SIGTERM"

# 2. Key from CRH_API_KEY; it is never printed.
CRH_API_KEY=env-key-123 start || fail "crh serve did not start with CRH_API_KEY"
[ "$(status_of -H "Apikey: env-key-123" "$url/database/x")" = 404 ] || fail "CRH_API_KEY is not the key"
grep -q "env-key-123" "$out" "$err" && fail "the key from CRH_API_KEY was printed"
kill -INT "$pid"; wait "$pid" || fail "SIGINT should stop crh serve with exit 0"

# 3. Key from --api-key-file (trailing newline ignored) wins over CRH_API_KEY.
printf 'file-key-456\n' >"$work/key"
CRH_API_KEY=env-key-123 start --api-key-file "$work/key" || fail "crh serve did not start with --api-key-file"
[ "$(status_of -H "Apikey: file-key-456" "$url/api/v1/local-agents")" = 200 ] || fail "--api-key-file key not accepted"
[ "$(status_of -H "Apikey: env-key-123" "$url/api/v1/local-agents")" = 401 ] || fail "CRH_API_KEY should lose to --api-key-file"
held_port=${url##*:}

# 4. Exit codes: usage errors are 2, a port in use is 3.
"$crh" serve --listen nonsense >/dev/null 2>&1; [ $? -eq 2 ] || fail "bad --listen should exit 2"
"$crh" serve --fault no-such-fault >/dev/null 2>&1; [ $? -eq 2 ] || fail "unknown fault should exit 2"
CRH_API_KEY= "$crh" serve --listen 127.0.0.1:0 >/dev/null 2>&1; [ $? -eq 2 ] || fail "empty CRH_API_KEY should exit 2"
: >"$work/empty"
"$crh" serve --api-key-file "$work/empty" --listen 127.0.0.1:0 >/dev/null 2>&1; [ $? -eq 2 ] || fail "empty key file should exit 2"
echo '{"agents": [' >"$work/bad.json"
CRH_API_KEY=k "$crh" serve --fixtures "$work/bad.json" --listen 127.0.0.1:0 >/dev/null 2>"$work/bad.err"
[ $? -eq 2 ] || fail "malformed fixtures should exit 2"
grep -q "bad.json" "$work/bad.err" || fail "the fixtures error should name the file"
CRH_API_KEY=k timeout 5 "$crh" serve --listen "127.0.0.1:$held_port" >/dev/null 2>"$work/inuse.err"
[ $? -eq 3 ] || fail "a port in use should exit 3"
grep -q "$held_port" "$work/inuse.err" || fail "the port-in-use error should name the port"

# 5. Fixtures from a file and generated sizes.
cat >"$work/fx.json" <<'JSON'
{"agents": [{"id": 7, "name": "Ann"}], "channels": [{"id": "c9", "aliases": [{"id": "a", "number": "+1"}]}],
 "database": {"greeting": "hello"}}
JSON
CRH_API_KEY=k start --fixtures "$work/fx.json" || fail "crh serve did not start with --fixtures"
[ "$(curl -s -H 'Apikey: k' "$url/database/greeting")" = '{"key":"greeting","value":"hello"}' ] || fail "fixture database entry missing"
[ "$(status_of -H 'Apikey: k' "$url/api/v1/local-agents/7")" = 200 ] || fail "fixture agent 7 missing"
[ "$(status_of -H 'Apikey: k' "$url/channels/c9/alias-numbers")" = 200 ] || fail "fixture channel c9 missing"
CRH_API_KEY=k start --channels 3 --aliases 7 || fail "crh serve did not start with --channels/--aliases"
n=$(curl -s -H 'Apikey: k' "$url/channels/3/alias-numbers" | grep -o '"number"' | wc -l)
[ "$n" -eq 7 ] || fail "expected 7 aliases in channel 3, got $n"

if [ $failures -eq 0 ]; then echo "serve CLI: all checks passed"; else exit 1; fi
