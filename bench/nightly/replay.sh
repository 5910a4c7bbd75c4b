#!/usr/bin/env bash
# The gate replayed over a recorded record (issue 23's false alarms): every
# night of a nights.sh run judged again by `crh report RUN.json --nights COPY`
# against a copy of the record that holds only the nights before it (the
# window it had, or would have with this crh). Counts regressed and
# inconclusive figures and nights, and prints per figure the minimum
# detectable change the gate stated (median over the nights judged against
# a full window of >= 5 nights).
#
# usage: bench/nightly/replay.sh --dir DIR [--out RUNS] [--crh PATH] [-- crh report flags, e.g. --max-regression 20]
#   --dir DIR    the record (read only)
#   --out RUNS   nights.sh's run documents and manifest.tsv (default DIR.runs)
# Prints one line a night, then the totals. Exit 0, or 2 on a usage problem.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
crh=build/crh dir="" out=""
report_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --crh) crh=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --) shift; report_args=("$@"); break ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "replay.sh: unknown option $1 (--help lists them)" >&2; exit 2 ;;
  esac
done
[ -n "$dir" ] && [ -d "$dir" ] || { echo "replay.sh: --dir DIR (a record of nights) is required" >&2; exit 2; }
out=${out:-$dir.runs}
[ -f "$out/manifest.tsv" ] || { echo "replay.sh: no $out/manifest.tsv (written by nights.sh)" >&2; exit 2; }
work=$(mktemp -d)
source "$here/../lib.sh"
require_tools jq "$crh"

nights=0 judged=0 figures=0 fig_regressed=0 fig_inconclusive=0 fig_noisy=0 cps_beyond=0 cps_pending=0
declare -A count=()
: >"$work/mdc.tsv"
while IFS=$'\t' read -r i d code status night regressed inconclusive cps doc; do
  [ "$i" = index ] && continue
  if [ "$night" = "?" ] || [ ! -s "$doc" ]; then
    echo "night $i: no run document or night file, left out"
    continue
  fi
  nights=$((nights + 1))
  copy="$work/copy"
  rm -rf "$copy"
  mkdir -p "$copy"
  # The nights before it (names start with the time they began), and the accepted levels.
  for f in "$dir"/night-*.json; do
    [[ "$(basename "$f")" < "night-$night.json" ]] && cp "$f" "$copy/"
  done
  [ -f "$dir/accepted.json" ] && cp "$dir/accepted.json" "$copy/"
  before=$(ls "$copy" | grep -c '^night-' || true)
  rc=0
  "$crh" report "$doc" --nights "$copy" --json "$work/replayed.json" --quiet "${report_args[@]}" \
    >"$work/replayed.txt" 2>&1 || rc=$?
  if [ ! -s "$work/replayed.json" ]; then
    echo "night $i: crh report failed (exit $rc): $(tail -n 1 "$work/replayed.txt")"
    count["other(exit $rc)"]=$((${count["other(exit $rc)"]:-0} + 1))
    continue
  fi
  read -r n_fig n_reg n_inc n_noisy n_cp n_pending window < <(jq -r '[(.comparison.figures // [] | length),
      ([.comparison.figures[]? | select(.verdict == "regressed")] | length),
      ([.comparison.figures[]? | select(.verdict == "inconclusive")] | length),
      ([.comparison.figures[]? | select(.verdict == "too noisy")] | length),
      ([.comparison.change_points[]? | select(.beyond_limit == true)] | length),
      ([.comparison.change_points[]? | select(.pending == true)] | length),
      (.comparison.nights.window // 0 | if type == "array" then length else . end)] | @tsv' "$work/replayed.json")
  [ "$window" -ge 5 ] 2>/dev/null &&
    jq -r '.comparison.figures[]? | select(.min_detectable_pct != null)
           | "\(.scenario) \(.operation) \(.figure)\t\(.min_detectable_pct)"' "$work/replayed.json" >>"$work/mdc.tsv"
  [ "$before" -gt 0 ] && judged=$((judged + 1))
  figures=$((figures + n_fig)) fig_regressed=$((fig_regressed + n_reg)) fig_inconclusive=$((fig_inconclusive + n_inc))
  fig_noisy=$((fig_noisy + n_noisy)) cps_beyond=$((cps_beyond + n_cp)) cps_pending=$((cps_pending + n_pending))
  case "$rc" in 0) c=passed ;; 1) c=regressed ;; 4) c=could-not-tell ;; *) c="other(exit $rc)" ;; esac
  count[$c]=$((${count[$c]:-0} + 1))
  printf 'night %3s: %2s nights before it (window %s): exit %s (recorded: exit %s)  figures %s: regressed %s, inconclusive %s, too noisy %s; change points beyond the limit %s, pending %s\n' \
    "$i" "$before" "$window" "$rc" "$code" "$n_fig" "$n_reg" "$n_inc" "$n_noisy" "$n_cp" "$n_pending"
  if [ "$rc" = 1 ] || [ "$rc" = 4 ]; then
    jq -r '.comparison.figures[]? | select(.verdict == "regressed" or .verdict == "inconclusive")
           | "    \(.verdict): \(.scenario) \(.operation) \(.figure) \(.change_pct // "?" | tostring | .[0:6])%"' \
      "$work/replayed.json" | head -n 6
    jq -r '.comparison.unreliable[]? | "    unreliable: \(.)"' "$work/replayed.json" | head -n 3
  fi
done <"$out/manifest.tsv"

echo
echo "replay.sh: $nights nights replayed ($judged with at least one night before them), $figures figures judged"
echo "figures: regressed $fig_regressed, inconclusive $fig_inconclusive, too noisy $fig_noisy;" \
  "change points beyond the limit $cps_beyond, pending (not lasting 3 nights yet) $cps_pending"
echo "nights: regressed (exit 1) ${count[regressed]:-0}, could-not-tell (exit 4) ${count[could-not-tell]:-0}," \
  "passed (exit 0) ${count[passed]:-0}$(for c in "${!count[@]}"; do
    case "$c" in passed|regressed|could-not-tell) ;; *) printf ', %s %s' "$c" "${count[$c]}" ;; esac
  done)"
if [ -s "$work/mdc.tsv" ]; then
  echo "minimum detectable change (median over the nights judged against >= 5 nights):"
  sort -t $'\t' -k1,1 -k2,2g "$work/mdc.tsv" |
    awk -F'\t' '{ v[$1, ++n[$1]] = $2 }
                END { for (k in n) { m = n[k]; med = m % 2 ? v[k, (m + 1) / 2] : (v[k, m / 2] + v[k, m / 2 + 1]) / 2
                                     printf "  %-30s %6.1f%%  (%d nights)\n", k, med, m } }' | sort
fi
echo "crh: $crh report RUN.json --nights COPY --json OUT --quiet ${report_args[*]:-}"
