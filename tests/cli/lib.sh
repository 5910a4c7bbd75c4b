# The shared prelude of the CLI tests: a scratch folder, crh serve started
# on 127.0.0.1:0 and stopped on exit, and run/fail helpers. Sourced with
# crh as $1; loopback only.

crh=$1
work=$(mktemp -d)
pids=()
cleanup() {
  for p in ${pids[@]+"${pids[@]}"}; do kill -TERM "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
failures=0
step() { echo "--- $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
key=cli-secret-key-5d1e

# Runs crh with the given arguments; sets $code, output in $work/run.out and $work/run.err.
run() {
  code=0
  "$crh" "$@" >"$work/run.out" 2>"$work/run.err" || code=$?
}
show() { echo "  stdout: $(tail -n 5 "$work/run.out")"; echo "  stderr: $(tail -n 5 "$work/run.err")"; }

# Prints the loopback URL server $2 prints in file $1, waiting up to 10 s;
# fails when none comes or the server died.
await_url() {
  local found
  for _ in $(seq 200); do
    found=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$1" 2>/dev/null | head -n1 || true)  # not there yet: wait
    [ -n "$found" ] && { echo "$found"; return 0; }
    kill -0 "$2" 2>/dev/null || break
    sleep 0.05
  done
  return 1
}

# Starts crh serve on 127.0.0.1:0 with the given arguments; sets $pid and $url.
start() {
  local n=${#pids[@]}
  CRH_API_KEY=$key "$crh" serve --listen 127.0.0.1:0 --threads 2 "$@" >"$work/serve.out.$n" 2>"$work/serve.err.$n" &
  pid=$!
  pids+=("$pid")
  url=$(await_url "$work/serve.out.$n" "$pid") && return 0
  echo "FAIL: crh serve $* did not print its URL: $(cat "$work/serve.err.$n")"
  exit 1
}
stop() { kill -TERM "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }

# Runs crh with the key in its environment and a hard limit of $1 seconds;
# sets $code (124: it had to be killed) and $took (seconds). Every output is
# kept in $work/all.out for expect_no_key.
bounded() {
  local limit=$1 t0
  shift
  code=0
  t0=$(date +%s.%N)
  CRH_API_KEY=$key timeout -k 2 "$limit" "$crh" "$@" >"$work/run.out" 2>"$work/run.err" || code=$?
  took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  cat "$work/run.out" "$work/run.err" >>"$work/all.out"
}

# expect_exit WANT WHAT: prints what was expected and what came back; a
# failure, with the run's findings, when they differ.
expect_exit() {
  local want=$1 what=$2
  echo "  expected exit $want, got $code"
  [ "$code" -eq "$want" ] && return 0
  fail "$what exited $code, expected $want"
  show
  grep -A2 '^FAIL\|^WARN\|^INDET' "$work/run.out" | head -n 30 || true
}

# The key appears in no output of bounded runs and in no result file.
expect_no_key() {
  if grep -rqF -- "$key" "$work/all.out" "$work"/*.json; then
    fail "the key leaks: $(grep -rlF -- "$key" "$work/all.out" "$work"/*.json | tr '\n' ' ')"
  else
    echo "  expected the key nowhere, found it nowhere"
  fi
}
