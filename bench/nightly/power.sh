#!/usr/bin/env bash
# The nightly gate's power (issue 23): the target made slower by a known
# fraction of its own latency, on top of a record of unchanged nights
# (recorded by nights.sh, never modified here: every try runs on a copy).
#
#  1. Calibration: the p50 of each race and mixed operation, the median over
#     the record's comparable nights. The delay is FRACTION x the p50 of one
#     figure (--figure; by default the largest of those p50s, so that every
#     p50 figure worsens by at least FRACTION). A fixed delay adds the same
#     µs to every answer: a figure with a smaller p50 moves by more, a p99 or
#     a larger p50 by less; the script prints which figures it moves by at
#     least FRACTION and which less, then what the slowed nights measured.
#     A timer costs more than its nominal µs (measured on this VM: +20 µs
#     nominal added ~47 µs to one connection's p50), so the delay is then
#     calibrated by measurement: up to --calibrate slowed nights, each on a
#     copy, searching for the delay that moves that p50 by FRACTION. The
#     first timer is a step of its own (its wake-up and CPU): record the
#     nights with nights.sh --delay-us B and pass --base-delay-us B.
#  2. Step: TRIES tries, each one slowed night on its own copy of the record;
#     counts how many the gate flags on that first night (exit 1 with a
#     regressed figure or a change point beyond the limit).
#  3. Drift: on another copy, DRIFT_NIGHTS nights, night i slowed by
#     i x DRIFT x the same p50; prints the first night flagged, what flagged
#     it, and the night the change point names as where it began.
#
# usage: bench/nightly/power.sh --dir DIR [options] [-- crh run flags...]
#   --dir DIR           the record of unchanged nights (read only)
#   --work DIR          where the copies and their runs go (default DIR.power; emptied first)
#   --figure "S O"      the p50 calibrated on: scenario and operation, e.g. "mixed get" (default: the largest)
#   --fraction F        the step's slowdown (default 0.30: 1.5 x the default 20% limit)
#   --calibrate K       at most K slowed nights to find the delay that moves the figure by FRACTION
#                       (default 4; 0: the nominal FRACTION x p50)
#   --delay-us N        the step's delay, no calibration (e.g. the one an earlier calibration found)
#   --base-delay-us B   the --delay-us the record's nights were recorded with (nights.sh --delay-us B;
#                       default 0): slowed nights get B + the delay, drift night i B + i x step. A
#                       timer's fixed cost (its wake-up) is then in every night, and a slowdown is
#                       only the added µs: recommended, or the first slowed night jumps by that cost
#   --tries T           slowed single nights (default 5)
#   --drift F           the drift's slowdown a night (default 0.05)
#   --drift-nights M    drift nights (default 8)
#   --skip-step | --skip-drift
#   --crh, --pinned, --unpinned, --port, --server-threads: as nights.sh; use what DIR was recorded with
# After `--`: the crh run flags DIR's nights were recorded with (same fingerprint, or nothing is compared).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir="" work_dir="" figure="" fraction=0.30 tries=5 drift=0.05 drift_nights=8 do_step=1 do_drift=1
calibrate=4 tolerance=0.03 fixed_delay="" base=0
pass=()  # to nights.sh
run_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) dir=$2; shift 2 ;;
    --work) work_dir=$2; shift 2 ;;
    --figure) figure=$2; shift 2 ;;
    --fraction) fraction=$2; shift 2 ;;
    --tries) tries=$2; shift 2 ;;
    --drift) drift=$2; shift 2 ;;
    --drift-nights) drift_nights=$2; shift 2 ;;
    --calibrate) calibrate=$2; shift 2 ;;
    --delay-us) fixed_delay=$2; calibrate=0; shift 2 ;;
    --base-delay-us) base=$2; shift 2 ;;
    --skip-step) do_step=0; shift ;;
    --skip-drift) do_drift=0; shift ;;
    --crh|--port|--server-threads) pass+=("$1" "$2"); shift 2 ;;
    --pinned|--unpinned) pass+=("$1"); shift ;;
    --) shift; run_args=("$@"); break ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "power.sh: unknown option $1 (--help lists them)" >&2; exit 2 ;;
  esac
