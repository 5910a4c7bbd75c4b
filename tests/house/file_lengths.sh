#!/usr/bin/env bash
# House rule (README, Layout): one purpose per file, at most 500 lines per
# product file. Every C++ source and header outside tests/, third_party/ and
# build folders is counted; the test fails naming each file over the limit.
# usage: file_lengths.sh SOURCE_DIR [LIMIT]
set -euo pipefail
src=${1:?usage: file_lengths.sh SOURCE_DIR [LIMIT]}
limit=${2:-500}
cd "$src"
over=0 files=0
while IFS= read -r -d '' f; do
  files=$((files + 1))
  n=$(wc -l <"$f")
  if [ "$n" -gt "$limit" ]; then
    echo "house rule: ${f#./} has $n lines, more than $limit: split it by purpose (README, Layout)"
    over=$((over + 1))
  fi
done < <(find . \( -path ./tests -o -path ./third_party -o -path './build*' -o -path ./.git \) -prune -o \
  -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.cc' \) -print0)
[ "$files" -gt 0 ] || { echo "house rule: no C++ files under $src"; exit 1; }
echo "house rule: $files product files, $over over $limit lines"
[ "$over" -eq 0 ]
