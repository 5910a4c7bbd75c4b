#!/usr/bin/env bash
# crh contract's exploration (issue 25) as a user drives it: the seed is
# printed and replays; --explore 0 takes the suite out; a fault is found and
# its reproducer, run as the shell script it is, gets the wrong answer again
# with the key nowhere in the outputs; Ctrl-C writes what was found and
# restores the target; and many sequences against the healthy service find
# nothing (the seed varies: CRH_EXPLORE_SEED, else drawn and printed).
# Usage: explore_cli_test.sh CRH [SEQUENCES]
set -uo pipefail
source "$(dirname "$0")/lib.sh"
sequences=${2:-10000}
seed=${CRH_EXPLORE_SEED:-$((RANDOM * 32768 + RANDOM))}
echo "seed $seed (CRH_EXPLORE_SEED=$seed replays this test's exploration)"

step "a. the drawn seed is printed, and the same seed explores the same way"
run contract --suite explore --explore 300 --verbose
[ "$code" -eq 0 ] || { fail "exploring the embedded service exited $code"; show; }
drawn=$(grep -o 'from seed [0-9]*' "$work/run.out" | head -n1 | awk '{print $3}')
[ -n "$drawn" ] || fail "no seed printed"
run contract --suite explore --explore 300 --seed "$drawn" --json "$work/a1.json"
run contract --suite explore --explore 300 --seed "$drawn" --json "$work/a2.json"
counts() { grep -o '[0-9]* operations[^,]* in [0-9]* sequences' "$1"; }
[ -n "$(counts "$work/a1.json")" ] && [ "$(counts "$work/a1.json")" = "$(counts "$work/a2.json")" ] ||
  fail "seed $drawn explored differently: $(counts "$work/a1.json") vs $(counts "$work/a2.json")"
grep -q "\"explore_seed\": *$drawn" "$work/a1.json" || grep -q "\"explore_seed\":$drawn" "$work/a1.json" ||
  fail "the document does not name the seed"

step "b. --explore 0 takes the explore suite out of the run"
run contract --explore 0 --json "$work/b.json"
[ "$code" -eq 0 ] || { fail "--explore 0 exited $code"; show; }
if grep -q 'explore.sequences' "$work/b.json"; then fail "--explore 0 still ran explore.sequences"; fi

step "c. a fault found by exploration alone; its reproducer run as a script answers wrongly again"
start --fault db-first-write-wins
export CRH_API_KEY=$key
run contract --base-url "$url" --suite explore --explore 3000 --seed "$seed" --json "$work/c.json" --junit "$work/c.xml" --html "$work/c.html"
[ "$code" -eq 1 ] || { fail "db-first-write-wins: exit $code, expected 1"; show; }
grep -Eq '^FAIL +explore.sequences' "$work/run.out" || fail "explore.sequences did not fail"
grep -q 'shrunk from' "$work/run.out" || fail "no shrinking said"
for f in run.out c.json c.xml c.html; do
  if grep -qF "$key" "$work/$f"; then fail "the API key leaked into $f"; fi
done
# One divergence, one rule: the rule table marks failed only the rule the
# finding names; the others exploration covers stay covered, not failed.
blame=$(python3 - "$work/c.json" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
failed = sorted(r["id"] for r in doc["rules"] if r["outcome"] == "fail")
check = next(c for c in doc["checks"] if c["id"] == "explore.sequences")
broken = sorted({f["rule"] for f in check["findings"] if f["severity"] == "MUST"})
print(" ".join(failed) + "|" + " ".join(broken) + "|" + str(len(check["rules"])))
EOF
)
IFS='|' read -r failed_rules broken_rules covered <<<"$blame"
[ -n "$failed_rules" ] && [ "$failed_rules" = "$broken_rules" ] && [ "$covered" -gt 1 ] ||
  fail "the rule table marks failed: '$failed_rules'; the MUST findings name: '$broken_rules' ($covered rules covered)"
[ "$(grep -c '<failure type="rule"' "$work/c.xml")" -eq "$(wc -w <<<"$failed_rules")" ] ||
  fail "the JUnit fails $(grep -c '<failure type="rule"' "$work/c.xml") rule cases, expected one per broken rule ($failed_rules)"
python3 - "$work/c.json" >"$work/repro.sh" <<'EOF' || fail "no reproducer in the document"
import json, sys
doc = json.load(open(sys.argv[1]))
check = next(c for c in doc["checks"] if c["id"] == "explore.sequences")
print("set -e")
for e in check["evidence"]:
    print(e["curl"])
EOF
lines=$(grep -c '^curl\|^sleep\|^(' "$work/repro.sh")
[ "$lines" -ge 2 ] && [ "$lines" -le 6 ] || fail "the reproducer has $lines lines, expected 2 to 6"
expected=$(python3 -c '
import json, sys
c = next(c for c in json.load(open(sys.argv[1]))["checks"] if c["id"] == "explore.sequences")
print(c["evidence"][-1]["answer"].split(": ", 1)[1][:40])' "$work/c.json")
bash "$work/repro.sh" >"$work/repro.out" 2>&1 || fail "the reproducer did not run: $(tail -n 3 "$work/repro.out")"
grep -qF "$expected" "$work/repro.out" || fail "the reproducer's last answer is not the wrong one ($expected): $(tail -n 2 "$work/repro.out")"
unset CRH_API_KEY
stop "$pid"

step "d. Ctrl-C while exploring writes what was found and restores the target"
start --delay-us 2000
export CRH_API_KEY=$key
"$crh" contract --base-url "$url" --suite explore --explore 1000000 --seed "$seed" --json "$work/d.json" >"$work/d.out" 2>&1 &
runner=$!
sleep 2
kill -INT "$runner"
code=0
wait "$runner" || code=$?
[ "$code" -eq 1 ] || fail "interrupted exploration exited $code, expected 1 (incomplete)"
grep -q '"incomplete"' "$work/d.json" || fail "the document is not marked incomplete"
curl -sS -H "Apikey: $key" "$url/channels/1/alias-numbers" >"$work/d.aliases"
if grep -q 'crh-probe-' "$work/d.aliases"; then fail "a probe tag was left: $(cat "$work/d.aliases")"; fi
unset CRH_API_KEY
stop "$pid"

step "e. $sequences sequences against the healthy service: no divergence"
start
export CRH_API_KEY=$key
started=$SECONDS
run contract --base-url "$url" --suite explore --explore $((sequences * 40)) --seed "$seed" --json "$work/e.json"
unset CRH_API_KEY
said=$(counts "$work/e.json")
echo "  $said in $((SECONDS - started)) s (seed $seed)"
[ "$code" -eq 0 ] || { fail "the healthy service diverged (seed $seed): $(grep -A2 'explore.sequences' "$work/run.out" | head -n 3)"; }
n=$(echo "$said" | sed -n 's/.* in \([0-9]*\) sequences/\1/p')
[ -n "$n" ] && [ "$n" -ge "$sequences" ] || fail "explored $n sequences, expected at least $sequences"
stop "$pid"

[ "$failures" -eq 0 ] || { echo "explore CLI: $failures failure(s)"; exit 1; }
echo "explore CLI: all passed"
