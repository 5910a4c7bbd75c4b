#!/usr/bin/env bash
# End-to-end test of a sharded load (DESIGN.md §6 "Scale-out"): the command
# lines of the Kubernetes manifests (deploy/kubernetes/crh-shards.yaml and
# crh-merge.yaml, rendered by tests/deploy/manifest_command.mjs with the knobs
# of knobs.yaml overridden; never copied here), run as N = 3 shards against
# one `crh serve`, then merged with `crh report`:
#
#   1. the race, 7 rounds in flight (3/2/2), one --start-at (RFC 3339) for all:
#      the merge passes; its totals and per-operation counts are the shards'
#      sums; every merged latency histogram is the bucket-wise sum of the
#      shards' and its percentiles are the ones recomputed from that union
#      (tests/cli/shard_merge_check.mjs, independent of crh); no violation;
#      the shard set is complete, with each shard's start and the start skew;
#   2. the mixed load, open loop at CRH_RATE 600/s for the whole run
#      (--start-at in Unix seconds), with `requests<1300`: each shard holds it
#      (~570-860 requests: the 7 connections split 3/2/2, each tag followed by
#      an untag outside the rate) and exits 0, its threshold deferred; the merge
#      (~2000 requests) breaches it and exits 1 naming it;
#   3. two of the three shard files: exit 1, incomplete, shard 2 missing;
#      shards of two runs of the race (one more shard, 1 s): exit 2 naming
#      both; and the checker itself refuses a merged result whose p99 or
#      buckets were altered.
#
# As root, each process runs in its own network namespace (the server in one,
# each shard in another), all joined by veth pairs to a bridge in a "switch"
# namespace, on 10.213.0.0/24; nothing touches the host's interfaces, and every
# namespace is deleted on exit. Without root or `ip netns`, the same scenarios
# run as plain processes on 127.0.0.1 (the reason is printed);
# CRH_E2E_FORCE_LOOPBACK=1 forces that mode. CRH_E2E_KEEP=1 keeps the scratch
# folder (shard files, merged.json, outputs) and prints where.
#
#   tests/cli/shard_e2e_test.sh build/crh
#
# Exit codes: 0 every check held; 1 one failed; 77 skipped (no node, or the
# npm packages of tests/deploy are not installed: scripts/install-test-tools.sh).
set -uo pipefail

