#!/bin/sh
# Runs node with these arguments; without node, a ctest skip (exit 77) that says why.
if ! command -v node >/dev/null 2>&1; then
  echo "skipped: node is not installed (scripts/install-test-tools.sh installs it)"
  exit 77
fi
exec node "$@"
