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

# h. The rerun line printed under a failure reruns it (issue 22 item 4): pasted
# as printed, the same check fails again, not skip (no --slow), not pass (no
# --profile, no --strict), not a usage error (no key: it came from a file).
# Paths with a space and a quote must survive the shell; the key never shows.
step "h. each printed rerun line, executed as printed, fails the same check again"
start --fault expiry-never --minute-ms 1000
mkdir -p "$work/a dir"
key_file="$work/a dir/the key's file"
printf '%s\n' "$key" >"$key_file"
profile="$work/a dir/auth 403's.json"
echo '{"statuses": {"auth": [403]}}' >"$profile"  # crh serve refuses with 401: a SHOULD, failing with --strict
# Runs the rerun line printed for check $1 in $2 as a shell would, without
# CRH_API_KEY unless $3 is "env"; expects exit 1 with the same check failing.
rerun_fails_again() {
  local id=$1 out=$2 line rc=0
  line=$(grep -m1 -E -- "^ *rerun: .* --check $id\$" "$out" | sed 's/^ *rerun: //' || true)
  [ -n "$line" ] || { fail "no rerun line for $id in $out"; return; }
  echo "  \$ $line"
  if [ "${3:-}" = env ]; then
    (export CRH_API_KEY=$key PATH="$(dirname "$crh"):$PATH"; eval "timeout 60 $line") >"$work/rerun.out" 2>&1 || rc=$?
  else
    (unset CRH_API_KEY; export PATH="$(dirname "$crh"):$PATH"; eval "timeout 60 $line") >"$work/rerun.out" 2>&1 || rc=$?
  fi
  [ "$rc" -eq 1 ] || { fail "rerun of $id exited $rc, expected 1: $line"; tail -n 5 "$work/rerun.out"; }
  grep -Eq "^FAIL +$id " "$work/rerun.out" || { fail "rerun of $id did not fail it again: $line"; tail -n 8 "$work/rerun.out"; }
  if grep -qF "$key" "$work/rerun.out"; then fail "the API key leaked into the rerun's output"; fi
}
(
  unset CRH_API_KEY
  run contract --base-url "$url" --channel 1 --api-key-file "$key_file" --profile "$profile" --slow \
    --minute-ms 1000 --timeout 3000 --strict --suite auth --suite expiry \
    --json "$work/rerun.json" --junit "$work/rerun.xml" --html "$work/rerun.html"
  [ "$code" -eq 1 ] || { echo "FAIL: the run to rerun exited $code, expected 1"; show; exit 1; }
) || failures=$((failures + 1))
cp "$work/run.out" "$work/first.out"
rerun_fails_again expiry.lifetime "$work/first.out"
rerun_fails_again auth.missing-key.agents-list "$work/first.out"
grep -qF -- "--api-key-file" "$work/rerun.xml" || fail "the JUnit failure has no rerun line with --api-key-file"
grep -qF -- "--strict --check auth.missing-key.agents-list" "$work/rerun.html" || fail "the HTML report has no rerun line"
for f in first.out rerun.json rerun.xml rerun.html; do
  if grep -qF "$key" "$work/$f"; then fail "the API key leaked into $f"; fi
done
# The key from the environment: the rerun adds nothing for it and says to export it.
CRH_API_KEY=$key run contract --base-url "$url" --profile "$profile" --strict --suite auth --json "$work/env.json"
[ "$code" -eq 1 ] || { fail "the run with CRH_API_KEY exited $code, expected 1"; show; }
cp "$work/run.out" "$work/env.out"
if grep 'rerun: ' "$work/env.out" | grep -qF -- "--api-key-file"; then fail "a rerun line names --api-key-file that was never given"; fi
grep -q "export CRH_API_KEY" "$work/env.out" || fail "the output does not say to export CRH_API_KEY for the rerun lines"
for f in env.out env.json; do
  if grep -qF "$key" "$work/$f"; then fail "the API key leaked into $f"; fi
done
rerun_fails_again auth.missing-key.agents-list "$work/env.out" env
stop "$pid"

if [ "$failures" -eq 0 ]; then echo "contract CLI: all checks passed"; else echo "contract CLI: $failures failure(s)"; exit 1; fi
