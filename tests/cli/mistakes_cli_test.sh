#!/usr/bin/env bash
# The first day's mistakes are the user's, and crh says so: pointed at
# something that is not a Call-Routing Service as configured (a wrong key,
# channel or path, a proxy's error page, a redirect, a sign-in page, an empty
# JSON object, another service, a TLS port, a port nothing listens on), crh
# contract, crh load --scenario race and crh run end with exit 3 (a usage
# mistake in the flags: 2), print no FAIL line, at most 20 lines, a first line
# after the banner that names the mistake, never the key, and a result
# document whose verdict.status is untested (unreachable when nothing answers).
# The targets are crh serve and tests/support/mistake_server.py. Control runs
# against the right service and key (and one with an empty agent list) pass,
# so the checks are not met for free.
# Usage: mistakes_cli_test.sh CRH. Loopback only; about 3 minutes at most.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
mistake_server=$(cd "$(dirname "$0")/../support" && pwd)/mistake_server.py

# The mistakes: name | target | base URL suffix | extra flags (shell words) | exit | verdict.status | the cause
# line's words (grep -iE). Targets: ref (crh serve with the key), ref-other-key (crh serve with another key),
# closed (a port nothing listens on), server:MODE (mistake_server.py --mode MODE). Status "-": not checked.
cases=(
  "wrong-key              | ref-other-key                  |         |                | 3 | untested    | key"
  "channel-999            | ref                            |         | --channel 999  | 3 | untested    | channel"
  "path-v2                | ref                            | /v2/    |                | 3 | untested    | path"
  "nginx-502              | server:nginx-502               |         |                | 3 | untested    | proxy"
  "apache-502             | server:apache-502              |         |                | 3 | untested    | proxy"
  "plain-503              | server:plain-503               |         |                | 3 | untested    | proxy"
  "redirect-301-https     | server:redirect-301-https      |         |                | 3 | untested    | https"
  "redirect-302-https     | server:redirect-302-https      |         |                | 3 | untested    | https"
  "redirect-307-https     | server:redirect-307-https      |         |                | 3 | untested    | https"
  "redirect-308-https     | server:redirect-308-https      |         |                | 3 | untested    | https"
  "redirect-301-elsewhere | server:redirect-301-elsewhere  |         |                | 3 | untested    | redirect"
  "redirect-302-elsewhere | server:redirect-302-elsewhere  |         |                | 3 | untested    | redirect"
  "redirect-307-elsewhere | server:redirect-307-elsewhere  |         |                | 3 | untested    | redirect"
  "redirect-308-elsewhere | server:redirect-308-elsewhere  |         |                | 3 | untested    | redirect"
  "login-200              | server:login-200               |         |                | 3 | untested    | sign-in|login"
  "login-401              | server:login-401               |         |                | 3 | untested    | sign-in|login"
  "login-302              | server:login-302               |         |                | 3 | untested    | sign-in|login"
  "empty-json             | server:empty-json              |         |                | 3 | untested    | list"
  "other-service-json     | server:other-service-json      |         |                | 3 | untested    | path|service"
  "other-service-html     | server:other-service-html      |         |                | 3 | untested    | page|path"
  "tls                    | server:tls                     |         |                | 3 | untested    | tls"
  "profile-mismatch       | ref                            |         | --profile \"$work/mismatch.json\" | 3 | untested | profile"
  "closed-port            | closed                         |         |                | 3 | unreachable | reach"
  "never-accepts          | server:silent                  |         |                | 3 | unreachable | answered within"
  "empty-channel          | ref                            |         | --channel ''   | 2 | -           | ."
  "query-in-base-url      | ref                            | /?x=1   |                | 2 | -           | ."
)
# The commands each mistake is tried with (--timeout 2000 --json --junit are added to each).
commands=(
  "contract"
  "load --scenario race --duration 2"
  "run --load-duration 2"
)
# Banner lines, skipped when looking for the cause line, per command (grep -E).
banner_contract='^crh contract: checking'
banner_load='^crh load: race on'
banner_run='^crh run: http|^crh run: exploring'
banner_any='^crh [a-z]+: warning:'
max_lines=20
limit_s=60 # the hard limit of one crh invocation

# A 24-character random key for the run, in every crh's environment.
key=$(python3 -c 'import secrets, string; a = string.ascii_letters + string.digits; print("".join(secrets.choice(a) for _ in range(24)))')
export CRH_API_KEY=$key
other_key=$(python3 -c 'import secrets, string; a = string.ascii_letters + string.digits; print("".join(secrets.choice(a) for _ in range(24)))')
printf '%s\n' "$other_key" >"$work/other.key"

