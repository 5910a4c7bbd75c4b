#!/usr/bin/env bash
# SIPp as a UAC against `crh serve --sip`: ten callers from callers.csv race
# for one tagged alias at once. SIPp's own per-message counts (-trace_counts)
# must show exactly one 200 and nine 403, every call ended cleanly, and the
# alias's HTTP view must name the winner, one of the CSV's numbers. Then a
# free alias over TCP: every caller gets through (DESIGN.md §3).
# usage: sipp_uac_test.sh CRH_BINARY   (exit 77: skipped, saying why)
set -uo pipefail
crh=${1:?usage: sipp_uac_test.sh CRH_BINARY}
here=$(cd "$(dirname "$0")" && pwd)
command -v sipp >/dev/null 2>&1 || { echo "SKIP: sipp is not installed (Debian: apt-get install sip-tester)"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is needed to read SIPp's counts"; exit 77; }
# shellcheck source=lib.sh
. "$here/lib.sh"
begin_sip_test

# CRH_SIP_TEST_SERVE_ARGS (e.g. "--fault binding-racy") shows that the test can fail.
start_serve --sip-t1-ms 100 ${CRH_SIP_TEST_SERVE_ARGS:-} || exit 1
echo "crh serve: $url, SIP $sip_addr"

# Runs the call scenario: $1 phase name, $2 alias number, $3 transport (u1/t1).
# Sets $counts (SIPp's -trace_counts CSV) and $sipp_status.
run_sipp() {
  local phase=$1 number=$2 transport=$3
  mkdir -p "$work/$phase"
  (cd "$work/$phase" && timeout 60 sipp "$sip_addr" -sf "$here/scenarios/uac_call.xml" -inf "$here/callers.csv" \
    -s "$number" -t "$transport" -i 127.0.0.1 -p 0 -m 10 -l 10 -r 1000 -rp 1000 -nostdin \
    -trace_counts -trace_err -timeout 30s -timeout_error -max_retrans 5 >sipp.out 2>&1)
  sipp_status=$?
  counts=$(ls "$work/$phase"/*_counts.csv 2>/dev/null | head -n1)
  if [ -z "$counts" ]; then
    fail "$phase: SIPp wrote no counts (exit $sipp_status)"; tail -n 30 "$work/$phase/sipp.out"; return 1
  fi
}
# Every *_Unexp, *_Timeout column of the counts: none expected.
unexpected() {
  python3 - "$1" <<'PY'
import sys
rows = [l.rstrip("\n").split(";") for l in open(sys.argv[1]) if l.strip()]
print(sum(int(rows[-1][i] or 0) for i, n in enumerate(rows[0]) if n.endswith(("_Unexp", "_Timeout"))))
PY
}

# Phase 1: a tagged alias over UDP, ten callers at once: one winner.
number=$(tag_alias race)
[ -n "$number" ] || { fail "could not tag an alias over HTTP"; exit 1; }
echo "phase 1: 10 callers, UDP, tagged alias $number"
if run_sipp tagged "$number" u1; then
  ok=$(sipp_count "$counts" 3_200_Recv) refused=$(sipp_count "$counts" 2_403_Recv)
  bye_ok=$(sipp_count "$counts" 6_200_Recv) odd=$(unexpected "$counts")
  echo "  SIPp counts: 200=$ok 403=$refused BYE-200=$bye_ok unexpected/timeouts=$odd (exit $sipp_status)"
  [ "$ok" = 1 ] || fail "expected exactly one 200 among the racing INVITEs, SIPp counted $ok"
  [ "$refused" = 9 ] || fail "expected nine 403, SIPp counted $refused"
  [ "$bye_ok" = 1 ] || fail "the winner's BYE should get one 200, SIPp counted $bye_ok"
  [ "$odd" = 0 ] || fail "SIPp saw $odd unexpected messages or timeouts"
  [ "$sipp_status" = 0 ] || fail "SIPp says some calls failed (exit $sipp_status)"
  winner=$(bound_caller "$number")
  echo "  HTTP view: alias $number bound to ${winner:-nobody}"
  grep -q "^$winner;\$" "$here/callers.csv" && [ -n "$winner" ] ||
    fail "the HTTP view's bound caller \"$winner\" is not one of the CSV's callers"
fi

# Phase 2: a free (never tagged) alias over TCP: every caller gets through.
echo "phase 2: 10 callers, TCP, free alias +15550201"
if run_sipp free +15550201 t1; then
  ok=$(sipp_count "$counts" 3_200_Recv) refused=$(sipp_count "$counts" 2_403_Recv) odd=$(unexpected "$counts")
  echo "  SIPp counts: 200=$ok 403=$refused unexpected/timeouts=$odd (exit $sipp_status)"
  [ "$ok" = 10 ] && [ "$refused" = 0 ] || fail "a free alias takes any caller: expected ten 200, got $ok (403: $refused)"
  [ "$odd" = 0 ] && [ "$sipp_status" = 0 ] || fail "SIPp saw failures on the free alias (exit $sipp_status)"
fi

kill -0 "$serve_pid" 2>/dev/null || fail "crh serve died"
[ $failures -eq 0 ] && echo "PASS: one winner over SIP, named by the HTTP view" || echo "$failures failure(s)"
[ $failures -eq 0 ]
