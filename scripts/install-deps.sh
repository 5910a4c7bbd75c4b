#!/usr/bin/env bash
# Installs the Debian 12 packages crh needs, only those that are missing.
# Idempotent: on a machine that has everything it prints one line and exits.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config
  libboost1.81-dev libboost-json1.81-dev libboost-url1.81-dev
  libcli11-dev libgtest-dev libgmock-dev libbenchmark-dev libpcap-dev liburing-dev
  curl wrk nginx-light nghttp2-client libxml2-utils tcpdump tshark
  sip-tester kamailio iproute2 nftables   # the SIP interop tests (tests/sip): SIPp and Kamailio as real peers; loss without netem
  clang libclang-rt-dev
  python3   # the tests normalize and read documents with it (tests/golden, tests/cli)
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [ "$status" = "installed" ] || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages are installed"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO=sudo
  else
    echo "install-deps: these Debian packages are missing and installing them needs root:" >&2
    echo "  apt-get install ${missing[*]}" >&2
    echo "Run that as root (or run this script with sudo), then try again." >&2
    exit 1
  fi
else
  SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
