#!/usr/bin/env bash
# Ctrl-C in the middle of a SIP race leaves the target as found (issue 26):
# `crh load --scenario race --call-driver sip` against `crh serve --sip
# --delay-us 1500000` (every answer waits 1.5 s, so a round's INVITEs are
# pending) gets SIGINT while a round's INVITEs wait. tcpdump records the SIP
# port throughout. Every INVITE transaction on the wire must then have ended:
# a 2xx ACKed and its dialog BYEd (the BYE answered 200), every other final
# answer ACKed, and the calls pending at the signal CANCELled (200 to the
# CANCEL, 487 to the INVITE). The load exits 1, marked interrupted. Needs
# root, tcpdump and tshark (exit 77 otherwise, with the reason). Loopback only.
set -uo pipefail
crh=$1
source "$(dirname "$0")/lib.sh"
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "not root: tcpdump needs root or CAP_NET_RAW"
for tool in tcpdump tshark; do command -v "$tool" >/dev/null 2>&1 || skip "$tool is not installed"; done

begin_sip_test
start_serve --delay-us 1500000 --aliases 24 || exit 1
port=${sip_addr##*:}
tcpdump -i lo -U -n -w "$work/i.pcap" "udp port $port" 2>"$work/tcpdump.err" &
tcpdump_pid=$!
# A second one prints what reaches the SIP port as it comes: when to interrupt.
tcpdump -i lo -l -n -A "udp dst port $port" >"$work/live.txt" 2>"$work/live.err" &
live_pid=$!
pids+=("$tcpdump_pid" "$live_pid")
for _ in $(seq 100); do
  grep -q "listening on" "$work/tcpdump.err" && grep -q "listening on" "$work/live.err" && break
  sleep 0.05
done
for f in tcpdump live; do
  grep -q "listening on" "$work/$f.err" || skip "tcpdump cannot capture here: $(cat "$work/$f.err")"
done

# INVITEs sent so far (the preflight's is the first; 100 Trying stops retransmissions).
invites() { grep -c "INVITE sip:" "$work/live.txt" || true; }

echo "--- a. SIGINT while a round's INVITEs wait for their answers"
CRH_API_KEY=$(cat "$work/key") "$crh" load --base-url "$url" --call-driver sip --sip-target "$sip_addr" \
  --scenario race --duration 60 --timeout 10000 --json "$work/i.json" >"$work/load.out" 2>"$work/load.err" &
load_pid=$!
pids+=("$load_pid")
# The preflight's call is one INVITE; a round's come once it connected, and
# wait 1.5 s for their answers: the signal comes inside that wait.
for _ in $(seq 600); do [ "$(invites)" -ge 2 ] && break; sleep 0.05; done
[ "$(invites)" -ge 2 ] || { fail "no race round's INVITE within 30 s"; tail -n 5 "$work/load.out" "$work/load.err"; exit 1; }
kill -INT "$load_pid"
code=0
for _ in $(seq 300); do kill -0 "$load_pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$load_pid" 2>/dev/null; then fail "crh load still runs 30 s after SIGINT"; exit 1; fi
wait "$load_pid" || code=$?
[ "$code" -eq 1 ] || { fail "crh load exited $code after SIGINT, expected 1"; tail -n 5 "$work/load.out" "$work/load.err"; }
grep -qi "interrupted" "$work/load.out" "$work/load.err" || fail "the load's output does not say it was interrupted"
python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["verdict"]["interrupted"] is True else 1)' \
  "$work/i.json" || fail "the --json document's verdict is not marked interrupted"
sleep 2  # the server's answers to the CANCELs and BYEs, on the wire
kill -INT "$tcpdump_pid" "$live_pid"
wait "$tcpdump_pid" "$live_pid" 2>/dev/null

echo "--- b. every INVITE transaction on the wire ended; the pending ones CANCELled"
tshark -r "$work/i.pcap" -d "udp.port==$port,sip" -Y sip -T fields -E separator=/t \
  -e sip.Call-ID -e sip.Method -e sip.Status-Code -e sip.CSeq.method 2>/dev/null >"$work/sip.tsv"
python3 - "$work/sip.tsv" <<'PY' || fail "a SIP call was not left as found (above)"
import collections, sys
calls = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = (line.rstrip("\n").split("\t") + ["", "", "", ""])[:4]
    if f[0]: calls[f[0]].append(f[1:])
def has(rows, method=None, status=None, cseq=None):
    return any((method is None or m == method) and (status is None or s and status(int(s)))
               and (cseq is None or c == cseq) for m, s, c in rows)
bad, counts = [], collections.Counter()
for cid, rows in calls.items():
    if not has(rows, method="INVITE"): continue
    finals = sorted({int(s) for m, s, c in rows if s and int(s) >= 200 and c == "INVITE"})
    if not finals:
        bad.append(f"{cid}: INVITE with no final answer"); continue
    final = finals[0]
    if not has(rows, method="ACK"): bad.append(f"{cid}: final {final} never ACKed")
    if 200 <= final < 300:
        counts["connected"] += 1
        if not has(rows, method="BYE"): bad.append(f"{cid}: connected but never BYEd")
        elif not has(rows, status=lambda s: s == 200, cseq="BYE"): bad.append(f"{cid}: its BYE got no 200")
    elif final == 487:
        counts["cancelled"] += 1
        if not has(rows, method="CANCEL"): bad.append(f"{cid}: 487 without a CANCEL")
    else:
        counts[f"final {final}"] += 1
print(f"{sum(counts.values())} calls on the wire: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
for b in bad: print("FAIL:", b)
if counts["cancelled"] == 0: print("FAIL: no call was pending at SIGINT, so nothing was proven about CANCEL")
sys.exit(1 if bad or counts["cancelled"] == 0 else 0)
PY
[ "$(grep -a -c -F -- "$(cat "$work/key")" "$work/load.out" "$work/load.err" "$work/i.json" | awk -F: '{s+=$2} END{print s}')" = 0 ] ||
  fail "the API key appears in the load's output"

[ "$failures" -eq 0 ] || { echo "$failures failures"; exit 1; }
echo "ok"
