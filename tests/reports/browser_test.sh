#!/usr/bin/env bash
# reports.browser: the run report and the trend page opened in a real browser
# (Debian's headless chromium): no console error, every chart drawn at a
# non-zero size, the intervals' whiskers there and drawn; screenshots kept.
#   browser_test.sh BUILD_DIR SAMPLES_BIN [CRH_BIN]
# SAMPLES_BIN writes a trend page from synthetic night files and a run report
# judged against them; with CRH_BIN a real `crh run` report is opened too.
# Exits 77 (ctest: skipped) when chromium is missing and cannot be installed.
set -uo pipefail
build=${1:?usage: browser_test.sh BUILD_DIR SAMPLES_BIN [CRH_BIN]}
samples=${2:?usage: browser_test.sh BUILD_DIR SAMPLES_BIN [CRH_BIN]}
crh=${3:-}
mkdir -p "$build" && out="$(cd "$build" && pwd)/browser-test"
rm -rf "$out" && mkdir -p "$out"
fail() { echo "reports.browser: FAIL: $*"; failed=1; }
failed=0

if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "reports.browser: chromium missing, installing it (apt-get install chromium)"
    { DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null; } 2>&1 | tail -3
  fi
  if ! command -v chromium >/dev/null 2>&1; then
    echo "reports.browser: SKIPPED: chromium is not installed and could not be (scripts/install-test-tools.sh installs it as root)"
    exit 77
  fi
fi
browser() {  # chromium's headless mode as root in a container: no sandbox, no GPU, its own profile
  timeout 90 chromium --headless --disable-gpu --no-sandbox --no-first-run --disable-extensions \
    --user-data-dir="$out/profile" "$@"
}

"$samples" "$out" || { echo "reports.browser: FAIL: $samples did not write the pages"; exit 1; }
pages=("$out/run.html" "$out/trend.html")
if [ -n "$crh" ]; then
  # A real run on the embedded service: exit 0, 1 or 4 all render a report.
  "$crh" run --load-duration 2 --html "$out/crh-run.html" >"$out/crh-run.log" 2>&1
  rc=$?
  if [ -s "$out/crh-run.html" ]; then pages+=("$out/crh-run.html"); else fail "crh run wrote no report (exit $rc; $out/crh-run.log)"; fi
fi

# The probe: a copy of the page with a script at its end that opens what is
# folded and writes what the browser laid out into the DOM (the page itself
# has no script: it must read with JavaScript off).
probe='<script>(function(){document.querySelectorAll("details").forEach(function(d){d.open=true;});var s=[],z=0;document.querySelectorAll("svg").forEach(function(e){var b=e.getBoundingClientRect();s.push(Math.round(b.width)+"x"+Math.round(b.height));if(b.width<1||b.height<1)z++;});
var w=document.querySelectorAll("g.whisker"),wz=0;w.forEach(function(e){var b=e.getBoundingClientRect();if(b.width<=0&&b.height<=0)wz++;});
var p=document.createElement("pre");p.id="crh-probe";p.textContent="svgs="+s.length+" zero="+z+" whiskers="+w.length+" undrawn="+wz+" sizes="+s.join(",");document.body.appendChild(p);})();</script>'

for page in "${pages[@]}"; do
  name=$(basename "$page" .html)
  grep -qi '<script' "$page" && fail "$name: the page has a script of its own"
  # Console errors of the page as it is (chromium logs them as CONSOLE lines).
  browser --enable-logging=stderr --v=0 --dump-dom "file://$page" >"$out/$name.dom" 2>"$out/$name.console"
  if grep -q 'CONSOLE' "$out/$name.console"; then fail "$name: console messages:"; grep 'CONSOLE' "$out/$name.console" | head -5; fi
  grep -q '</html>' "$out/$name.dom" || fail "$name: the browser did not load it"
  # Layout: every chart has a size, every whisker is drawn.
  { cat "$page"; printf '%s\n' "$probe"; } >"$out/$name.probe.html"  # after </html>: parsed into the body
  browser --enable-logging=stderr --v=0 --window-size=1280,2000 --dump-dom "file://$out/$name.probe.html" \
    >"$out/$name.probe.dom" 2>"$out/$name.probe.console"
  grep 'CONSOLE' "$out/$name.probe.console" | grep -v 'crh-probe' | head -3
  result=$(grep -o '"crh-probe">svgs=[0-9][^<]*' "$out/$name.probe.dom" | head -1 | sed 's/.*">//')
  echo "reports.browser: $name: $result"
  [ -n "$result" ] || { fail "$name: the probe did not run"; continue; }
  svgs=$(sed -E 's/.*svgs=([0-9]+).*/\1/' <<<"$result")
  zero=$(sed -E 's/.*zero=([0-9]+).*/\1/' <<<"$result")
  whiskers=$(sed -E 's/.*whiskers=([0-9]+).*/\1/' <<<"$result")
  undrawn=$(sed -E 's/.*undrawn=([0-9]+).*/\1/' <<<"$result")
  [ "$svgs" -gt 0 ] || fail "$name: no chart"
  [ "$zero" -eq 0 ] || fail "$name: $zero chart(s) of zero size"
  [ "$whiskers" -gt 0 ] || fail "$name: no interval whisker"
  [ "$undrawn" -eq 0 ] || fail "$name: $undrawn whisker(s) not drawn"
  # What a reader sees (the page has no script: the same with JavaScript off).
  browser --hide-scrollbars --window-size=1280,4000 \
    --screenshot="$out/$name.png" "file://$page" >/dev/null 2>&1
  [ -s "$out/$name.png" ] || fail "$name: no screenshot"
done
# The trend page links each night to its report.
grep -q 'href="night-9.html"' "$out/trend.html" || fail "trend: a night is not linked to its report"

rm -rf "$out/profile"
ls "$out"/*.png 2>/dev/null | sed 's/^/reports.browser: screenshot /'
if [ "$failed" -ne 0 ]; then echo "reports.browser: FAILED"; exit 1; fi
echo "reports.browser: passed"