if [ $# -ne 1 ] || [ ! -x "$1" ]; then
  echo "usage: $0 path/to/crh" >&2
  exit 2
fi
crh=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
manifests=$root/deploy/kubernetes
render=$root/tests/deploy/manifest_command.mjs
check=$here/shard_merge_check.mjs
began=$SECONDS

if ! command -v node >/dev/null 2>&1; then
  echo "SKIP: node is not installed (scripts/install-test-tools.sh installs it); the shard commands are read from the manifests with it"
  exit 77
fi
if [ ! -d "$root/tests/deploy/node_modules/yaml" ]; then
  echo "SKIP: the npm packages of tests/deploy are not installed ($root/tests/deploy/node_modules/yaml is missing); run scripts/install-test-tools.sh"
  exit 77
fi

work=$(mktemp -d /tmp/crh-shard-e2e.XXXXXX)
key=shard-e2e-key-$$-7c1f
n=3
pids=()
namespaces=()
ns_prefix=crh-e2e-$$
failures=0
step() { echo "--- $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
reproduce="reproduce: CRH_E2E_KEEP=1 ${CRH_E2E_FORCE_LOOPBACK:+CRH_E2E_FORCE_LOOPBACK=1 }$0 $1"

# Stops every process this test started (TERM, then KILL after 5 s), by pid.
stop_all() {
  local p alive
  for p in ${pids[@]+"${pids[@]}"}; do kill -TERM "$p" 2>/dev/null || true; done
  for _ in $(seq 50); do
    alive=0
    for p in ${pids[@]+"${pids[@]}"}; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ $alive = 0 ] && break
    sleep 0.1
  done
  for p in ${pids[@]+"${pids[@]}"}; do kill -KILL "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  pids=()
}
teardown_netns() {
  local ns p
  for ns in ${namespaces[@]+"${namespaces[@]}"}; do
    # Anything still inside one of our namespaces was started by this test.
    for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
    ip netns del "$ns" 2>/dev/null || echo "note: could not delete network namespace $ns"
  done
  namespaces=()
}
finish() {
  local code=$?
  trap - EXIT INT TERM
  stop_all
  teardown_netns
  if [ "${CRH_E2E_KEEP:-0}" = 1 ]; then echo "kept: $work"; else rm -rf "$work"; fi
  exit $code
}
trap finish EXIT
trap 'echo "interrupted"; exit 130' INT TERM

# Runs "$@" in namespace $1 (netns mode) or here (loopback mode).
in_ns() {
  local ns=$1
  shift
  if [ "$mode" = netns ]; then ip netns exec "$ns_prefix-$ns" "$@"; else "$@"; fi
}
# Starts "${@:4}" in the background in namespace $1 (as in_ns), stdout to $2 and
# stderr to $3; sets $bg to its pid and adds it to $pids. A simple command is
# backgrounded (no function, no subshell), so $! is the process itself (ip
# netns exec execs the command in place), and a kill reaches it.
bg_in() {
  local ns=$1 out=$2 err=$3
  shift 3
  if [ "$mode" = netns ]; then
    ip netns exec "$ns_prefix-$ns" "$@" >"$out" 2>"$err" &
  else
    "$@" >"$out" 2>"$err" &
  fi
  bg=$!
  pids+=("$bg")
}

# -------------------------------------------------------------------- the network

# The switch namespace holds bridge br0; each other namespace gets eth0 at
# 10.213.0.$addr, its peer port p-$name on the bridge. On failure, sets $why
# (what made is deleted by teardown_netns).
setup_netns() {
  if [ "$(id -u)" -ne 0 ]; then why="not root"; return 1; fi
  command -v ip >/dev/null 2>&1 || { why="no ip command (iproute2)"; return 1; }
  why=$(ip netns add "$ns_prefix-sw" 2>&1) || { why="ip netns add failed: $why"; return 1; }
  namespaces+=("$ns_prefix-sw")
  why=$( {
    ip -n "$ns_prefix-sw" link add br0 type bridge &&
    ip -n "$ns_prefix-sw" link set br0 up &&
    ip -n "$ns_prefix-sw" link set lo up; } 2>&1) || { why="no bridge in the switch namespace: $why"; return 1; }
  local spec name addr
  for spec in srv:1 s0:10 s1:11 s2:12; do
    name=${spec%%:*} addr=${spec##*:}
    why=$(ip netns add "$ns_prefix-$name" 2>&1) || { why="ip netns add $ns_prefix-$name failed: $why"; return 1; }
    namespaces+=("$ns_prefix-$name")
    why=$( {
      # Both ends are created inside their namespaces: the host's own links are never touched.
      ip link add "p-$name" netns "$ns_prefix-sw" type veth peer name eth0 netns "$ns_prefix-$name" &&
      ip -n "$ns_prefix-sw" link set "p-$name" master br0 &&
      ip -n "$ns_prefix-sw" link set "p-$name" up &&
      ip -n "$ns_prefix-$name" link set lo up &&
      ip -n "$ns_prefix-$name" addr add "10.213.0.$addr/24" dev eth0 &&
      ip -n "$ns_prefix-$name" link set eth0 up; } 2>&1) || { why="veth for $name failed: $why"; return 1; }
  done
}

# Namespaces a killed earlier run of this test left (ctest's timeout kills
# without a trap): crh-e2e-PID-* of a PID that no longer runs.
if [ "$(id -u)" -eq 0 ] && command -v ip >/dev/null 2>&1; then
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^crh-e2e-[0-9]+-(sw|srv|s[0-9]+)$'); do
    owner=${ns#crh-e2e-}
    owner=${owner%%-*}
    kill -0 "$owner" 2>/dev/null && continue
    for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
    ip netns del "$ns" 2>/dev/null && echo "note: deleted $ns, left by an earlier run that was killed"
  done
fi

mode=loopback
why=
if [ "${CRH_E2E_FORCE_LOOPBACK:-0}" = 1 ]; then
  echo "mode: loopback (CRH_E2E_FORCE_LOOPBACK=1): server and shards are plain processes on 127.0.0.1"
elif setup_netns; then
  mode=netns
  echo "mode: netns: server in $ns_prefix-srv (10.213.0.1), shards in $ns_prefix-s0..s2 (10.213.0.10-12), bridged in $ns_prefix-sw"
else
  teardown_netns
  echo "mode: loopback: network namespaces unavailable ($why); server and shards are plain processes on 127.0.0.1"
fi
# Where shard $1 runs, for messages.
where() { if [ "$mode" = netns ]; then echo "namespace $ns_prefix-s$1"; else echo "a plain process"; fi; }
# The prefix that reproduces running in shard $1's namespace.
ns_exec() { if [ "$mode" = netns ]; then echo "ip netns exec $ns_prefix-s$1 "; fi; }

# --------------------------------------------------------------------- the server

step "crh serve, reachable from every shard"
if [ "$mode" = netns ]; then host=10.213.0.1; else host=127.0.0.1; fi
# timeout(1): should this script be killed without its trap, the server still ends.
CRH_API_KEY=$key bg_in srv "$work/serve.out" "$work/serve.err" timeout -k 5 150 "$crh" serve --listen "$host:0" --threads 2 --aliases 24
server=$bg
url=
for _ in $(seq 200); do
  url=$(grep -o "http://${host//./\\.}:[0-9]*" "$work/serve.out" | head -n1 || true)
  [ -n "$url" ] && break
  kill -0 "$server" 2>/dev/null || break
  sleep 0.05
done
if [ -z "$url" ]; then
  echo "FAIL: crh serve --listen $host:0 printed no URL within 10 s: $(cat "$work/serve.out" "$work/serve.err")"
  exit 1
fi
port=${url##*:}
for i in $(seq 0 $((n - 1))); do
  ok=0
  for _ in $(seq 50); do
    if in_ns "s$i" timeout 2 bash -c "exec 3<>/dev/tcp/$host/$port" 2>/dev/null; then ok=1; break; fi
    sleep 0.1
  done
  if [ $ok = 0 ]; then
    echo "FAIL: $url is not reachable from shard $i ($(where "$i")) within 5 s"
    exit 1
  fi
done
echo "$url answers from every shard's side"

# ------------------------------------------------------------ the manifests' commands

# Renders the shard Job's command for shard $1 into array `cmd`, with the
# results directory $2 and the knobs "${@:3}" (VAR=value) overriding knobs.yaml.
shard_command() {
  local i=$1 dir=$2
  shift 2
  if ! node "$render" -0 --job crh-shards --configmap "$manifests/knobs.yaml" --binary "$crh" \
      --mount "/results=$dir" "$manifests/crh-shards.yaml" \
      JOB_COMPLETION_INDEX="$i" CRH_SHARDS=$n CRH_BASE_URL="$url" "$@" >"$dir/.cmd.$i" 2>"$dir/.cmd.err"; then
    echo "FAIL: manifest_command.mjs could not render shard $i's command: $(cat "$dir/.cmd.err")"
    exit 1
  fi
  mapfile -d '' -t cmd <"$dir/.cmd.$i"
}
# The merge Job's command over the shard files in $1, into array `cmd`.
merge_command() {
  local dir=$1
  if ! node "$render" -0 --job crh-merge --configmap "$manifests/knobs.yaml" --binary "$crh" \
      --mount "/results=$dir" "$manifests/crh-merge.yaml" >"$dir/.merge.cmd" 2>"$dir/.cmd.err"; then
    echo "FAIL: manifest_command.mjs could not render the merge command: $(cat "$dir/.cmd.err")"
    exit 1
  fi
  mapfile -d '' -t cmd <"$dir/.merge.cmd"
}

# Runs the N shards of one run into $1 with knobs "${@:2}" (CRH_START_AT among
# them); sets shard_code[i]. Every shard is bounded by timeout(1).
declare -a shard_code
run_shards() {
  local dir=$1 i
  shift
  local spids=()
  local cmds=()
  for i in $(seq 0 $((n - 1))); do
    shard_command "$i" "$dir" "$@"
    cmds+=("$(printf '%q ' "${cmd[@]}")")
    CRH_API_KEY=$key bg_in "s$i" "$dir/out.$i" "$dir/err.$i" timeout -k 5 40 "${cmd[@]}"
    spids+=("$bg")
  done
  for i in $(seq 0 $((n - 1))); do
    echo "  shard $i: CRH_API_KEY=... $(ns_exec "$i")${cmds[$i]}"
  done
  for i in $(seq 0 $((n - 1))); do
    shard_code[i]=0
    wait "${spids[$i]}" || shard_code[i]=$?
  done
}
show_shard() { echo "  shard $1 stdout: $(tail -n 6 "$2/out.$1")"; echo "  shard $1 stderr: $(tail -n 3 "$2/err.$1")"; }
# Runs the merge command rendered for $1; sets merge_code, output in $1/merge.out and merge.err.
run_merge() {
  local dir=$1
  merge_command "$dir"
  echo "  merge: $(printf '%q ' "${cmd[@]}")"
  merge_code=0
  timeout -k 5 30 "${cmd[@]}" >"$dir/merge.out" 2>"$dir/merge.err" || merge_code=$?
}
show_merge() { echo "  merge stdout: $(tail -n 12 "$1/merge.out")"; echo "  merge stderr: $(tail -n 5 "$1/merge.err")"; }

# A start instant $1 seconds from now: Unix nanoseconds in $start_ns.
start_in() { start_ns=$(( $(date +%s%N) + $1 * 1000000000 )); }

# ------------------------------------------------------------------- 1. the race

step "1. race: 3 shards, 7 rounds in flight (3/2/2), one --start-at (RFC 3339), then the merge"
race=$work/race
mkdir -p "$race"
race_id=e2e-race-$$-$(date +%s)
start_in 3
race_start=$(date -u -d "@$((start_ns / 1000000000))" +%Y-%m-%dT%H:%M:%S).$(printf %09d $((start_ns % 1000000000)))Z
run_shards "$race" CRH_SCENARIO=race CRH_CONNECTIONS=7 CRH_DURATION=3 CRH_RATE=0 \
  CRH_START_AT="$race_start" CRH_RUN_ID="$race_id" \
  CRH_THRESHOLD_LATENCY='call.p99<5s' CRH_THRESHOLD_ERRORS='errors<1%'
for i in $(seq 0 $((n - 1))); do
  [ "${shard_code[$i]}" -eq 0 ] || { fail "race shard $i exited ${shard_code[$i]}, expected 0"; show_shard "$i" "$race"; }
  [ -s "$race/shard-$i.json" ] || fail "race shard $i wrote no $race/shard-$i.json"
done
run_merge "$race"
if [ "$merge_code" -ne 0 ]; then fail "the race merge exited $merge_code, expected 0"; show_merge "$race"; fi
grep -q "start skew" "$race/merge.out" || { fail "the merge's terminal output does not mention the start skew"; show_merge "$race"; }
grep -q "shards: run $race_id, 3 of 3" "$race/merge.out" || { fail "the merge's terminal output does not say 'shards: run $race_id, 3 of 3'"; show_merge "$race"; }
if [ -s "$race/merged.json" ]; then
  node "$check" merge "$race/merged.json" "$race"/shard-{0,1,2}.json --race --run-id "$race_id" \
    --connections 7 --planned-ns "$start_ns" --held 'call.p99<5s' --held 'errors<1%' >"$race/check.out" 2>&1 ||
    fail "the merged race result does not add up (details above the verdict, files in $race)"
  grep -v '^shard start skew:' "$race/check.out" | sed 's/^/  /'
  grep '^shard start skew:' "$race/check.out" | sed "s/^shard start skew:/shard start skew: ($mode, race)/"
else
  fail "the race merge wrote no $race/merged.json"
fi

# ------------------------------------------------- 2. a threshold only the merge breaches

step "2. mixed, open loop CRH_RATE=600 for the whole run, 3 s, requests<1300: every shard holds it, the merge breaches it"
mixed=$work/mixed
mkdir -p "$mixed"
mixed_id=e2e-mixed-$$-$(date +%s)
start_in 3
mixed_start=$((start_ns / 1000000000)).$(printf %09d $((start_ns % 1000000000)))
run_shards "$mixed" CRH_SCENARIO=mixed CRH_CONNECTIONS=7 CRH_DURATION=3 CRH_RATE=600 \
  CRH_START_AT="$mixed_start" CRH_RUN_ID="$mixed_id" \
  CRH_THRESHOLD_LATENCY='requests<1300' CRH_THRESHOLD_ERRORS='errors<1%'
for i in $(seq 0 $((n - 1))); do
  [ "${shard_code[$i]}" -eq 0 ] || { fail "mixed shard $i exited ${shard_code[$i]}, expected 0 (its thresholds are deferred to the merge)"; show_shard "$i" "$mixed"; }
done
run_merge "$mixed"
if [ "$merge_code" -ne 1 ]; then fail "the mixed merge exited $merge_code, expected 1 (requests<1300 breached by ~2000 merged requests)"; show_merge "$mixed"; fi
grep -q "requests<1300.*BREACHED" "$mixed/merge.out" || { fail "the merge's terminal output does not name requests<1300 as BREACHED"; show_merge "$mixed"; }
if [ -s "$mixed/merged.json" ]; then
  node "$check" merge "$mixed/merged.json" "$mixed"/shard-{0,1,2}.json --run-id "$mixed_id" \
    --connections 7 --rate 600 --planned-ns "$start_ns" --breached 'requests<1300' --held 'errors<1%' >"$mixed/check.out" 2>&1 ||
    fail "the merged mixed result does not add up, or requests<1300 is not breached by the merge alone (files in $mixed)"
  grep -v '^shard start skew:' "$mixed/check.out" | sed 's/^/  /'
  grep '^shard start skew:' "$mixed/check.out" | sed "s/^shard start skew:/shard start skew: ($mode, mixed)/"
else
  fail "the mixed merge wrote no $mixed/merged.json"
fi

# ------------------------------------------------------------ 3. incomplete, foreign

step "3a. two of the three race shards: exit 1, incomplete, shard 2 missing"
two=$work/two
mkdir -p "$two"
cp "$race/shard-0.json" "$race/shard-1.json" "$two/" 2>/dev/null || fail "no race shard files to copy"
run_merge "$two"
if [ "$merge_code" -ne 1 ]; then fail "merging shards 0 and 1 of 3 exited $merge_code, expected 1"; show_merge "$two"; fi
grep -q "MISSING shard(s) 2" "$two/merge.out" || { fail "the merge's terminal output does not name shard 2 as MISSING"; show_merge "$two"; }
if [ -s "$two/merged.json" ]; then
  node "$check" incomplete "$two/merged.json" --count 3 --missing 2 || fail "the merge of 2 of 3 shards is not marked incomplete with shard 2 missing"
else
  fail "the merge of 2 of 3 shards wrote no $two/merged.json"
fi

step "3b. shards of two runs of the race: exit 2, naming both"
other=$work/other
mkdir -p "$other"
other_id=e2e-other-$$-$(date +%s)
shard_command 1 "$other" CRH_SCENARIO=race CRH_CONNECTIONS=7 CRH_DURATION=1 CRH_RATE=0 \
  CRH_START_AT="$(date +%s)" CRH_RUN_ID="$other_id" CRH_THRESHOLD_LATENCY='call.p99<5s' CRH_THRESHOLD_ERRORS='errors<1%'
echo "  shard 1 of another run: CRH_API_KEY=... $(ns_exec 1)$(printf '%q ' "${cmd[@]}")"
other_code=0
CRH_API_KEY=$key in_ns s1 timeout -k 5 30 "${cmd[@]}" >"$other/out.1" 2>"$other/err.1" || other_code=$?
[ "$other_code" -eq 0 ] || { fail "shard 1 of run $other_id exited $other_code, expected 0"; show_shard 1 "$other"; }
foreign=$work/foreign
mkdir -p "$foreign"
cp "$race/shard-0.json" "$foreign/shard-0.json" 2>/dev/null
cp "$other/shard-1.json" "$foreign/shard-1.json" 2>/dev/null
run_merge "$foreign"
if [ "$merge_code" -ne 2 ]; then fail "merging shard 0 of run $race_id with shard 1 of run $other_id exited $merge_code, expected 2"; show_merge "$foreign"; fi
for id in "$race_id" "$other_id"; do
  grep -q -- "$id" "$foreign/merge.err" || { fail "the refusal does not name run $id"; show_merge "$foreign"; }
done
[ ! -e "$foreign/merged.json" ] || fail "a refused merge still wrote $foreign/merged.json"

step "3c. the checker itself refuses an altered p99 and an altered bucket"
if [ -s "$race/merged.json" ]; then
  for alter in p99 bucket; do
    node -e '
      const fs = require("fs");
      const [file, out, alter] = process.argv.slice(1);
      const d = JSON.parse(fs.readFileSync(file, "utf8"));
      const lat = d.loads[0].operations.call.latency;
      if (alter === "p99") lat.p99_ns += 1;
      else { const b = lat.histogram.buckets; b[0][1] += 1; b[b.length - 1][1] -= 1; if (b[b.length - 1][1] === 0) b.pop(); }
      fs.writeFileSync(out, JSON.stringify(d));' "$race/merged.json" "$work/altered.json" "$alter"
    if node "$check" merge "$work/altered.json" "$race"/shard-{0,1,2}.json --race >"$work/altered.out" 2>&1; then
      fail "shard_merge_check.mjs accepted a merged result with an altered $alter: the recomputation cannot fail"
    elif ! grep -q "call latency" "$work/altered.out"; then
      fail "shard_merge_check.mjs refused the altered $alter, but not for the call latency: $(head -n 3 "$work/altered.out")"
    fi
  done
fi

stop_all
teardown_netns
elapsed=$((SECONDS - began))
if [ "$failures" -gt 0 ]; then
  echo "cli.shard_e2e ($mode): $failures failure(s) in ${elapsed}s"
  echo "$reproduce"
  exit 1
fi
echo "cli.shard_e2e ($mode): all passed in ${elapsed}s"
