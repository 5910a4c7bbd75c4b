#!/usr/bin/env bash
# `crh run --nights` and `crh report --nights` as a nightly job uses them:
# tonight is recorded (one file a night, the failed nights too); with
# --repeat the loads run interleaved and their documents hold each
# repetition; against a synthetic record of faster nights tonight regresses
# (exit 1, named), against an unchanged record it does not (exit 0); a night
# accepted as a new level starts the window; the trend page draws the record;
# usage errors exit 2; a first night says it compared nothing; without
# --repeat, --nights runs the nightly settings and says so. Node edits the
# night files. Loopback only.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
command -v node >/dev/null 2>&1 || { echo "SKIP: node is missing (scripts/install-test-tools.sh installs it)"; exit 77; }

nights=$work/nights
count_nights() { find "$1" -name 'night-*.json' | wc -l; }

step "a. crh run --repeat 2 --nights: tonight recorded, repetitions in the load document"
run run --suite endpoints --scenario mixed --scenario get --load-duration 1 --repeat 2 --nights "$nights" \
  --json "$work/tonight.json" --html "$work/tonight.html"
# 4 only when a load was unreliable (INVALID on a busy machine): nothing to compare with yet.
[ "$code" -eq 0 ] || { [ "$code" -eq 4 ] && grep -q UNRELIABLE "$work/run.out"; } ||
  { fail "crh run --nights on an empty record exited $code, expected 0"; show; }
[ "$(count_nights "$nights")" -eq 1 ] || fail "expected 1 night file in $nights, found $(count_nights "$nights")"
grep -q "night recorded: $nights/night-" "$work/run.out" || fail "crh run did not say where tonight was recorded"
grep -q "mixed load, 1 s, repetition 2 of 2" "$work/run.out" || fail "the repetitions were not announced"
# Interleaved: mixed, get, mixed, get.
order=$(grep -o '^crh run: [a-z]* load, 1 s, repetition [0-9]' "$work/run.out" | awk '{print $3 $NF}' | tr '\n' ' ')
[ "$order" = "mixed1 get1 mixed2 get2 " ] || fail "the repetitions were not interleaved: $order"
node -e '
  const d = JSON.parse(require("fs").readFileSync(process.argv[1]));
  const mixed = d.loads.find(l => l.config.scenario === "mixed");
  if (!mixed || !mixed.repetitions || mixed.repetitions.length !== 2) throw new Error("mixed load lacks 2 repetitions");
  const sum = mixed.repetitions.reduce((n, r) => n + r.totals.requests, 0);
  if (sum !== mixed.totals.requests) throw new Error(`repetitions hold ${sum} requests, the merged load ${mixed.totals.requests}`);
  if (d.comparison.mode !== "nights") throw new Error("comparison.mode is " + d.comparison.mode);
  if (d.config.repeat !== 2) throw new Error("config.repeat is " + d.config.repeat);
  if (!d.verdict.reason.includes("no comparable night in the record") || !d.verdict.reason.includes("the record is empty"))
    throw new Error("the first night does not say it compared nothing: " + d.verdict.reason);
' "$work/tonight.json" || fail "tonight.json is not what --repeat 2 --nights should write"
night=$(find "$nights" -name 'night-*.json' | head -n1)
grep -q '"report":"../tonight.html"' "$night" || fail "the night does not link its report: $(grep -o '"report":[^,]*' "$night")"

# $1: folder, $2: factor for every latency figure, $3: how many nights, all
# before tonight, $4: their month in 2020 (01 when not given).
synthetic_record() {
  mkdir -p "$1"
  node -e '
    const fs = require("fs");
    const [src, dir, factor, n, month] = process.argv.slice(1);
    const night = JSON.parse(fs.readFileSync(src));
    for (let i = 1; i <= Number(n); i++) {
      const copy = JSON.parse(JSON.stringify(night));
      const day = String(i).padStart(2, "0");
      copy.started_at = `2020-${month}-${day}T03:17:00Z`;
      copy.night = `2020${month}${day}T031700Z-synth${month}${day}`;
      copy.verdict = { status: "passed", exit_code: 0, reason: "synthetic", comparable: true };
      // A little noise, so that the nights have a spread.
      const wobble = 1 + 0.01 * ((i % 3) - 1);
      for (const f of copy.figures) {
        if (f.unit === "ns") for (const k of ["value", "lower", "upper"]) if (k in f) f[k] *= Number(factor) * wobble;
        if (f.unit === "per_second") f.value *= wobble;
        delete f.repetitions;
      }
      fs.writeFileSync(`${dir}/night-${copy.night}.json`, JSON.stringify(copy));
    }
  ' "$night" "$1" "$2" "$3" "${4:-01}"
}

