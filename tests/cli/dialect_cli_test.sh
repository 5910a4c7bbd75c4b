#!/usr/bin/env bash
# crh against crh_dialect_server (tests/support/dialect_server_main.cpp): a
# correct service that answers differently from the reference wherever the
# spec is silent, described by tests/support/dialect_profile.json. Given the
# profile, contract (plain, and --strict --slow) and load (race, mixed) pass
# and leave the target as they found it (agents in their states, no tags);
# without it --strict fails, so the profile is what made the difference. The
# key appears in no output.
# Usage: dialect_cli_test.sh CRH DIALECT_SERVER PROFILE. Loopback only; about 10 s.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
dialect=$2
profile=$3
minute_ms=1000 # one tag minute is a second, so --slow waits about a second

printf '%s\n' "$key" >"$work/key"
"$dialect" --port 0 --api-key-file "$work/key" --minute-ms "$minute_ms" >"$work/dialect.out" 2>&1 &
dpid=$!
pids+=("$dpid")
durl=$(await_url "$work/dialect.out" "$dpid") || {
  echo "FAIL: crh_dialect_server did not start: $(cat "$work/dialect.out")"
  exit 1
}
echo "crh_dialect_server on $durl"

# curl PATH [CURL-ARGS...] with the key.
api() { curl -sS --max-time 5 "$durl$1" -H "Apikey: $key" "${@:2}"; }
# Each agent as uid=status, in list order.
agent_states() { api /api/v1/local-agents | grep -o '"uid":[0-9]*,"label":"[^"]*","status":"[^"]*"' |
  sed 's/"uid":\([0-9]*\).*"status":"\([^"]*\)"/\1=\2/' | tr '\n' ' ' || true; }
# Every tag left on channels 1 and 2.
tags_left() { for ch in 1 2; do api "/channels/$ch/alias-numbers" | grep -o '"label":"[^"]*"' || true; done; }

start_agents=$(agent_states)
step "a. crh contract with the profile passes"
bounded 30 contract --base-url "$durl" --profile "$profile" --minute-ms "$minute_ms" --json "$work/a.json"
expect_exit 0 "crh contract --profile"

step "b. crh contract --strict --slow with the profile passes (SHOULD findings would fail it)"
bounded 30 contract --base-url "$durl" --profile "$profile" --minute-ms "$minute_ms" --strict --slow \
  --json "$work/b.json"
expect_exit 0 "crh contract --strict --slow --profile"
now=$(agent_states)
left=$(tags_left | tr '\n' ' ')
echo "  expected the agents as they started ($start_agents) and no tag, got ($now) and tags: ${left:-none}"
[ "$now" = "$start_agents" ] || fail "the contract runs did not put the agents back: before $start_agents, after $now"
[ -z "$left" ] || fail "the contract runs left tags behind: $left"

step "c. crh load --scenario race with the profile: no violation, no error"
bounded 30 load --base-url "$durl" --profile "$profile" --minute-ms "$minute_ms" --scenario race --duration 2 \
  --threshold 'errors<0.1%' --json "$work/c.json"
expect_exit 0 "crh load --scenario race --profile"
violations=$(grep -o '"violation_count":[0-9]*' "$work/c.json" | head -n1 || true)
echo "  expected \"violation_count\":0, got ${violations:-nothing}"
[ "$violations" = '"violation_count":0' ] || fail "the race reported ${violations:-no violation count}"
echo "  $(grep -m1 '^race:' "$work/run.out" || echo 'no race line')"

step "d. crh load --scenario mixed with the profile passes and restores the agents and tags"
api /api/v1/local-agents/9/snooze -X PUT >/dev/null # a start with both states, so either restore shows
before=$(agent_states)
bounded 30 load --base-url "$durl" --profile "$profile" --minute-ms "$minute_ms" --scenario mixed --duration 2 \
  --threshold 'errors<0.1%' --json "$work/d.json"
expect_exit 0 "crh load --scenario mixed --profile"
after=$(agent_states)
echo "  expected the agents as they started ($before), got ($after)"
if [ -z "$before" ] || [ "$before" != "$after" ]; then
  fail "the mixed load did not put the agents back: before $before, after $after"