trim() { local s=$1; s=${s#"${s%%[![:space:]]*}"}; s=${s%"${s##*[![:space:]]}"}; printf '%s' "$s"; }
status_of() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["verdict"]["status"])' "$1" 2>/dev/null || echo none; }

# Starts mistake_server.py in mode $1; sets $mpid and $murl.
mistake_start() {
  local mode=$1 n=${#pids[@]}
  PYTHONDONTWRITEBYTECODE=1 python3 "$mistake_server" --mode "$mode" --port-file "$work/ms.port.$n" \
    2>"$work/ms.err.$n" &
  mpid=$!
  pids+=("$mpid")
  for _ in $(seq 600); do
    [ -s "$work/ms.port.$n" ] && { murl="http://127.0.0.1:$(cat "$work/ms.port.$n")"; return 0; }
    kill -0 "$mpid" 2>/dev/null || break
    sleep 0.05
  done
  echo "mistake_server.py --mode $mode did not start: $(cat "$work/ms.err.$n")"
  return 1
}

bad_cases=()
rows=0
printf '%-24s | %-8s | %4s | %5s | %s\n' mistake command exit lines "first line"
printf '%s\n' "-------------------------+----------+------+-------+-----------------------------------------------"

# run_case NAME BASE_URL WANT_EXIT WANT_STATUS WORDS COMMAND [EXTRA FLAGS...]: one crh invocation and its checks;
# prints its row, and records the case as bad when a check fails.
run_case() {
  local name=$1 base=$2 want_exit=$3 want_status=$4 words=$5 cmd=$6
  shift 6
  local sub=${cmd%% *} tag out json junit code=0 lines first banner status problems=() files=() f
  tag="$name.$sub"
  out="$work/$tag.out" json="$work/$tag.json" junit="$work/$tag.xml"
  # shellcheck disable=SC2086 # the command's own flags are words
  timeout -k 2 "$limit_s" "$crh" $cmd --base-url "$base" --timeout 2000 --json "$json" --junit "$junit" "$@" \
    >"$out" 2>&1 || code=$?
  lines=$(awk 'END { print NR }' "$out")
  case $sub in
    contract) banner=$banner_contract ;;
    load) banner=$banner_load ;;
    *) banner=$banner_run ;;
  esac
  first=$(grep -v -E -- "$banner|$banner_any" "$out" | grep -v -m1 '^[[:space:]]*$' || true)
  [ "$code" -eq "$want_exit" ] || problems+=("exit $code, expected $want_exit")
  if grep -q '^FAIL' "$out"; then problems+=("a FAIL line: $(grep -m1 '^FAIL' "$out" | cut -c1-100)"); fi
  [ "$lines" -le "$max_lines" ] || problems+=("$lines lines, at most $max_lines expected")
  if [ "$words" != "." ]; then
    if [ -z "$first" ] || ! grep -qiE -- "$words" <<<"$first"; then problems+=("the cause line lacks /$words/"); fi
  fi
  for f in "$out" "$json" "$junit"; do if [ -f "$f" ]; then files+=("$f"); fi; done
  if grep -qF -- "$key" "${files[@]}"; then
    problems+=("the key leaks in $(grep -lF -- "$key" "${files[@]}" | xargs -n1 basename | tr '\n' ' ')")
  fi
  if [ "$want_status" != "-" ]; then
    status=$(status_of "$json")
    [ "$status" = "$want_status" ] || problems+=("verdict.status $status, expected $want_status")
  fi
  printf '%-24s | %-8s | %4s | %5s | %s\n' "$name" "$sub" "$code" "$lines" "$(cut -c1-400 <<<"${first:-(none)}")"
  rows=$((rows + 1))
  if [ ${#problems[@]} -gt 0 ]; then
    bad_cases+=("$name/$sub")
    for p in "${problems[@]}"; do echo "    ! $p"; done
  fi
  return 0
}

# The control: the right service with the right key passes (exit 0, verdict passed, the key nowhere).
control() {
  local sub=$1 tag=control.$1 code=0 lines status
  shift
  timeout -k 2 "$limit_s" "$crh" "$sub" --base-url "$url" --timeout 2000 --json "$work/$tag.json" \
    --junit "$work/$tag.xml" "$@" >"$work/$tag.out" 2>&1 || code=$?
  lines=$(awk 'END { print NR }' "$work/$tag.out")
  status=$(status_of "$work/$tag.json")
  printf '%-24s | %-8s | %4s | %5s | %s\n' control "$sub" "$code" "$lines" "verdict.status $status"
  rows=$((rows + 1))
  local problems=()
  [ "$code" -eq 0 ] || problems+=("exit $code, expected 0: $(grep -m3 -E '^(FAIL|verdict)|error' "$work/$tag.out" | tr '\n' ' ')")
  [ "$status" = passed ] || problems+=("verdict.status $status, expected passed")
  if grep -qF -- "$key" "$work/$tag.out" "$work/$tag.json" "$work/$tag.xml" 2>/dev/null; then problems+=("the key leaks"); fi
  if [ ${#problems[@]} -gt 0 ]; then
    bad_cases+=("control/$sub")
    for p in "${problems[@]}"; do echo "    ! $p"; done
  fi
  return 0
}

# A profile for another dialect: aliases named by a field this service does not have.
printf '{"id_fields": {"alias": ["alias_number_uuid"]}}\n' >"$work/mismatch.json"
# A correct service with no agents at all is no mistake.
printf '{"agents": [], "channels": [{"id": "1", "aliases": [{"id": "1", "number": "+15550101"}, {"id": "2", "number": "+15550102"}]}]}\n' \
  >"$work/no-agents.json"

t0=$(date +%s)
start
control contract
control load --scenario race --duration 2
stop "$pid"
start --fixtures "$work/no-agents.json"
control contract
stop "$pid"
# A correct but slow service (a listen queue of 5, each answer's head and body in two writes): the
# default race measures rounds and passes.
start
python3 "$(dirname "$mistake_server")/slow_front.py" --upstream "$url" --port-file "$work/slow.port" 2>"$work/slow.err" &
pids+=($!)
for _ in $(seq 200); do [ -s "$work/slow.port" ] && break; sleep 0.05; done
slow_url="http://127.0.0.1:$(cat "$work/slow.port")"
url=$slow_url control load --scenario race --duration 5
rounds=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["race"]["rounds"])' "$work/control.load.json" 2>/dev/null || echo 0)
echo "slow service: the race measured $rounds rounds in 5 s"
if [ "$rounds" -lt 20 ]; then bad_cases+=("slow-service/rounds=$rounds"); fi
# The same service serving one connection at a time: a race cannot be run on
# it, and the load says so at set-up (exit 3), not that the call hook is wrong.
python3 "$(dirname "$mistake_server")/slow_front.py" --upstream "$url" --port-file "$work/serial.port" \
  --one-at-a-time 2>"$work/serial.err" &
serial_pid=$!
pids+=("$serial_pid")
for _ in $(seq 200); do [ -s "$work/serial.port" ] && break; sleep 0.05; done
serial=0
CRH_API_KEY=$key timeout -k 2 60 "$crh" load --base-url "http://127.0.0.1:$(cat "$work/serial.port")" --scenario race \
  --duration 2 --timeout 1000 >"$work/serial.out" 2>&1 || serial=$?
echo "one connection at a time: exit $serial: $(grep -o 'did not connect.*' "$work/serial.out" | cut -c1-160)"
if [ "$serial" -ne 3 ] || ! grep -q "serves one connection at a time" "$work/serial.out"; then
  bad_cases+=("one-connection-at-a-time/exit=$serial")
fi
stop "$serial_pid"
stop "$pid"

start
ref_url=$url
start --api-key-file "$work/other.key"
other_url=$url
closed_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')

for row in "${cases[@]}"; do
  IFS='|' read -r name target suffix extra want_exit want_status words <<<"$row"
  name=$(trim "$name") target=$(trim "$target") suffix=$(trim "$suffix") extra=$(trim "$extra")
  want_exit=$(trim "$want_exit") want_status=$(trim "$want_status") words=$(trim "$words")
  flags=()
  eval "flags=($extra)"
  mpid=
  case $target in
    ref) base=$ref_url ;;
    ref-other-key) base=$other_url ;;
    closed) base="http://127.0.0.1:$closed_port" ;;
    server:*)
      if ! mistake_start "${target#server:}"; then
        bad_cases+=("$name/(server)")
        continue
      fi
      base=$murl
      ;;
    *) echo "unknown target $target in the table"; exit 1 ;;
  esac
  for cmd in "${commands[@]}"; do
    run_case "$name" "$base$suffix" "$want_exit" "$want_status" "$words" "$cmd" ${flags[@]+"${flags[@]}"}
  done
  [ -z "$mpid" ] || stop "$mpid"
done

echo
echo "summary: $rows runs in $(($(date +%s) - t0)) s, ${#bad_cases[@]} failed"
if [ ${#bad_cases[@]} -gt 0 ]; then
  echo "failed: ${bad_cases[*]}"
  exit 1
fi
echo "cli.mistakes: every mistake was named as the user's"
