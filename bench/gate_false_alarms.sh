#!/usr/bin/env bash
# The nightly gate on 10,000 synthetic unchanged nights per row (false alarms
# and could-not-tell), a sustained 30% worsening (power on the first night)
# and a 5%/night drift (change points within 5 nights), for K = 1..15
# repetitions a night. The noise model is in bench/gate/gate_false_alarms.cpp
# (measured on the 2-core machine, issue 23). Takes a few minutes.
#   bench/gate_false_alarms.sh [BUILD_DIR] [--nights N] [--tries N] [--repeat K]
#     [--record-feedback exit0|not-failed]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
[ $# -gt 0 ] && shift
cmake --build "$build" --target crh_gate_false_alarms >/dev/null
exec "$build/tests/crh_gate_false_alarms" "$@"
