#!/usr/bin/env bash
# --capture with SIP calls (issue 26): `crh load --scenario race --call-driver
# sip --capture FILE` against the embedded service (which opens its SIP port
# itself) records SIP over UDP and TCP; tshark dissects it as SIP with no
# malformed packet and no digest value or key in clear; `crh pcap check FILE`
# reports the SIP calls and one winner per alias per tag epoch. Needs root (or
# CAP_NET_RAW), tshark and a crh with the SIP call driver (exit 77 otherwise:
# skipped, with the reason printed). Loopback only; every wait is bounded.
set -uo pipefail
crh=$1
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "not root: a live capture needs root or CAP_NET_RAW"
command -v tshark >/dev/null 2>&1 || skip "tshark is not installed"
# Read whole first: grep -q would close the pipe early and pipefail take crh's SIGPIPE for a missing flag.
load_help=$("$crh" load --help 2>&1 || true)
grep -q -- "--call-driver" <<<"$load_help" ||
  skip "this crh has no --call-driver (the SIP call driver is not merged into it)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
key=sip-capture-secret-9a7c
# Digest credentials for a target that challenges (the embedded one may not):
# whatever comes from them must be nowhere in the capture either.
export CRH_SIP_USER=capture-user CRH_SIP_PASSWORD=capture-password-31f0
in_file() { grep -a -c -F -- "$1" "$2" || true; }

echo "--- a. crh load --scenario race --call-driver sip --capture"
code=0
CRH_API_KEY=$key timeout 60 "$crh" load --scenario race --call-driver sip --duration 1 \
  --capture "$work/s.pcap" --capture-required --json "$work/s.json" >"$work/load.out" 2>"$work/load.err" || code=$?
if [ "$code" -eq 3 ] && grep -q "no capture made" "$work/load.err"; then
  skip "capture not permitted here: $(grep -m1 'no capture made' "$work/load.err")"
fi
[ "$code" -eq 0 ] || { fail "crh load exited $code, expected 0"; tail -n 5 "$work/load.out" "$work/load.err"; }
[ -s "$work/s.pcap" ] || { fail "no capture written"; exit 1; }
# The SIP port from the capture's filter: "... or ((tcp or udp) and host H and port P)".
port=$(python3 -c '
import json, re, sys
c = json.load(open(sys.argv[1]))["capture"]
m = re.search(r"\(tcp or udp\) and .* port (\d+)\)$", c["filter"])
print(m.group(1) if m else "")' "$work/s.json" 2>/dev/null)
[ -n "$port" ] || { fail "the capture's filter names no SIP port (UDP and TCP): $(grep -o '"filter":"[^"]*"' "$work/s.json")"; exit 1; }
for secret in "$key" "$CRH_SIP_PASSWORD"; do
  for f in "$work/s.pcap" "$work/load.out" "$work/load.err" "$work/s.json"; do
    [ "$(in_file "$secret" "$f")" = 0 ] || fail "a credential appears in $(basename "$f")"
  done
done

echo "--- b. tshark dissects it as SIP, nothing malformed"
decode=(-d "udp.port==$port,sip" -d "tcp.port==$port,sip")
n=$(tshark -r "$work/s.pcap" "${decode[@]}" -Y sip 2>/dev/null | wc -l)
[ "$n" -gt 0 ] || fail "tshark shows no SIP packet in the capture (port $port)"
n=$(tshark -r "$work/s.pcap" "${decode[@]}" -Y 'sip.Method == "INVITE"' 2>/dev/null | wc -l)
[ "$n" -gt 0 ] || fail "tshark shows no INVITE"
bad=$(tshark -r "$work/s.pcap" "${decode[@]}" -Y '_ws.malformed' 2>/dev/null | wc -l)
[ "$bad" -eq 0 ] || { fail "tshark finds $bad malformed packets"; tshark -r "$work/s.pcap" "${decode[@]}" -Y '_ws.malformed' | head -n 5; }
# A digest response the capture kept would be hex; redacted ones are all x.
clear=$(tshark -r "$work/s.pcap" "${decode[@]}" -Y 'sip.auth.digest.response and !(sip.auth.digest.response matches "^\"?x+\"?$")' 2>/dev/null | wc -l)
[ "$clear" -eq 0 ] || fail "$clear packets keep a digest response in clear"

echo "--- c. crh pcap check reports the SIP calls and one winner per alias and epoch"
code=0
CRH_API_KEY=$key timeout 60 "$crh" pcap check "$work/s.pcap" --json "$work/c.json" --html "$work/c.html" >"$work/check.out" 2>"$work/check.err" || code=$?
[ "$code" -eq 0 ] || { fail "crh pcap check exited $code, expected 0"; tail -n 15 "$work/check.out" "$work/check.err"; }
grep -q "^SIP calls" "$work/check.out" || fail "the check's summary has no SIP section"
grep -q '<section id="sip">' "$work/c.html" || fail "the check's HTML page has no SIP section"
grep -q '<span class="badge o-pass">PASS</span></td><td>+' "$work/c.html" ||
  fail "the HTML page marks no number as judged with one winner per epoch"
python3 - "$work/c.json" <<'PY' || fail "the check's SIP section is not one winner per alias and epoch"
import json, sys
s = json.load(open(sys.argv[1]))["sip"]
assert s["calls"] > 0 and s["connected"] > 0 and s["unreadable"] == 0, s
for n in s["numbers"]:
    assert n["epochs_with_two_winners"] == 0, n
    assert n["connected"] == 0 or n["winner"], n
assert any(n["epochs_judged"] > 0 for n in s["numbers"]), s["numbers"]
PY
for f in "$work/check.out" "$work/check.err" "$work/c.json" "$work/c.html"; do
  [ "$(in_file "$key" "$f")" = 0 ] || fail "the key appears in $(basename "$f")"
done

[ "$failures" -eq 0 ] || { echo "$failures failures"; exit 1; }
echo "ok"
