#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A smart-HTTP git server for the git app's tests: Debian's
`git http-backend` (git-http-backend(1)) run as a CGI program for every
request, behind python's HTTPS server, on a loopback address.

usage: git-http.py --root DIR --cert PEM --key PEM [--bind 127.0.0.1] [--log FILE]
Prints `ready PORT` once it listens (port 0: the kernel's choice).  Pushes
are allowed (http.receivepack is set in the served repositories).
"""

import argparse
import http.server
import os
import ssl
import subprocess
import sys

BACKEND = "/usr/lib/git-core/git-http-backend"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, fmt, *args):
        if LOG:
            with open(LOG, "a") as f:
                f.write("%s %s\n" % (self.address_string(), fmt % args))

    def _cgi(self):
        path, _, query = self.path.partition("?")
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        env = {
            "PATH": "/usr/bin:/bin",
            "GIT_PROJECT_ROOT": ROOT,
            "GIT_HTTP_EXPORT_ALL": "1",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": "/dev/null",
            "HOME": ROOT,
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": self.client_address[0],
            "SERVER_PROTOCOL": "HTTP/1.0",
            "GATEWAY_INTERFACE": "CGI/1.1",
        }
        if self.headers.get("Content-Encoding"):
            env["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
        if self.headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
        p = subprocess.run([BACKEND], input=body, env=env, capture_output=True)
        head, _, out = p.stdout.partition(b"\r\n\r\n")
        if not _:
            head, _, out = p.stdout.partition(b"\n\n")
        status, headers = 200, []
        for line in head.decode("latin1").splitlines():
            k, _, v = line.partition(":")
            if k.lower() == "status":
                status = int(v.split()[0])
            elif k:
                headers.append((k, v.strip()))
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)
        if p.stderr and LOG:
            with open(LOG, "a") as f:
                f.write(p.stderr.decode(errors="replace"))

    do_GET = do_POST = _cgi


ap = argparse.ArgumentParser()
ap.add_argument("--root", required=True)
ap.add_argument("--cert", required=True)
ap.add_argument("--key", required=True)
ap.add_argument("--bind", default="127.0.0.1")
ap.add_argument("--log")
a = ap.parse_args()
ROOT, LOG = os.path.abspath(a.root), a.log
srv = http.server.ThreadingHTTPServer((a.bind, 0), Handler)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(a.cert, a.key)
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
print("ready %d" % srv.server_address[1], flush=True)
try:
    srv.serve_forever()
except KeyboardInterrupt:
    sys.exit(0)
