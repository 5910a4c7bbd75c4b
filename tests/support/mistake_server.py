#!/usr/bin/env python3
"""A test-only HTTP server that acts out the mistakes a new user makes on day one.

Each mode is something a user may point crh at by mistake instead of a
Call-Routing Service: a proxy's error page, a redirect to https or to another
origin, a sign-in page, an empty JSON object, another service's API or web
site, a TLS port, a port that listens and never accepts (silent).
tests/cli/mistakes_cli_test.sh runs crh against each.

Usage: mistake_server.py --mode MODE --port-file FILE [--no-openssl]

Binds 127.0.0.1 on a free port, writes the port number to FILE once it
listens (atomically: FILE.tmp, then renamed), and serves until killed. Every
method on every path gets the mode's answer; every answer carries
Content-Length, and keep-alive follows the request (HTTP/1.1 keeps the
connection unless it says Connection: close; HTTP/1.0 closes unless it says
Connection: keep-alive). Python standard library only; loopback only.

--no-openssl (tls mode): act as if the openssl command were missing: read the
client's first bytes, answer a TLS protocol_version alert record and close.
"""

import argparse
import html
import http.server
import json
import os
import shutil
import socket
import socketserver
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.parse

NGINX = "nginx/1.22.1"
APACHE = "Apache/2.4.57 (Debian)"

REASONS = {
    200: "OK",
    301: "Moved Permanently",
    302: "Found",
    307: "Temporary Redirect",
    308: "Permanent Redirect",
    401: "Unauthorized",
    404: "Not Found",
    502: "Bad Gateway",
    503: "Service Unavailable",
}


def nginx_page(status):
    """nginx's built-in error page for STATUS, byte for byte (CRLF lines)."""
    line = "%d %s" % (status, REASONS[status])
    return ("<html>\r\n<head><title>%s</title></head>\r\n<body>\r\n"
            "<center><h1>%s</h1></center>\r\n<hr><center>%s</center>\r\n"
            "</body>\r\n</html>\r\n" % (line, line, NGINX))


def apache_proxy_error(host, port):
    """mod_proxy's 502 page as Apache 2.4 sends it when the backend's answer is unreadable."""
    return ('<!DOCTYPE HTML PUBLIC "-//IETF//DTD HTML 2.0//EN">\n'
            "<html><head>\n"
            "<title>502 Proxy Error</title>\n"
            "</head><body>\n"
            "<h1>Proxy Error</h1>\n"
            "<p>The proxy server received an invalid\r\n"
            "response from an upstream server.<br />\r\n"
            "The proxy server could not handle the request<p>"
            "Reason: <strong>Error reading from remote server</strong></p></p>\n"
            "<hr>\n"
            "<address>%s Server at %s Port %s</address>\n"
            "</body></html>\n" % (APACHE, host, port))


def login_page(action="/login"):
    return ("<!DOCTYPE html>\n"
            '<html lang="en">\n'
            '<head><meta charset="utf-8"><title>Sign in</title></head>\n'
            "<body>\n"
            "<h1>Sign in</h1>\n"
            '<form method="post" action="%s">\n'
            '  <label>Username <input type="text" name="username" autocomplete="username"></label>\n'
            '  <label>Password <input type="password" name="password" autocomplete="current-password"></label>\n'
            '  <button type="submit">Sign in</button>\n'
            "</form>\n"
            "</body>\n"
            "</html>\n" % html.escape(action))


HOME_PAGE = ("<!DOCTYPE html>\n"
             '<html lang="en">\n'
             '<head><meta charset="utf-8"><title>Acme Widgets</title></head>\n'
             "<body>\n"
             "<h1>Welcome to Acme Widgets</h1>\n"
             '<p>Browse our <a href="/catalogue">catalogue</a> or <a href="/contact">contact us</a>.</p>\n'
             "</body>\n"
             "</html>\n")

HTML = "text/html"
JSON = "application/json"

REDIRECTS = {"%s-%d-%s" % ("redirect", s, w) for s in (301, 302, 307, 308) for w in ("https", "elsewhere")}
MODES = sorted({
    "nginx-502", "apache-502", "plain-503", "envoy-503",
    "login-200", "login-401", "login-302",
    "empty-json", "other-service-json", "other-service-html", "tls", "silent",
} | REDIRECTS)


