#!/usr/bin/env bash
# crh load against crh_lenient_target (tests/support/lenient_target_main.cpp),
# a small correct target with no profile (issue 22):
#  item 5: alias objects that name the tag "label" and the number "e164": the
#    load reads the tag field the way the target shows it (its restore finds its
#    own tags there), and a channel with nothing usable stops before measuring
#    (exit 3) saying, in the profile's terms, what it looked for and found;
#  item 10: a target that never tags a deleted tag's alias again: "every alias
#    is tagged" contradicts the load's own history, a violation with its proof;
#    not judged when another client's tag shows the channel is shared.
# Usage: load_lenient_cli_test.sh CRH LENIENT_TARGET. Loopback only.
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
# Tags one alias of channel 1 with tag $1 by hand (another client, or an earlier run).
tag_by_hand() {
  curl -sS -X POST "$turl/channels/1/alias-numbers/tag" -H "Apikey: $key" --data "tag=$1&minutes=60" >/dev/null
}
aliases() { curl -sS "$turl/channels/1/alias-numbers" -H "Apikey: $key"; }
load() { CRH_API_KEY=$key timeout -k 2 60 "$crh" load --base-url "$turl" "$@" >"$work/run.out" 2>"$work/run.err" && code=0 || code=$?; }

step "a. tag field \"label\", number \"e164\", no profile: the contract passes, and so do the race and the mix"
target_start --alias-fields label,e164
CRH_API_KEY=$key run contract --base-url "$turl"
[ "$code" -eq 0 ] || { fail "crh contract against the label/e164 target exited $code, expected 0 (the target is correct)"; show; }
load --scenario race --duration 1
[ "$code" -eq 0 ] || { fail "race against the label/e164 target exited $code, expected 0"; show; }
grep -q 'rounds of 8 callers' "$work/run.out" || fail "the race ran no round: $(grep -m1 -i 'round\|FAILED' "$work/run.out")"
load --scenario mixed --duration 1
[ "$code" -eq 0 ] || { fail "mixed against the label/e164 target exited $code, expected 0"; show; }
stop "$tpid"

step "b. crh-load tags an earlier run left under \"label\" are found and deleted by the restore"
target_start --alias-fields label,e164
tag_by_hand crh-load
tag_by_hand crh-load
load --scenario race --duration 1
[ "$code" -eq 0 ] || { fail "race with two leftover crh-load tags exited $code, expected 0"; show; }
if aliases | grep -q '"label":"crh-load'; then fail "the restore left crh-load tags under \"label\": $(aliases)"; fi
stop "$tpid"

step "c. every alias tagged by someone else: exit 3 before measuring, in the profile's terms"
target_start --alias-fields label,e164 --aliases 4
for _ in 1 2 3 4; do tag_by_hand someone-else; done
load --scenario race --duration 1
[ "$code" -eq 3 ] || { fail "race on a channel with every alias tagged exited $code, expected 3"; show; }
grep -q 'statuses.all_tagged' "$work/run.err" || fail "the set-up error does not say what it looked for: $(cat "$work/run.err")"
grep -q 'measured' "$work/run.out" && fail "the race measured although nothing could be used"
stop "$tpid"

step "d. a target that never tags a deleted tag's alias again: the race and the mix fail with the proof"
# Before (issue 22, item 10): both passed, the race with 2,203 refused tags.
# Four aliases, so that the load runs out of them within its second however
# slowly it runs (with 16, a race that managed fewer than 16 rounds under
# ThreadSanitizer on a busy machine never met a refusal: ci22).
for fields in tag,number label,e164; do
  target_start --never-retag --aliases 4 --alias-fields "$fields"
  load --scenario race --duration 1 --json "$work/never.json"
  [ "$code" -eq 1 ] || { fail "race against --never-retag ($fields) exited $code, expected 1"; show; }
  grep -q 'VIOLATION tag-refused-while-free' "$work/run.out" || fail "no tag-refused-while-free violation ($fields)"
  grep -q '"kind":"tag-refused-while-free"' "$work/never.json" || fail "the result lists no such violation ($fields)"
  grep -q '"op":"untag"' "$work/never.json" || fail "the violation's proof lacks the untag ($fields)"
  stop "$tpid"
done
target_start --never-retag --aliases 4
load --scenario mixed --duration 1 --json "$work/never-mixed.json"
[ "$code" -eq 1 ] || { fail "mixed against --never-retag exited $code, expected 1"; show; }
grep -q 'invariant violation' "$work/run.out" || fail "the mix's verdict names no violation"
grep -q '"kind":"tag-refused-while-free"' "$work/never-mixed.json" || fail "the mix's result lists no violation"
grep -q '^  VIOLATION tag-refused-while-free' "$work/run.out" || fail "the mix's terminal summary shows no violation with its proof"
stop "$tpid"

step "e. the same target with another client's tag on the channel: a refusal proves nothing (no false alarm)"
target_start --never-retag --aliases 4
tag_by_hand someone-else
load --scenario race --duration 1
[ "$code" -eq 0 ] || { fail "race on a shared channel exited $code, expected 0 (refusals not judged)"; show; }
grep -q 'tag-refused-while-free' "$work/run.out" && fail "a refusal on a shared channel was called a violation"
stop "$tpid"

if [ "$failures" -gt 0 ]; then echo "$failures failure(s)"; exit 1; fi
echo "cli.load_lenient: all steps passed"
