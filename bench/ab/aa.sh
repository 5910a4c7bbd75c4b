#!/usr/bin/env bash
# Issue 38's A/A experiment for `crh load --against`: two identical `crh
# serve` targets, N nights of interleaved trial pairs, while one fixed
# background job loads the machine (`stress-ng --cpu 1`, unless
# BACKGROUND=none). Every night is a false alarm if it regresses (exit 1) and
# a failure to decide if it could not tell (exit 4). With SLOWER_US=N the
# candidate holds each answer N us longer than the baseline (both hold it
# BASE_DELAY_US): the same nights measure the power to flag that slowdown.
# Prints one line per night and the tallies, and the median ratio and
# minimum detectable change (MDC) per figure.
# Usage: bench/ab/aa.sh CRH [NIGHTS] [-- crh load flags...]
#   defaults: 10 nights; --scenario get --connections 4 --duration 2 --pairs 10
#   COMMAND=run: each night is `crh run --against` with the flags given (the
#   nightly job as a user types it: contract on the candidate, then the loads);
#   its figures are read from the night's run document.
#   PIN=1 (default) pins both targets to CPU 1 and the generator to CPU 0.
#   SEED_FROM=S: night n draws its trial order from seed S + n - 1 (default 1),
#   so a later batch of nights does not repeat an earlier one's orders.
#   FIGURES=FILE: keep every night's figure lines there (appended).
# Loopback only. A night takes about (pairs x 2 x duration) + 10 s.
set -euo pipefail
crh=$(realpath "${1:?usage: aa.sh CRH [NIGHTS] [-- load flags]}")
nights=${2:-10}
shift $(($# >= 2 ? 2 : 1))
[ "${1:-}" = "--" ] && shift
flags=("$@")
[ ${#flags[@]} -gt 0 ] || flags=(--scenario get --connections 4 --duration 2 --pairs 10)
work=$(mktemp -d)
pids=()
trap 'for p in ${pids[@]+"${pids[@]}"}; do kill -TERM "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"' EXIT
export CRH_API_KEY=bench-aa-$RANDOM$RANDOM
source "$(dirname "$0")/targets.sh"
# BASE_DELAY_US: both targets hold every answer this long (an async timer,
# whose own overhead is ~100 us), so that SLOWER_US more on the candidate is
# a known fraction of its latency (--delay-us 6 alone made p50 3.5x, not +10%).
base_delay=${BASE_DELAY_US:-0}
serve "$work/b.out" --delay-us "$base_delay"
serve "$work/c.out" --delay-us $((base_delay + ${SLOWER_US:-0}))
baseline=$(url_of "$work/b.out") candidate=$(url_of "$work/c.out")
if [ "${BACKGROUND:-stress}" = stress ]; then
  stress-ng --cpu 1 --timeout 0 >/dev/null 2>&1 &
  pids+=($!)
fi
echo "aa.sh: $nights nights, candidate $candidate (--delay-us $((base_delay + ${SLOWER_US:-0}))), baseline $baseline (--delay-us $base_delay)," \
  "background ${BACKGROUND:-stress}, pinned ${PIN:-1}; flags: ${flags[*]}"
regressed=0 unclear=0 passed=0
for n in $(seq "$nights"); do
  code=0
  if [ "${COMMAND:-load}" = run ]; then
    "${pin_gen[@]}" "$crh" run "${flags[@]}" --seed "$((${SEED_FROM:-1} + n - 1))" --base-url "$candidate" --against "$baseline" \
      --json "$work/night.json" >"$work/night.out" 2>&1 || code=$?
  else
    "${pin_gen[@]}" "$crh" load "${flags[@]}" --seed "$((${SEED_FROM:-1} + n - 1))" --base-url "$candidate" --against "$baseline" \
      >"$work/night.out" 2>&1 || code=$?
  fi
  case $code in 0) passed=$((passed + 1)) ;; 1) regressed=$((regressed + 1)) ;; 4) unclear=$((unclear + 1)) ;;
    *) echo "night $n: exit $code"; cat "$work/night.out"; exit 2 ;; esac
  if [ "${COMMAND:-load}" = run ]; then  # the table's columns, from the document
    python3 - "$work/night.json" "$n" >>"$work/figures" <<'PY'
import json, sys
for f in json.load(open(sys.argv[1]))["comparison"]["figures"]:
    if "ratio" in f:
        print(sys.argv[2], f["scenario"], f["operation"], f["figure"], f"{f['ratio']:.3f}",
              f"{f['ratio_lower']:.3f}-{f['ratio_upper']:.3f}", f"{f['min_detectable_pct']:.1f}%", f["verdict"])
    else:
        print(sys.argv[2], f["scenario"], f["operation"], f["figure"], "-", "-", "-", f["verdict"])
PY
  else
    grep -E '^[a-z]+ [a-z-]+ (p50|p99|throughput) ' "$work/night.out" | sed "s/^/$n /" >>"$work/figures"
  fi
  echo "night $n: exit $code: $(tail -n 1 "$work/night.out")"
done
[ -z "${FIGURES:-}" ] || cat "$work/figures" >>"$FIGURES"
echo "nights: $nights; regressed (exit 1): $regressed; could not tell (exit 4): $unclear; passed: $passed"
# Median MDC and ratio per figure over the nights (columns: night, scenario, op, figure, cand, unit?, ...).
python3 - "$work/figures" <<'PY'
import collections, re, statistics, sys
mdc, ratio, verdicts = collections.defaultdict(list), collections.defaultdict(list), collections.defaultdict(collections.Counter)
for line in open(sys.argv[1]):
    parts = line.split()
    key = " ".join(parts[1:4])
    rest = parts[4:]
    pct = [p for p in rest if p.endswith("%")]
    verdict = rest[-1] if rest[-2] not in ("too", "no", "not") else rest[-2] + " " + rest[-1]
    verdicts[key][verdict] += 1
    if pct: mdc[key].append(float(pct[-1][:-1]))
    interval = [i for i, p in enumerate(rest) if re.fullmatch(r"\d+\.\d+-\d+\.\d+", p)]
    if interval: ratio[key].append(float(rest[interval[0] - 1]))  # the ratio stands before its interval
for key in verdicts:
    m = statistics.median(mdc[key]) if mdc[key] else float("nan")
    r = statistics.median(ratio[key]) if ratio[key] else float("nan")
    print(f"{key:28s} median ratio {r:6.3f}  median MDC {m:6.1f}%  verdicts {dict(verdicts[key])}")
PY