def answer(mode, method, target, host_header, port):
    """(status, headers, body text, Server header or None) for one request in MODE."""
    path = urllib.parse.urlsplit(target).path or "/"
    host = host_header or "127.0.0.1:%d" % port
    if mode == "nginx-502":
        return 502, [("Content-Type", HTML)], nginx_page(502), NGINX
    if mode == "apache-502":
        hostname, _, hport = host.rpartition(":") if ":" in host else (host, "", "80")
        return (502, [("Content-Type", "text/html; charset=iso-8859-1")],
                apache_proxy_error(hostname, hport), APACHE)
    if mode == "plain-503":
        return 503, [("Content-Type", "text/plain")], "Service Unavailable\n", None
    if mode == "envoy-503":
        return (503, [("Content-Type", "text/plain")],
                "upstream connect error or disconnect/reset before headers. reset reason: connection failure",
                "envoy")
    if mode in REDIRECTS:
        _, status, where = mode.split("-")
        status = int(status)
        if where == "https":
            location = "https://%s%s" % (host, target)
        else:
            location = "http://127.0.0.2:9%s" % target
        return status, [("Content-Type", HTML), ("Location", location)], nginx_page(status), NGINX
    if mode == "login-200":
        return 200, [("Content-Type", "text/html; charset=utf-8")], login_page(), None
    if mode == "login-401":
        return (401, [("Content-Type", "text/html; charset=utf-8"), ("WWW-Authenticate", 'Bearer realm="sso"')],
                login_page(), None)
    if mode == "login-302":
        if path == "/login":
            query = urllib.parse.urlsplit(target).query
            action = "/login" + ("?" + query if query else "")
            return 200, [("Content-Type", "text/html; charset=utf-8")], login_page(action), None
        location = "/login?next=" + urllib.parse.quote(target, safe="")
        body = ('<!DOCTYPE html>\n<html><head><title>Redirecting</title></head>\n'
                '<body><p>Redirecting to <a href="%s">%s</a>.</p></body></html>\n' % (html.escape(location), html.escape(location)))
        return 302, [("Content-Type", "text/html; charset=utf-8"), ("Location", location)], body, None
    if mode == "empty-json":
        return 200, [("Content-Type", JSON)], "{}", None
    if mode == "other-service-json":
        # Spring Boot's whitelabel JSON error on a path it does not map.
        body = json.dumps({"timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000+00:00", time.gmtime()),
                           "status": 404, "error": "Not Found", "path": path}, separators=(",", ":"))
        return 404, [("Content-Type", JSON)], body, None
    if mode == "other-service-html":
        if path == "/":
            return 200, [("Content-Type", HTML)], HOME_PAGE, NGINX
        return 404, [("Content-Type", HTML)], nginx_page(404), NGINX
    if mode == "tls":
        # What the TLS port serves to a client that does speak TLS.
        return 200, [("Content-Type", "text/plain")], "hello over TLS\n", NGINX
    raise ValueError(mode)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 30  # an idle keep-alive connection is closed after this many seconds

    def log_message(self, fmt, *args):
        sys.stderr.write("mistake_server[%s] %s %s\n" % (self.server.mode, self.address_string(), fmt % args))

    def read_body(self):
        """Reads and drops the request body so that the connection can be reused; False when unreadable."""
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            while True:
                line = self.rfile.readline(65537)
                if not line:
                    return False
                try:
                    size = int(line.split(b";")[0].strip(), 16)
                except ValueError:
                    return False
                if size == 0:
                    while True:  # trailers, up to the empty line
                        line = self.rfile.readline(65537)
                        if not line:
                            return False
                        if line in (b"\r\n", b"\n"):
                            return True
                if len(self.rfile.read(size + 2)) != size + 2:
                    return False
        length = self.headers.get("Content-Length")
        if length is None:
            return True
        try:
            n = int(length)
        except ValueError:
            return False
        if n < 0:
            return False
        while n > 0:
            got = self.rfile.read(min(n, 65536))
            if not got:
                return False
            n -= len(got)
        return True

    def serve(self):
        if not self.read_body():
            self.close_connection = True
        status, headers, body, server = answer(self.server.mode, self.command, self.path,
                                               self.headers.get("Host"), self.server.server_address[1])
        data = body.encode("utf-8" if "utf-8" in dict(headers).get("Content-Type", "") else "latin-1")
        self.log_request(status)
        self.send_response_only(status, REASONS[status])
        if server:
            self.send_header("Server", server)
        self.send_header("Date", self.date_time_string())
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        if self.close_connection:
            self.send_header("Connection", "close")
        elif self.request_version == "HTTP/1.0":
            self.send_header("Connection", "keep-alive")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
        self.wfile.flush()

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = do_OPTIONS = serve

    def log_request(self, code="-", size="-"):
        self.log_message('"%s" %s', self.requestline, code)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = False

    def handle_error(self, request, client_address):
        err = sys.exc_info()[1]
        if isinstance(err, (ConnectionError, TimeoutError, ssl.SSLError)):
            sys.stderr.write("mistake_server[%s] %s: %s\n" % (self.mode, client_address[0], err))
            return
        super().handle_error(request, client_address)


