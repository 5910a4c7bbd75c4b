#!/usr/bin/env bash
# Honest contract verdicts against small targets written for them (issue 22):
# crh_dialect_server with one flaw at a time (a handler that crashes, a
# deadlock, a framework's refusal, untagged aliases without a tag field, a
# stale tag answer), and a proxy that makes every answer unreadable
# (crh_hostile_server double-length-proxy) in front of crh serve. Each step
# says what it expected and what came back.
# Usage: verdict_cli_test.sh CRH DIALECT_SERVER HOSTILE_SERVER PROFILE. Loopback only; about 40 s.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
dialect=$2
hostile=$3
profile=$4
printf '%s\n' "$key" >"$work/key"

# Starts crh_dialect_server with the given flags; sets $durl and $dpid.
dialect_start() {
  local n=${#pids[@]}
  "$dialect" --port 0 --api-key-file "$work/key" --minute-ms 1000 "$@" >"$work/dialect.out.$n" 2>&1 &
  dpid=$!
  pids+=("$dpid")
  durl=$(await_url "$work/dialect.out.$n" "$dpid") || {
    echo "FAIL: crh_dialect_server $* did not start: $(cat "$work/dialect.out.$n")"
    exit 1
  }
}

# expect_line REGEX WHAT: the output has a line matching REGEX.
expect_line() {
  local got
  got=$(grep -m1 -E -- "$1" "$work/run.out" || true)
  echo "  expected a line matching /$1/, got: ${got:-none}"
  [ -n "$got" ] || { fail "$2"; grep -E '^(FAIL|WARN|INDET|SKIP)|^(PASSED|FAILED|UNTESTED)|note' "$work/run.out" | head -n 12; }
}

step "a. a handler that crashes on PUT .../{unknown}/wake (the connection closes, no answer) fails X0 (exit 1)"
dialect_start --flaw crash-on-unknown-wake
bounded 60 contract --base-url "$durl" --profile "$profile" --verbose --json "$work/a.json"
expect_exit 1 "crh contract against a handler that crashes"
expect_line '^FAIL +agents.unknown-id' "agents.unknown-id does not fail"
expect_line 'connection was closed without' "no message says the connection was closed without an answer"
expect_line '^FAIL +errors.every-request-answered' "the run-wide X0 check does not fail"
expect_line '^  X0 +FAIL' "the coverage matrix does not show X0 failed"
stop "$dpid"

step "a2. the same service without the flaw passes: X0 holds, it is no false alarm"
dialect_start
bounded 60 contract --base-url "$durl" --profile "$profile" --verbose
expect_exit 0 "crh contract against the correct dialect server"
expect_line '^PASS +errors.every-request-answered' "errors.every-request-answered does not pass on a correct service"
stop "$dpid"

step "b. a target that stops answering (a deadlock) fails within about 4 x --timeout of the stall"
dialect_start --stop-answering-after 30
bounded 60 contract --base-url "$durl" --profile "$profile" --timeout 1000 --json "$work/b.json"
expect_exit 1 "crh contract against a deadlock"
expect_line 'the target stopped answering' "the verdict does not say the target stopped answering"
not_run=$(grep -o '"message":"not run: the target stopped answering' "$work/b.json" | grep -c "" || true)
echo "  expected the checks after the stall marked \"not run: the target stopped answering\", got $not_run such checks"
[ "$not_run" -gt 10 ] || fail "the checks after the stall are not marked not run"
echo "  expected the run to end within 12 s (30 quick answers, then 3 checks x 1 s and a 1 s try to restore), took ${took} s"
awk -v t="$took" 'BEGIN { exit !(t < 12) }' || fail "the run against a deadlock took $took s"
stop "$dpid"

for kind in text html; do
  step "c. --strict against a framework's 400 $kind refusal of GET /database/%zz% passes, saying it was judged apart"
  dialect_start --invalid-uri "$kind"
  bounded 60 contract --base-url "$durl" --profile "$profile" --strict --json "$work/c-$kind.json"
  expect_exit 0 "crh contract --strict against a correct service whose framework answers 400 $kind"
  expect_line 'judged apart' "no output says the framework's refusal was judged apart"
  grep -q '"judged_apart":true' "$work/c-$kind.json" || fail "the result document marks no finding judged_apart"
  stop "$dpid"
done

step "d. untagged aliases without a tag field are untagged: binding.fresh-after-retag runs"
dialect_start --flaw untagged-omit-label
bounded 60 contract --base-url "$durl" --profile "$profile" --check 'binding.fresh-after-retag' --verbose
expect_exit 0 "crh contract --check binding.fresh-after-retag against aliases without a tag field"
expect_line '^PASS +binding.fresh-after-retag' "binding.fresh-after-retag did not run and pass"
stop "$dpid"

step "e. a tag answer carrying another tag than the one set fails E8"
dialect_start --flaw stale-tag-answer
bounded 60 contract --base-url "$durl" --profile "$profile" --suite endpoints --suite aliases
expect_exit 1 "crh contract against a stale tag answer"
expect_line 'expected the tagged alias, carrying that tag' "no check names the tag answer's wrong tag"
stop "$dpid"

step "f. skips the target caused stand out in the verdict line (alias ids under names the default profile does not know)"
dialect_start
bounded 60 contract --base-url "$durl" --suite binding
expect_line 'MUST check\(s\) skipped themselves on what the target answered' \
  "the verdict does not say that MUST checks skipped themselves"
stop "$dpid"

step "g. through a proxy whose answers are unreadable, the run says plainly which tags it may have left"
start --minute-ms 600000
serve_url=$url
"$hostile" double-length-proxy --upstream "${serve_url##*:}" >"$work/proxy.out" 2>&1 &
ppid=$!
pids+=("$ppid")
purl=$(await_url "$work/proxy.out" "$ppid") || { fail "the proxy did not start"; exit 1; }
bounded 120 contract --base-url "$purl" --json "$work/g.json"
expect_exit 1 "crh contract through the double Content-Length proxy"
left=$(curl -sS --max-time 5 "$serve_url/channels/1/alias-numbers" -H "Apikey: $key" |
  grep -o '"tag":"crh-probe-[^"]*"' | sed 's/"tag":"//; s/"$//' | sort | uniq -c || true)
echo "  tags left on the service behind the proxy: $(echo "$left" | tr '\n' ' ')"
while read -r count name; do
  [ -n "$name" ] || continue
  grep -q "not restored: .*tag request(s) named \\\\\"$name\\\\\"\|not restored: .*tag request(s) named \"$name\"" \
    "$work/run.out" "$work/g.json" || fail "the tag $name ($count left) is not named as not restored"
done <<<"$left"
grep -q 'could not list the aliases' "$work/run.out" || fail "the run does not say it could not list the aliases"

step "h. the key appears in no output or result file"
expect_no_key

[ "$failures" -eq 0 ] || {
  echo "$failures failure(s)"
  exit 1
}
echo "all verdict checks passed"