fi
left=$(tags_left | tr '\n' ' ')
echo "  expected no alias tagged, got ${left:-none}"
[ -z "$left" ] || fail "the mixed load left tags behind: $left"
grep -o '"restore_problems":\[[^]]*\]' "$work/d.json" | sed 's/^/  /' || true
# The mix above ends with each agent in a random state, which may match the
# start by chance; a mix of snoozes only ends with all snoozed, so a missing
# restore always shows.
bounded 30 load --base-url "$durl" --profile "$profile" --minute-ms "$minute_ms" --scenario mixed --duration 0.5 \
  --mix snooze=1 --threshold 'errors<0.1%'
expect_exit 0 "crh load --scenario mixed --mix snooze=1 --profile"
after=$(agent_states)
echo "  with --mix snooze=1: expected the agents as they started ($before), got ($after)"
[ "$before" = "$after" ] || fail "the mixed load of snoozes did not wake the agents that were on: before $before, after $after"
api /api/v1/local-agents/9/wake -X PUT >/dev/null

step "e. crh contract --strict without the profile fails: the profile is what made a-d pass"
bounded 30 contract --base-url "$durl" --minute-ms "$minute_ms" --strict --json "$work/e.json"
echo "  expected exit 1, got $code"
[ "$code" -eq 1 ] || { fail "crh contract --strict without the profile exited $code, expected 1"; show; }
echo "  findings: $(grep -c '^FAIL\|^WARN' "$work/run.out" || true), e.g. $(grep -m1 '^FAIL\|^WARN' "$work/run.out" || true)"

step "h. a framework's 400 text/html for a target that is not a valid URI is judged apart (also under --strict), and every odd request is sent"
"$dialect" --port 0 --api-key-file "$work/key" --minute-ms "$minute_ms" --invalid-uri html >"$work/html.out" 2>&1 &
hpid=$!
pids+=("$hpid")
hurl=$(await_url "$work/html.out" "$hpid") || fail "crh_dialect_server --invalid-uri html did not start"
bounded 30 contract --base-url "$hurl" --profile "$profile" --check 'errors.*' --verbose --json "$work/h.json"
expect_exit 0 "crh contract --check 'errors.*' against a framework's text/html 400"
sent=$(awk '/^(PASS|WARN|FAIL|INDET|SKIP) +errors.odd-requests/{on=1; next} /^[A-Z]+ +[a-z]/{on=0} on && /\$ curl/' \
  "$work/run.out" | grep -c "" || true)
echo "  expected WARN errors.odd-requests (a SHOULD) with at least 10 exchanges (the 10 odd requests), got" \
  "$(grep -o '^[A-Z]* *errors.odd-requests' "$work/run.out" | head -n 1) with $sent"
grep -q '^WARN *errors.odd-requests' "$work/run.out" || fail "errors.odd-requests is not a warning: $(grep 'errors.odd' "$work/run.out" | head -n 2)"
[ "$sent" -ge 10 ] || fail "errors.odd-requests stopped early: $sent exchanges, expected at least 10"
bounded 30 contract --base-url "$hurl" --profile "$profile" --check 'errors.odd-requests' --strict
expect_exit 0 "crh contract --strict against a framework's text/html 400 (judged apart: a warning, also under --strict)"
grep -q 'judged apart' "$work/run.out" || fail "the --strict run does not say the framework's refusal was judged apart"
kill -TERM "$hpid" 2>/dev/null || true

step "i. without a profile crh contract raises no false alarm: no MUST fails, the encoding is found and named"
bounded 30 contract --base-url "$durl" --minute-ms "$minute_ms" --json "$work/i.json"
expect_exit 0 "crh contract without the profile"
echo "  expected a note that parameters are taken as json, got: $(grep -m1 'taken as' "$work/run.out" || echo none)"
grep -q 'taken as json' "$work/run.out" || fail "no note names the encoding the target takes"

step "f. the key appears in no output or result file"
expect_no_key

step "g. crh_dialect_server ends on SIGTERM"
kill -TERM "$dpid"
code=0
timeout 10 tail --pid="$dpid" -f /dev/null || code=$?
echo "  expected it gone within 10 s, $([ "$code" -eq 0 ] && echo gone || echo 'still running')"
[ "$code" -eq 0 ] || fail "crh_dialect_server did not end within 10 s of SIGTERM"

[ "$failures" -eq 0 ] || {
  echo "$failures failure(s)"
  exit 1
}
echo "all dialect checks passed"
