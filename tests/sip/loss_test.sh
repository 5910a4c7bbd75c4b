#!/usr/bin/env bash
# Loss (issue 26): crh serve --sip and crh's SIP race in a network namespace
# whose loopback drops 5% of packets (tc netem; on a kernel without netem,
# nftables dropping 5% of UDP at random). Retransmissions must still give
# every round one winner, with no violation; a call whose outcome stayed
# unknown is counted unknown (indeterminate in the history), never a win or
# a refusal. The drop counter proves packets were lost.
# usage: loss_test.sh CRH_BINARY   (exit 77: skipped, saying why)
set -uo pipefail
crh=${1:?usage: loss_test.sh CRH_BINARY}
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "network namespaces need root"
command -v ip >/dev/null 2>&1 || skip "ip (iproute2) is not installed"
command -v python3 >/dev/null 2>&1 || skip "python3 is needed to read the result"
ns=crh-sip-loss-$$
work=$(mktemp -d)
serve_pid=
cleanup() {
  [ -n "$serve_pid" ] && kill -TERM "$serve_pid" 2>/dev/null
  for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
  ip netns del "$ns" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
why=$(ip netns add "$ns" 2>&1) || skip "ip netns add failed: $why"
ip -n "$ns" link set lo up
in_ns() { ip netns exec "$ns" "$@"; }
if in_ns tc qdisc add dev lo root netem loss 5% 2>"$work/tc.err"; then
  method="tc netem loss 5% on the namespace's loopback (every packet, both ways)"
  dropped() { in_ns tc -s qdisc show dev lo | sed -n 's/.*dropped \([0-9]*\).*/\1/p' | head -n1; }
elif command -v nft >/dev/null 2>&1 &&
  in_ns nft add table inet crhloss &&
  in_ns nft 'add chain inet crhloss out { type filter hook output priority 0; }' &&
  in_ns nft add rule inet crhloss out meta l4proto udp numgen random mod 100 '<' 5 counter drop; then
  method="nftables: 5% of UDP packets dropped at random (this kernel has no netem: $(head -c 80 "$work/tc.err"))"
  dropped() { in_ns nft list chain inet crhloss out | sed -n 's/.*counter packets \([0-9]*\).*/\1/p' | head -n1; }
else
  skip "neither tc netem nor nftables can drop packets here: $(cat "$work/tc.err")"
fi
echo "loss: $method"

head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$work/key"
in_ns "$crh" serve --listen 127.0.0.1:0 --sip 127.0.0.1:0 --sip-t1-ms 50 --api-key-file "$work/key" \
  >"$work/serve.out" 2>"$work/serve.err" &
serve_pid=$!
url= sip=
for _ in $(seq 200); do
  url=$(grep -o 'http://[^ ]*' "$work/serve.out" | head -n1)
  sip=$(sed -n 's/.*sip: udp+tcp \([^ ]*\).*/\1/p' "$work/serve.out" | head -n1)
  [ -n "$url" ] && [ -n "$sip" ] && break
  sleep 0.05
done
[ -n "$sip" ] || { echo "FAIL: crh serve --sip did not start in $ns: $(cat "$work/serve.err")"; exit 1; }

# T1 of 50 ms and a Timer B of 3 s: a lost INVITE or answer is sent again many times over.
in_ns env CRH_API_KEY="$(cat "$work/key")" timeout 120 "$crh" load --base-url "$url" --call-driver sip \
  --sip-target "$sip" --sip-t1-ms 50 --timeout 3000 --scenario race --duration 3 --connections 2 \
  --json "$work/race.json" --history "$work/race.jsonl" >"$work/race.out" 2>&1
status=$?
lost=$(dropped)
echo "crh load exited $status; packets dropped: ${lost:-?}"
python3 - "$work/race.json" "$work/race.jsonl" "${lost:-0}" <<'PY'
import collections, json, sys
doc = json.load(open(sys.argv[1]))
race, lost = doc["race"], int(sys.argv[3])
rounds = collections.defaultdict(list)
for line in open(sys.argv[2]):
    op = json.loads(line)
    if op["op"] == "sip-call":
        rounds[op["round"]].append(op)
wins = {r: sum(o["outcome"] == "ok" for o in ops) for r, ops in rounds.items()}
unknown = sum(o["outcome"] == "indeterminate" for ops in rounds.values() for o in ops)
mislabelled = [o for ops in rounds.values() for o in ops
               if (o["outcome"] == "ok") != (200 <= o.get("status", 0) < 300)
               or (o["outcome"] == "fail" and o.get("status") != 403)]
no_winner = [r for r, w in wins.items() if w == 0]
unexplained = [r for r in no_winner if not any(o["outcome"] == "indeterminate" for o in rounds[r])]
print("rounds %d, one winner %d, no winner %d (each with an unknown call: %s), unknown calls %d, violations %d"
      % (race["rounds"], race["winners"].get("1", 0), len(no_winner), not unexplained, unknown, race["violation_count"]))
problems = []
if lost == 0: problems.append("no packet was dropped: the test proved nothing about loss")
if race["rounds"] < 20: problems.append("only %d rounds" % race["rounds"])
if race["violation_count"]: problems.append("%d violation(s) under loss" % race["violation_count"])
if any(w > 1 for w in wins.values()): problems.append("a round with two winners")
if unexplained: problems.append("rounds %s had no winner and no unknown call" % unexplained[:5])
if mislabelled: problems.append("calls counted as a win or a refusal without a 2xx or 403: %s" % mislabelled[:3])
for p in problems: print("FAIL:", p)
sys.exit(1 if problems else 0)
PY
verdict=$?
[ "$status" = 0 ] || { echo "FAIL: the SIP race under loss exited $status, expected 0"; tail -n 15 "$work/race.out"; verdict=1; }
[ "$verdict" = 0 ] && echo "PASS: one winner per round with ${lost} packets lost"
exit "$verdict"