done
[ -n "$dir" ] && [ -d "$dir" ] || { echo "power.sh: --dir DIR (a record of unchanged nights) is required" >&2; exit 2; }
command -v jq >/dev/null || { echo "power.sh: jq is missing" >&2; exit 2; }
dir=$(cd "$dir" && pwd)
work_dir=${work_dir:-$dir.power}
rm -rf "$work_dir"
mkdir -p "$work_dir"

# --- 1. calibration -----------------------------------------------------------
# Median over the comparable nights of each race/mixed figure (ns; per second for throughput).
jq -r 'select(.verdict.comparable == true) | .figures[]
       | select((.scenario == "race" or .scenario == "mixed") and (.figure == "p50" or .figure == "p99" or .figure == "throughput"))
       | "\(.scenario)\t\(.operation)\t\(.figure)\t\(.value)"' "$dir"/night-*.json |
  sort -t $'\t' -k1,1 -k2,2 -k3,3 -k4,4g |
  awk -F'\t' '{ k = $1 "\t" $2 "\t" $3; v[k, ++n[k]] = $4 }
              END { for (k in n) { m = n[k]; med = m % 2 ? v[k, (m + 1) / 2] : (v[k, m / 2] + v[k, m / 2 + 1]) / 2
                                   printf "%s\t%.6g\t%d\n", k, med, m } }' | sort >"$work_dir/levels.tsv"
[ -s "$work_dir/levels.tsv" ] || { echo "power.sh: no comparable night with race or mixed figures in $dir" >&2; exit 2; }
if [ -z "$figure" ]; then
  figure=$(awk -F'\t' '$3 == "p50" && $2 != "all" { if ($4 > best) { best = $4; f = $1 " " $2 } } END { print f }' \
    "$work_dir/levels.tsv")
fi
p50_ns=$(awk -F'\t' -v f="$figure" '$3 == "p50" && $1 " " $2 == f { print $4 }' "$work_dir/levels.tsv")
[ -n "$p50_ns" ] || { echo "power.sh: no p50 of \"$figure\" in $dir (see $work_dir/levels.tsv)" >&2; exit 2; }
delay_us=$(awk -v p="$p50_ns" -v f="$fraction" 'BEGIN { printf "%d", p * f / 1000 + 0.5 }')
step_us=$(awk -v p="$p50_ns" -v f="$drift" 'BEGIN { printf "%d", p * f / 1000 + 0.5 }')
[ -n "$fixed_delay" ] && delay_us=$fixed_delay
nights_in=$(ls "$dir"/night-*.json | wc -l)
[ "$base" = 0 ] || echo "power.sh: the record's nights had --delay-us $base; every delay below is added to it"
echo "power.sh: record $dir: $nights_in nights, $(awk -F'\t' 'NR == 1 { print $5 }' "$work_dir/levels.tsv") comparable"
echo "calibrated on the p50 of $figure: $(awk -v p="$p50_ns" 'BEGIN { printf "%.1f", p / 1000 }') µs;" \
  "step delay $fraction x = $delay_us µs, drift $drift x = $step_us µs a night"
echo
echo "what a delay of $delay_us µs on every answer does to each latency figure (median of the record):"
awk -F'\t' -v d="$delay_us" -v f="$fraction" '$3 != "throughput" {
    pct = d * 1000 / $4; printf "  %-6s %-12s %-4s %10.1f µs  +%5.1f%%  %s\n", $1, $2, $3, $4 / 1000, pct * 100,
      (pct >= f - 1e-9) ? sprintf("moved by >= %g%%", f * 100) : "less" }' "$work_dir/levels.tsv"
echo "  (throughput of a closed loop falls by about delay / (delay + the time one connection waits per operation);"
echo "   the tries below measure it)"

# One slowed night on a fresh copy of the record: nights.sh's manifest line.
slowed_night() {  # name delay_us
  local copy="$work_dir/$1"
  cp -r "$dir" "$copy"
  "$here/nights.sh" "${pass[@]}" --dir "$copy" --out "$copy.runs" --nights 1 --delay-us "$((base + $2))" \
    -- "${run_args[@]}" >"$copy.log" 2>&1 || { echo "power.sh: nights.sh failed, see $copy.log" >&2; tail -n 5 "$copy.log" >&2; exit 2; }
  tail -n 1 "$copy.runs/manifest.tsv"
}
# The calibrated figure's change against the record's level, in percent, and its verdict.
target_change() {  # document
  jq -r --arg f "$figure" '[.comparison.figures[]? | select("\(.scenario) \(.operation)" == $f and .figure == "p50")][0]
         | "\(.change_pct // "nan")\t\(.verdict // "?")"' "$1"
}

