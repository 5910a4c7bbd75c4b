#!/usr/bin/env bash
# Which mutants of the reference service (`crh serve --list-mutants`, issue 25)
# the harness catches. For each mutant: `crh serve --mutant NAME` on a free
# loopback port, then exploration alone against it
#   crh contract --base-url URL --suite explore --explore N --seed S --json F
# or, with --targeted, every targeted suite instead (all suites but explore;
# --slow, so the expiry checks run too), or with --both the two in turn.
# The correct service (no mutant) runs first as the control: any finding
# there is a false alarm. Prints one row per mutant: caught by exploration
# (yes/no, the rules broken, the shrunk reproducer's length in operations when
# the result says it) and by the targeted checks (yes/no, the check ids).
# "warn" means only SHOULD findings (profile defaults) came.
#
# With --faults, the fault modes (`crh serve --list-faults`, `--fault NAME`)
# take the mutants' place.
#
# usage: bench/explore/mutants.sh [--targeted | --both] [--faults] [--seed S] [--explore N]
#                                 [--minute-ms MS] [--only NAME]... [--keep DIR]
# env:   CRH=build/crh (the crh to run)
#
# Mutants whose wrong behaviour needs a tag to end run exploration with a
# short minute (SHORT_MINUTE_MS, 300 ms) on both sides, so it crosses their
# expiries; the others with the default minute. The targeted runs take the
# short minute throughout (--slow waits one lifetime). --minute-ms sets one
# minute for every run.
set -euo pipefail
CRH=${CRH:-build/crh}
SHORT_MINUTE_MS=${SHORT_MINUTE_MS:-300}
mode=explore seed=1 explore_ops=2000 minute_all="" keep="" only=() subject=mutant
while [ $# -gt 0 ]; do
  case "$1" in
    --targeted) mode=targeted ;;
    --both) mode=both ;;
    --faults) subject=fault ;;
    --seed) seed=$2; shift ;;
    --explore) explore_ops=$2; shift ;;
    --minute-ms) minute_all=$2; shift ;;
    --only) only+=("$2"); shift ;;
    --keep) keep=$2; shift ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "mutants.sh: unknown argument $1 (--help)" >&2; exit 2 ;;
  esac
  shift
done
command -v python3 >/dev/null || { echo "mutants.sh: python3 is needed to read the result documents" >&2; exit 2; }
command -v curl >/dev/null || { echo "mutants.sh: curl is needed" >&2; exit 2; }
[ -x "$CRH" ] || { echo "mutants.sh: no crh at $CRH (set CRH=path/to/crh)" >&2; exit 2; }

work=$(mktemp -d)
source "$(dirname "$0")/../lib.sh"  # pids, cleanup
[ -z "$keep" ] || mkdir -p "$keep"

# A key of our own, never printed: crh serve prints a key only when it makes one.
export CRH_API_KEY=mutants-$RANDOM$RANDOM$RANDOM

# These need tags to end within a run to show (see --list-mutants).
needs_expiry() {
  case "$1" in
    lock-half-lifetime | late-first-call-unbound | tag-skips-expired | expiry-from-first-call | \
      list-stale-after-expiry | expiry-extra-minute | expiry-in-seconds | untag-after-expiry-ok | \
      lock-outlives-expiry | expiry-never | expiry-sliding) return 0 ;;
  esac
  return 1
}

# Every suite but explore, as --list-checks names them (suites are the unindented lines).
targeted_suites=()
while read -r s; do [ "$s" = explore ] || targeted_suites+=(--suite "$s"); done \
  < <("$CRH" contract --list-checks | grep -E '^[a-z]' | awk '{print $1}')

# Reads a result document: prints "verdict|rules or check ids|reproducer length".
summarize() {  # file, explore|targeted
  python3 - "$1" "$2" <<'PY'
import json, re, sys
path, mode = sys.argv[1], sys.argv[2]
try:
    doc = json.load(open(path))
except Exception as e:
    print(f"error|no result document ({e.__class__.__name__})|")
    sys.exit()
checks = [c for c in doc.get("checks", []) if (c.get("suite") == "explore") == (mode == "explore")]
failed = [c for c in checks if c.get("outcome") == "fail"]
warned = [c for c in checks if c.get("outcome") == "warn"]
hit = failed or warned
verdict = "yes" if failed else "warn" if warned else "no"
if mode == "explore":
    rules = sorted({f.get("rule") for c in hit for f in c.get("findings", [])
                    if f.get("rule") and (f.get("severity") == "MUST" or not failed)})
    # The shrunk reproducer's length: the message says "shrunk from N to M operations";
    # else the evidence, which is the reproducer, one exchange (or burst) per operation.
    n = None
    for c in hit:
        m = re.search(r"shrunk from \d+ to (\d+) operations", c.get("message", ""))
        n = int(m.group(1)) if m else len(c.get("evidence", [])) or None
        if n: break
    print(f"{verdict}|{' '.join(rules)}|{'' if n is None else n}")
else:
    print(f"{verdict}|{' '.join(c['id'] for c in (failed or warned))}|")
PY
}

