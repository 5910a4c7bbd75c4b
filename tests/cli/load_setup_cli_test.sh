#!/usr/bin/env bash
# crh load's set-up reads the target as leniently as crh contract (issue 35,
# "the load never measures nothing in silence"), against crh_lenient_target
# (tests/support/lenient_target_main.cpp) with no profile:
#  a. --shape alias-numbers: the alias list wrapped under "alias_numbers",
#     numeric ids, fields e164/label/expiresAt/lockedTo: the contract passes,
#     the race measures rounds and the mix passes; so do crh run's loads;
#  b. an alias list that is not JSON: exit 3 before measuring, naming the
#     request, an excerpt of the answer, what was looked for, the profile fields;
#  c. a tag answer without the alias id: the same, naming id_fields.alias;
#  d. over SIP, a list with no number field and ids that are no numbers: exit 3
#     naming sip.number_field and the field that looks like the number.
# Usage: load_setup_cli_test.sh CRH LENIENT_TARGET. Loopback only.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
target=$2

# Starts the target with the given flags; sets $tpid and $turl.
target_start() {
  local n=${#pids[@]}
  CRH_API_KEY=$key "$target" "$@" >"$work/target.out.$n" 2>&1 &
  tpid=$!
  pids+=("$tpid")
  turl=$(await_url "$work/target.out.$n" "$tpid") && return 0
  echo "FAIL: crh_lenient_target $* did not start: $(cat "$work/target.out.$n")"
  exit 1
}
load() {
  CRH_API_KEY=$key timeout -k 2 60 "$crh" load --base-url "$turl" --channel 42 "$@" >"$work/run.out" 2>"$work/run.err" &&
    code=0 || code=$?
}
# The rounds the race's summary reports ("race: N rounds of ..."), 0 when none.
rounds() { grep -o '^race: [0-9]* rounds' "$work/run.out" | grep -o '[0-9]*' || echo 0; }
no_key() { ! grep -q "$key" "$work/run.out" "$work/run.err" || fail "the API key was printed ($*)"; }
# Exit 3 and every part of the set-up error: the request, the answer, what was sought, the fix.
expect_setup_error() {
  local what=$1
  shift
  [ "$code" -eq 3 ] || { fail "$what exited $code, expected 3"; show; return 0; }
  for needle in "$@"; do
    grep -qF -- "$needle" "$work/run.err" || fail "$what: the set-up error lacks \"$needle\": $(cat "$work/run.err")"
  done
  if grep -q 'measured' "$work/run.out"; then fail "$what: the load measured although set-up could not use an answer"; fi
  no_key "$what"
}

step "a. the alias-numbers shape with no profile: the contract passes, the race measures rounds, the mix passes"
target_start --shape alias-numbers
CRH_API_KEY=$key run contract --base-url "$turl" --channel 42 --explore 0
[ "$code" -eq 0 ] || { fail "crh contract against the alias-numbers shape exited $code, expected 0"; show; }
load --scenario race --duration 1
[ "$code" -eq 0 ] || { fail "race against the alias-numbers shape exited $code, expected 0"; show; }
[ "$(rounds)" -gt 0 ] || fail "the race measured no round: $(grep -m1 -i 'round\|verdict' "$work/run.out")"
no_key "race"
load --scenario mixed --duration 1
[ "$code" -eq 0 ] || { fail "mixed against the alias-numbers shape exited $code, expected 0"; show; }
grep -q '^verdict: PASSED' "$work/run.out" || fail "the mix did not pass: $(grep -m1 '^verdict' "$work/run.out")"
stop "$tpid"
# crh run on a fresh target: its contract tags would stay on the channel for the next.
target_start --shape alias-numbers
CRH_API_KEY=$key run run --base-url "$turl" --channel 42 --explore 0 --load-duration 1
[ "$code" -eq 0 ] || { fail "crh run against the alias-numbers shape exited $code, expected 0"; show; }
[ "$(rounds)" -gt 0 ] || fail "crh run's race measured no round"
stop "$tpid"

step "b. an alias list that is not JSON: exit 3 naming the request, the answer, what was sought and the fix"
target_start --shape alias-numbers --unreadable list
for scenario in race mixed; do
  load --scenario "$scenario" --duration 1
  expect_setup_error "$scenario with an unreadable alias list" "GET $turl/channels/42/alias-numbers" \
    "body: 1 +14420001 free" "which is not JSON" 'the field "aliases" (profile lists.aliases)' \
    "(profile id_fields.alias)" "set lists.aliases and id_fields.alias in a profile"
done
CRH_API_KEY=$key run run --base-url "$turl" --channel 42 --explore 0 --load-duration 1 --scenario race
[ "$code" -eq 3 ] || { fail "crh run with an unreadable alias list exited $code, expected 3"; show; }
grep -qF "GET $turl/channels/42/alias-numbers answered HTTP 200" "$work/run.out" "$work/run.err" ||
  fail "crh run does not name the request whose answer the load could not use"
stop "$tpid"

step "c. a tag answer without the alias id: exit 3 naming the request and id_fields.alias"
target_start --shape alias-numbers --unreadable tag
for scenario in race mixed; do
  load --scenario "$scenario" --duration 1
  expect_setup_error "$scenario with an unreadable tag answer" "POST $turl/channels/42/alias-numbers/tag" \
    '"status":"tagged","number":"+1442000' 'found fields "status", "number"' "(profile id_fields.alias)" \
    "set id_fields.alias in a profile"
done
stop "$tpid"

step "d. over SIP, no number field and ids that are no numbers: exit 3 naming sip.number_field"
target_start --shape alias-numbers
load --scenario race --duration 1 --call-driver sip --sip-target 127.0.0.1:9
expect_setup_error "a SIP race on the alias-numbers shape" "GET $turl/channels/42/alias-numbers" \
  'no alias shows field "number" (profile sip.number_field)' 'field "e164" holds "+14420001"'
stop "$tpid"

if [ "$failures" -gt 0 ]; then echo "$failures failure(s)"; exit 1; fi
echo "cli.load_setup: all steps passed"
