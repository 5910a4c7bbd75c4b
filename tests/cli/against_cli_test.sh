#!/usr/bin/env bash
# crh load --against (issue 38): a candidate and a baseline deployment loaded
# in interleaved trial pairs and judged on their ratios. A candidate made
# 20 ms slower per request (crh serve --delay-us) regresses (exit 1) and the
# table names the figure, in trials and in a duet; the same targets swapped
# is an improvement (exit 0);
# a baseline that refuses the key it is given, or cannot be reached, is not
# tested (exit 3, one line naming the side); what --against does not do yet
# is refused by name (exit 2); crh run --against puts the comparison in its
# document, HTML and JUnit, and with --nights records each night's ratios for
# the trend page; neither key appears in any output. The
# differences are hundredfold, so the verdicts hold on any machine; the false
# alarms on identical targets are measured in bench/ab/, not here.
# Usage: against_cli_test.sh CRH. Loopback only; about 15 s.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

start
fast=$url
start --delay-us 20000
slow=$url
quick=(load --scenario get --connections 2 --duration 0.3 --pairs 8)
# Ten pairs where a verdict is read: a 99% interval needs 8 measured on both
# sides, and a trial of 0.3 s on a loaded machine may measure too few answers.
judged=(load --scenario get --connections 2 --duration 0.3 --pairs 10)
baseline_key=cli-baseline-key-7a2c
echo "$baseline_key" >"$work/baseline.key"

step "a. a candidate 20 ms slower per request than its baseline: regressed, exit 1"
bounded 120 "${judged[@]}" --base-url "$slow" --against "$fast"
expect_exit 1 "crh load --against with a slower candidate"
grep -q 'REGRESSED' "$work/run.out" || fail "expected the verdict REGRESSED; got: $(tail -n 3 "$work/run.out")"
grep -qE '^get get p50 .* regressed$' "$work/run.out" ||
  fail "expected the table to show get's p50 regressed; got: $(grep 'get get p50' "$work/run.out")"
[ "$(grep -c '^  get pair ' "$work/run.out")" -eq 10 ] || fail "expected 10 pairs announced; got: $(grep -c '^  get pair ' "$work/run.out")"

step "b. the same targets swapped: the candidate is faster, improved, exit 0"
bounded 120 "${judged[@]}" --base-url "$fast" --against "$slow"
expect_exit 0 "crh load --against with a faster candidate"
grep -qE '^get get p50 .* improved$' "$work/run.out" ||
  fail "expected the table to show get's p50 improved; got: $(grep 'get get p50' "$work/run.out")"

step "b2. --design duet: both loaded at once, each second a pair; the slower candidate regresses"
bounded 120 load --scenario get --connections 2 --duration 10 --design duet --base-url "$slow" --against "$fast"
expect_exit 1 "crh load --against --design duet with a slower candidate"
grep -q 'both loaded at once' "$work/run.out" || fail "expected the duet announced; got: $(head -n 1 "$work/run.out")"
grep -qE '^get all p50 .* regressed$' "$work/run.out" ||
  fail "expected the duet's p50 regressed; got: $(grep 'get all p50' "$work/run.out")"

step "c. the baseline's key from --against-api-key-file: a key it refuses is the user's mistake, exit 3 in one line"
bounded 60 "${quick[@]}" --base-url "$fast" --against "$slow" --against-api-key-file "$work/baseline.key"
expect_exit 3 "crh load --against with a key the baseline refuses"
grep -q "the baseline's load of pair 1 could not run: .*refused the key" "$work/run.err" ||
  fail "expected the baseline and its refused key named; got: $(cat "$work/run.err")"
[ "$(cat "$work/run.out" "$work/run.err" | wc -l)" -le 3 ] || fail "expected at most 3 lines; got: $(cat "$work/run.out" "$work/run.err")"

step "d. a baseline nobody listens on: exit 3"
bounded 60 "${quick[@]}" --base-url "$fast" --against "http://127.0.0.1:9"
expect_exit 3 "crh load --against an unreachable baseline"

step "e. what --against does not do yet is refused by name, exit 2"
bounded 20 "${quick[@]}" --base-url "$fast" --against "$slow" --json "$work/x.json"
expect_exit 2 "crh load --against --json"
grep -q 'not with --against (yet): --json' "$work/run.err" || fail "expected --json refused by name; got: $(cat "$work/run.err")"
bounded 20 "${quick[@]}" --base-url "$fast" --against "$slow" --pairs 7
expect_exit 2 "crh load --against --pairs 7 (a 99% interval needs 8)"
bounded 20 load --scenario get --duration 7 --design duet --base-url "$fast" --against "$slow"
expect_exit 2 "crh load --against --design duet --duration 7 (a 99% interval needs 8 seconds)"
grep -q 'at least 8 s' "$work/run.err" || fail "expected the duet's shortest duration named; got: $(cat "$work/run.err")"

