#!/usr/bin/env bash
# `crh run` and `crh report` as a user runs them: the nightly job on the
# embedded service writes a well-formed, self-contained HTML report, JSON and
# JUnit; a run against `crh serve --fault slow-tag` compared with that
# baseline exits 1 naming the tag latency, marked red in the report; shards
# merge; Ctrl-C writes an incomplete result and leaves the target as found;
# crh load and crh contract write --html too; usage errors exit 2; a log of
# stdout and stderr reads in order; a failure's rerun line reruns it.
# Loopback only; every server is stopped on exit.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

# Fails unless $1 is well-formed XML (xmllint when present) and fetches nothing.
self_contained_html() {
  if command -v xmllint >/dev/null 2>&1; then
    xmllint --noout "$1" 2>"$work/xmllint.err" || fail "$1 is not well-formed: $(head -n 3 "$work/xmllint.err")"
  fi
  if grep -Eqi '<script|<link|<img|<iframe|src=|url\(|@import|href="[^#]' "$1"; then
    fail "$1 references something outside itself: $(grep -Eoi '<script|<link|<img|<iframe|src=[^ ]*|url\([^)]*|@import|href="[^#][^"]*' "$1" | head -n 3)"
  fi
}

step "a. crh run on the embedded service: exit 0, report.html, result.json and junit.xml"
run run --suite endpoints --suite binding --load-duration 1 --html "$work/report.html" --json "$work/base.json" --junit "$work/junit.xml"
[ "$code" -eq 0 ] || { fail "crh run on the embedded service exited $code, expected 0"; show; }
for f in report.html base.json junit.xml; do [ -s "$work/$f" ] || fail "crh run did not write $f"; done
self_contained_html "$work/report.html"
for want in 'id="contract"' 'id="coverage"' 'id="checks"' 'id="load-race"' 'id="load-mixed"' 'Latency by percentile' \
            'Winners per round' 'Throughput over time' 'Configuration and environment' '<svg'; do
  grep -q -- "$want" "$work/report.html" || fail "report.html lacks $want"
done
grep -q '"kind":"run"' "$work/base.json" || fail "result.json is not a run document"
if command -v xmllint >/dev/null 2>&1; then
  xmllint --noout "$work/junit.xml" || fail "junit.xml is not well-formed"
fi
grep -q 'classname="crh.load.race" name="first caller wins' "$work/junit.xml" || fail "junit.xml lacks the race's invariant"
grep -q "PASSED" "$work/run.out" || fail "the summary lacks the verdict"

step "b. against crh serve --fault slow-tag with the baseline: exit 1 naming the tag latency, red in the report"
start --aliases 24 --fault slow-tag
CRH_API_KEY=$key run run --base-url "$url" --suite endpoints --load-duration 1 --baseline "$work/base.json" \
  --html "$work/slow.html" --json "$work/slow.json" --junit "$work/slow-junit.xml"
[ "$code" -eq 1 ] || { fail "the slowed target compared with the baseline exited $code, expected 1"; show; }
grep -Eq 'REGRESSED (race|mixed) tag p(50|99)' "$work/run.out" || { fail "the summary does not name the tag latency"; show; }
grep -Eq 'verdict of the run: FAILED .*tag p(50|99)' "$work/run.out" || fail "the verdict does not name the tag latency"
grep -Eq '<tr class="regressed"><td>(race|mixed)</td><td>tag</td><td>p(50|99)</td>' "$work/slow.html" ||
  fail "the report does not mark the tag latency as regressed"
grep -q 'REGRESSED (worse than the 20.0% limit)' "$work/slow.html" || fail "the report does not say why the row is red"
grep -Eq '<testcase classname="crh.regressions" name="(race|mixed) tag p(50|99)"' "$work/slow-junit.xml" ||
  fail "junit.xml has no testcase for the tag latency"
grep -q '<failure type="regression"' "$work/slow-junit.xml" || fail "junit.xml does not fail the regression"
self_contained_html "$work/slow.html"
for f in slow.html slow.json slow-junit.xml run.out run.err; do
  if grep -q "$key" "$work/$f"; then fail "the API key appears in $f"; fi
done

step "c. crh report renders and compares results written earlier"
run report "$work/slow.json" --baseline "$work/base.json" --html "$work/again.html" --quiet
[ "$code" -eq 1 ] || { fail "crh report of the slowed run against the baseline exited $code, expected 1"; show; }
self_contained_html "$work/again.html"
run report "$work/base.json" --baseline "$work/base.json" --max-regression 0
[ "$code" -eq 0 ] || { fail "a result compared with itself exited $code, expected 0"; show; }

step "d. two load shards merge: counts add"
start --aliases 24
CRH_API_KEY=$key run load --base-url "$url" --scenario get --connections 2 --duration 1 --json "$work/shard1.json" \
  --html "$work/shard1.html" --junit "$work/shard1.xml"
self_contained_html "$work/shard1.html"
grep -q 'id="load-get"' "$work/shard1.html" || fail "crh load --html has no load section"
grep -q '<testsuite name="load.get"' "$work/shard1.xml" || fail "crh load --junit has no load testsuite"
CRH_API_KEY=$key run load --base-url "$url" --scenario get --connections 3 --duration 1 --json "$work/shard2.json"
run report "$work/shard1.json" "$work/shard2.json" --json "$work/merged.json" --junit "$work/merged.xml"
[ "$code" -eq 0 ] || { fail "merging two shards exited $code, expected 0"; show; }
n1=$(grep -o '"requests":[0-9]*' "$work/shard1.json" | head -n1 | cut -d: -f2)
n2=$(grep -o '"requests":[0-9]*' "$work/shard2.json" | head -n1 | cut -d: -f2)
nm=$(grep -o '"requests":[0-9]*' "$work/merged.json" | head -n1 | cut -d: -f2)
[ "$nm" -eq $((n1 + n2)) ] || fail "the merged result counts $nm requests, expected $n1 + $n2"
grep -q '"connections":5' "$work/merged.json" || fail "the merged result does not add the connections"
run report "$work/shard1.json" "$work/base.json"
[ "$code" -eq 0 ] || { fail "a get shard beside a run document exited $code, expected 0"; show; }

step "e. Ctrl-C during crh run writes what was gathered, marked incomplete, and restores the target"
CRH_API_KEY=$key "$crh" run --base-url "$url" --suite endpoints --load-duration 30 --json "$work/partial.json" \
  --html "$work/partial.html" >"$work/int.out" 2>&1 &
runner=$!
for _ in $(seq 100); do grep -q 'race load' "$work/int.out" && break; sleep 0.1; done
sleep 1
kill -INT "$runner"
code=0
wait "$runner" || code=$?
[ "$code" -eq 1 ] || { fail "an interrupted crh run exited $code, expected 1"; tail -n 5 "$work/int.out"; }
grep -q '"incomplete":true' "$work/partial.json" || fail "the interrupted result is not marked incomplete"
grep -q 'INCOMPLETE' "$work/partial.html" || fail "the interrupted report does not say INCOMPLETE"
grep -q 'mixed load: not run, the run was interrupted' "$work/partial.json" || fail "the result does not say the mixed load was left out"
tags=$(curl -sS "$url/channels/1/alias-numbers" -H "Apikey: $key")
echo "$tags" | grep -q '"aliases"' || fail "could not list the aliases to check the restore: $tags"
if echo "$tags" | grep -q 'crh-'; then fail "the interrupted run left tags behind: $tags"; fi

step "f. crh contract --html"
CRH_API_KEY=$key run contract --base-url "$url" --suite endpoints --html "$work/contract.html"
[ "$code" -eq 0 ] || { fail "crh contract --html exited $code, expected 0"; show; }
self_contained_html "$work/contract.html"
grep -q 'id="coverage"' "$work/contract.html" || fail "crh contract --html has no rule coverage"
if grep -q "$key" "$work/contract.html"; then fail "the API key appears in contract.html"; fi

step "g. usage errors exit 2"
run report "$work/no-such.json"
[ "$code" -eq 2 ] || fail "a missing result file exited $code, expected 2"
echo '{"hello":1}' >"$work/foreign.json"
run report "$work/foreign.json"
[ "$code" -eq 2 ] || fail "a foreign JSON file exited $code, expected 2"
grep -q 'not a crh result document' "$work/run.err" || fail "a foreign file is not named as such: $(cat "$work/run.err")"
head -c 100 "$work/base.json" >"$work/truncated.json"
run report "$work/truncated.json"
[ "$code" -eq 2 ] || fail "a truncated result exited $code, expected 2"
run run --scenario bogus
[ "$code" -eq 2 ] || fail "--scenario bogus exited $code, expected 2"
run run --threshold 'race:nothing.p99<1ms'
[ "$code" -eq 2 ] || fail "an unknown threshold subject exited $code, expected 2"

step "h. a nightly log (stdout and stderr in one file) reads in order: each part's summary when it ends"
# The --json path cannot be written: its complaint goes to stderr after the
# loads ran and before the verdict of the run.
code=0
"$crh" run --suite endpoints --load-duration 1 --json "$work/no-such-dir/r.json" >"$work/log" 2>&1 || code=$?
[ "$code" -eq 2 ] || { fail "crh run with an unwritable --json exited $code, expected 2"; tail -n 5 "$work/log"; }
# The number of the first line of the log matching $1 (extended regex), or 0.
line_of() { grep -n -m1 -E -- "$1" "$work/log" | cut -d: -f1 || true; }
previous=0 previous_what="the start"
for what in '^PASSED \(exit 0\): [0-9]+ checks in' '^crh run: race load' '^crh load: race on' '^crh run: mixed load' \
            '^crh load: mixed on' 'no-such-dir' '^verdict of the run'; do
  n=$(line_of "$what")
  n=${n:-0}
  if [ "$n" -eq 0 ]; then
    fail "the log has no line matching '$what'"
  elif [ "$n" -le "$previous" ]; then
    fail "the log has '$what' (line $n) before '$previous_what' (line $previous)"
  fi
  previous=$n previous_what=$what
done
[ "$failures" -eq 0 ] || sed 's/^/  | /' "$work/log" | grep -E 'crh run|crh load|exit|verdict|no-such-dir' || true

step "i. a failure of crh run reruns as crh contract with the run's contract options, not its load options"
start --fault lru-mru
printf '%s\n' "$key" >"$work/run key's file"
echo '{"statuses": {"auth": [401, 403]}}' >"$work/run profile.json"
(
  unset CRH_API_KEY
  run run --base-url "$url" --api-key-file "$work/run key's file" --profile "$work/run profile.json" --strict \
    --timeout 3000 --suite aliases --load-duration 0 --callers 4
  [ "$code" -eq 1 ] || { echo "FAIL: crh run against lru-mru exited $code, expected 1"; show; exit 1; }
) || failures=$((failures + 1))
line=$(grep -m1 -E '^ *rerun: .* --check aliases\.lru-cycle$' "$work/run.out" | sed 's/^ *rerun: //' || true)
if [ -z "$line" ]; then
  fail "crh run printed no rerun line for aliases.lru-cycle"; show
else
  echo "  \$ $line"
  case "$line" in crh\ contract\ *--api-key-file*--strict*) ;; *) fail "the rerun line lacks the run's contract options: $line" ;; esac
  case "$line" in *--suite*|*--load-duration*|*--callers*) fail "the rerun line carries options of the run only: $line" ;; esac
  rc=0
  (unset CRH_API_KEY; export PATH="$(dirname "$crh"):$PATH"; eval "timeout 60 $line") >"$work/rerun.out" 2>&1 || rc=$?
  [ "$rc" -eq 1 ] || { fail "the rerun exited $rc, expected 1: $line"; tail -n 5 "$work/rerun.out"; }
  grep -Eq '^FAIL +aliases\.lru-cycle ' "$work/rerun.out" || { fail "the rerun did not fail aliases.lru-cycle again"; tail -n 8 "$work/rerun.out"; }
fi
for f in run.out run.err rerun.out; do
  if grep -qF "$key" "$work/$f"; then fail "the API key appears in $f"; fi
done
stop "$pid"

[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "all crh run and crh report checks passed"
