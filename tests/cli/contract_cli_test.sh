#!/usr/bin/env bash
# `crh contract` as a user runs it: against the embedded service and against
# `crh serve` (healthy and with faults), the --json/--junit files, the key
# never leaking, a dead target and the usage errors, each with its exit code.
# Loopback only; every server is stopped on exit.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
# a. The embedded reference service passes its own contract.
step "a. crh contract (embedded service) exits 0 and prints PASSED"
run contract
[ "$code" -eq 0 ] || { fail "crh contract against the embedded service exited $code, expected 0"; show; }
grep -q "PASSED" "$work/run.out" || fail "crh contract against the embedded service did not print PASSED"

# b. The check list.
step "b. crh contract --list-checks exits 0 and lists binding.race"
run contract --list-checks
[ "$code" -eq 0 ] || fail "--list-checks exited $code, expected 0"
grep -q "binding\.race" "$work/run.out" || fail "--list-checks does not list binding.race"
grep -q "aliases\.lru-cycle" "$work/run.out" || fail "--list-checks does not list aliases.lru-cycle"

# c. A healthy crh serve, with result files; the key never shows.
step "c. crh contract --base-url (healthy crh serve) with --json and --junit"
start --minute-ms 1000
CRH_API_KEY=$key run contract --base-url "$url" --channel 1 --json "$work/result.json" --junit "$work/result.xml"
[ "$code" -eq 0 ] || { fail "crh contract against a healthy crh serve exited $code, expected 0"; show; }
grep -q "PASSED" "$work/run.out" || fail "no PASSED against a healthy crh serve"
for f in result.json result.xml; do [ -s "$work/$f" ] || fail "$f was not written"; done
if command -v python3 >/dev/null 2>&1; then
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["verdict"]["exit_code"] == 0, d["verdict"]' \
    "$work/result.json" || fail "result.json is not valid JSON with exit_code 0"
else
  echo "  (python3 not found: skipping the JSON validity check)"
fi
if command -v xmllint >/dev/null 2>&1; then
  xmllint --noout "$work/result.xml" || fail "result.xml is not well-formed XML"
else
  echo "  (xmllint not found: skipping the XML well-formedness check)"
fi
for rule in C1 C2 E1 E2 E3 E4 E5 E6 E7 E8 E9 R1 R2 R3 R4 R5 A2 T1 B1 B2 B3 X1 X2 V1; do
  grep -qF "\"id\":\"$rule\"" "$work/result.json" || fail "result.json does not mention rule $rule"
  grep -qF "name=\"$rule " "$work/result.xml" || fail "result.xml has no rules testcase for $rule"
done
for f in result.json result.xml run.out run.err; do
  if grep -qF "$key" "$work/$f"; then fail "the API key leaked into $f"; fi
done
stop "$pid"

# d. A target that tags the most recently used alias.
step "d. crh contract against crh serve --fault lru-mru exits 1 naming aliases.lru-cycle"
start --fault lru-mru
CRH_API_KEY=$key run contract --base-url "$url"
[ "$code" -eq 1 ] || { fail "lru-mru: exit $code, expected 1"; show; }
grep -q "aliases\.lru-cycle" "$work/run.out" || { fail "lru-mru: the output does not name aliases.lru-cycle"; show; }
if grep -qF "$key" "$work/run.out" "$work/run.err"; then fail "the API key leaked into the lru-mru output"; fi
stop "$pid"

# e. A target whose tags never expire (needs --slow).
step "e. crh contract --slow against crh serve --fault expiry-never exits 1 naming expiry.lifetime"
start --fault expiry-never --minute-ms 1000
CRH_API_KEY=$key run contract --base-url "$url" --slow --minute-ms 1000
[ "$code" -eq 1 ] || { fail "expiry-never: exit $code, expected 1"; show; }
grep -q "expiry\.lifetime" "$work/run.out" || { fail "expiry-never: the output does not name expiry.lifetime"; show; }
stop "$pid"

# f. A dead target: a port that was just free.
step "f. crh contract against a dead loopback port exits 3 within 5 s"
start
dead_port=${url##*:}
stop "$pid"
t0=$(date +%s%N)
CRH_API_KEY=$key run contract --base-url "http://127.0.0.1:$dead_port"
elapsed_ms=$((($(date +%s%N) - t0) / 1000000))
[ "$code" -eq 3 ] || { fail "dead target: exit $code, expected 3"; show; }
[ "$elapsed_ms" -lt 5000 ] || fail "dead target: took ${elapsed_ms} ms, expected under 5000"
echo "  (dead target answered in ${elapsed_ms} ms)"

# g. Usage errors exit 2.
step "g. usage errors exit 2"
expect_usage() {
  local what=$1
  shift
  run "$@"
  [ "$code" -eq 2 ] || { fail "$what: exit $code, expected 2"; show; }
}
expect_usage "unknown --suite" contract --suite no-such-suite
expect_usage "--check matching nothing" contract --check no-such-check
(
  unset CRH_API_KEY
  run contract --base-url http://127.0.0.1:9
  [ "$code" -eq 2 ] || { echo "FAIL: --base-url without a key: exit $code, expected 2"; show; exit 1; }
  grep -q "CRH_API_KEY" "$work/run.err" || { echo "FAIL: the missing-key error does not mention CRH_API_KEY"; exit 1; }
) || failures=$((failures + 1))
echo '{"encodingg": "form"}' >"$work/profile.json"
expect_usage "profile with an unknown field" contract --profile "$work/profile.json"
grep -q "encodingg" "$work/run.err" || fail "the profile error does not name the unknown field"
CRH_API_KEY=$key expect_usage "ftp:// base URL" contract --base-url ftp://x

if [ "$failures" -eq 0 ]; then echo "contract CLI: all checks passed"; else echo "contract CLI: $failures failure(s)"; exit 1; fi
