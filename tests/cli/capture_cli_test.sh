#!/usr/bin/env bash
# CLI test of --capture (issue 14 §1): as root, `crh contract` and `crh load`
# write a capture tshark dissects as HTTP with the key nowhere in it, and the
# result holds the capture section; without permission the run goes on with
# one clear line and --capture-required exits 3; --capture-limit stops and
# says so. Loopback only; skipped (exit 0, reason printed) where not root.
set -u
source "$(dirname "$0")/lib.sh" "$1"

if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: not root: a live capture needs root or CAP_NET_RAW"
  exit 0
fi
have_tshark=1
command -v tshark >/dev/null || { have_tshark=0; echo "note: tshark absent: the dissection checks are skipped"; }

# The key's bytes in a file (binary-safe count); 0 expected.
key_count() { grep -a -c -F -- "$key" "$1" || true; }

step "a. crh contract --capture: a capture dissected as HTTP, without the key"
start
CRH_API_KEY=$key run contract --base-url "$url" --capture "$work/c.pcap" --json "$work/c.json"
[ "$code" -eq 0 ] || { fail "crh contract --capture exited $code, expected 0"; show; }
[ -s "$work/c.pcap" ] || fail "crh contract --capture wrote no $work/c.pcap"
[ ! -e "$work/c.pcap.partial" ] || fail "the temporary $work/c.pcap.partial was left behind"
[ "$(key_count "$work/c.pcap")" = 0 ] || fail "the key appears in c.pcap: the Apikey values were not overwritten"
for f in "$work/run.out" "$work/run.err" "$work/c.json"; do
  [ "$(key_count "$f")" = 0 ] || fail "the key appears in $f"
done
python3 - "$work/c.json" <<'PY' || fail "c.json lacks a made capture section with packets"
import json, sys
c = json.load(open(sys.argv[1]))["capture"]
assert c["made"] is True and c["packets"] > 0 and c["interface"] == "lo" and c["redactions"] > 0, c
PY
grep -q "^capture: .*c.pcap on lo" "$work/run.out" || { fail "the terminal summary has no capture line"; show; }
# HTTP decoded on the service's port: tshark picks a dissector by port first, and
# a port registered to another protocol (44321 pcp, 48049 cbsp, ...) would hide it.
http_on="tcp.port==${url##*:},http"
if [ $have_tshark = 1 ]; then
  n=$(tshark -r "$work/c.pcap" -d "$http_on" -Y http.request 2>/dev/null | wc -l)
  [ "$n" -gt 0 ] || fail "tshark finds no HTTP request in c.pcap (expected the contract's requests)"
  tshark -r "$work/c.pcap" -d "$http_on" -Y 'http.request and http.request.line contains "Apikey: xxxx"' 2>/dev/null | grep -q . ||
    fail "tshark shows no Apikey header overwritten with x in c.pcap"
fi

step "b. crh load --capture: likewise"
CRH_API_KEY=$key run load --base-url "$url" --scenario mixed --duration 1 --capture "$work/l.pcap" --json "$work/l.json"
[ "$code" -eq 0 ] || { fail "crh load --capture exited $code, expected 0"; show; }
[ "$(key_count "$work/l.pcap")" = 0 ] || fail "the key appears in l.pcap"
for f in "$work/run.out" "$work/run.err" "$work/l.json"; do
  [ "$(key_count "$f")" = 0 ] || fail "the key appears in $f"
done
python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["capture"]; assert c["made"] and c["packets"] > 0, c' \
  "$work/l.json" || fail "l.json lacks a made capture section with packets"
if [ $have_tshark = 1 ]; then
  n=$(tshark -r "$work/l.pcap" -d "$http_on" -Y http.request 2>/dev/null | wc -l)
  [ "$n" -gt 0 ] || fail "tshark finds no HTTP request in l.pcap"
fi

step "c. --capture-limit 20000: capture stops and says so"
CRH_API_KEY=$key run contract --base-url "$url" --capture "$work/small.pcap" --capture-limit 20000 --json "$work/small.json"
[ "$code" -eq 0 ] || { fail "crh contract --capture-limit exited $code, expected 0"; show; }
size=$(stat -c %s "$work/small.pcap" 2>/dev/null || echo 0)
{ [ "$size" -gt 0 ] && [ "$size" -le 20000 ]; } || fail "small.pcap is $size bytes, expected 1..20000"
python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["capture"]; assert c["limit_reached"] is True, c' \
  "$work/small.json" || fail "small.json does not say the limit was reached"
