#!/usr/bin/env bash
# How many calls a second the reference's SIP side answers on one core: SIPp
# (on the other core) places calls to a free alias (INVITE, 200, ACK, BYE, 200)
# at a rising rate until calls fail or SIPp's achieved rate falls below 95% of
# the target. crh serve runs pinned to one core, SIPp to another.
# usage: [SCENARIO=call|options] bench/sip/sipp_rate.sh CRH_BINARY [SECONDS_PER_STEP] [RATES...]
#   e.g. bench/sip/sipp_rate.sh build/crh 5 500 1000 2000 4000 8000
# SCENARIO=options places one OPTIONS a call instead (lighter for SIPp).
# Columns: the target rate, SIPp's achieved rate (its own clock), calls that
# succeeded, failed, SIPp's retransmissions, and how busy each pinned core's
# process was (CPU seconds over SIPp's elapsed time): when SIPp's core is the
# busy one, the limit measured is SIPp's, and crh kept up.
set -uo pipefail
crh=${1:?usage: sipp_rate.sh CRH_BINARY [SECONDS_PER_STEP] [RATES...]}
seconds=${2:-5}
shift $(($# > 1 ? 2 : 1))
rates=("$@")
[ ${#rates[@]} -gt 0 ] || rates=(500 1000 2000 4000 8000 16000)
root=$(cd "$(dirname "$0")/../.." && pwd)
tests_sip=$root/tests/sip
scenario=$tests_sip/scenarios/uac_call.xml
[ "${SCENARIO:-call}" = options ] && scenario=$root/bench/sip/options.xml
command -v sipp >/dev/null 2>&1 || { echo "sipp is not installed"; exit 1; }
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$work"' EXIT
# shellcheck source=../../tests/sip/lib.sh
. "$tests_sip/lib.sh"
cores=$(nproc)
pin_crh='' pin_sipp=''
if [ "$cores" -ge 2 ] && command -v taskset >/dev/null 2>&1; then pin_crh="taskset -c 1" pin_sipp="taskset -c 0"; fi
serve_prefix=$pin_crh start_serve --threads 1 || exit 1
echo "crh serve ($pin_crh): SIP $sip_addr; SIPp ($pin_sipp); $seconds s a step; ${SCENARIO:-call} scenario to free alias +15550201, UDP"
printf '%8s %10s %8s %8s %8s %8s %8s  %s\n' target achieved calls failed retrans crh_cpu sipp_cpu verdict
for rate in "${rates[@]}"; do
  dir="$work/r$rate"
  mkdir -p "$dir"
  calls=$((rate * seconds))
  cpu_before=$(awk '{print $14 + $15}' "/proc/$serve_pid/stat")
  (cd "$dir" && timeout $((seconds * 4 + 30)) /usr/bin/time -f '%U %S' -o sipp.cpu $pin_sipp sipp "$sip_addr" -sf "$scenario" \
    -inf "$tests_sip/callers.csv" -s +15550201 -t u1 -i 127.0.0.1 -p 0 -m "$calls" -r "$rate" -rp 1000 -l $((rate * 4)) \
    -buff_size 4194304 -nostdin -trace_stat -stf stat.csv -fd 1 -timeout $((seconds * 3 + 20))s -max_retrans 3 >sipp.out 2>&1)
  status=$?
  cpu_after=$(awk '{print $14 + $15}' "/proc/$serve_pid/stat")
  read -r ok failed retrans sipp_elapsed < <(python3 - "$dir/stat.csv" <<'PY'
import sys
rows = [l.rstrip("\n").split(";") for l in open(sys.argv[1]) if l.strip()]
h, last = rows[0], rows[-1]
def col(n): return int(last[h.index(n)] or 0) if n in h else 0
hh, mm, ss, us = (last[h.index("ElapsedTime(C)")].split(":") + ["0"] * 4)[:4]
elapsed = int(hh) * 3600 + int(mm) * 60 + int(ss) + int(us) / 1e6
print(col("SuccessfulCall(C)"), col("FailedCall(C)"), col("Retransmissions(C)"), max(elapsed, 0.001))
PY
)
  # SIPp's own clock: from its start to its last call ended.
  achieved=$(echo "scale=0; $ok / $sipp_elapsed" | bc)
  crh_cpu=$(echo "scale=0; 100 * ($cpu_after - $cpu_before) / $(getconf CLK_TCK) / $sipp_elapsed" | bc)
  sipp_cpu=$(tail -n 1 "$dir/sipp.cpu" | awk -v e="$sipp_elapsed" '{printf "%d", 100 * ($1 + $2) / e}')  # after any "exited with" line
  verdict="target met"
  if [ "$failed" -gt 0 ] || [ "$status" -ne 0 ] || [ $((achieved * 100)) -lt $((rate * 95)) ]; then
    verdict="target missed (SIPp exit $status)"
  fi
  printf '%8s %10s %8s %8s %8s %7s%% %7s%%  %s\n' "$rate" "$achieved" "$ok" "$failed" "$retrans" "$crh_cpu" "$sipp_cpu" "$verdict"
  [ "$verdict" = "target met" ] || break
done
