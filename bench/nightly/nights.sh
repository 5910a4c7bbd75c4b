#!/usr/bin/env bash
# N nights of `crh run --nights DIR` against one `crh serve` on loopback
# (issue 23's false-alarm and power experiments): each night is one `crh run`
# with the nightly settings given after `--`, judged against the record in DIR
# and added to it. Prints per night its exit code, verdict and what the gate
# said, then the counts: regressed (exit 1), could-not-tell (exit 4), passed
# (exit 0), other; the CPU model; the command lines used.
#
# usage: bench/nightly/nights.sh [options] [-- crh run flags...]
#   --crh PATH          crh to run (default build/crh)
#   --nights N          nights to run (default 30)
#   --dir DIR           the record of nights; an existing one is added to (default nights-<time>)
#   --out DIR           each night's run document and terminal output (default DIR.runs)
#   --pinned            target on CPU 0 (taskset -c 0), generator on CPU 1 (the default)
#   --unpinned          no taskset: the scheduler places both
#   --delay-us N        the target answers every request N µs later (crh serve --delay-us)
#   --drift-step-us S   night i of this call (1-based) gets --delay-us i x S (the target restarts each night)
#   --port P            the target's port (default 18431): the target URL is part of the nights'
#                       fingerprint, so every night of one record must use the same port
#   --server-threads T  crh serve --threads (default 0: one per core, as crh serve has it)
# Anything after `--` goes to every `crh run`, e.g. -- --repeat 3 --load-duration 10.
#
# Files: OUT/night-NNN.json (the run document), OUT/night-NNN.txt (its terminal
# output), OUT/manifest.tsv (one line a night: index, delay, exit code, status,
# night id, regressed and inconclusive figures, change points beyond the limit,
# the run document). Exit 0 when every night ran (whatever its verdict), 2 on
# a usage or set-up problem.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
crh=build/crh
nights=30
dir=""
out=""
pinned=1
delay_us=0
drift_step_us=0
port=18431
SERVER_THREADS=0
run_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --crh) crh=$2; shift 2 ;;
    --nights) nights=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --pinned) pinned=1; shift ;;
    --unpinned) pinned=0; shift ;;
    --delay-us) delay_us=$2; shift 2 ;;
    --drift-step-us) drift_step_us=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    --server-threads) SERVER_THREADS=$2; shift 2 ;;
    --) shift; run_args=("$@"); break ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "nights.sh: unknown option $1 (--help lists them)" >&2; exit 2 ;;
  esac