step "b. against 8 nights twice as fast: exit 1, latency regressed, tonight recorded and not comparable"
synthetic_record "$work/faster" 0.5 8
run report "$work/tonight.json" --nights "$work/faster" --json "$work/b.json"
[ "$code" -eq 1 ] || { fail "tonight against a faster record exited $code, expected 1"; show; }
grep -q "regressed beyond 20.0% and the nights' spread" "$work/run.out" "$work/b.json" ||
  fail "the verdict does not say a figure regressed beyond the nights' spread: $(grep -o '"reason":"[^"]*' "$work/b.json" | head -n1)"
[ "$(count_nights "$work/faster")" -eq 9 ] || fail "the failed night was not recorded"
grep -l '"exit_code":1' "$work/faster"/night-*.json | xargs grep -q '"comparable":false' ||
  fail "the failed night is marked comparable"

# Tonight's loads are 1 s: a p99 known to +-20% can be inconclusive (exit 4),
# never regressed.
no_regression() {  # $1: the document, $2: what it is
  [ "$code" -eq 0 ] || [ "$code" -eq 4 ] || { fail "$2 exited $code, expected 0 (or 4: could not tell)"; show; }
  grep -q '"regressions":0' "$1" || fail "$2 counts regressions"
  grep -q '"verdict":"no change"' "$1" || fail "$2 has no figure of no change"
  grep -q "missing from the document" "$work/run.out" && fail "$2: the terminal names fields missing: $(grep missing "$work/run.out")"
  return 0
}

step "c. against 8 unchanged nights: no figure regressed"
synthetic_record "$work/same" 1 8
run report "$work/tonight.json" --nights "$work/same" --json "$work/c.json"
no_regression "$work/c.json" "tonight against an unchanged record"

step "d. a slower level accepted: it starts the window, tonight is no longer regressed"
synthetic_record "$work/faster" 1 6 02
slow=20200201T031700Z-synth0201
run report --nights "$work/faster" --accept "$slow"
[ "$code" -eq 0 ] || { fail "--accept $slow exited $code"; show; }
run report "$work/tonight.json" --nights "$work/faster" --json "$work/d.json"
no_regression "$work/d.json" "tonight after accepting its own level"
grep -q "\"accepted_from\":\"$slow\"" "$work/d.json" || fail "the comparison does not name the accepted night"

step "e. the trend page: exit 0, self-contained, every night named"
run report --nights "$work/faster" --html "$work/trend.html"
[ "$code" -eq 0 ] || { fail "the trend page exited $code"; show; }
[ -s "$work/trend.html" ] || fail "trend.html was not written"
grep -Eqi '<script|<link|src=|@import' "$work/trend.html" && fail "trend.html references something outside itself"
grep -q "synth0108" "$work/trend.html" || fail "trend.html does not name night synth0108"
grep -q '<svg' "$work/trend.html" || fail "trend.html has no chart"

step "f. usage errors exit 2"
run run --nights "$nights" --baseline "$work/tonight.json" --load-duration 0
[ "$code" -eq 2 ] || fail "--nights with --baseline exited $code, expected 2"
run report --nights "$work/faster" --accept no-such-night
[ "$code" -eq 2 ] || fail "--accept of an unknown night exited $code, expected 2"
grep -q "no such night" "$work/run.err" || fail "--accept of an unknown night does not say so"
run report
[ "$code" -eq 2 ] || fail "crh report with nothing exited $code, expected 2"
run report --nights "$work/empty-record" --html "$work/none.html"
[ "$code" -eq 2 ] || fail "a trend page of an empty record exited $code, expected 2"

step "g. --nights without --repeat: the nightly settings, said"
run run --suite endpoints --scenario get --load-duration 0.2 --nights "$work/defaults"
grep -q "crh run: --nights: --repeat 9 --load-duration 0.2 (the nightly settings" "$work/run.out" ||
  { fail "crh run --nights without --repeat did not say it repeats 9 times"; show; }
grep -q "get load, 0.2 s, repetition 9 of 9" "$work/run.out" || fail "the 9 repetitions did not run"

[ "$failures" -eq 0 ] && echo "nights: all steps passed" || { echo "nights: $failures failure(s)"; exit 1; }
