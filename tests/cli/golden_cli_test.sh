#!/usr/bin/env bash
# Golden outputs (issue 24: the refactor into oracle/ must change no output).
# Fixed runs of crh, their documents normalized by tests/golden/normalize.py
# (what varies between two identical runs masked: timings, instants, ports,
# the run's random key and caller nonce, machine facts, the counts of a
# closed-loop load; its header lists every mask and why) and compared with
# the files checked in under tests/golden/; a difference fails with a unified
# diff. The runs, each with --json and --junit:
#   contract      crh contract --seed 1             (the embedded reference service)
#   load-race     crh load --scenario race --duration 1
#   load-mixed    crh load --scenario mixed --duration 1 --seed 7
#   run           crh run --suite endpoints --suite binding --seed 1 --load-duration 1
#   pcap-clean    crh pcap check clean.pcap   (also its terminal log)
#   pcap-faulty   crh pcap check faulty.pcap  (also its terminal log; exit 1)
# The captures are fixed files, made once with the binary of e8117bf:
#   clean.pcap:  crh contract --check 'endpoints.*' --check 'errors.*'
#     --check 'agents.*' --check 'database.*' --check 'aliases.*'
#     --check 'binding.first*' --check 'binding.independent*'
#     --check 'binding.same*' --check 'binding.fresh*' --check 'binding.free*'
#     --capture clean.pcap            (the embedded service; binding.race and
#     the auth suite left out to keep the file small)
#   faulty.pcap: crh contract --base-url URL of `crh serve --threads 2 --fault
#     binding-last-caller --fault error-no-msg` --check errors.unknown-route
#     --check 'errors.tag.*' --check 'agents.*' and the five binding checks
#     above --capture faulty.pcap     (capture.error-shape and capture.binding
#     fail with frame numbers)
# The goldens were written with that binary (/work/exp/crh-head).
#
# Usage: golden_cli_test.sh CRH            compare (exit 0: every output equal)
#        UPDATE_GOLDEN=1 golden_cli_test.sh CRH
#                                          rewrite tests/golden/*.golden.* from
#                                          CRH's outputs, for a deliberate
#                                          change of an output: review the git
#                                          diff of tests/golden/ before committing.
# GOLDEN_DIR=DIR overrides where the goldens (and the captures) are read and
# written. The golden files are the normalized outputs (still JSON and XML;
# a masked part reads {{time}}, {{masked}}, ...). Needs python3. Loopback
# only; about 7 s, 15-25 s on a busy 2-core machine (the loads measure 1 s each).
set -uo pipefail
[ $# -eq 1 ] || { echo "usage: $0 CRH (UPDATE_GOLDEN=1 to rewrite the goldens)"; exit 2; }
source "$(dirname "$0")/lib.sh"
golden=${GOLDEN_DIR:-$(cd "$(dirname "$0")/../golden" && pwd)}
normalizer="$(cd "$(dirname "$0")/../golden" && pwd)/normalize.py"
update=${UPDATE_GOLDEN:-0}
command -v python3 >/dev/null 2>&1 || { echo "FAIL: python3 is needed to normalize the outputs"; exit 1; }
[ -x "$crh" ] || { echo "FAIL: no crh binary at '$crh'"; exit 1; }
crh=$(cd "$(dirname "$crh")" && pwd)/$(basename "$crh")  # absolute: the runs below run in $work
# The pcap checks name their file as given: run everything from $work with relative names.
cd "$work" || exit 1
cp "$golden/clean.pcap" "$golden/faulty.pcap" "$work/" || { echo "FAIL: the captures are missing from $golden"; exit 1; }

# Compares the normalized $work/$2 with golden $1 (or writes it under UPDATE_GOLDEN=1);
# $3: options of the normalizer (--capture for the outputs of crh pcap check).
compare() {
  local name=$1 out=$2 how=${3:-}
  if [ ! -s "$work/$out" ]; then
    fail "$name: crh wrote no $out"
    return
  fi
  if ! python3 "$normalizer" ${how:+"$how"} "$work/$out" >"$work/$name.normalized" 2>"$work/normalize.err"; then
    fail "$name: $out could not be normalized: $(tail -n 3 "$work/normalize.err")"
    return
  fi
  if [ "$update" = 1 ]; then
    cp "$work/$name.normalized" "$golden/$name"
    echo "  wrote $golden/$name"
    return
  fi
  if [ ! -f "$golden/$name" ]; then
    fail "$name: no golden file $golden/$name (UPDATE_GOLDEN=1 writes it)"
    return
  fi
  if ! diff -u --label "golden/$name" --label "actual/$name (normalized)" "$golden/$name" "$work/$name.normalized" \
      >"$work/$name.diff"; then
    fail "$name differs from its golden ($(grep -c '^[-+][^-+]' "$work/$name.diff") lines removed or added; the diff's first 150 lines):"
    head -n 150 "$work/$name.diff" | sed 's/^/  | /'
  fi
}

# Runs crh with the given arguments (after the expected exit code $2 and the case name $1).
case_run() {
  local name=$1 want=$2
  shift 2
  step "$name: crh $*"
  local started=$SECONDS
  run "$@"
  if [ "$code" -ne "$want" ]; then
    fail "$name: crh exited $code, expected $want"
    show
  fi
  echo "  exit $code in $((SECONDS - started)) s"
}

case_run contract 0 contract --seed 1 --json contract.json --junit contract.xml
compare contract.golden.json contract.json
compare contract.golden.junit.xml contract.xml

case_run load-race 0 load --scenario race --duration 1 --json load-race.json --junit load-race.xml
compare load-race.golden.json load-race.json
compare load-race.golden.junit.xml load-race.xml

case_run load-mixed 0 load --scenario mixed --duration 1 --seed 7 --json load-mixed.json --junit load-mixed.xml
compare load-mixed.golden.json load-mixed.json
compare load-mixed.golden.junit.xml load-mixed.xml

case_run run 0 run --suite endpoints --suite binding --seed 1 --load-duration 1 --json run.json --junit run.xml
compare run.golden.json run.json
compare run.golden.junit.xml run.xml

for capture in clean faulty; do
  want=0
  [ "$capture" = faulty ] && want=1
  case_run "pcap-$capture" "$want" pcap check "$capture.pcap" --json "pcap-$capture.json" --junit "pcap-$capture.xml"
  cp "$work/run.out" "$work/pcap-$capture.log"
  compare "pcap-$capture.golden.json" "pcap-$capture.json" --capture
  compare "pcap-$capture.golden.junit.xml" "pcap-$capture.xml" --capture
  compare "pcap-$capture.golden.txt" "pcap-$capture.log" --capture
done

if [ "$failures" -ne 0 ]; then
  echo "golden: $failures failure(s); if an output changed on purpose, rerun with UPDATE_GOLDEN=1 and review git diff tests/golden/"
  exit 1
fi
if [ "$update" = 1 ]; then echo "golden: files rewritten in $golden"; else echo "golden: every output equals its golden"; fi