step "g. crh run --against: the contract on the candidate (and --contract-both on the baseline), the loads side by side, the comparison in every report"
# 0.5 s trials: a median of ~50 requests, which a stall on a loaded machine moves less.
bounded 180 run --scenario get --load-duration 0.5 --repeat 8 --suite errors --explore 0 --contract-both \
  --base-url "$slow" --against "$fast" --json "$work/ab.json" --html "$work/ab.html" --junit "$work/ab.xml"
expect_exit 1 "crh run --against with a slower candidate"
grep -q 'side by side with the baseline deployment' "$work/run.out" ||
  fail "expected the run announced side by side; got: $(head -n 3 "$work/run.out")"
grep -q 'contract suites on the baseline deployment' "$work/run.out" || fail "expected the baseline's contract run announced"
python3 - "$work/ab.json" <<'PY' || fail "the run document's comparison is not the side-by-side one (above)"
import json, sys
d = json.load(open(sys.argv[1]))
c = d["comparison"]
assert c["mode"] == "against", c["mode"]
assert c["against"]["design"] == "trials" and c["against"]["pairs"] == 8, c["against"]
p50 = [f for f in c["figures"] if f["scenario"] == "get" and f["figure"] == "p50" and f["operation"] == "get"]
# Regressed means the estimate beyond the 5% limit and the interval above 1;
# how far above depends on how loaded the machine is (1.8 under ASan in CI).
assert p50 and p50[0]["verdict"] == "regressed" and p50[0]["ratio"] > 1.05 and p50[0]["ratio_lower"] > 1, p50
assert p50[0]["pairs"] == 8 and p50[0]["confidence"] > 0.99, p50
assert c["regressions"] >= 1 and d["verdict"]["exit_code"] == 1, d["verdict"]
assert "of the baseline deployment" in d["verdict"]["reason"], d["verdict"]["reason"]
assert any("no check failed on one and not on the other" in n for n in c["notes"]), c["notes"]
assert d["contract"]["verdict"]["exit_code"] == 0, d["contract"]["verdict"]
assert len(d["loads"]) == 1 and len(d["loads"][0]["repetitions"]) == 8, "the candidate's 8 trials merged"
PY
grep -q 'Comparison with the baseline deployment' "$work/ab.html" || fail "expected the HTML comparison section"
grep -q 'type="regression"' "$work/ab.xml" || fail "expected a JUnit regression failure"
grep -q 'comparison with the baseline deployment' "$work/run.out" || fail "expected the terminal comparison"

step "h. crh run --against refuses what it does not do yet (exit 2)"
bounded 20 run --scenario get --load-duration 0.3 --base-url "$fast" --against "$slow" --capture "$work/x.pcap"
expect_exit 2 "crh run --against --capture"
grep -q 'not with --against (yet): --capture' "$work/run.err" || fail "expected --capture refused by name; got: $(cat "$work/run.err")"
bounded 20 run --scenario get --load-duration 3 --design duet --base-url "$fast" --against "$slow"
expect_exit 2 "crh run --against --design duet --load-duration 3"
grep -q 'at least 8 s' "$work/run.err" || fail "expected the duet's shortest duration named; got: $(cat "$work/run.err")"

step "i. A/B nights: crh run --against --nights records each night's ratios; the trend page draws them over the nights"
# Step g judges these settings; here what is recorded matters. Trials of
# 0.3 s are short enough that, on a loaded sanitizer run, one stalled trial
# leaves a night unable to tell (exit 4): accepted, any other exit is not.
ab_night=(run --scenario get --load-duration 0.3 --repeat 8 --suite errors --explore 0 --nights "$work/nights")
recorded_night() {  # what, then the exits it may end with
  local what=$1
  shift
  case " $* " in *" $code "*) ;; *) fail "$what exited $code, expected one of: $*: $(tail -n 3 "$work/run.out")" ;; esac
  grep -q 'night recorded: ' "$work/run.out" || fail "$what: expected the night recorded; got: $(tail -n 3 "$work/run.out")"
}
bounded 180 "${ab_night[@]}" --base-url "$slow" --against "$fast"
recorded_night "crh run --against --nights with a slower candidate" 1 4
bounded 180 "${ab_night[@]}" --base-url "$slow" --against "$fast" --max-regression 4
recorded_night "crh run --against --nights, a second night" 1 4
bounded 180 "${ab_night[@]}" --base-url "$fast" --against "$slow"
recorded_night "crh run --against --nights with a faster candidate" 0 4
python3 - "$work/nights" "$slow" "$fast" <<'PY' || fail "the A/B night files are not what was judged (above)"
import glob, json, sys
nights = [json.load(open(f)) for f in sorted(glob.glob(sys.argv[1] + "/night-*.json"))]
assert len(nights) == 3, len(nights)
first, second, third = nights
for n in nights:
    assert all(f["unit"] == "ratio" for f in n["figures"]), n["figures"]
    assert n["gate"]["mode"] == "against", n["gate"]