class TlsServer(Server):
    """HTTP over TLS; the handshake runs on the connection's own thread, so a
    client that never completes it stalls no one else."""

    def get_request(self):
        sock, addr = self.socket.accept()
        return self.context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), addr

    def finish_request(self, request, client_address):
        try:
            request.settimeout(10)
            request.do_handshake()
        except (ssl.SSLError, OSError) as err:
            sys.stderr.write("mistake_server[tls] %s: no TLS handshake: %s\n" % (client_address[0], err))
            return
        super().finish_request(request, client_address)


class AlertHandler(socketserver.BaseRequestHandler):
    """The fallback without openssl: whatever comes, a fatal protocol_version alert, then close."""

    ALERT = bytes([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x46])

    def handle(self):
        self.request.settimeout(5)
        try:
            self.request.recv(65536)
            self.request.sendall(self.ALERT)
            self.request.shutdown(socket.SHUT_WR)
            self.request.recv(65536)  # let the client read the alert before the close
        except OSError:
            pass


class AlertServer(socketserver.ThreadingTCPServer):
    daemon_threads = True


def tls_context():
    """A context with a throwaway self-signed certificate, or None when openssl is missing."""
    openssl = shutil.which("openssl")
    if not openssl:
        return None
    with tempfile.TemporaryDirectory(prefix="mistake-tls-") as tmp:
        key, cert = os.path.join(tmp, "key.pem"), os.path.join(tmp, "cert.pem")
        try:
            subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost",
                            "-days", "1", "-keyout", key, "-out", cert],
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           check=True, timeout=120)
        except (OSError, subprocess.SubprocessError) as err:
            sys.stderr.write("mistake_server[tls]: openssl failed (%s); answering TLS alerts instead\n" % err)
            return None
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
    return context


def write_port(path, port):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % port)
    os.replace(tmp, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", required=True, choices=MODES)
    parser.add_argument("--port-file", required=True, help="written with the port number once listening")
    parser.add_argument("--no-openssl", action="store_true", help="tls mode: the fallback without openssl")
    args = parser.parse_args()

    address = ("127.0.0.1", 0)
    if args.mode == "silent":
        # Listens and never accepts: the kernel completes a few connects, nothing ever answers.
        sock = socket.socket()
        sock.bind(address)
        sock.listen(1)
        write_port(args.port_file, sock.getsockname()[1])
        try:
            while True:
                time.sleep(1)
        except KeyboardInterrupt:
            return
    if args.mode == "tls":
        context = None if args.no_openssl else tls_context()
        if context is None:
            server = AlertServer(address, AlertHandler)
        else:
            server = TlsServer(address, Handler)
            server.context = context
    else:
        server = Server(address, Handler)
    server.mode = args.mode
    port = server.server_address[1]
    write_port(args.port_file, port)
    sys.stderr.write("mistake_server[%s] listening on 127.0.0.1:%d\n" % (args.mode, port))
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
