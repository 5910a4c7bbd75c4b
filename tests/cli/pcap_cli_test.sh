#!/usr/bin/env bash
# `crh pcap check` on captures tcpdump made of real crh contract runs: a
# correct crh serve checks clean, faulty ones exit 1 naming frames, the key
# is in no output, an unreadable file exits 2; an Ethernet capture from a
# veth pair between two network namespaces checks clean too. Needs root and
# tcpdump (exit 77: skipped, with the reason printed). Loopback and the
# test's own namespaces only; every wait is bounded.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "not root: tcpdump cannot capture"
command -v tcpdump >/dev/null 2>&1 || skip "tcpdump is not installed"

# Starts tcpdump writing $1 with filter $3 on interface $2 (optionally run
# through the command prefix in $netns); waits for "listening on"; sets $td.
capture_start() {
  ${netns:-} tcpdump -i "$2" -U -w "$1" "$3" >"$1.log" 2>&1 &
  td=$!
  pids+=("$td")
  for _ in $(seq 200); do
    grep -q "listening on" "$1.log" && return 0
    kill -0 "$td" 2>/dev/null || break
    sleep 0.05
  done
  echo "FAIL: tcpdump did not start: $(cat "$1.log")"
  exit 1
}
capture_stop() { kill -INT "$td" 2>/dev/null; wait "$td" 2>/dev/null || true; }

# Captures a crh contract run against crh serve started with the given arguments into $1.
captured_contract() {
  local file=$1
  shift
  start "$@"
  capture_start "$file" lo "tcp port ${url##*:}"
  CRH_API_KEY=$key "$crh" contract --base-url "$url" --quiet >"$file.contract" 2>&1 || true
  capture_stop
  stop "$pid"
}

# The key never shows in what crh pcap check printed or wrote.
no_key_in() {
  local f
  for f in "$@"; do
    [ -f "$f" ] || { fail "$f was not written"; continue; }
    grep -qF "$key" "$f" && fail "the key appears in $(basename "$f")"
  done
}

step "a. a tcpdump capture of crh contract against a correct crh serve checks clean"
captured_contract "$work/clean.pcap"
run pcap check "$work/clean.pcap" --json "$work/clean.json" --junit "$work/clean.xml" --html "$work/clean.html"
[ "$code" -eq 0 ] || { fail "crh pcap check on the clean capture exited $code, expected 0"; show; cat "$work/run.out"; }
grep -q "PASSED" "$work/run.out" || fail "no PASSED for the clean capture"
grep -q "link types: EN10MB" "$work/run.out" || fail "the clean capture's link type is not shown as EN10MB"
grep -q "PASS  capture.binding" "$work/run.out" || fail "the binding rules were not judged on the clean capture"
no_key_in "$work/run.out" "$work/run.err" "$work/clean.json" "$work/clean.xml" "$work/clean.html"
grep -q '"kind":"pcap"' "$work/clean.json" || fail "clean.json is not a pcap result"
run report "$work/clean.json"
[ "$code" -eq 0 ] || { fail "crh report of the pcap result exited $code, expected 0"; show; }
grep -q "link types: EN10MB" "$work/run.out" || fail "crh report did not render the capture section"

for fault in error-no-msg binding-last-caller; do
  step "b. a tcpdump capture of crh contract against crh serve --fault $fault exits 1 with frame numbers"
  captured_contract "$work/$fault.pcap" --fault "$fault"
  run pcap check "$work/$fault.pcap" --json "$work/$fault.json" --junit "$work/$fault.xml" --html "$work/$fault.html"
  [ "$code" -eq 1 ] || { fail "crh pcap check on the $fault capture exited $code, expected 1"; show; }
  grep -qE "frames [0-9]+–[0-9]+ \(tcp\.stream [0-9]+" "$work/run.out" || fail "$fault: no frame numbers in the output"
  grep -q "frame.number in {" "$work/run.out" || fail "$fault: no Wireshark display filter in the output"
  no_key_in "$work/run.out" "$work/run.err" "$work/$fault.json" "$work/$fault.xml" "$work/$fault.html"
