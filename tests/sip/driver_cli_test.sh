#!/usr/bin/env bash
# The SIP call driver as a user runs it (issue 26): the race over SIP on the
# embedded service and against `crh serve --sip` (healthy, binding-racy,
# binding-last-caller), UDP and TCP; the binding suite over SIP; usage
# errors. Loopback only; every server is stopped on exit.
set -euo pipefail
source "$(dirname "$0")/../cli/lib.sh"

# Starts crh serve with SIP on 127.0.0.1:0; sets $pid, $url and $sip (HOST:PORT).
start_sip() {
  start --sip 127.0.0.1:0 "$@"
  local n=$((${#pids[@]} - 1))
  sip=""
  for _ in $(seq 100); do
    sip=$(grep -o 'sip: udp+tcp 127\.0\.0\.1:[0-9]*' "$work/serve.out.$n" | head -n1 | sed 's/^sip: udp+tcp //' || true)
    [ -n "$sip" ] && return 0
    sleep 0.05
  done
  echo "FAIL: crh serve $* did not print its SIP address: $(cat "$work/serve.out.$n" "$work/serve.err.$n")"
  exit 1
}

# Reads a figure of a load document: python expression over `d`.
figure() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

step "a. crh load --scenario race --call-driver sip (embedded service): rounds, one winner each, skew, latency"
run load --scenario race --call-driver sip --duration 1 --json "$work/embedded.json"
[ "$code" -eq 0 ] || { fail "the SIP race on the embedded service exited $code, expected 0"; show; }
for want in "SIP INVITEs to 127.0.0.1:" "rounds of 8 callers" "1 winner(s)" "release skew" "violations: 0" \
            "sip-call " "sip-recall " "tag " "p99" "PASSED"; do
  grep -q -- "$want" "$work/run.out" || fail "the SIP race summary lacks \"$want\""
done
if grep -qE '(^| )call +[0-9]' "$work/run.out"; then fail "HTTP call figures appear in a SIP race"; fi
[ "$(figure "$work/embedded.json" 'd["config"]["call_driver"]')" = sip ] || fail "config.call_driver is not sip"

for transport in "" ";transport=tcp"; do
  step "b. against crh serve --sip${transport:+ over TCP}: zero violations, every round one winner, history of sip-calls"
  start_sip --aliases 24
  CRH_API_KEY=$key run load --base-url "$url" --call-driver sip --sip-target "$sip$transport" --scenario race \
    --duration 1 --json "$work/race.json" --history "$work/race.jsonl"
  [ "$code" -eq 0 ] || { fail "SIP race against a healthy crh serve exited $code, expected 0"; show; }
  rounds=$(figure "$work/race.json" 'd["race"]["rounds"]')
  one=$(figure "$work/race.json" 'd["race"]["winners"].get("1", 0)')
  [ "$rounds" -gt 10 ] || fail "only $rounds SIP race rounds in 1 s"
  [ "$rounds" = "$one" ] || fail "$rounds rounds but $one with exactly one winner"
  grep -q '"op":"sip-call"' "$work/race.jsonl" || fail "the history lacks sip-call operations"
  grep -q '"op":"sip-recall"' "$work/race.jsonl" || fail "the history lacks sip-recall operations"
  if grep -q '"op":"call"' "$work/race.jsonl"; then fail "the SIP race's history has HTTP calls"; fi
  if grep -rq -- "$key" "$work/run.out" "$work/run.err" "$work/race.json" "$work/race.jsonl"; then
    fail "the API key appears in output or files"
  fi
  stop "$pid"
done

for fault in binding-racy binding-last-caller; do
  step "c. SIP race against crh serve --fault $fault: exit 1 with the violation and its proof"
  start_sip --fault "$fault" --aliases 24
  CRH_API_KEY=$key run load --base-url "$url" --call-driver sip --sip-target "$sip" --scenario race --duration 1 \
    --json "$work/bad.json"
  [ "$code" -eq 1 ] || { fail "SIP race against $fault exited $code, expected 1"; show; }
  grep -q "VIOLATION" "$work/run.out" || fail "no violation named for $fault"
  grep -q "sip-call by" "$work/run.out" || fail "the violation's proof does not show the sip-calls"
  stop "$pid"
done

step "d. crh contract --suite binding --call-driver sip: passes on the healthy service, fails B2 on binding-racy"
run contract --suite binding --call-driver sip --explore 0
[ "$code" -eq 0 ] || { fail "the binding suite over SIP on the embedded service exited $code, expected 0"; show; }
start_sip --fault binding-racy
CRH_API_KEY=$key run contract --base-url "$url" --call-driver sip --sip-target "$sip" --suite binding --explore 0
[ "$code" -eq 1 ] || { fail "the binding suite over SIP against binding-racy exited $code, expected 1"; show; }
grep -q "B2" "$work/run.out" || fail "B2 is not named against binding-racy over SIP"
stop "$pid"

step "e. a SIP target that never answers: the race is not run, and says why (never a pass)"
python3 -c 'import socket,time; s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); s.bind(("127.0.0.1",0)); print(s.getsockname()[1], flush=True); time.sleep(30)' >"$work/silent.port" &
pids+=("$!")
for _ in $(seq 50); do [ -s "$work/silent.port" ] && break; sleep 0.05; done
start --aliases 24
CRH_API_KEY=$key run load --base-url "$url" --call-driver sip --sip-target "127.0.0.1:$(cat "$work/silent.port")" \
  --scenario race --duration 1 --timeout 500
[ "$code" -ne 0 ] || { fail "a race against a silent SIP target exited 0"; show; }
grep -q "did not connect" "$work/run.err" || { fail "the silent SIP target's race does not say the first SIP caller did not connect"; show; }
grep -q "Timer B" "$work/run.err" || fail "the silent SIP target's message does not name Timer B"
stop "$pid"

step "f. usage errors"
for args in "--call-driver sip --base-url http://127.0.0.1:9" "--sip-target 127.0.0.1:5060" \
            "--call-driver sip --sip-target 127.0.0.1" "--call-driver xmpp"; do
  CRH_API_KEY=$key run load --scenario race --duration 1 $args
  [ "$code" -eq 2 ] || fail "crh load $args exited $code, expected 2 (usage)"
done

[ "$failures" -eq 0 ] && echo "sip driver cli: all steps passed"
exit $((failures > 0))
