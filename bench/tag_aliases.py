"""Tags or untags aliases of channel 1 on a crh serve (or any target of the
spec) for bench/race_catch_rate.sh's bare-program rounds.

    tag_aliases.py tag PORT N     tags N aliases (tag "race", 600 minutes),
                                  printing each one's id
    tag_aliases.py untag PORT     untags the ids read from stdin
The key comes from $CRH_API_KEY. One kept-alive connection; exit 1 on an
answer that is not a 2xx."""
import http.client
import json
import os
import sys


def main():
    what, port = sys.argv[1], int(sys.argv[2])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    headers = {"Apikey": os.environ["CRH_API_KEY"], "Content-Type": "application/x-www-form-urlencoded"}

    def ask(method, path, body=None):
        conn.request(method, path, body=body, headers=headers)
        answer = conn.getresponse()
        text = answer.read()
        if answer.status // 100 != 2:
            sys.exit(f"tag_aliases.py: {method} {path}: HTTP {answer.status}: {text[:200]!r}")
        return text

    if what == "tag":
        for _ in range(int(sys.argv[3])):
            print(json.loads(ask("POST", "/channels/1/alias-numbers/tag", "tag=race&minutes=600"))["id"])
    else:
        for line in sys.stdin:
            if line.strip():
                ask("DELETE", f"/channels/1/alias-numbers/{line.strip()}/tag")


main()
