#!/usr/bin/env bash
# The mixed load's history (issue 25) as a user meets it: against a correct
# `crh serve` every read is judged and none is flagged; against
# `crh serve --fault db-first-write-wins` (later writes answered 200 but
# ignored) a stale read is flagged with its proof in the terminal, JSON,
# JUnit and HTML, with the command that runs it again; two shards at once
# judge only what each owns; the key never shows.
# Loopback only; every server is stopped on exit.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

# A field of the JSON document, by a small Python expression on `d`.
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

step "a. a correct crh serve: reads and states judged, 0 violations"
start --aliases 24
CRH_API_KEY=$key run load --base-url "$url" --scenario mixed --duration 2 --json "$work/ok.json" \
  --junit "$work/ok.xml" --html "$work/ok.html"
[ "$code" -eq 0 ] || { fail "mixed against a correct crh serve exited $code, expected 0"; show; }
grep -q "history: .* database reads" "$work/run.out" || fail "the summary does not say what the history judged"
grep -q "violations: 0" "$work/run.out" || fail "the summary does not say 0 violations"
[ "$(field "$work/ok.json" 'd["violation_count"]')" = 0 ] || fail "ok.json: violation_count is not 0"
[ "$(field "$work/ok.json" 'd["history_check"]["database_reads"] > 100')" = True ] ||
  fail "ok.json: fewer than 100 database reads judged"
[ "$(field "$work/ok.json" 'd["history_check"]["agent_reads"] > 100')" = True ] ||
  fail "ok.json: fewer than 100 agent states judged"
[ "$(field "$work/ok.json" 'd["history_check"]["tags"] > 10')" = True ] || fail "ok.json: fewer than 10 tags judged"
[ "$(field "$work/ok.json" 'len(d["history_check"]["unjudged"])')" = 0 ] ||
  fail "ok.json: something was not judged: $(field "$work/ok.json" 'd["history_check"]["unjudged"]')"
grep -q 'name="history: every read is one a linearizable service could answer"' "$work/ok.xml" ||
  fail "ok.xml has no history test case"
grep -q 'History: reads against writes' "$work/ok.html" || fail "ok.html has no history section"
stop "$pid"

step "b. crh serve --fault db-first-write-wins: exit 1, a stale read with its proof everywhere"
start --fault db-first-write-wins --aliases 24
CRH_API_KEY=$key run load --base-url "$url" --scenario mixed --duration 2 --json "$work/bad.json" \
  --junit "$work/bad.xml" --html "$work/bad.html" --history "$work/bad.jsonl"
[ "$code" -eq 1 ] || { fail "mixed against db-first-write-wins exited $code, expected 1"; show; }
grep -q "VIOLATION database-stale-read" "$work/run.out" || { fail "the terminal names no database-stale-read"; show; }
grep -q "reproduce: crh load --base-url $url" "$work/run.out" || fail "the terminal gives no command to reproduce"
v='d["violations"][0]'
[ "$(field "$work/bad.json" "$v[\"kind\"]")" = database-stale-read ] || fail "bad.json: the first violation is not a stale read"
# The proof: the write that left the value read, the later write answered
# before the read was sent, and the read; each with its value and times.
read="[p for p in $v['proof'] if p['op'] == 'db-get'][0]"
[ "$(field "$work/bad.json" "len([p for p in $v['proof'] if p['op'] == 'db-get'])")" = 1 ] || fail "bad.json: the proof does not hold the read"
[ "$(field "$work/bad.json" "any(p['op'] == 'db-set' and p['outcome'] == 'ok' and p['complete_ns'] < $read['invoke_ns'] and p.get('value') != $v['actual'] for p in $v['proof'])")" = True ] ||
  fail "bad.json: the proof has no answered write of another value before the read"
[ "$(field "$work/bad.json" "$v['actual'] == $read['value']")" = True ] || fail "bad.json: actual is not the value read"
[ "$(field "$work/bad.json" "$v['expected'] != ''")" = True ] || fail "bad.json: nothing expected"
grep -q "crh load --base-url" <<<"$(field "$work/bad.json" "$v['reproduce']")" || fail "bad.json: no reproduce command"
grep -q '<failure type="violation"' "$work/bad.xml" || fail "bad.xml has no violation failure"
grep -q 'database-stale-read' "$work/bad.xml" || fail "bad.xml does not name the stale read"
grep -q '^reproduce: crh load --base-url' "$work/bad.xml" || fail "bad.xml gives no command to reproduce"
grep -q 'database-stale-read' "$work/bad.html" || fail "bad.html does not name the stale read"
grep -q '"op":"db-get".*"value":"crh load' "$work/bad.jsonl" || fail "the history file does not show the values read"
if grep -rq -- "$key" "$work"/run.out "$work"/run.err "$work"/bad.*; then fail "the API key appears in output or files"; fi
stop "$pid"

step "c. two shards at once on one crh serve: each judges only its own key and agents, 0 violations, merged"
start --aliases 24
for i in 0 1; do
  CRH_API_KEY=$key "$crh" load --base-url "$url" --scenario mixed --duration 2 --shard "$i/2" --connections 8 \
    --json "$work/shard$i.json" >"$work/shard$i.out" 2>&1 &
done
wait %2 %3 || true
for i in 0 1; do
  [ "$(field "$work/shard$i.json" 'd["violation_count"]')" = 0 ] || fail "shard $i: violations on a correct target"
  [ "$(field "$work/shard$i.json" 'd["history_check"]["agent_reads"] > 0')" = True ] || fail "shard $i: no agent state judged"
done
run report "$work/shard0.json" "$work/shard1.json" --json "$work/merged.json"
[ "$code" -eq 0 ] || { fail "crh report of the two shards exited $code"; show; }
sum=$(( $(field "$work/shard0.json" 'd["history_check"]["database_reads"]') + $(field "$work/shard1.json" 'd["history_check"]["database_reads"]') ))
[ "$(field "$work/merged.json" 'd["loads"][0]["history_check"]["database_reads"]')" = "$sum" ] || fail "merged.json: the shards' reads do not add up"
[ "$(field "$work/merged.json" 'd["loads"][0]["violation_count"]')" = 0 ] || fail "merged.json: violations"
stop "$pid"

if [ "$failures" -gt 0 ]; then echo "$failures failure(s)"; exit 1; fi
echo "cli.mixed_history: all steps passed"
