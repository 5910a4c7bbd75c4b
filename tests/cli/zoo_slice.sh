#!/usr/bin/env bash
# The CI slice of the silent-gap zoo (issue 35; bench/explore/zoo.sh is the
# sweep): `crh contract` with exploration on, quick, against
# crh_dialect_server in 30 combinations of its switches drawn from a fixed
# seed base, with fixed exploration seeds, each run with the profile that
# describes it (full, lean or none). Every combination is a correct service,
# so a run that exits 1 or has a MUST finding is a false alarm: a prediction
# that assumes the reference's choice where the spec is silent. The failing
# run's combination, profile and rerun command are printed. Also fails when
# some switch value was not drawn at least twice (the slice would not cover it).
# Usage: zoo_slice.sh CRH DIALECT_SERVER [RUNS]. Loopback only.
set -euo pipefail
crh=$1
dialect=$2
runs=${3:-30}
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

code=0
CRH=$crh DIALECT=$dialect "$here/../../bench/explore/zoo.sh" --runs "$runs" --jobs 2 --seed-base 35035 \
  --fixed-seeds --slow-share 0 --timeout 60 --out "$out" || code=$?
if [ -s "$out/failures.txt" ]; then
  echo "--- failing runs (combination, findings, profile, rerun)"
  cat "$out/failures.txt"
fi
failures=0
case $code in
  0) ;;
  1) echo "FAIL: a correct combination of the zoo failed crh contract (a false alarm; above)"; failures=1 ;;
  *) echo "FAIL: zoo.sh exited $code (some run could not be judged, or the sweep itself failed)"; failures=1 ;;
esac

# Every value of every switch (but the disputed ones) came up at least twice.
python3 - "$out/runs.json" "$dialect" <<'PY' || failures=1
import json, subprocess, sys
runs = json.load(open(sys.argv[1]))
disputed = {("tagnames", "unique")}
short = []
for line in subprocess.run([sys.argv[2], "--list-choices"], capture_output=True, text=True, check=True).stdout.splitlines():
    name, *values = line.split("\t")[0].split()
    for v in values:
        n = sum(r["combo"][name] == v for r in runs)
        if (name, v) not in disputed and n < 2:
            short.append(f"{name}={v} ({n} runs)")
if short:
    print("FAIL: switch values drawn fewer than twice: " + ", ".join(short))
    sys.exit(1)
print(f"every switch value drawn at least twice in {len(runs)} runs")
PY
[ "$failures" -eq 0 ] && echo "PASS" || exit 1
