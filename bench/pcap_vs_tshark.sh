#!/usr/bin/env bash
# `crh pcap check` against tshark on the same capture, side by side in one
# run (issue 14: at least 5x tshark's packet rate, memory flat in file size).
# Makes a capture of at least PACKETS packets with tcpdump on loopback while
# `crh load --scenario get` drives `crh serve`, then times, ROUNDS times each,
#   crh pcap check FILE --quiet
#   tshark -r FILE -Y http -T fields -e http.response.code
# and prints packets per second for both and their ratio. Memory: the peak
# RSS of `crh pcap check` on the first half of the file and on all of it.
#
# usage: bench/pcap_vs_tshark.sh [path/to/crh]      (root: tcpdump captures)
# env:   PACKETS=1000000 ROUNDS=3 CONNECTIONS=32 KEEP=FILE (keep the capture there)
set -euo pipefail
crh=${1:-build/crh}
PACKETS=${PACKETS:-1000000}
ROUNDS=${ROUNDS:-3}
CONNECTIONS=${CONNECTIONS:-32}
SERVER_THREADS=${SERVER_THREADS:-1}
work=$(mktemp -d)
source "$(dirname "$0")/lib.sh"
require_tools tcpdump tshark capinfos editcap curl /usr/bin/time "$crh"
[ "$(id -u)" = 0 ] || { echo "bench: tcpdump on lo needs root" >&2; exit 2; }
start_crh_serve
port=${crh_base##*:}

pcap=$work/load.pcap
echo "bench: capturing at least $PACKETS packets of crh load --scenario get on 127.0.0.1:$port"
tcpdump -i lo -B 65536 -s 262144 -U -w "$pcap" "tcp port $port" 2>"$work/tcpdump.log" &
tcpdump_pid=$!
for _ in $(seq 100); do grep -q "listening on" "$work/tcpdump.log" && break; sleep 0.1; done
seconds=0
while :; do
  "$crh" load --base-url "$crh_base" --scenario get --connections "$CONNECTIONS" --duration 5 --quiet >/dev/null || true
  seconds=$((seconds + 5))
  # tcpdump writes packet by packet (-U): the file's size tells when to stop, capinfos confirms.
  count=$(capinfos -c -M "$pcap" 2>/dev/null | awk '/Number of packets/ {print $NF}')
  [ "${count:-0}" -ge "$PACKETS" ] && break
  [ $seconds -ge 300 ] && { echo "bench: only ${count:-0} packets after ${seconds}s of load" >&2; exit 1; }
done
kill -INT "$tcpdump_pid"; wait "$tcpdump_pid" || true
count=$(capinfos -c -M "$pcap" | awk '/Number of packets/ {print $NF}')
size=$(stat -c %s "$pcap")
echo "bench: $count packets, $((size / 1024 / 1024)) MiB"
[ -n "${KEEP:-}" ] && cp "$pcap" "$KEEP"

seconds_of() {  # command... -> wall seconds (the command's output discarded)
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null 2>&1 || true
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN {printf "%.3f", b - a}'
}
crh_times=() tshark_times=()
for r in $(seq "$ROUNDS"); do
  c=$(seconds_of "$crh" pcap check "$pcap" --quiet)
  t=$(seconds_of tshark -r "$pcap" -Y http -T fields -e http.response.code)
  crh_times+=("$c"); tshark_times+=("$t")
  echo "  round $r: crh pcap check ${c} s, tshark ${t} s"
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
c=$(median "${crh_times[@]}"); t=$(median "${tshark_times[@]}")
awk -v n="$count" -v c="$c" -v t="$t" 'BEGIN {
  printf "crh pcap check: %.0f packets/s (median of rounds)\ntshark -Y http: %.0f packets/s\nratio: %.1fx tshark\n",
    n / c, n / t, t / c }'

half=$work/half.pcap
editcap -r "$pcap" "$half" "1-$((count / 2))" >/dev/null
/usr/bin/time -f %M -o "$work/rss-half" "$crh" pcap check "$half" --quiet >/dev/null 2>&1 || true
/usr/bin/time -f %M -o "$work/rss-full" "$crh" pcap check "$pcap" --quiet >/dev/null 2>&1 || true
echo "memory: peak RSS $(tail -n1 "$work/rss-half") kB on $((count / 2)) packets, $(tail -n1 "$work/rss-full") kB on $count"
"$crh" pcap check "$pcap" --quiet || echo "bench: note: crh pcap check exited $? on the load capture"