done
run pcap check "$work/error-no-msg.pcap"
grep -q "FAIL  capture.error-shape" "$work/run.out" || fail "error-no-msg: capture.error-shape did not fail"
run pcap check "$work/binding-last-caller.pcap"
grep -q "FAIL  capture.binding" "$work/run.out" || fail "binding-last-caller: capture.binding did not fail"

step "c. a file that is not a capture exits 2 with a clear message"
echo "not a capture" >"$work/junk.pcap"
run pcap check "$work/junk.pcap"
[ "$code" -eq 2 ] || fail "crh pcap check on a junk file exited $code, expected 2"
grep -q "junk.pcap" "$work/run.err" || fail "the error does not name the file: $(cat "$work/run.err")"

step "d. Ethernet: a veth pair between two network namespaces"
ns=crhpcap$$
veth_ok=1
ip netns add "${ns}s" 2>"$work/ns.err" && ip netns add "${ns}c" 2>>"$work/ns.err" || veth_ok=0
cleanup_ns() { ip netns del "${ns}s" 2>/dev/null; ip netns del "${ns}c" 2>/dev/null; cleanup; }
trap cleanup_ns EXIT
if [ $veth_ok -eq 1 ] && ip link add "${ns}a" type veth peer name "${ns}b" 2>>"$work/ns.err" &&
  ip link set "${ns}a" netns "${ns}s" && ip link set "${ns}b" netns "${ns}c" &&
  ip -n "${ns}s" addr add 10.213.7.1/24 dev "${ns}a" && ip -n "${ns}c" addr add 10.213.7.2/24 dev "${ns}b" &&
  ip -n "${ns}s" link set "${ns}a" up && ip -n "${ns}c" link set "${ns}b" up &&
  ip -n "${ns}s" link set lo up && ip -n "${ns}c" link set lo up; then
  CRH_API_KEY=$key ip netns exec "${ns}s" "$crh" serve --listen 10.213.7.1:0 --threads 2 >"$work/ns.serve" 2>&1 &
  spid=$!
  pids+=("$spid")
  nsurl=
  for _ in $(seq 200); do
    nsurl=$(grep -o 'http://10\.213\.7\.1:[0-9]*' "$work/ns.serve" | head -n1)
    [ -n "$nsurl" ] && break
    sleep 0.05
  done
  [ -n "$nsurl" ] || { fail "crh serve in the namespace did not print its URL: $(cat "$work/ns.serve")"; }
  if [ -n "$nsurl" ]; then
    netns="ip netns exec ${ns}s" capture_start "$work/veth.pcap" "${ns}a" "tcp port ${nsurl##*:}"
    CRH_API_KEY=$key ip netns exec "${ns}c" "$crh" contract --base-url "$nsurl" --quiet >"$work/veth.contract" 2>&1 ||
      fail "crh contract over the veth pair failed: $(tail -n 3 "$work/veth.contract")"
    capture_stop
    run pcap check "$work/veth.pcap" --json "$work/veth.json"
    [ "$code" -eq 0 ] || { fail "crh pcap check on the veth capture exited $code, expected 0"; show; }
    grep -q "link types: EN10MB" "$work/run.out" || fail "the veth capture is not reported as EN10MB"
    grep -q "^PASSED" "$work/run.out" || fail "the veth capture did not check PASSED: $(tail -n 2 "$work/run.out")"
    no_key_in "$work/run.out" "$work/veth.json"
  fi
  stop "$spid"
else
  echo "SKIP d: network namespaces or veth not permitted here: $(head -n 2 "$work/ns.err")"
fi

if [ "$failures" -eq 0 ]; then echo "pcap CLI: all checks passed"; else echo "pcap CLI: $failures failure(s)"; exit 1; fi