# One run against one service: prints the summary line.
run_one() {  # mutant ("" for none), explore|targeted
  local name=${1:-none} kind=$2 minute out rc=0
  minute=${minute_all:-60000}
  # --slow waits a tag lifetime: the targeted runs take the short minute throughout.
  if [ -z "$minute_all" ] && { [ "$kind" = targeted ] || { [ -n "$1" ] && needs_expiry "$1"; }; }; then
    minute=$SHORT_MINUTE_MS
  fi
  # Port 0: the service takes a free port itself and says which (no race with other users).
  "$CRH" serve --listen 127.0.0.1:0 --threads 1 --minute-ms "$minute" ${1:+--$subject "$1"} \
    >"$work/serve-$name-$kind.log" 2>&1 &
  local serve=$! base=""
  pids+=("$serve")
  for _ in $(seq 100); do
    base=$(grep -o -m1 'listening on http://[0-9.:]*' "$work/serve-$name-$kind.log" | cut -d' ' -f3) || true
    [ -z "$base" ] || break
    sleep 0.1
  done
  if [ -z "$base" ]; then
    echo "error|crh serve ${1:+--$subject $1} did not start: $(head -c 80 "$work/serve-$name-$kind.log")|"
    return
  fi
  out="$work/$name-$kind.json"
  if [ "$kind" = explore ]; then
    timeout 600 "$CRH" contract --base-url "$base" --minute-ms "$minute" --suite explore \
      --explore "$explore_ops" --seed "$seed" --json "$out" --quiet >"$work/$name-$kind.log" 2>&1 || rc=$?
  else
    timeout 600 "$CRH" contract --base-url "$base" --minute-ms "$minute" --slow \
      "${targeted_suites[@]}" --explore 0 --json "$out" --quiet >"$work/$name-$kind.log" 2>&1 || rc=$?
  fi
  kill -TERM "$serve" 2>/dev/null || true
  wait "$serve" 2>/dev/null || true
  [ -z "$keep" ] || cp "$out" "$work/$name-$kind.log" "$keep/" 2>/dev/null || true
  if [ "$rc" -eq 2 ] || [ "$rc" -eq 3 ] || [ "$rc" -eq 124 ]; then
    # Usage, unreachable or out of time: say so with crh's first line of complaint.
    echo "error|exit $rc: $(grep -m1 -v '^$' "$work/$name-$kind.log" | cut -c1-80)|"
  else
    summarize "$out" "$kind"
  fi
}

mutants=()
if [ ${#only[@]} -gt 0 ]; then mutants=("${only[@]}"); else
  while IFS=$'\t' read -r name _; do
    # slow-tag breaks no rule: it answers later (README, Fault modes).
    [ "$name" = slow-tag ] || mutants+=("$name")
  done < <("$CRH" serve --list-${subject}s)
fi

echo "mutants.sh: $CRH, mode $mode, seed $seed, explore $explore_ops operations," \
  "minute ${minute_all:-60000 ms (${SHORT_MINUTE_MS} ms for targeted runs and mutants that need expiry)}"
printf '%-28s %-9s | %-5s %-22s %-5s | %-5s %s\n' "$subject" class explore rules ops targeted checks
# A mutant's class is its second column; a fault has none.
classes=$("$CRH" serve --list-${subject}s | cut -f1,2)
[ "$subject" = mutant ] || classes=$("$CRH" serve --list-faults | awk -F'\t' '{print $1 "\tfault"}')
caught_e=0 caught_t=0 total=0
for m in "" "${mutants[@]}"; do
  e="-||" t="-||"
  [ "$mode" = targeted ] || e=$(run_one "$m" explore)
  [ "$mode" = explore ] || t=$(run_one "$m" targeted)
  IFS='|' read -r ev er en <<<"$e"
  IFS='|' read -r tv tc _ <<<"$t"
  class=$(awk -F'\t' -v n="$m" '$1 == n {print $2}' <<<"$classes")
  printf '%-28s %-9s | %-5s %-22s %-5s | %-5s %s\n' "${m:-(correct service)}" "${class:--}" "$ev" "${er:--}" \
    "${en:--}" "$tv" "${tc:--}"
  if [ -n "$m" ]; then
    total=$((total + 1))
    [ "$ev" != yes ] || caught_e=$((caught_e + 1))
    [ "$tv" != yes ] || caught_t=$((caught_t + 1))
  fi
done
parts=()
[ "$mode" = targeted ] || parts+=("exploration $caught_e of $total")
[ "$mode" = explore ] || parts+=("targeted $caught_t of $total")
echo "caught (MUST findings): $(IFS=,; echo "${parts[*]}" | sed 's/,/, /')" \
  "(a 'yes' on the correct service is a false alarm)"
