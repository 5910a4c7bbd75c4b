#!/usr/bin/env bash
# `crh load` as a user runs it: the race on the embedded service and against
# `crh serve` (healthy, racy, last-caller), thresholds, --json and --history,
# the key never leaking, a dead target and usage errors, each with its exit code.
# Loopback only; every server is stopped on exit.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
step "a. crh load --scenario race (embedded service) exits 0 with rounds, winners, skew and latency"
run load --scenario race --duration 1
[ "$code" -eq 0 ] || { fail "race on the embedded service exited $code, expected 0"; show; }
for want in "rounds of 8 callers" "1 winner(s)" "release skew" "violations: 0" "call " "tag " "p99" "PASSED"; do
  grep -q -- "$want" "$work/run.out" || fail "the race summary lacks \"$want\""
done

step "b. against a healthy crh serve: --json and --history, key never shown"
start --aliases 24
CRH_API_KEY=$key run load --base-url "$url" --scenario race --duration 1 --json "$work/race.json" --history "$work/race.jsonl"
[ "$code" -eq 0 ] || { fail "race against a healthy crh serve exited $code, expected 0"; show; }
grep -q '"schema":"crh.result"' "$work/race.json" || fail "race.json is not a crh.result document"
grep -q '"kind":"load"' "$work/race.json" || fail "race.json is not of kind load"
[ -s "$work/race.jsonl" ] || fail "the history file is empty"
grep -q '"op":"recall"' "$work/race.jsonl" || fail "the history lacks the second calls"
if grep -rq -- "$key" "$work/run.out" "$work/run.err" "$work/race.json" "$work/race.jsonl"; then fail "the API key appears in output or files"; fi
stop "$pid"

step "c. against crh serve --fault binding-racy: exit 1 naming the violations"
start --fault binding-racy --aliases 24
CRH_API_KEY=$key run load --base-url "$url" --scenario race --duration 1
[ "$code" -eq 1 ] || { fail "race against binding-racy exited $code, expected 1"; show; }
grep -q "VIOLATION two-winners" "$work/run.out" || fail "no two-winners violation named for binding-racy"
grep -q "FAILED" "$work/run.out" || fail "no FAILED verdict for binding-racy"
stop "$pid"

step "d. against crh serve --fault binding-last-caller: exit 1"
start --fault binding-last-caller --aliases 24
CRH_API_KEY=$key run load --base-url "$url" --scenario race --duration 1
[ "$code" -eq 1 ] || { fail "race against binding-last-caller exited $code, expected 1"; show; }
stop "$pid"

step "e. thresholds: a breach exits 1 and is named; held ones exit 0"
run load --scenario get --duration 0.5 --threshold 'get.p99<1ns' --threshold 'errors<1%'
[ "$code" -eq 1 ] || { fail "a breached threshold exited $code, expected 1"; show; }
grep -q "get.p99<1ns.*BREACHED" "$work/run.out" || fail "the breached threshold is not named"
run load --scenario mixed --rate 500 --duration 0.5 --threshold 'errors<0.1%' --threshold 'list-agents.p99<2s'
[ "$code" -eq 0 ] || { fail "held thresholds on the mixed scenario exited $code, expected 0"; show; }

step "f. a dead target exits 3"
port=$(( (RANDOM % 20000) + 30000 ))
CRH_API_KEY=$key run load --base-url "http://127.0.0.1:$port" --scenario race --duration 1
[ "$code" -eq 3 ] || { fail "a dead target exited $code, expected 3"; show; }

step "g. usage errors exit 2"
for args in "--scenario fly" "--scenario race --rate 10" "--threshold call.p42<1ms" "--scenario mixed --mix dance=1" \
            "--threshold violations<=x"; do
  # shellcheck disable=SC2086
  run load --duration 0.2 $args
  [ "$code" -eq 2 ] || fail "crh load $args exited $code, expected 2"
done
env -u CRH_API_KEY "$crh" load --base-url http://127.0.0.1:1 --duration 0.2 >/dev/null 2>&1 && code=0 || code=$?
[ "$code" -eq 2 ] || fail "a base URL without a key exited $code, expected 2"

if [ "$failures" -gt 0 ]; then echo "$failures failure(s)"; exit 1; fi
echo "cli.load: all steps passed"