# --- calibration by measurement ----------------------------------------------
# A timer costs more than its nominal µs (the wake-up, an event-loop turn; on
# a saturated target, CPU): the delay that moves the figure by FRACTION is
# searched for, a night at a time (secant on the measured change), and the
# closest kept. --calibrate 0 keeps the nominal delay.
if [ "$calibrate" -gt 0 ] && [ "$do_step" = 1 ]; then
  echo
  echo "calibration: slowed nights until the p50 of $figure moves by $fraction (±$tolerance), at most $calibrate"
  d=$delay_us best_d="" best_err="" d1="" s1=""
  for k in $(seq "$calibrate"); do
    IFS=$'\t' read -r _ _ code status _ _ _ _ doc < <(slowed_night "calibrate-$k" "$d")
    IFS=$'\t' read -r pct verdict < <(target_change "$doc")
    echo "  delay +$d µs: $figure p50 ${pct:0:6}% ($verdict; night exit $code)"
    [ "$pct" = nan ] && break
    s=$(awk -v p="$pct" 'BEGIN { print p / 100 }')
    err=$(awk -v s="$s" -v f="$fraction" 'BEGIN { e = s - f; print e < 0 ? -e : e }')
    if [ -z "$best_err" ] || awk -v a="$err" -v b="$best_err" 'BEGIN { exit !(a < b) }'; then best_d=$d best_err=$err; fi
    awk -v e="$err" -v t="$tolerance" 'BEGIN { exit !(e <= t) }' && break
    if [ -z "$d1" ] || awk -v a="$s" -v b="$s1" 'BEGIN { exit !(a == b) }'; then
      next=$(awk -v d="$d" -v s="$s" -v f="$fraction" 'BEGIN { n = s > 0.001 ? d * f / s : d * 2; printf "%d", n + 0.5 }')
    else
      next=$(awk -v d="$d" -v s="$s" -v d1="$d1" -v s1="$s1" -v f="$fraction" \
        'BEGIN { n = d + (f - s) * (d - d1) / (s - s1); printf "%d", n + 0.5 }')
    fi
    d1=$d s1=$s
    next=$(awk -v n="$next" -v m="$delay_us" 'BEGIN { if (n < 1) n = 1; if (n > 10 * m + 100) n = 10 * m + 100; print n }')
    [ "$next" = "$d" ] && break
    d=$next
  done
  if [ -n "$best_d" ]; then
    echo "calibration: delay $best_d µs (nominal $delay_us µs), $figure p50 within $(awk -v e="$best_err" 'BEGIN { printf "%.1f", e * 100 }') points of $(awk -v f="$fraction" 'BEGIN { print f * 100 }')%"
    step_us=$(awk -v f="$drift" -v F="$fraction" -v b="$best_d" 'BEGIN { n = b * f / F; printf "%d", n < 1 ? 1 : n + 0.5 }')
    echo "calibration: the drift step scaled alike ($drift / $fraction of it): $step_us µs a night"
    delay_us=$best_d
  fi
fi

# Per figure over the slowed nights' run documents: the measured change, the verdicts, the minimum detectable change.
figure_table() {  # documents...
  jq -r '.comparison.figures[]? | select(.scenario == "race" or .scenario == "mixed")
         | "\(.scenario) \(.operation) \(.figure)\t\(.change_pct // "nan")\t\(.verdict)\t\(.min_detectable_pct // "nan")"' "$@" |
    awk -F'\t' '{ k = $1; n[k]++; c[k, n[k]] = $2; v[k, $3]++; m[k] = m[k] " " $4; vs[$3] = 1 }
      END { for (k in n) { s = ""; for (x in vs) if (v[k, x]) s = s sprintf(" %s %d", x, v[k, x])
                           split(m[k], mm, " "); cs = ""; for (i = 1; i <= n[k]; i++) cs = cs sprintf(" %+.0f", c[k, i])
                           printf "  %-28s change%%:%s  |%s  | min detectable %.0f%%\n", k, cs, s, mm[1] } }' | sort
}

