#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The test hosts' servers, run by tests/netns/hosts.sh inside its network
namespaces (python3 standard library only).

  servers.py http   --bind ADDR:PORT... --root DIR [--tls CERT KEY] [--secret FILE] --log FILE
      static files from DIR (a dumb-HTTP git repository among them), plus
      /whoami: "host=<Host header> server=<address>:<port> path=<path>", and with
      --secret /auth...: 200 "authorized HOW" when the request carries the secret
      of FILE (HOW: bearer, x-api-key, basic as `user:SECRET`, header X-Berth-Token),
      else 401 "unauthorized sha=<SHA-256 of Authorization|x-api-key|X-Berth-Token>";
      logged as "auth HOW PATH host=HOST sha=..." (never the values); POST reads its body
      (Content-Length) and logs "post PATH len=N sha=<SHA-256 of the body>" first;
      /bytes/N: N bytes of pattern_bytes() (made on the fly)
  servers.py echo   --bind ADDR:PORT...
      TCP echo (asyncio: thousands of connections at once)
  servers.py record --bind ADDR:PORT... --log FILE
      records every connection it accepts ("conn <server> <peer>"), answers
      HTTP 200 "reached <server>" and closes: what a test must NOT reach
  servers.py dns-rebind --bind ADDR:PORT --zone ZONE --first IP --then IP --log FILE
      a DNS responder over UDP: the first A query for each name under ZONE
      is answered with --first, every later one with --then (TTL 0); AAAA and
      other types get an empty answer; everything else REFUSED.  Each query
      is logged ("NAME TYPE -> ANSWER").  dnsmasq cannot change its answer.

ADDR is an IPv4 address or an IPv6 one in brackets.  Each server prints
"ready" on stdout once all its sockets listen.
"""
import argparse
import asyncio
import base64
import hashlib
import http.server
import socket
import socketserver
import ssl
import struct
import sys
import threading


def split_bind(text):
    if text.startswith("["):
        host, _, port = text[1:].partition("]:")
        return socket.AF_INET6, host, int(port)
    host, _, port = text.rpartition(":")
    return socket.AF_INET, host, int(port)


class Log:
    """Append-only, one line per event, flushed at once (the tests read it)."""

    def __init__(self, path):
        self.lock = threading.Lock()
        self.f = open(path, "a", buffering=1) if path else None

    def write(self, line):
        if self.f is None:
            return
        with self.lock:
            self.f.write(line + "\n")
            self.f.flush()


def server_for(family, host, port, handler, tls=None):
    class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
        address_family = family
        daemon_threads = True
        allow_reuse_address = True
        request_queue_size = 1024

        def server_bind(self):
            if family == socket.AF_INET6:
                self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            socketserver.TCPServer.server_bind(self)

        def finish_request(self, request, client_address):
            if tls is None:
                return super().finish_request(request, client_address)
            # The TLS handshake in the connection's own thread, not in accept().
            request.settimeout(10)
            try:
                conn = tls.wrap_socket(request, server_side=True)
            except (OSError, ssl.SSLError):
                return None
            try:
                return super().finish_request(conn, client_address)
            finally:
                conn.close()

    return S((host, port), handler)


def pattern_bytes(n):
    """N bytes, each 32-byte block the sha256 of its index: a lost, repeated
    or reordered piece anywhere changes the whole's digest."""
    i = 0
    while n > 0:
        block = b"".join(hashlib.sha256(b"%d" % k).digest() for k in range(i, i + 2048))
        i += 2048
        yield block[:n]
        n -= len(block[:n])


