#!/usr/bin/env bash
# A failure's reproducer reproduces: for every fault mode and mutant of crh
# serve, crh contract (--minute-ms 1000) writes its failures' scripts with
# --reproducers; the first failure's script, run by sh against a fresh crh
# serve with that fault, exits 1 and says what failed and what came; against
# a fresh correct crh serve it exits 0 and leaves no tag behind; the key is in
# no script. A script that cannot reproduce (callers at one instant; a step
# just before a tag's end with an earlier one in the way) says so and exits
# 2: counted and listed.
# Failures the default run does not catch (they need --slow) are listed.
#
# Never allowed: a script that says REPRODUCED against the correct service,
# a tag left behind there, any other exit code, the key in a script. A
# script that does not reproduce against the faulty service is listed; more
# than kMaxNotReproduced of them fails the test (the known gap, which only
# shrinks).
# Usage: reproducer_cli_test.sh CRH [NAME...]. Loopback only; about 4 min.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
kMaxNotReproduced=2  # measured: 1 of 76 (seed 1)
shift
jobs_at_once=3

modes=()
if [ $# -gt 0 ]; then
  for name in "$@"; do
    if "$crh" serve --list-faults | cut -f1 | grep -qx "$name"; then modes+=("fault $name"); else modes+=("mutant $name"); fi
  done
else
  while read -r name; do modes+=("fault $name"); done < <("$crh" serve --list-faults | cut -f1)
  while read -r name; do modes+=("mutant $name"); done < <("$crh" serve --list-mutants | cut -f1)
fi

# serve_on DIR NAME ARGS...: crh serve on 127.0.0.1:0, its output in DIR/NAME.serve (a file of its own: a
# service still stopping writes to its own); its pid in DIR/pid, its URL printed.
serve_on() {
  local dir=$1 name=$2
  shift 2
  CRH_API_KEY=$key "$crh" serve --listen 127.0.0.1:0 --threads 2 --minute-ms 1000 "$@" >"$dir/$name.serve" 2>&1 &
  echo $! >"$dir/pid"
  await_url "$dir/$name.serve" "$(cat "$dir/pid")"
}
stop_in() { stop "$(cat "$1/pid")"; }

# try KIND NAME: one mode; its verdict in $work/KIND-NAME/verdict (a word and a line).
try() {
  local kind=$1 name=$2 dir="$work/$1-$2" url code first script
  mkdir -p "$dir"
  url=$(serve_on "$dir" run "--$kind" "$name") || { echo "error crh serve --$kind $name did not start" >"$dir/verdict"; return; }
  code=0
  CRH_API_KEY=$key timeout -k 2 120 "$crh" contract --base-url "$url" --minute-ms 1000 --seed 1 --json "$dir/result.json" \
    --reproducers "$dir/scripts" >"$dir/contract.out" 2>&1 || code=$?
  stop_in "$dir"
  if [ "$code" -eq 0 ]; then echo "uncaught the default run passes" >"$dir/verdict"; return; fi
  first=$(python3 -c 'import json,sys
for c in json.load(open(sys.argv[1]))["checks"]:
    if c["outcome"] == "fail": print(c["id"]); break' "$dir/result.json")
  script="$dir/scripts/$first.sh"
  [ -f "$script" ] || { echo "error crh contract exited $code but wrote no script for $first" >"$dir/verdict"; return; }
  if grep -qF -- "$key" "$dir/scripts"/*.sh; then echo "error the key is in a script of $first" >"$dir/verdict"; return; fi
  # Against a fresh service with the same fault.
  url=$(serve_on "$dir" faulty "--$kind" "$name") || { echo "error crh serve --$kind $name did not start" >"$dir/verdict"; return; }
  code=0
  CRH_API_KEY=$key CRH_BASE_URL=$url timeout -k 2 60 sh "$script" >"$dir/faulty.out" 2>&1 || code=$?
  stop_in "$dir"
  if [ "$code" -eq 2 ] && grep -q '^not reproducible by a script' "$dir/faulty.out"; then
    echo "script-cannot $first: $(sed -n 2p "$script" | cut -c1-160)" >"$dir/verdict"
    return
  fi
  local faulty=$code
  # Against a fresh correct service: exit 0, nothing left tagged.
  url=$(serve_on "$dir" correct) || { echo "error crh serve did not start" >"$dir/verdict"; return; }
  code=0
  CRH_API_KEY=$key CRH_BASE_URL=$url timeout -k 2 60 sh "$script" >"$dir/correct.out" 2>&1 || code=$?
  local left
  left=$(curl -sS -H "Apikey: $key" "$url/channels/1/alias-numbers" | grep -o '"tag":"[^"]*"' | tr '\n' ' ' || true)
  stop_in "$dir"
  if [ "$code" -ne 0 ]; then
    echo "wrong $first exited $code against the correct service, expected 0: $(grep -v '^step' "$dir/correct.out" | head -n 3 | tr '\n' ' ')" >"$dir/verdict"
  elif [ -n "$left" ]; then
    echo "wrong $first left tags on the correct service: $left" >"$dir/verdict"
  elif [ "$faulty" -eq 1 ] && grep -q '^REPRODUCED' "$dir/faulty.out" && grep -q 'the failure: ' "$dir/faulty.out" &&
    grep -q 'this time: HTTP' "$dir/faulty.out"; then
    echo "reproduced $first" >"$dir/verdict"
  elif [ "$faulty" -eq 0 ]; then
    echo "not-reproduced $first: $(grep -v '^step' "$dir/faulty.out" | head -n 1 | cut -c1-200)" >"$dir/verdict"
  else
    echo "wrong $first exited $faulty against the faulty service: $(head -n 5 "$dir/faulty.out" | tr '\n' ' ')" >"$dir/verdict"
  fi
}

step "every fault mode and mutant (${#modes[@]}): the first failure's script against a fresh faulty and a fresh correct crh serve"
running=0
for mode in "${modes[@]}"; do
  try $mode &
  running=$((running + 1))
  if [ "$running" -ge "$jobs_at_once" ]; then wait -n || true; running=$((running - 1)); fi
done
wait

declare -A count=()
for mode in "${modes[@]}"; do
  set -- $mode
  verdict=$(cat "$work/$1-$2/verdict" 2>/dev/null || echo "error no verdict")
  word=${verdict%% *}
  count[$word]=$(( ${count[$word]:-0} + 1 ))
  case $word in
    reproduced) ;;
    wrong | error) fail "--$1 $2: ${verdict#* }" ;;
    *) echo "  --$1 $2: $verdict" ;;
  esac
done
echo "  ${count[reproduced]:-0} reproduced (exit 1 on the faulty service, 0 on the correct one, no tag left);" \
  "${count[script-cannot]:-0} say a script cannot (and exit 2); ${count[not-reproduced]:-0} not reproduced;" \
  "${count[uncaught]:-0} not caught without --slow; ${count[wrong]:-0} wrong; ${count[error]:-0} errors"
[ "${count[not-reproduced]:-0}" -le "$kMaxNotReproduced" ] ||
  fail "${count[not-reproduced]} scripts did not reproduce their failure, at most $kMaxNotReproduced expected"
[ "${count[reproduced]:-0}" -gt 0 ] || fail "no script reproduced its failure"

[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "all reproducer checks passed"
