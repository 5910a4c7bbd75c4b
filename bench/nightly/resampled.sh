#!/usr/bin/env bash
# The nightly gate on 10,000 nights drawn from a record of real nights (issue
# 23: false alarms "over 10,000 synthetic nights drawn from the measured
# spread"; power and drift from the same draws). Each synthetic night is a
# recorded night drawn with replacement, all its figures together, so the
# spread and the correlation between figures are the measured ones; the order
# is not (a slow spell of the machine over consecutive recorded nights becomes
# scattered nights, as nights a day apart would see it). Method in
# bench/gate/resampled_nights.cpp. Takes about a minute.
#
# usage: bench/nightly/resampled.sh [--build DIR] RECORD_DIR [--nights N] [--tries N] [--seed S] [--limit PCT]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$here/../../build
if [ "${1:-}" = --build ]; then build=$2; shift 2; fi
[ $# -ge 1 ] || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }
cmake --build "$build" --target crh_resampled_nights >/dev/null
exec "$build/tests/crh_resampled_nights" "$@"
