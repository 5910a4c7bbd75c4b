#!/usr/bin/env bash
# Kamailio as a stateful, record-routing proxy in front of `crh serve --sip`;
# SIPp's ten callers race through it for a tagged alias, in two rounds (two
# aliases), then crh's own SIP driver races through it for a second. Each round: one 200 and nine 403 in SIPp's own counts, the HTTP
# view names a CSV caller; the 200 came back through the proxy with its
# Record-Route, and the ACK and BYE followed the Route set to crh and back.
# usage: kamailio_proxy_test.sh CRH_BINARY   (exit 77: skipped, saying why)
set -uo pipefail
crh=${1:?usage: kamailio_proxy_test.sh CRH_BINARY}
here=$(cd "$(dirname "$0")" && pwd)
command -v kamailio >/dev/null 2>&1 || { echo "SKIP: kamailio is not installed (Debian: apt-get install kamailio)"; exit 77; }
command -v sipp >/dev/null 2>&1 || { echo "SKIP: sipp is not installed (Debian: apt-get install sip-tester)"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is needed to read SIPp's counts"; exit 77; }
mpath=
for d in /usr/lib/x86_64-linux-gnu/kamailio/modules /usr/lib/kamailio/modules /usr/local/lib64/kamailio/modules; do
  [ -f "$d/tm.so" ] && mpath=$d/ && break
done
[ -n "$mpath" ] || { echo "SKIP: kamailio's modules (tm.so) not found"; exit 77; }
# shellcheck source=lib.sh
. "$here/lib.sh"
begin_sip_test

# CRH_SIP_TEST_SERVE_ARGS (e.g. "--fault binding-racy") shows that the test can fail.
start_serve --sip-t1-ms 100 ${CRH_SIP_TEST_SERVE_ARGS:-} || exit 1
echo "crh serve: $url, SIP $sip_addr"

# Kamailio on a free loopback UDP port, in the foreground, its runtime files in $work.
started=
for attempt in 1 2 3; do
  kport=$(python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  sed -e "s/@LISTEN@/$kport/" -e "s/@TARGET@/$sip_addr/" -e "s|@MPATH@|$mpath|" "$here/kamailio.cfg" >"$work/kamailio.cfg"
  mkdir -p "$work/run"
  # Shared memory for every transaction the race keeps until its timers end
  # (hundreds of rounds of 8 INVITEs): 64 MB ran out on a loaded CI machine.
  kamailio -DD -E -f "$work/kamailio.cfg" -Y "$work/run" -P "$work/run/kamailio.pid" -m 256 -M 16 -w "$work" \
    >"$work/kamailio.$attempt.log" 2>&1 &
  kpid=$!
  pids+=("$kpid")
  # Ready when it answers an OPTIONS it relays to crh (crh's 200 comes back through it).
  for _ in $(seq 40); do
    kill -0 "$kpid" 2>/dev/null || break
    if python3 - "$kport" <<'PY' 2>/dev/null; then started=1; break; fi
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(0.5); s.bind(("127.0.0.1", 0))
port = s.getsockname()[1]
msg = ("OPTIONS sip:probe@127.0.0.1:%s SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:%d;branch=z9hG4bKprobe%d;rport\r\n"
       "From: <sip:probe@127.0.0.1>;tag=p\r\nTo: <sip:probe@127.0.0.1>\r\nCall-ID: probe-%d\r\nCSeq: 1 OPTIONS\r\n"
       "Max-Forwards: 70\r\nContent-Length: 0\r\n\r\n") % (sys.argv[1], port, port, port)
s.sendto(msg.encode(), ("127.0.0.1", int(sys.argv[1])))
data = s.recv(65535).decode()
sys.exit(0 if data.startswith("SIP/2.0 200") and "Server: crh-reference" in data else 1)
PY
    sleep 0.25
  done
  [ -n "$started" ] && break
  kill -TERM "$kpid" 2>/dev/null; wait "$kpid" 2>/dev/null
done
[ -n "$started" ] || { echo "FAIL: kamailio did not start or relay an OPTIONS to crh; its log:"; tail -n 40 "$work"/kamailio.*.log; exit 1; }
echo "kamailio: 127.0.0.1:$kport -> crh $sip_addr"

for round in 1 2; do
  number=$(tag_alias "proxy$round")
  [ -n "$number" ] || { fail "round $round: could not tag an alias over HTTP"; continue; }
  dir="$work/round$round"
  mkdir -p "$dir"
  (cd "$dir" && timeout 60 sipp "127.0.0.1:$kport" -sf "$here/scenarios/uac_call.xml" -inf "$here/callers.csv" \
    -s "$number" -t u1 -i 127.0.0.1 -p 0 -m 10 -l 10 -r 1000 -rp 1000 -nostdin \
    -trace_counts -trace_msg -timeout 30s -timeout_error -max_retrans 5 >sipp.out 2>&1)
  status=$?
  counts=$(ls "$dir"/*_counts.csv 2>/dev/null | head -n1)
  msgs=$(ls "$dir"/*_messages.log 2>/dev/null | head -n1)
  [ -n "$counts" ] && [ -n "$msgs" ] || { fail "round $round: SIPp wrote no counts or trace (exit $status)"; tail -n 20 "$dir/sipp.out"; continue; }
  ok=$(sipp_count "$counts" 3_200_Recv) refused=$(sipp_count "$counts" 2_403_Recv) bye_ok=$(sipp_count "$counts" 6_200_Recv)
  winner=$(bound_caller "$number")
  echo "round $round: alias $number: 200=$ok 403=$refused BYE-200=$bye_ok (SIPp exit $status); HTTP view: ${winner:-nobody}"
  [ "$ok" = 1 ] && [ "$refused" = 9 ] || fail "round $round: expected one 200 and nine 403 through the proxy"
  [ "$bye_ok" = 1 ] || fail "round $round: expected the one winner's BYE answered through the proxy, SIPp counted $bye_ok"
  [ "$status" = 0 ] || fail "round $round: SIPp says some calls failed (exit $status)"
  grep -q "^$winner;\$" "$here/callers.csv" && [ -n "$winner" ] || fail "round $round: bound caller \"$winner\" is not a CSV caller"
  # The 200 carried the proxy's Record-Route; the BYE went out with a Route to it.
  python3 - "$msgs" "$kport" <<'PY' || fail "round $round: Record-Route/Route not handled (see above)"
import re, sys
text = open(sys.argv[1], errors="replace").read()
port = sys.argv[2]
ok_invite = [m for m in re.split(r"\n(?=-{10,})", text) if "SIP/2.0 200" in m and "CSeq: 1 INVITE" in m]
bye = [m for m in re.split(r"\n(?=-{10,})", text) if re.search(r"^\s*BYE ", m, re.M)]
rr = ok_invite and re.search(r"^Record-Route:.*127\.0\.0\.1:%s" % port, ok_invite[0], re.I | re.M)
route = bye and re.search(r"^\s*Route:.*127\.0\.0\.1:%s" % port, bye[0], re.I | re.M)
vias = ok_invite and len(re.findall(r"^Via:", ok_invite[0], re.I | re.M)) == 1
print("  200 has the proxy's Record-Route: %s; the BYE has a Route to it: %s; the 200 reached SIPp with its own Via only: %s"
      % (bool(rr), bool(route), bool(vias)))
sys.exit(0 if rr and route and vias else 1)
PY
done

# crh's own SIP driver races through the proxy: every round one winner, and
# no violation, with the proxy's Via and Record-Route on every answer.
CRH_API_KEY=$(cat "$work/key") timeout 60 "$crh" load --base-url "$url" --call-driver sip \
  --sip-target "127.0.0.1:$kport" --sip-t1-ms 100 --scenario race --duration 1 --connections 2 \
  --json "$work/race.json" >"$work/race.out" 2>&1
status=$?
python3 - "$work/race.json" <<'PY' || fail "crh's SIP race through Kamailio (exit $status): $(tail -n 5 "$work/race.out")"
import json, sys
race = json.load(open(sys.argv[1]))["race"]
rounds, one = race["rounds"], race["winners"].get("1", 0)
print("crh's SIP race through kamailio: %d rounds, %d with one winner, %d violation(s)" % (rounds, one, race["violation_count"]))
sys.exit(0 if rounds >= 10 and one == rounds and race["violation_count"] == 0 else 1)
PY
[ "$status" = 0 ] || fail "crh load's SIP race through Kamailio exited $status, expected 0"

kill -0 "$serve_pid" 2>/dev/null || fail "crh serve died"
kill -0 "$kpid" 2>/dev/null || fail "kamailio died"
[ $failures -eq 0 ] && echo "PASS: one winner per round through Kamailio" || { echo "$failures failure(s); kamailio log:"; tail -n 20 "$work"/kamailio.*.log; }
[ $failures -eq 0 ]