# --- 2. a step of FRACTION, TRIES times, each on a fresh copy ------------------
if [ "$do_step" = 1 ]; then
  echo
  echo "step: $tries tries of one night slowed by $delay_us µs (--delay-us $((base + delay_us))), each on a copy of the record"
  flagged=0 target_flagged=0
  docs=()
  for t in $(seq "$tries"); do
    IFS=$'\t' read -r _ _ code status night regressed inconclusive cps doc < <(slowed_night "step-$t" "$delay_us")
    docs+=("$doc")
    hit=no
    if [ "$code" = 1 ] && { [ "$regressed" != 0 ] || [ "$cps" != 0 ]; }; then hit=yes; flagged=$((flagged + 1)); fi
    tv=$(jq -r --arg f "$figure" '[.comparison.figures[]? | select("\(.scenario) \(.operation)" == $f and .figure == "p50")][0]
           | "\(.verdict) \(.change_pct // "?" | tostring | .[0:5])%"' "$doc")
    case "$tv" in regressed*) target_flagged=$((target_flagged + 1)) ;; esac
    echo "  try $t: exit $code ($status), flagged: $hit; regressed figures $regressed, inconclusive $inconclusive," \
      "change points beyond the limit $cps; $figure p50: $tv"
  done
  echo "step: flagged on the first night in $flagged of $tries tries (the calibrated figure, $figure p50," \
    "regressed in $target_flagged of $tries)"
  echo "per figure over the tries (measured change, verdicts, minimum detectable change of the first try):"
  figure_table "${docs[@]}"
fi

# --- 3. a drift of DRIFT a night ----------------------------------------------
if [ "$do_drift" = 1 ]; then
  echo
  echo "drift: $drift_nights nights, night i slowed by i x $step_us µs (i x $drift of the p50 of $figure, or of the calibrated delay / $fraction), on a copy"
  copy="$work_dir/drift"
  cp -r "$dir" "$copy"
  "$here/nights.sh" "${pass[@]}" --dir "$copy" --out "$copy.runs" --nights "$drift_nights" --delay-us "$base" \
    --drift-step-us "$step_us" \
    -- "${run_args[@]}" >"$copy.log" 2>&1 || { echo "power.sh: nights.sh failed, see $copy.log" >&2; tail -n 5 "$copy.log" >&2; exit 2; }
  declare -A index_of=()
  first_flag="" named=""
  k=0
  while IFS=$'\t' read -r i d code status night regressed inconclusive cps doc; do
    [ "$i" = index ] && continue
    k=$((k + 1))
    index_of[$night]=$k
    names=$(jq -r '[.comparison.change_points[]? | select(.beyond_limit == true) | .night] | unique | join(",")' "$doc")
    IFS=$'\t' read -r pct verdict < <(target_change "$doc")
    echo "  drift night $k: delay $d µs ($figure p50 ${pct:0:6}%, $verdict), exit $code ($status), regressed figures $regressed, inconclusive $inconclusive," \
      "change points beyond the limit $cps${names:+ (from night ${names})}"
    if [ -z "$first_flag" ] && [ "$code" = 1 ] && { [ "$regressed" != 0 ] || [ "$cps" != 0 ]; }; then
      first_flag=$k
      first_by=$([ "$cps" != 0 ] && echo "a change point" || echo "the gate (no change point)")
      named=$names
    fi
  done <"$copy.runs/manifest.tsv"
  if [ -n "$first_flag" ]; then
    where=""
    for n in ${named//,/ }; do
      where+="${where:+, }$n ($([ -n "${index_of[$n]:-}" ] && echo "drift night ${index_of[$n]}" || echo "an unchanged night"))"
    done
    echo "drift: flagged first on drift night $first_flag (its delay $((first_flag * step_us)) µs) by $first_by;" \
      "it took $first_flag night(s)${where:+; the change point names night $where as where it began}"
  else
    echo "drift: not flagged in $drift_nights nights"
  fi
  echo "per figure over the drift nights (measured change, verdicts):"
  figure_table $(awk -F'\t' 'NR > 1 { print $9 }' "$copy.runs/manifest.tsv")
fi
echo
echo "copies and runs: $work_dir (the record $dir is unchanged)"
