#!/usr/bin/env bash
# crh contract, load and run in front of hostile or broken targets
# (tests/support/hostile_server_main.cpp): every phase ends by its deadline,
# Ctrl-C and SIGTERM end a command within seconds writing what was gathered,
# interim 1xx answers are skipped, a run that proved nothing never passes,
# and the key never leaks whatever encoding a target echoes it in.
# Usage: hostile_cli_test.sh CRH HOSTILE_SERVER. Loopback only.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
hostile=$2

# Starts the hostile server in MODE with the given flags; sets $hpid and $hurl.
hostile_start() {
  local n=${#pids[@]}
  "$hostile" "$@" >"$work/hostile.out.$n" 2>&1 &
  hpid=$!
  pids+=("$hpid")
  hurl=$(await_url "$work/hostile.out.$n" "$hpid") && return 0
  echo "FAIL: crh_hostile_server $* did not start: $(cat "$work/hostile.out.$n")"
  exit 1
}

# Runs crh with a hard limit of $1 seconds; sets $code (124 when it had to be killed) and $secs.
bounded() {
  local limit=$1
  shift
  local t0=$SECONDS
  code=0
  timeout -k 2 "$limit" "$crh" "$@" >"$work/run.out" 2>"$work/run.err" || code=$?
  secs=$((SECONDS - t0))
}

# Starts crh in the background, waits until its stdout shows $1, sends signal $2
# and waits; sets $code and $secs (from the signal to the exit).
interrupt_when() {
  local marker=$1 signal=$2
  shift 2
  "$crh" "$@" >"$work/int.out" 2>"$work/int.err" &
  local runner=$!
  for _ in $(seq 300); do grep -q -- "$marker" "$work/int.out" && break; sleep 0.1; done
  sleep 1
  local t0=$SECONDS
  kill "-$signal" "$runner" 2>/dev/null || true
  code=0
  ( sleep 20; kill -KILL "$runner" 2>/dev/null ) &
  local guard=$!
  wait "$runner" || code=$?
  kill "$guard" 2>/dev/null || true
  secs=$((SECONDS - t0))
}

step "a. endless 100 Continue after normal answers to the set-up: crh load ends by its deadline"
hostile_start continue-forever --answer-first 3  # the preflight's two reads, the set-up's one
CRH_API_KEY=$key bounded 30 load --base-url "$hurl" --scenario get --path /api/v1/local-agents --duration 2 --timeout 1000 \
  --json "$work/continue.json"
[ "$code" -ne 124 ] || fail "crh load against an endless stream of 100 Continue had to be killed after 30 s"
[ "$code" -eq 1 ] || { fail "crh load against an endless stream of 100 Continue exited $code, expected 1 (no request succeeded)"; show; }
[ "$secs" -le 10 ] || fail "crh load --duration 2 --timeout 1000 took $secs s against endless 100s"
grep -q 'no request succeeded' "$work/continue.json" || fail "the result does not say that no request succeeded"
stop "$hpid"

step "b. one 100 Continue every 50 ms: the request still ends at its timeout"
hostile_start continue-forever --answer-first 3 --delay-ms 50
CRH_API_KEY=$key bounded 30 load --base-url "$hurl" --scenario get --path /api/v1/local-agents --duration 2 --timeout 1000
[ "$code" -eq 1 ] || { fail "crh load against slow endless 100s exited $code, expected 1"; show; }
[ "$secs" -le 10 ] || fail "crh load against slow endless 100s took $secs s"
stop "$hpid"

step "c. the contract client against endless 100s: each exchange ends, the run fails saying why"
hostile_start continue-forever
CRH_API_KEY=$key bounded 60 contract --base-url "$hurl" --timeout 500
[ "$code" -eq 1 ] || { fail "crh contract against endless 100s exited $code, expected 1"; show; }
grep -q 'interim 1xx answers' "$work/run.out" || fail "the failures do not name the endless interim answers"
stop "$hpid"

step "d. Ctrl-C and SIGTERM end crh load within seconds, writing what was measured"
for sig in INT TERM; do
  hostile_start continue-forever --answer-first 1
  CRH_API_KEY=$key interrupt_when "crh load" "$sig" load --base-url "$hurl" --scenario get --path /x --duration 60 \
    --timeout 30000 --json "$work/int-$sig.json"
  [ "$code" -eq 1 ] || { fail "SIG$sig during crh load: exit $code, expected 1"; cat "$work/int.out" "$work/int.err" || true; }
  [ "$secs" -le 6 ] || fail "SIG$sig during crh load took $secs s to end"
  grep -q '"interrupted":true' "$work/int-$sig.json" || fail "SIG$sig: the load result is not marked interrupted"
  stop "$hpid"
done

start --aliases 24
step "e. SIGTERM during the slow contract checks ends crh run within seconds and restores the target"
CRH_API_KEY=$key interrupt_when "crh run" TERM run --base-url "$url" --slow --minute-ms 60000 --load-duration 5 \
  --json "$work/term.json"
[ "$code" -eq 1 ] || { fail "SIGTERM during the contract phase of crh run: exit $code, expected 1"; tail -n 3 "$work/int.out" || true; }
[ "$secs" -le 8 ] || fail "SIGTERM during a slow check took $secs s to end crh run"
grep -q '"incomplete":true' "$work/term.json" || fail "the interrupted run is not marked incomplete"
aliases=$(curl -sS "$url/channels/1/alias-numbers" -H "Apikey: $key")
echo "$aliases" | grep -q '"aliases"' || fail "could not list the aliases to check the restore: $aliases"
if echo "$aliases" | grep -q 'crh-probe'; then fail "the interrupted run left probe tags behind: $aliases"; fi

step "f. SIGTERM during a load of crh run ends it within seconds"
CRH_API_KEY=$key interrupt_when "race load" TERM run --base-url "$url" --suite endpoints --load-duration 60 \
  --json "$work/term2.json"
[ "$code" -eq 1 ] || { fail "SIGTERM during the race load of crh run: exit $code, expected 1"; tail -n 3 "$work/int.out" || true; }
[ "$secs" -le 8 ] || fail "SIGTERM during a load took $secs s to end crh run"
grep -q '"incomplete":true' "$work/term2.json" || fail "the run interrupted in its load is not marked incomplete"

step "g. Ctrl-C during crh contract skips the rest, restores, and writes an incomplete result"
CRH_API_KEY=$key interrupt_when "crh contract" INT contract --base-url "$url" --slow --minute-ms 60000 \
  --json "$work/int-contract.json"
[ "$code" -eq 1 ] || { fail "Ctrl-C during crh contract: exit $code, expected 1"; tail -n 3 "$work/int.out" || true; }
[ "$secs" -le 8 ] || fail "Ctrl-C during crh contract took $secs s"
grep -q '"status":"incomplete"' "$work/int-contract.json" || fail "the interrupted contract result is not incomplete"
aliases=$(curl -sS "$url/channels/1/alias-numbers" -H "Apikey: $key")
if echo "$aliases" | grep -q 'crh-probe'; then fail "the interrupted contract left probe tags behind: $aliases"; fi
upstream=$url
upstream_pid=$pid

step "h. an interim 103 or 100 before every answer is skipped: contract, load and run pass and restore"
hostile_start interim-proxy --upstream "${upstream##*:}"
CRH_API_KEY=$key bounded 60 contract --base-url "$hurl" --json "$work/interim.json"
[ "$code" -eq 0 ] || { fail "crh contract behind interim answers exited $code, expected 0"; show; grep -m5 -A3 FAIL "$work/run.out"; }
CRH_API_KEY=$key bounded 60 load --base-url "$hurl" --scenario mixed --duration 1
[ "$code" -eq 0 ] || { fail "crh load --scenario mixed behind interim answers exited $code, expected 0"; show; }
CRH_API_KEY=$key bounded 60 load --base-url "$hurl" --scenario race --duration 1
[ "$code" -eq 0 ] || { fail "crh load --scenario race behind interim answers exited $code, expected 0"; show; }
CRH_API_KEY=$key bounded 120 run --base-url "$hurl" --load-duration 1
[ "$code" -eq 0 ] || { fail "crh run behind interim answers exited $code, expected 0"; show; }
grep -q 'not restored\|not verified' "$work/run.out" && fail "crh run behind interim answers could not restore: $(grep -m3 'not restored\|not verified' "$work/run.out")"
aliases=$(curl -sS "$upstream/channels/1/alias-numbers" -H "Apikey: $key")
if echo "$aliases" | grep -q 'crh-'; then fail "the run behind interim answers left tags behind: $aliases"; fi
for k in crh-probe-endpoints crh-probe-auth crh-probe-load; do
  v=$(curl -sS "$upstream/database/$k" -H "Apikey: $key")
  if echo "$v" | grep -q '"value":"[^"]'; then fail "database key $k was not restored: $v"; fi
done
stop "$hpid"
stop "$upstream_pid"

step "i. a target that sends headers and then closes: the contract run is UNTESTED (exit 3), not PASSED"
hostile_start headers-then-close
CRH_API_KEY=$key bounded 60 contract --base-url "$hurl" --json "$work/untested.json"
[ "$code" -eq 3 ] || { fail "crh contract against headers-then-close exited $code, expected 3"; show; }
grep -q 'UNTESTED' "$work/run.out" || fail "the verdict does not say UNTESTED"
grep -q '"status":"untested"' "$work/untested.json" || fail "the result document's status is not untested"
stop "$hpid"

step "j. a load in which every answer is a 302 fails (exit 1), and a threshold cannot make it pass"
hostile_start redirect
CRH_API_KEY=$key bounded 30 load --base-url "$hurl" --scenario get --path /x --duration 1 --json "$work/redirect.json"
[ "$code" -eq 1 ] || { fail "a load of 302s exited $code, expected 1"; show; }
grep -q 'no request succeeded' "$work/run.out" || fail "the verdict does not say that no request succeeded"
grep -q 'errors<1%.*the default.*BREACHED' "$work/run.out" || fail "the default error limit is not shown breached"
CRH_API_KEY=$key bounded 30 load --base-url "$hurl" --scenario get --path /x --duration 1 --threshold 'errors<=100%'
[ "$code" -eq 1 ] || { fail "a load of 302s with errors<=100% exited $code, expected 1"; show; }
stop "$hpid"

step "j2. every answer a 204 followed at once by an unsolicited 200: crh load fails, crh contract fails"
# Issue 22, item 6: before, 101,020 requests, 0 errors, PASSED (the 204s counted
# as success, the unsolicited 200s taken as the next requests' answers).
hostile_start unsolicited-after-204
CRH_API_KEY=$key bounded 30 load --base-url "$hurl" --scenario get --path /api/v1/local-agents --duration 1 \
  --json "$work/unsolicited.json"
[ "$code" -eq 1 ] || { fail "a load of 204s with unsolicited answers exited $code, expected 1"; show; }
grep -q 'PASSED' "$work/run.out" && fail "a load of 204s with unsolicited answers says PASSED"
grep -q '"unsolicited"' "$work/unsolicited.json" || fail "the result counts no unsolicited failure"
# (an unsolicited 200 that arrives after the next request was written cannot be
# told from its answer: a few may count, never enough to pass)
stop "$hpid"
# The contract's evidence must name the bytes. Sent in a second write they may
# reach it after its next request (then they are that request's "answer" and
# only the exit code can be asked for); in the 204's own write they always
# arrive with it.
hostile_start unsolicited-with-204
CRH_API_KEY=$key bounded 60 contract --base-url "$hurl" --suite endpoints --json "$work/unsolicited-contract.json"
[ "$code" -eq 1 ] || { fail "crh contract against 204s with unsolicited answers exited $code, expected 1"; show; }
grep -q 'no request asked for\|while no request was waiting' "$work/unsolicited-contract.json" ||
  fail "the contract's evidence does not name the unsolicited bytes"
stop "$hpid"

step "k. a target that echoes the key in every encoding: it appears nowhere"
hostile_start echo-key
secret='SeCrEt/Pro+be"Key\12'
CRH_API_KEY=$secret bounded 60 contract --base-url "$hurl" --json "$work/echo.json" --junit "$work/echo.xml" \
  --html "$work/echo.html"
[ "$code" -eq 1 ] || { fail "crh contract against the echo server exited $code, expected 1"; show; }
cp "$work/run.out" "$work/echo.out"
CRH_API_KEY=$secret bounded 30 load --base-url "$hurl" --scenario get --path /x --duration 1 --json "$work/echo-load.json"
cat "$work/run.out" "$work/run.err" >>"$work/echo.out"
grep -q 'CRH_API_KEY' "$work/echo.out" || fail "the echoed key is not shown as \$CRH_API_KEY"
forms=("$secret" 'SeCrEt\/Pro+be\"Key\\12' 'SeCrEt%2FPro%2Bbe%22Key%5C12' 'SeCrEt%2fPro%2bbe%22Key%5c12'
  "$(printf '%s' "$secret" | base64 -w0)" "$(printf '%s' "$secret" | base64 -w0 | tr '+/' '-_' | tr -d '=')"
  'SeCrEt/P' 'SeCrEt/Pro+be"K')
for f in "${forms[@]}"; do
  if grep -rqF -- "$f" "$work/echo.out" "$work/echo.json" "$work/echo.xml" "$work/echo.html" "$work/echo-load.json"; then
    fail "the key leaks in the form $f"
  fi
done
stop "$hpid"

step "l. a one-letter key: a warning, and outputs that stay valid and readable"
key=k start --aliases 24
CRH_API_KEY=k bounded 120 run --base-url "$url" --load-duration 1 --json "$work/short.json"
[ "$code" -eq 0 ] || { fail "crh run with the key k exited $code, expected 0"; show; }
grep -q 'warning: the API key is 1 character' "$work/run.err" || fail "no warning about the one-letter key"
grep -q 'release skew' "$work/run.out" || fail "the terminal text was corrupted by redaction: $(grep -m1 skew "$work/run.out")"
grep -q '"skew"' "$work/short.json" || fail "the result document's field names were corrupted by redaction"
run report "$work/short.json"
[ "$code" -eq 0 ] || { fail "crh report cannot read the result written with the key k (exit $code)"; show; }

[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "all hostile-target checks passed"