grep -q "capture-limit 20000 bytes reached" "$work/run.out" || { fail "the terminal does not say the limit was reached"; show; }

step "d. without permission: the run goes on with one line; --capture-required exits 3"
if command -v setpriv >/dev/null && setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null &&
   setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$crh"; then
  nobody=$(mktemp -d)
  chmod 777 "$nobody"
  as_nobody() {
    code=0
    CRH_API_KEY=$key setpriv --reuid=65534 --regid=65534 --clear-groups "$crh" "$@" >"$work/run.out" 2>"$work/run.err" || code=$?
  }
  as_nobody contract --base-url "$url" --capture "$nobody/n.pcap" --json "$nobody/n.json"
  [ "$code" -eq 0 ] || { fail "an unpermitted capture stopped crh contract (exit $code, expected 0)"; show; }
  lines=$(grep -c "no capture made" "$work/run.err" || true)
  [ "$lines" = 1 ] || { fail "expected one 'no capture made' line on stderr, got $lines"; show; }
  grep -q "no permission" "$work/run.err" || { fail "the line does not say why (no permission)"; show; }
  [ ! -e "$nobody/n.pcap" ] || fail "a capture file was written although no capture was made"
  python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["capture"]; assert c["made"] is False and c["not_made"], c' \
    "$nobody/n.json" || fail "n.json does not say why no capture was made"
  as_nobody contract --base-url "$url" --capture "$nobody/r.pcap" --capture-required
  [ "$code" -eq 3 ] || { fail "--capture-required without permission exited $code, expected 3"; show; }
  grep -q "PASSED\|FAILED" "$work/run.out" && fail "--capture-required without permission still ran the checks"
  rm -rf "$nobody"
else
  echo "SKIP (d): setpriv cannot run crh as uid 65534 here"
fi

step "e. a bogus --capture-interface: the reason, and exit 3 when required"
CRH_API_KEY=$key run contract --base-url "$url" --capture "$work/b.pcap" --capture-interface crh-no-such-if0 --capture-required
[ "$code" -eq 3 ] || { fail "a bogus interface with --capture-required exited $code, expected 3"; show; }
grep -q "crh-no-such-if0" "$work/run.err" || { fail "the error does not name the interface"; show; }

step "f. an IPv6 target (::1): captured on lo with its filter, without the key"
CRH_API_KEY=$key "$crh" serve --listen '[::1]:0' --threads 1 >"$work/serve6.out" 2>&1 &
pids+=("$!")
url6=
for _ in $(seq 200); do
  url6=$(grep -o 'http://\[::1\]:[0-9]*' "$work/serve6.out" | head -n1 || true)
  [ -n "$url6" ] && break
  sleep 0.05
done
if [ -z "$url6" ]; then
  echo "SKIP (f): crh serve cannot listen on [::1] here: $(cat "$work/serve6.out")"
else
  CRH_API_KEY=$key run contract --base-url "$url6" --capture "$work/v6.pcap" --json "$work/v6.json"
  [ "$code" -eq 0 ] || { fail "crh contract --capture against $url6 exited $code, expected 0"; show; }
  [ "$(key_count "$work/v6.pcap")" = 0 ] || fail "the key appears in v6.pcap"
  python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["capture"]; assert c["made"] and c["packets"] > 0 and "host ::1" in c["filter"], c' \
    "$work/v6.json" || fail "v6.json lacks a made capture filtered on ::1"
  if [ $have_tshark = 1 ]; then
    n=$(tshark -r "$work/v6.pcap" -Y 'ipv6 and http.request' 2>/dev/null | wc -l)
    [ "$n" -gt 0 ] || fail "tshark finds no HTTP request over IPv6 in v6.pcap"
  fi
fi

[ "$failures" -eq 0 ] && echo "capture CLI: all passed" || { echo "capture CLI: $failures failure(s)"; exit 1; }
