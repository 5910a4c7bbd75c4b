#!/usr/bin/env bash
# Starts the reference service (crh serve) on a free loopback port and walks
# through every endpoint and the call hook with curl, printing each command.
set -euo pipefail
crh=${1:-build/crh}
command -v curl >/dev/null || { echo "demo: curl is missing (make deps installs it)" >&2; exit 1; }

CRH_API_KEY=${CRH_API_KEY:-demo-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')}
export CRH_API_KEY
log=$(mktemp)
"$crh" serve --listen 127.0.0.1:0 --minute-ms 1000 >"$log" 2>&1 &
pid=$!
trap 'kill -TERM $pid 2>/dev/null; wait $pid 2>/dev/null; rm -f "$log"' EXIT

for _ in $(seq 100); do
  url=$(grep -o 'http://[^ ]*' "$log" | head -n1 || true)
  [ -n "$url" ] && break
  kill -0 $pid 2>/dev/null || { cat "$log" >&2; exit 1; }
  sleep 0.1
done
[ -n "${url:-}" ] || { echo "demo: crh serve did not start within 10 s" >&2; cat "$log" >&2; exit 1; }
echo "$(head -n1 "$log")"
echo "(one tag minute lasts 1 s in this demo; the key is in \$CRH_API_KEY)"

step() {
  local title=$1; shift
  printf '\n# %s\n$ curl' "$title"
  printf ' %q' "$@" | sed -e "s|Apikey:\\\\ $CRH_API_KEY|\"Apikey: \$CRH_API_KEY\"|g" -e "s|$CRH_API_KEY|\$CRH_API_KEY|g"
  printf '\n'
  curl -sS -w '\n  -> HTTP %{http_code}\n' "$@" | sed 's/^/  /'
}
K=(-H "Apikey: $CRH_API_KEY")

step "List local agents" "${K[@]}" "$url/api/v1/local-agents"
step "Read one agent" "${K[@]}" "$url/api/v1/local-agents/101"
step "Snooze it (answers the agent object)" "${K[@]}" -X PUT "$url/api/v1/local-agents/101/snooze"
step "Wake it again" "${K[@]}" -X PUT "$url/api/v1/local-agents/101/wake"
step "Write a global variable (form-encoded)" "${K[@]}" --data-urlencode "value=hello world & more" "$url/database/greeting"
step "Read it back" "${K[@]}" "$url/database/greeting"
step "List the aliases of channel 1" "${K[@]}" "$url/channels/1/alias-numbers"
step "Tag the least recently used alias for 2 minutes" "${K[@]}" -d tag=demo -d minutes=2 "$url/channels/1/alias-numbers/tag"
step "The first caller calls it and is bound (call hook)" "${K[@]}" --data-urlencode caller=+15551230001 "$url/channels/1/alias-numbers/1/calls"
step "Another caller is refused while the tag lives" "${K[@]}" --data-urlencode caller=+15551230002 "$url/channels/1/alias-numbers/1/calls"
step "The bound caller still gets through" "${K[@]}" --data-urlencode caller=+15551230001 "$url/channels/1/alias-numbers/1/calls"
step "Delete the tag early: the lock ends with it" "${K[@]}" -X DELETE "$url/channels/1/alias-numbers/1/tag"
step "Now any caller may call" "${K[@]}" --data-urlencode caller=+15551230002 "$url/channels/1/alias-numbers/1/calls"
step "The next tag picks the least recently used alias (2)" "${K[@]}" -d tag=demo2 -d minutes=1 "$url/channels/1/alias-numbers/tag"
echo; echo "# ...wait 1.2 s: its one-minute lifetime ends"; sleep 1.2
step "The tag has expired" "${K[@]}" "$url/channels/1/alias-numbers"
step "Errors are JSON with a msg: missing key" "$url/api/v1/local-agents"
step "Wrong key" -H "Apikey: not-the-key" "$url/database/greeting"
step "Unknown agent" "${K[@]}" "$url/api/v1/local-agents/999"
step "Tag without minutes" "${K[@]}" -d tag=x "$url/channels/1/alias-numbers/tag"
echo
echo "demo: done; build/crh serve --help lists the service's flags, --list-faults its fault modes"