done
dir=${dir:-nights-$(date -u +%Y%m%dT%H%M%SZ)}
out=${out:-$dir.runs}
mkdir -p "$dir" "$out"
dir=$(cd "$dir" && pwd)
out=$(cd "$out" && pwd)
case "$crh" in /*) ;; *) crh=$(pwd)/$crh ;; esac
work=$(mktemp -d)
source "$here/../lib.sh"
require_tools curl jq "$crh"
if [ "$pinned" = 1 ]; then
  require_tools taskset
  PIN_TARGET="taskset -c 0" PIN_GEN="taskset -c 1"
else
  PIN_TARGET="" PIN_GEN=""
fi
[[ "$("$crh" run --help)" == *--nights* ]] || { echo "nights.sh: $crh run has no --nights (build it from issue 23 on)" >&2; exit 2; }
[[ "$("$crh" serve --help)" == *--delay-us* ]] || { echo "nights.sh: $crh serve has no --delay-us" >&2; exit 2; }

export CRH_API_KEY=bench-nights-$RANDOM$RANDOM
base="http://127.0.0.1:$port"
target_pid="" target_delay=-1 serve_cmd=""
stop_target() {
  [ -n "$target_pid" ] || return 0
  kill -TERM "$target_pid" 2>/dev/null || true
  wait "$target_pid" 2>/dev/null || true
  local keep=() p
  for p in "${pids[@]}"; do [ "$p" = "$target_pid" ] || keep+=("$p"); done
  pids=("${keep[@]}")
  target_pid=""
}
start_target() {  # delay_us
  [ "$1" = "$target_delay" ] && [ -n "$target_pid" ] && return 0
  stop_target
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "nights.sh: port $port is in use (another target?); choose one with --port" >&2; exit 2
  fi
  serve_cmd="${PIN_TARGET:+$PIN_TARGET }$crh serve --listen 127.0.0.1:$port --threads $SERVER_THREADS --delay-us $1"
  $serve_cmd >>"$out/serve.log" 2>&1 &
  target_pid=$!
  pids+=("$target_pid")
  target_delay=$1
  wait_for_url "$base/" "crh serve"
}

# The next free night number in OUT, so a reused record's runs are kept.
first=1
while [ -e "$out/night-$(printf %03d "$first").json" ] || [ -e "$out/night-$(printf %03d "$first").txt" ]; do
  first=$((first + 1))
done
[ -f "$out/manifest.tsv" ] ||
  printf 'index\tdelay_us\texit\tstatus\tnight\tregressed\tinconclusive\tchange_points\tdocument\n' >"$out/manifest.tsv"

cpu=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //' || echo unknown)
echo "nights.sh: $nights night(s) into $dir ($(ls "$dir"/night-*.json 2>/dev/null | wc -l) recorded before), runs in $out"
echo "nights.sh: $([ "$pinned" = 1 ] && echo "pinned: target CPU 0, generator CPU 1" || echo "unpinned")," \
  "delay $delay_us µs$([ "$drift_step_us" = 0 ] || echo ", plus $drift_step_us µs a night (drift)")"
declare -A count=()
run_cmd=""
for k in $(seq "$nights"); do
  i=$((first + k - 1))
  name=night-$(printf %03d "$i")
  d=$delay_us
  [ "$drift_step_us" != 0 ] && d=$((delay_us + k * drift_step_us))
  start_target "$d"
  before=$(ls "$dir" | grep -E '^night-.*\.json$' | sort || true)
  run_cmd="${PIN_GEN:+$PIN_GEN }$crh run --base-url $base --nights $dir --json $out/$name.json ${run_args[*]:-}"
  code=0
  ${PIN_GEN:-} "$crh" run --base-url "$base" --nights "$dir" --json "$out/$name.json" "${run_args[@]}" \
    >"$out/$name.txt" 2>&1 </dev/null || code=$?
  night=$(comm -13 <(echo "$before") <(ls "$dir" | grep -E '^night-.*\.json$' | sort) | head -n 1 |
          sed 's/^night-//; s/\.json$//')
  status=? regressed=? inconclusive=? cps=?
  if [ -s "$out/$name.json" ]; then
    status=$(jq -r '.verdict.status // "?"' "$out/$name.json")
    regressed=$(jq '[.comparison.figures[]? | select(.verdict == "regressed")] | length' "$out/$name.json")
    inconclusive=$(jq '[.comparison.figures[]? | select(.verdict == "inconclusive")] | length' "$out/$name.json")
    cps=$(jq '[.comparison.change_points[]? | select(.beyond_limit == true)] | length' "$out/$name.json")
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$i" "$d" "$code" "$status" "${night:-?}" "$regressed" \
    "$inconclusive" "$cps" "$out/$name.json" >>"$out/manifest.tsv"
  case "$code" in 0) c=passed ;; 1) c=regressed ;; 4) c=could-not-tell ;; *) c="other(exit $code)" ;; esac
  count[$c]=$((${count[$c]:-0} + 1))
  printf '%s delay %6s µs  exit %s  %-12s regressed figures %s, inconclusive %s, change points beyond the limit %s\n' \
    "$name" "$d" "$code" "$status" "$regressed" "$inconclusive" "$cps"
  if [ "$code" != 0 ]; then
    jq -r '.comparison.figures[]? | select(.verdict == "regressed" or .verdict == "inconclusive")
           | "    \(.verdict): \(.scenario) \(.operation) \(.figure) \(.change_pct // "?" | tostring | .[0:6])% (\(.reason // ""))"' \
      "$out/$name.json" 2>/dev/null | head -n 8 || true
    jq -r '.comparison.change_points[]? | select(.beyond_limit == true)
           | "    change point: \(.scenario) \(.operation) \(.figure) from night \(.night) \(.change_pct | tostring | .[0:6])%"' \
      "$out/$name.json" 2>/dev/null | head -n 4 || true
    jq -r '.comparison.unreliable[]? | "    unreliable: \(.)"' "$out/$name.json" 2>/dev/null | head -n 4 || true
    [ "$code" = 1 ] || [ "$code" = 4 ] || tail -n 5 "$out/$name.txt" | sed 's/^/    /'
  fi
done
stop_target

echo
echo "nights.sh: $nights night(s): regressed (exit 1) ${count[regressed]:-0}, could-not-tell (exit 4)" \
  "${count[could-not-tell]:-0}, passed (exit 0) ${count[passed]:-0}$(for c in "${!count[@]}"; do
    case "$c" in passed|regressed|could-not-tell) ;; *) printf ', %s %s' "$c" "${count[$c]}" ;; esac
  done)"
echo "cpu: $cpu ($(nproc) cores online)"
echo "target:    $serve_cmd$([ "$drift_step_us" = 0 ] || echo " (night i of this call: --delay-us $delay_us + i x $drift_step_us)")"
echo "generator: $run_cmd (NNN: the night)"
echo "record: $dir ($(ls "$dir"/night-*.json 2>/dev/null | wc -l) nights); runs: $out/manifest.tsv"
