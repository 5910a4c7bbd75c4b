#!/usr/bin/env bash
# crh against a correct service behind a rate limit: `crh serve
# --throttle-every N` answers every Nth request 429 with Retry-After: 0 and
# does nothing (spec 8 names rate limits without showing them). A "not now"
# is sent again, never judged as the answer: the contract run (--strict),
# exploration over several seeds and the race and mixed loads pass; the same
# rate limit in front of a broken service still fails; the key is in no output.
# Before this (e0b3410's parent) such a service failed checks and exploration
# and the load could not start.
# Usage: throttle_cli_test.sh CRH. Loopback only; about 6 s (40 s under ASan).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

start --throttle-every 4
step "a. crh contract --strict on a rate-limited correct service: every check decided, none failed"
bounded 60 contract --base-url "$url" --strict --json "$work/a.json"
expect_exit 0 "crh contract --strict"
if grep -q '^FAIL\|^WARN\|^INDET' "$work/run.out"; then
  fail "expected no check failed, warned or undecided; got: $(grep '^FAIL\|^WARN\|^INDET' "$work/run.out" | head -n 5)"
fi
# The limit was met: the evidence holds the 429 answers each check waited out.
throttled=$(grep -o 'HTTP 429' "$work/a.json" | wc -l)
echo "  429 answers in the evidence: $throttled"
[ "$throttled" -gt 10 ] || fail "expected the run to meet the rate limit (429s in its evidence), found $throttled"

step "b. exploration over 2 seeds: the model takes a 429 as 'not now', never as a divergence"
for seed in 11 12; do
  bounded 60 contract --base-url "$url" --suite explore --explore 2000 --seed "$seed" --json "$work/b$seed.json"
  expect_exit 0 "crh contract --suite explore --seed $seed"
  grep -q 'answered HTTP 429 (not now' "$work/b$seed.json" ||
    fail "seed $seed: expected the exploration's note to count the 429 answers: $(grep -o '"message":"[^"]*operations[^"]*"' "$work/b$seed.json" | head -n 1)"
done

step "c. the race and the mixed load set up through the limit and pass"
# The mixed load at a set rate: at full speed the quick 429s made the
# generator the limit (busy 97%, exit 4 "unreliable": 2 runs in 15).
for scenario in race mixed; do
  pace=()
  [ "$scenario" = mixed ] && pace=(--rate 1000)
  bounded 60 load --base-url "$url" --scenario "$scenario" --duration 2 "${pace[@]}"
  expect_exit 0 "crh load --scenario $scenario"
  grep -q 'HTTP 429' "$work/run.out" || fail "$scenario: expected 429 answers counted apart in the load's table"
done
stop "$pid"

step "d. the same limit in front of a service whose lock goes to the last caller: binding still fails"
start --throttle-every 4 --fault binding-last-caller
bounded 60 contract --base-url "$url" --suite binding
expect_exit 1 "crh contract --suite binding against binding-last-caller"
grep -q '^FAIL  binding.first-caller-wins' "$work/run.out" ||
  fail "expected binding.first-caller-wins to fail; got: $(grep '^FAIL\|^INDET' "$work/run.out" | head -n 3)"
stop "$pid"

step "e. the key appears in no output or result file"
expect_no_key

[ "$failures" -eq 0 ] || {
  echo "$failures failure(s)"
  exit 1
}
echo "all throttle checks passed"
