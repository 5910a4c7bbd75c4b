#!/usr/bin/env bash
# `crh serve --sip` as a script uses it: the machine-readable "sip: udp+tcp
# HOST:PORT" line (IPv4 and IPv6), the same port answering over UDP and TCP,
# exit 2 for a malformed --sip, exit 3 when the SIP port is taken, and a clean
# stop on SIGTERM. Loopback only; every wait bounded.
# usage: serve_sip_cli_test.sh CRH_BINARY   (exit 77: skipped, saying why)
set -uo pipefail
crh=${1:?usage: serve_sip_cli_test.sh CRH_BINARY}
here=$(cd "$(dirname "$0")" && pwd)
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is needed to send SIP"; exit 77; }
# shellcheck source=lib.sh
. "$here/lib.sh"
begin_sip_test

# Sends an OPTIONS over $1 (udp/tcp) to $2 (HOST:PORT); prints the status line.
options() {
  python3 - "$1" "$2" <<'PY'
import socket, sys
transport, addr = sys.argv[1], sys.argv[2]
host, port = addr.rsplit(":", 1)
host = host.strip("[]")
family = socket.AF_INET6 if ":" in host else socket.AF_INET
s = socket.socket(family, socket.SOCK_DGRAM if transport == "udp" else socket.SOCK_STREAM)
s.settimeout(3)
s.connect((host, int(port)))
local = s.getsockname()
via_host = "[%s]" % local[0] if family == socket.AF_INET6 else local[0]
msg = ("OPTIONS sip:probe@%s SIP/2.0\r\nVia: SIP/2.0/%s %s:%d;branch=z9hG4bKcli%s\r\nFrom: <sip:cli@x>;tag=1\r\n"
       "To: <sip:probe@x>\r\nCall-ID: cli-%s\r\nCSeq: 1 OPTIONS\r\nMax-Forwards: 70\r\nContent-Length: 0\r\n\r\n"
       % (addr, transport.upper(), via_host, local[1], transport, transport))
s.sendall(msg.encode())
print(s.recv(65535).decode(errors="replace").split("\r\n")[0])
PY
}

start_serve || exit 1
echo "crh serve: $url, SIP $sip_addr"
[[ "$sip_addr" =~ ^127\.0\.0\.1:[0-9]+$ ]] || fail "expected a line 'sip: udp+tcp 127.0.0.1:PORT', got \"$sip_addr\""
[ "$(options udp "$sip_addr")" = "SIP/2.0 200 OK" ] || fail "no 200 to an OPTIONS over UDP on $sip_addr"
[ "$(options tcp "$sip_addr")" = "SIP/2.0 200 OK" ] || fail "no 200 to an OPTIONS over TCP on the same port"
grep -q "$(cat "$work/key")" "$work"/serve.* && fail "the API key was printed"

# Exit codes: a malformed --sip is a usage error (2); a taken SIP port cannot be served (3).
"$crh" serve --listen 127.0.0.1:0 --sip nonsense --api-key-file "$work/key" >/dev/null 2>&1
[ $? -eq 2 ] || fail "a malformed --sip should exit 2"
taken=${sip_addr##*:}
timeout 10 "$crh" serve --listen 127.0.0.1:0 --sip "127.0.0.1:$taken" --api-key-file "$work/key" >/dev/null 2>"$work/taken.err"
code=$?
[ $code -eq 3 ] || fail "a SIP port in use should exit 3, got $code"
grep -q "SIP" "$work/taken.err" || fail "the error should say the SIP port could not be had: $(cat "$work/taken.err")"

kill -TERM "$serve_pid"; wait "$serve_pid"; code=$?
[ $code -eq 0 ] || fail "SIGTERM should stop crh serve --sip with exit 0, got $code"

# IPv6 loopback, where there is one.
if python3 -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>/dev/null; then
  "$crh" serve --listen 127.0.0.1:0 --sip '[::1]:0' --api-key-file "$work/key" >"$work/v6.out" 2>&1 &
  pids+=($!)
  v6=
  for _ in $(seq 100); do
    v6=$(sed -n 's/.*sip: udp+tcp \([^ ]*\).*/\1/p' "$work/v6.out"); [ -n "$v6" ] && break; sleep 0.05
  done
  [[ "$v6" =~ ^\[::1\]:[0-9]+$ ]] || fail "expected 'sip: udp+tcp [::1]:PORT', got \"$v6\""
  [ -n "$v6" ] && { [ "$(options udp "$v6")" = "SIP/2.0 200 OK" ] || fail "no 200 over UDP on $v6"; }
else
  echo "(no IPv6 loopback here: the [::1] case is not run)"
fi
[ $failures -eq 0 ] && echo "PASS: crh serve --sip" || echo "$failures failure(s)"
[ $failures -eq 0 ]
