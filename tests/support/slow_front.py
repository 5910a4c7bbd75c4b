#!/usr/bin/env python3
"""A correct but slow service: a threaded HTTP front with a listen queue of 5
that passes every request to a real service (UPSTREAM, e.g. crh serve) and
writes each answer's head and body in two writes, so that Nagle's algorithm
and the client's delayed ACK make every exchange take tens of milliseconds.

Usage: slow_front.py --upstream http://127.0.0.1:PORT --port-file FILE [--one-at-a-time]

--one-at-a-time: one thread serves one connection until the client closes
it (a service that cannot serve two clients at once).

Binds 127.0.0.1 on a free port, writes it to FILE once listening, serves
until killed. Python standard library only; loopback only.
"""

import argparse
import http.client
import http.server
import os
import sys
import urllib.parse


class Front(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 30

    def log_message(self, fmt, *args):
        pass

    def relay(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length > 0 else b""
        up = http.client.HTTPConnection(self.server.upstream.hostname, self.server.upstream.port, timeout=30)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("connection", "keep-alive", "host")}
        up.request(self.command, self.path, body=body, headers=headers)
        answer = up.getresponse()
        data = answer.read()
        up.close()
        head = "HTTP/1.1 %d %s\r\n" % (answer.status, answer.reason)
        for k, v in answer.getheaders():
            if k.lower() not in ("connection", "keep-alive", "content-length", "transfer-encoding"):
                head += "%s: %s\r\n" % (k, v)
        head += "Content-Length: %d\r\n\r\n" % len(data)
        self.wfile.write(head.encode("latin-1"))  # two writes: the head, then the body
        self.wfile.flush()
        if data:
            self.wfile.write(data)
            self.wfile.flush()

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = relay


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 5  # the listen queue


class SerialServer(http.server.HTTPServer):
    request_queue_size = 5


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", required=True)
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--one-at-a-time", action="store_true")
    args = parser.parse_args()
    server = (SerialServer if args.one_at_a_time else Server)(("127.0.0.1", 0), Front)
    server.upstream = urllib.parse.urlsplit(args.upstream)
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % server.server_address[1])
    os.replace(tmp, args.port_file)
    sys.stderr.write("slow_front listening on 127.0.0.1:%d\n" % server.server_address[1])
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
