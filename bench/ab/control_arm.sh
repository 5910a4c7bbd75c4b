#!/usr/bin/env bash
# Issue 38's control-arm experiment: does a fixed-work control, loaded in
# trials interleaved with the target's, cancel the machine's slow spells
# from a single-target night? N nights against one unchanged target (`crh
# serve --threads 1 --delay-us BASE_DELAY_US`) with a control beside it (an
# identical `crh serve`: a fixed amount of work, as a control URL would be),
# each night
# `crh run --nights DIR --control CONTROL` (10 pairs of 2 s trials of get
# unless flags say otherwise). The machine's
# other work changes from night to night, drawn per night from SEED: none,
# one stress-ng worker at 50%, one at 100%, or two (unpinned, so it takes
# time from the generator and both services alike), as a shared CI runner's
# neighbours do.
#
# Per figure it prints the spread over the nights of the target's own figure
# (what a single-target night records and the record gate judges) and of
# the ratio target / control (what a night with a control arm would record),
# each as the robust standard deviation of the log over the nights (1.4826 x
# MAD, in percent), and their quotient. A control arm helps a figure when
# its ratio spreads clearly less than the figure itself: the record gate's
# band and its smallest detectable change scale with that spread. (The
# embedded reference service as the control was measured with an interim
# build, CONTROL=embedded: it widened the spread, and crh refuses it since.)
# Usage: bench/ab/control_arm.sh CRH [NIGHTS] [-- crh run flags...]
#   defaults: 12 nights; --scenario get --connections 4 --load-duration 2 --repeat 10 --suite errors --explore 0
#   PIN=1 (default): both services on CPU 1, the generator on CPU 0.
# Loopback only. A night takes about (pairs x 2 x duration) + 15 s.
set -euo pipefail
crh=$(realpath "${1:?usage: control_arm.sh CRH [NIGHTS] [-- run flags]}")
nights=${2:-12}
shift $(($# >= 2 ? 2 : 1))
[ "${1:-}" = "--" ] && shift
flags=("$@")
[ ${#flags[@]} -gt 0 ] || flags=(--scenario get --connections 4 --load-duration 2 --repeat 10 --suite errors --explore 0)
work=$(mktemp -d)
pids=() background=()
stop_background() {  # and wait for them (not for the services: they run on)
  for p in ${background[@]+"${background[@]}"}; do kill -TERM "$p" 2>/dev/null || true; done
  for p in ${background[@]+"${background[@]}"}; do wait "$p" 2>/dev/null || true; done
  background=()
}
trap 'stop_background; for p in ${pids[@]+"${pids[@]}"}; do kill -TERM "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"' EXIT
export CRH_API_KEY=bench-control-$RANDOM$RANDOM
source "$(dirname "$0")/targets.sh"
delay=${BASE_DELAY_US:-1000}
serve "$work/target.out" --delay-us "$delay"
serve "$work/control.out" --delay-us "$delay"
target=$(url_of "$work/target.out") control=$(url_of "$work/control.out")
RANDOM=${SEED:-38}
echo "control_arm.sh: $nights nights, target $target, control $control (both --delay-us $delay), pinned ${PIN:-1};" \
  "flags: ${flags[*]}"
for n in $(seq "$nights"); do
  case $((RANDOM % 4)) in
    0) load=none ;;
    1) load="stress-ng --cpu 1 --cpu-load 50" ;;
    2) load="stress-ng --cpu 1" ;;
    3) load="stress-ng --cpu 2" ;;
  esac
  if [ "$load" != none ]; then
    $load --timeout 0 >/dev/null 2>&1 &
    background+=($!)
  fi
  code=0
  "${pin_gen[@]}" "$crh" run "${flags[@]}" --seed "$n" --base-url "$target" --control "$control" \
    --nights "$work/nights" --json "$work/night.json" >"$work/night.out" 2>&1 || code=$?
  stop_background
  case $code in 0 | 1 | 4) ;; *) echo "night $n: exit $code"; tail -n 20 "$work/night.out"; exit 2 ;; esac
  python3 - "$work/night.json" "$n" "$load" >>"$work/figures" <<'PY'
import json, sys
for f in json.load(open(sys.argv[1]))["comparison"]["control"]["figures"]:
    if "ratio" in f and f["current"] > 0 and f["baseline"] > 0:
        print(json.dumps({"night": int(sys.argv[2]), "background": sys.argv[3],
                          "key": f"{f['scenario']} {f['operation']} {f['figure']}",
                          "target": f["current"], "control": f["baseline"], "ratio": f["ratio"]}))
PY
  echo "night $n ($load): exit $code: $(grep '^verdict of the run' "$work/night.out")"
done
python3 - "$work/figures" <<'PY'
import collections, json, math, statistics, sys
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    r = json.loads(line)
    rows[r["key"]].append(r)
def spread(values):  # robust sd of the log, in percent
    logs = [math.log(v) for v in values]
    m = statistics.median(logs)
    return 100 * 1.4826 * statistics.median(abs(x - m) for x in logs)
print(f"{'figure':28s} {'nights':>6s} {'target spread':>14s} {'ratio spread':>13s} {'ratio/target':>13s}")
for key, rs in sorted(rows.items()):
    if len(rs) < 4: continue
    t, q = spread([r["target"] for r in rs]), spread([r["ratio"] for r in rs])
    print(f"{key:28s} {len(rs):6d} {t:13.1f}% {q:12.1f}% {q / t if t else float('nan'):13.2f}")
print("per night (target, control, ratio) of each p50:")
for key, rs in sorted(rows.items()):
    if not key.endswith("p50"): continue
    for r in rs:
        print(f"  {key} night {r['night']:2d} {r['background']:32s} {r['target']:12.0f} {r['control']:12.0f} {r['ratio']:7.3f}")
PY
