# Sourced by bench/ab's scripts: `crh serve` targets started in the calling
# shell (not inside $(...), where pids+= would be lost and the EXIT trap
# would leave them running), pinned to CPU 1 with the generator on CPU 0
# unless PIN=0. Needs $crh and a `pids` array the caller's trap stops.
pin_target=() pin_gen=()
if [ "${PIN:-1}" = 1 ]; then pin_target=(taskset -c 1); pin_gen=(taskset -c 0); fi
serve() {  # file, extra flags
  "${pin_target[@]}" "$crh" serve --listen 127.0.0.1:0 --threads 1 "${@:2}" >"$1" 2>&1 &
  pids+=($!)
}
url_of() {  # file: the URL the server printed once it listens
  for _ in $(seq 100); do grep -q 'http://' "$1" && break; sleep 0.1; done
  grep -o 'http://127\.0\.0\.1:[0-9]*' "$1" | head -n 1
}
