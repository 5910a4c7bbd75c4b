#!/usr/bin/env bash
# Build time from a fresh clone, without ccache (issue 36): clones the current
# commit into a scratch folder and times, on JOBS cores, the configure, the
# build of `crh` alone (what `make demo` builds) and then of everything (what
# `make test` builds); prints the 15 slowest ninja-log entries and the size of
# build/crh. Extra arguments go to the configure (e.g. -DCRH_PCH=OFF for the
# build without precompiled headers, -DCMAKE_BUILD_TYPE=Release).
#
# usage: bench/build_time.sh [--jobs N] [--crh-only] [--keep DIR] [CMAKE_ARG...]
# Quote ratios measured side by side in one session: a loaded or noisy machine
# moves these times by half or more.
set -euo pipefail
jobs=$(nproc) crh_only=0 keep=
while [ $# -gt 0 ]; do
  case $1 in
    --jobs) jobs=$2; shift 2 ;;
    --crh-only) crh_only=1; shift ;;
    --keep) keep=$2; shift 2 ;;
    -h | --help) sed -n '2,12p' "$0"; exit 0 ;;
    *) break ;;
  esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
work=${keep:-$(mktemp -d)}
[ -n "$keep" ] || trap 'rm -rf "$work"' EXIT
rm -rf "$work/src"
git clone -q "$root" "$work/src"
git -C "$work/src" checkout -q "$(git -C "$root" rev-parse HEAD)"
export CCACHE_DISABLE=1

seconds() { local t0=$1; echo $(( $(date +%s%N) / 1000000 - t0 )) | awk '{printf "%.1f", $1 / 1000}'; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

echo "build_time: commit $(git -C "$root" rev-parse --short HEAD), $jobs jobs, cmake args: ${*:-(none)}"
t=$(now_ms); cmake -S "$work/src" -B "$work/build" -G Ninja "$@" >"$work/configure.log"; configure=$(seconds "$t")
t=$(now_ms); cmake --build "$work/build" -j "$jobs" --target crh >"$work/crh.log"; crh=$(seconds "$t")
steps_crh=$(awk 'NR > 1' "$work/build/.ninja_log" | wc -l)
all=skipped steps_all=
if [ "$crh_only" = 0 ]; then
  t=$(now_ms); cmake --build "$work/build" -j "$jobs" >"$work/all.log"; all=$(seconds "$t")
  steps_all=$(awk 'NR > 1' "$work/build/.ninja_log" | wc -l)
fi
size=$(du -m "$work/build/crh" | cut -f1)
echo "| configure | crh alone ($steps_crh steps) | everything else (${steps_all:-0} steps in all) | build/crh |"
echo "| ${configure} s | ${crh} s | ${all} s | ${size} MB |"
echo "build_time: the 15 slowest steps (wall seconds, $jobs at once):"
awk 'NR > 1 { printf "%7.1f  %s\n", ($2 - $1) / 1000, $4 }' "$work/build/.ninja_log" | sort -rn | head -n 15
awk 'NR > 1 && $4 ~ /\.o$/ && $4 !~ /^tests\// { if (($2 - $1) > max) { max = $2 - $1; f = $4 } }
  END { printf "build_time: slowest product object: %.1f s (%s)\n", max / 1000, f }' "$work/build/.ninja_log"