def run_http(a):
    log = Log(a.log)
    root = a.root
    secret = open(a.secret).read().strip() if a.secret else ""

    class H(http.server.SimpleHTTPRequestHandler):
        protocol_version = "HTTP/1.0"

        def __init__(self, *args, **kw):
            super().__init__(*args, directory=root, **kw)

        def do_GET(self):
            log.write("%s %s %s host=%s" % (self.server.server_address[0], self.command, self.path,
                                            self.headers.get("Host", "")))
            if self.path.startswith("/auth") and secret:
                return self.auth()
            if self.path.startswith("/bytes/"):
                # /bytes/N: N bytes of pattern_bytes() (a large download's
                # source, made on the fly: nothing of that size is stored)
                n = int(self.path[len("/bytes/"):])
                if n < 0 or n > 1 << 30:
                    self.send_error(400)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(n))
                self.end_headers()
                for chunk in pattern_bytes(n):
                    self.wfile.write(chunk)
                return
            if self.path.startswith("/whoami"):
                sa = self.server.server_address
                body = ("host=%s server=%s:%d path=%s\n" % (self.headers.get("Host", ""), sa[0], sa[1],
                                                            self.path)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            super().do_GET()

        def do_POST(self):
            # the body read whole (Content-Length), its length and digest logged: what a relay
            # delivered; then /auth as for GET
            n = int(self.headers.get("Content-Length", "0") or "0")
            body = self.rfile.read(n) if n > 0 else b""
            log.write("post %s len=%d sha=%s" % (self.path, len(body), hashlib.sha256(body).hexdigest()))
            if self.path.startswith("/auth") and secret:
                return self.auth()
            self.send_error(404)

        def auth(self):
            got = self.headers.get("Authorization", "")
            key = self.headers.get("x-api-key", "")
            tok = self.headers.get("X-Berth-Token", "")
            how = "none"
            basic = ""
            if got.startswith("Basic "):
                try:
                    basic = base64.b64decode(got[6:], validate=True).decode("latin-1")
                except ValueError:
                    basic = ""
            if got == "Bearer " + secret:
                how = "bearer"
            elif key == secret:
                how = "x-api-key"
            elif tok == secret:
                how = "header"
            elif basic.endswith(":" + secret):
                how = "basic"
            sha = hashlib.sha256(("%s|%s|%s" % (got, key, tok)).encode()).hexdigest()
            log.write("auth %s %s host=%s sha=%s" % (how, self.path, self.headers.get("Host", ""), sha))
            body = ("authorized %s\n" % how if how != "none" else "unauthorized sha=%s\n" % sha).encode()
            self.send_response(200 if how != "none" else 401)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    tls = None
    if a.tls:
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(a.tls[0], a.tls[1])
    servers = [server_for(*split_bind(b), H, tls) for b in a.bind]
    for s in servers:
        threading.Thread(target=s.serve_forever, daemon=True).start()
    print("ready", flush=True)
    threading.Event().wait()


def run_record(a):
    log = Log(a.log)

    class H(socketserver.BaseRequestHandler):
        def handle(self):
            sa = self.server.server_address
            log.write("conn %s:%d %s" % (sa[0], sa[1], self.client_address[0]))
            body = ("reached %s:%d\n" % (sa[0], sa[1])).encode()
            self.request.settimeout(2)
            try:
                self.request.recv(4096)
            except OSError:
                pass
            self.request.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))

    servers = [server_for(*split_bind(b), H) for b in a.bind]
    for s in servers:
        threading.Thread(target=s.serve_forever, daemon=True).start()
    print("ready", flush=True)
    threading.Event().wait()


def run_echo(a):
    async def echo(reader, writer):
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                writer.write(data)
                await writer.drain()
        except OSError:
            pass
        finally:
            writer.close()

    async def main():
        for b in a.bind:
            family, host, port = split_bind(b)
            await asyncio.start_server(echo, host, port, family=family, backlog=4096, reuse_address=True)
        print("ready", flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())


def dns_name(msg, off):
    labels = []
    while True:
        n = msg[off]
        if n == 0:
            return ".".join(labels), off + 1
        if n & 0xC0:
            raise ValueError("compressed name in a question")
        labels.append(msg[off + 1:off + 1 + n].decode("ascii"))
        off += 1 + n


def run_dns_rebind(a):
    log = Log(a.log)
    family, host, port = split_bind(a.bind[0])
    zone = a.zone.lower().rstrip(".")
    seen = set()
    s = socket.socket(family, socket.SOCK_DGRAM)
    s.bind((host, port))
    print("ready", flush=True)
    while True:
        msg, peer = s.recvfrom(4096)
        try:
            qid, flags, qd = struct.unpack("!HHH", msg[:6])
            name, off = dns_name(msg, 12)
            qtype, qclass = struct.unpack("!HH", msg[off:off + 4])
        except (ValueError, struct.error, IndexError, UnicodeDecodeError):
            continue
        question = msg[12:off + 4]
        lname = name.lower()
        rcode, answers, what = 0, b"", "empty"
        if not (lname == zone or lname.endswith("." + zone)):
            rcode, what = 5, "REFUSED"
        elif qtype == 1:
            ip = a.then if lname in seen else a.first
            seen.add(lname)
            answers = b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, 0, 4) + socket.inet_aton(ip)
            what = ip
        log.write("%s %s -> %s" % (lname, {1: "A", 28: "AAAA"}.get(qtype, str(qtype)), what))
        rflags = 0x8000 | 0x0400 | (flags & 0x0100) | rcode  # response, authoritative, RD copied
        head = struct.pack("!HHHHHH", qid, rflags, 1, 1 if answers else 0, 0, 0)
        s.sendto(head + question + answers, peer)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("role", choices=["http", "echo", "record", "dns-rebind"])
    p.add_argument("--bind", action="append", required=True)
    p.add_argument("--root")
    p.add_argument("--tls", nargs=2)
    p.add_argument("--secret")
    p.add_argument("--log")
    p.add_argument("--zone")
    p.add_argument("--first")
    p.add_argument("--then")
    a = p.parse_args()
    {"http": run_http, "echo": run_echo, "record": run_record, "dns-rebind": run_dns_rebind}[a.role](a)


if __name__ == "__main__":
    sys.exit(main())
