#!/usr/bin/env bash
# crh load --against (issue 38): a candidate and a baseline deployment loaded
# in interleaved trial pairs and judged on their ratios. A candidate made
# 20 ms slower per request (crh serve --delay-us) regresses (exit 1) and the
# table names the figure, in trials and in a duet; the same targets swapped
# is an improvement (exit 0);
# a baseline that refuses the key it is given leaves nothing to compare
# (exit 4); one that cannot be reached is exit 3; what --against does not do yet
# is refused by name (exit 2); neither key appears in any output. The
# differences are hundredfold, so the verdicts hold on any machine; the false
# alarms on identical targets are measured in bench/ab/, not here.
# Usage: against_cli_test.sh CRH. Loopback only; about 15 s.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

start
fast=$url
start --delay-us 20000
slow=$url
quick=(load --scenario get --connections 2 --duration 0.3 --pairs 6)
baseline_key=cli-baseline-key-7a2c
echo "$baseline_key" >"$work/baseline.key"

step "a. a candidate 20 ms slower per request than its baseline: regressed, exit 1"
bounded 120 "${quick[@]}" --base-url "$slow" --against "$fast"
expect_exit 1 "crh load --against with a slower candidate"
grep -q 'REGRESSED' "$work/run.out" || fail "expected the verdict REGRESSED; got: $(tail -n 3 "$work/run.out")"
grep -qE '^get get p50 .* regressed$' "$work/run.out" ||
  fail "expected the table to show get's p50 regressed; got: $(grep 'get get p50' "$work/run.out")"
[ "$(grep -c '^  pair ' "$work/run.out")" -eq 6 ] || fail "expected 6 pairs announced; got: $(grep -c '^  pair ' "$work/run.out")"

step "b. the same targets swapped: the candidate is faster, improved, exit 0"
bounded 120 "${quick[@]}" --base-url "$fast" --against "$slow"
expect_exit 0 "crh load --against with a faster candidate"
grep -qE '^get get p50 .* improved$' "$work/run.out" ||
  fail "expected the table to show get's p50 improved; got: $(grep 'get get p50' "$work/run.out")"

step "b2. --design duet: both loaded at once, each second a pair; the slower candidate regresses"
bounded 120 load --scenario get --connections 2 --duration 6 --design duet --base-url "$slow" --against "$fast"
expect_exit 1 "crh load --against --design duet with a slower candidate"
grep -q 'both loaded at once' "$work/run.out" || fail "expected the duet announced; got: $(head -n 1 "$work/run.out")"
grep -qE '^get all p50 .* regressed$' "$work/run.out" ||
  fail "expected the duet's p50 regressed; got: $(grep 'get all p50' "$work/run.out")"

step "c. the baseline's key from --against-api-key-file: a key it refuses leaves nothing to compare, exit 4"
bounded 60 "${quick[@]}" --base-url "$fast" --against "$slow" --against-api-key-file "$work/baseline.key"
expect_exit 4 "crh load --against with a key the baseline refuses"
grep -q "COULD NOT TELL: the baseline's own load failed in 6 of 6 trials" "$work/run.out" ||
  fail "expected the baseline's failed loads named as why; got: $(tail -n 2 "$work/run.out")"

step "d. a baseline nobody listens on: exit 3"
bounded 60 "${quick[@]}" --base-url "$fast" --against "http://127.0.0.1:9"
expect_exit 3 "crh load --against an unreachable baseline"

step "e. what --against does not do yet is refused by name, exit 2"
bounded 20 "${quick[@]}" --base-url "$fast" --against "$slow" --json "$work/x.json"
expect_exit 2 "crh load --against --json"
grep -q 'not with --against (yet): --json' "$work/run.err" || fail "expected --json refused by name; got: $(cat "$work/run.err")"
bounded 20 "${quick[@]}" --base-url "$fast" --against "$slow" --pairs 5
expect_exit 2 "crh load --against --pairs 5 (a 95% interval needs 6)"

step "f. neither key appears in any output"
expect_no_key
if grep -qF -- "$baseline_key" "$work/all.out"; then fail "the baseline's key leaks"; fi

[ "$failures" -eq 0 ] || {
  echo "$failures failure(s)"
  exit 1
}
echo PASS