p50 = [f for f in first["figures"] if f["scenario"] == "get" and f["operation"] == "get" and f["figure"] == "p50"][0]
# the median ratio: ~100 when idle, under 2 on a loaded sanitizer run
assert p50["value"] > 1 and p50["n"] == 8 and p50["better"] == "lower", p50
assert first["fingerprint"]["fields"]["against"]["base_url"] == sys.argv[3], first["fingerprint"]["fields"]
assert first["fingerprint"]["hash"] == second["fingerprint"]["hash"], "a changed limit is the same series"
assert first["fingerprint"]["hash"] != third["fingerprint"]["hash"], "another baseline is another series"
assert first["verdict"]["exit_code"] in (1, 4), first["verdict"]
PY
bounded 180 "${ab_night[@]}" --base-url "$slow" --against "$fast"
recorded_night "crh run --against --nights, a fourth night" 1 4
bounded 30 report --nights "$work/nights" --html "$work/ab-trend.html"
expect_exit 0 "crh report --nights of A/B nights"
grep -q 'candidate ÷ baseline deployment' "$work/ab-trend.html" || fail "expected the trend page to draw ratios"
grep -q 'Comparison with the baseline deployment' "$work/ab-trend.html" ||
  fail "expected the last night's side-by-side comparison on the trend page"
grep -q 'within the 5% limit' "$work/ab-trend.html" || fail "expected the limit band on the ratio charts"
grep -q '3 night(s) of the last night' "$work/ab-trend.html" ||
  fail "expected the 3 nights against $fast drawn; got: $(grep -o '[0-9]* night(s) of the last night' "$work/ab-trend.html")"

step "j. the control arm: crh run --nights DIR --control judges the ratios target / control against the record"
bounded 20 run --scenario get --load-duration 0.3 --base-url "$fast" --control "$slow"
expect_exit 2 "crh run --control without --nights"
bounded 20 run --scenario get --load-duration 0.3 --base-url "$fast" --control "$slow" --against "$slow" --nights "$work/cn"
expect_exit 2 "crh run --control with --against"
bounded 20 run --scenario get --load-duration 0.3 --base-url "$fast" --control embedded --nights "$work/cn"
expect_exit 2 "crh run --control embedded (measured to widen the spread)"
grep -q 'spread 6.6-6.8x more' "$work/run.err" || fail "expected the embedded control refused with the measurement; got: $(cat "$work/run.err")"
control_night=(run --scenario get --load-duration 0.3 --repeat 8 --suite errors --explore 0 --nights "$work/cn"
  --base-url "$fast" --control "$slow")
for night in 1 2; do
  bounded 180 "${control_night[@]}" --json "$work/cn-$night.json"
  # The first night has nothing to compare with; the second is judged against
  # one night's interval, which a loaded sanitizer run can cross by chance.
  recorded_night "control-arm night $night" 0 1 4
done
grep -q 'each in trials interleaved with the control' "$work/run.out" || fail "expected the control arm announced"
python3 - "$work/cn" "$work/cn-2.json" "$slow" <<'PY' || fail "the control-arm nights are not what was judged (above)"
import glob, json, sys
nights = [json.load(open(f)) for f in sorted(glob.glob(sys.argv[1] + "/night-*.json"))]
assert len(nights) == 2, len(nights)
for n in nights:
    assert n["fingerprint"]["fields"]["control"] == sys.argv[3], n["fingerprint"]["fields"]
    p50 = [f for f in n["figures"] if f["operation"] == "get" and f["figure"] == "p50"][0]
    # the target answers at once, the control 20 ms late: the ratio is below 1
    assert p50["unit"] == "ratio" and p50["value"] < 1 and p50["n"] == 8, p50
assert nights[0]["fingerprint"]["hash"] == nights[1]["fingerprint"]["hash"]
d = json.load(open(sys.argv[2]))
c = d["comparison"]
assert c["mode"] == "nights" and c["control"]["mode"] == "against", c["mode"]
assert any(n.startswith("control arm: every figure is the ratio target / control") for n in c["notes"]), c["notes"]
judged = [f for f in c["figures"] if f["operation"] == "get" and f["figure"] == "p50"][0]
assert judged["unit"] == "ratio", judged
assert d["config"]["control"] == sys.argv[3], d["config"]
PY
bounded 30 report --nights "$work/cn" --html "$work/cn-trend.html"
expect_exit 0 "crh report --nights of control-arm nights"
grep -q "Each night a ratio target ÷ control <code>$slow</code>" "$work/cn-trend.html" ||
  fail "expected the trend page to name the control its ratios are to"
grep -q 'the interval of its trial pairs (99%)' "$work/cn-trend.html" || fail "expected the ratios' 99% intervals named"

step "f. neither key appears in any output"
expect_no_key
if grep -qF -- "$baseline_key" "$work/all.out"; then fail "the baseline's key leaks"; fi
if grep -qF -- "$key" "$work/ab.html" "$work/ab.xml"; then fail "the key leaks into the HTML or JUnit report"; fi

[ "$failures" -eq 0 ] || {
  echo "$failures failure(s)"
  exit 1
}
echo PASS
