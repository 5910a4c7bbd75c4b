#!/usr/bin/env bash
# Installs what tests/deploy needs: node and npm (Debian's nodejs and npm, when
# either is missing) and the npm packages pinned in tests/deploy/package-lock.json;
# and Debian's chromium for reports.browser (the reports opened in a real
# browser), which skips itself, saying why, where chromium cannot be had.
# Idempotent: on a machine that has everything it prints one line and exits.
set -euo pipefail
cd "$(dirname "$0")/.."

# chromium: best effort, never failing this script (reports.browser skips without it).
if ! command -v chromium >/dev/null 2>&1; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-test-tools: no apt-get here: chromium not installed (reports.browser will skip)"
  elif [ "$(id -u)" -ne 0 ] && ! command -v sudo >/dev/null 2>&1; then
    echo "install-test-tools: chromium is missing and installing it needs root: apt-get install chromium (reports.browser will skip)"
  else
    echo "install-test-tools: installing chromium"
    SUDO=$([ "$(id -u)" -eq 0 ] && echo "" || echo sudo)
    { DEBIAN_FRONTEND=noninteractive $SUDO apt-get update -qq &&
      DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null; } ||
      echo "install-test-tools: apt-get install chromium failed (reports.browser will skip)"
  fi
fi

missing=()
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-test-tools: installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
      SUDO=sudo
    else
      echo "install-test-tools: these Debian packages are missing and installing them needs root:" >&2
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
fi

major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 18 ]; then
  echo "install-test-tools: node $(node --version) is too old for tests/deploy (18 or newer)" >&2
  exit 1
fi

# node_modules is up to date when it was installed from this very lock file.
lock=tests/deploy/package-lock.json
stamp=tests/deploy/node_modules/.installed-from-lock
if [ -f "$stamp" ] && cmp -s "$lock" "$stamp"; then
  echo "install-test-tools: node $(node --version) and the npm packages of tests/deploy are installed"
  exit 0
fi
echo "install-test-tools: npm ci --prefix tests/deploy"
npm ci --prefix tests/deploy --no-audit --no-fund --loglevel=error >/dev/null
cp "$lock" "$stamp"
echo "install-test-tools: done"
