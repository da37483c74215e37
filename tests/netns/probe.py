#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Client-side probes for tests/integration/run-netns-egress.sh, run INSIDE a
berth sandbox (python3 standard library only).  Every subcommand prints one
result per line, in a form the test compares exactly.

  probe.py http REQUEST            send REQUEST ("\\r\\n" escapes allowed) to
                                   $HTTP_PROXY; print the status line and body
  probe.py socks HOST PORT [DATA]  SOCKS5 CONNECT to HOST (a name) through
                                   $ALL_PROXY; print "rep=N" and what HOST sent
                                   back after DATA
  probe.py connect HOST PORT       a direct TCP connection: "connected" or the
                                   errno name
  probe.py talk HOST PORT PATH     a direct TCP connection and an HTTP request
                                   for PATH: the errno name of the connect, or
                                   "connected" and then "reset", "eof" or the
                                   reply's status line
  probe.py dns SERVER NAME         a DNS query over UDP, sent directly: "sent"
                                   or the errno name
  probe.py listen                  listen on the sandbox's loopback, then
                                   connect to that listener: errno names
  probe.py relay                   an in-sandbox relay (see relay()) and
                                   requests through it
  probe.py tunnels N HOST PORT DIR N concurrent CONNECT tunnels (see tunnels())
"""
import errno
import os
import selectors
import socket
import struct
import sys
import threading
import time


def proxy_addr(var):
    url = os.environ[var]
    hostport = url.split("://", 1)[1].rstrip("/")
    host, _, port = hostport.rpartition(":")
    return host, int(port)


def ename(e):
    return errno.errorcode.get(e.errno, str(e.errno))


def recv_all(s, limit=1 << 20):
    out = b""
    while len(out) < limit:
        try:
            d = s.recv(65536)
        except socket.timeout:
            break
        if not d:
            break
        out += d
    return out


def recv_head(s):
    """Read up to the end of an HTTP head; return (head, rest)."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = s.recv(4096)
        if not d:
            break
        buf += d
    head, _, rest = buf.partition(b"\r\n\r\n")
    return head, rest


def show(resp):
    head, _, body = resp.partition(b"\r\n\r\n")
    print(head.split(b"\r\n")[0].decode(errors="replace"))
    print(body.decode(errors="replace").strip())


def cmd_http(req):
    s = socket.create_connection(proxy_addr("HTTP_PROXY"), timeout=10)
    s.sendall(req.encode().decode("unicode_escape").encode("latin-1"))
    show(recv_all(s))


def socks_connect(s, host, port):
    s.sendall(b"\x05\x01\x00")
    if s.recv(2) != b"\x05\x00":
        return -1
    h = host.encode()
    s.sendall(b"\x05\x01\x00\x03" + bytes([len(h)]) + h + struct.pack("!H", port))
    rep = s.recv(4)
    if len(rep) < 4:
        return -1
    # the bound address: skip it
    n = {1: 4, 4: 16}.get(rep[3], 0)
    if rep[3] == 3:
        n = s.recv(1)[0]
    s.recv(n + 2)
    return rep[1]


def cmd_socks(host, port, data=""):
    s = socket.create_connection(proxy_addr("ALL_PROXY"), timeout=10)
    rep = socks_connect(s, host, int(port))
    print("rep=%d" % rep)
    if rep == 0 and data:
        s.sendall(data.encode().decode("unicode_escape").encode("latin-1"))
        show(recv_all(s))


def cmd_connect(host, port):
    try:
        socket.create_connection((host, int(port)), timeout=5)
        print("connected")
    except OSError as e:
        print(ename(e))


def cmd_talk(host, port, path):
    try:
        s = socket.create_connection((host, int(port)), timeout=5)
    except ConnectionResetError:
        # With a timeout the connect is non-blocking and its result read
        # from SO_ERROR: a reset that came right after the handshake (the
        # peer accepted and reset at once) is reported there, as if the
        # connect had failed.  A refused connect is ECONNREFUSED instead.
        print("connected")
        print("reset")
        return
    except OSError as e:
        print(ename(e))
        return
    print("connected")
    try:
        s.sendall(("GET %s HTTP/1.0\r\nHost: %s\r\n\r\n" % (path, host)).encode())
        d = s.recv(4096)
        print(d.split(b"\r\n")[0].decode(errors="replace") if d else "eof")
    except ConnectionResetError:
        print("reset")
    except OSError as e:
        print(ename(e))


def cmd_dns(server, name):
    q = struct.pack("!HHHHHH", 0x4242, 0x0100, 1, 0, 0, 0)
    q += b"".join(bytes([len(p)]) + p.encode() for p in name.split(".")) + b"\0" + struct.pack("!HH", 1, 1)
    s = socket.socket(socket.AF_INET6 if ":" in server else socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.sendto(q, (server, 53))
        print("sent")
    except OSError as e:
        print(ename(e))
    try:
        socket.getaddrinfo(name, 80)
        print("resolved")
    except socket.gaierror:
        print("gaierror")


def cmd_listen():
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", 0))
        print("bind ok")
    except OSError as e:
        print("bind " + ename(e))
    s.listen()  # an unbound socket gets an ephemeral port: Landlock's bind hook does not see it
    c = socket.socket()
    c.settimeout(3)
    try:
        c.connect(("127.0.0.1", s.getsockname()[1]))
        print("connect ok")
    except OSError as e:
        print("connect " + ename(e))


def relay():
    """A relay inside the sandbox: TCP on its own loopback cannot be used (the
    caller checks that with `listen`), so it listens on a unix socket and
    forwards every connection, byte for byte, to the broker's HTTP port: any
    program in the sandbox can build such a chain.  Returns its path."""
    path = "/tmp/relay.sock"
    if os.path.exists(path):
        os.unlink(path)
    ls = socket.socket(socket.AF_UNIX)
    ls.bind(path)
    ls.listen(16)

    def pipe(a, b):
        try:
            while True:
                d = a.recv(65536)
                if not d:
                    break
                b.sendall(d)
            b.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def serve():
        while True:
            c, _ = ls.accept()
            up = socket.create_connection(proxy_addr("HTTP_PROXY"))
            threading.Thread(target=pipe, args=(c, up), daemon=True).start()
            threading.Thread(target=pipe, args=(up, c), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    return path


def via_relay(path, first, then=None):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    s.connect(path)
    s.sendall(first)
    if then is None:
        return recv_all(s)
    head, rest = recv_head(s)
    if not head.startswith(b"HTTP/1.1 200"):
        return head + b"\r\n\r\n" + rest + recv_all(s)
    s.sendall(then)
    return recv_all(s)


def cmd_relay(web, other):
    path = relay()
    # 1. an allowed tunnel through the chain, and a request inside it
    r = via_relay(path, b"CONNECT %s:80 HTTP/1.1\r\nHost: %s:80\r\n\r\n" % (web.encode(), web.encode()),
                  b"GET /whoami HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % web.encode())
    show(r)
    # 2. an undeclared host, CONNECT and plain, through the chain
    show(via_relay(path, b"CONNECT %s:80 HTTP/1.1\r\nHost: %s:80\r\n\r\n" % (other.encode(), other.encode())))
    show(via_relay(path, b"GET http://%s/ HTTP/1.1\r\nHost: %s\r\n\r\n" % (other.encode(), other.encode())))
    # 3. CONNECT inside an allowed tunnel: it reaches the declared host, which is no proxy
    r = via_relay(path, b"CONNECT %s:80 HTTP/1.1\r\nHost: %s:80\r\n\r\n" % (web.encode(), web.encode()),
                  b"CONNECT %s:80 HTTP/1.1\r\nHost: %s:80\r\n\r\n" % (other.encode(), other.encode()))
    print(r.split(b"\r\n")[0].decode(errors="replace"))


def tunnels(n, host, port, outdir):
    """N concurrent CONNECT tunnels through $HTTP_PROXY to an echo server.
    Writes DIR/ready and waits for DIR/start (the caller measures berth
    before); phase 1 opens them all and waits for every "200" (or the first failure
    of each), writes DIR/open ("OK N" or what failed), then waits for
    DIR/go; phase 2 sends 4 KiB of distinct bytes on every tunnel at once
    and checks each echo; writes DIR/done: "echoed K of N" and waits for
    DIR/end before it exits."""
    def wait_for(name):
        while not os.path.exists(os.path.join(outdir, name)):
            time.sleep(0.05)

    open(os.path.join(outdir, "ready"), "w").close()
    wait_for("start")
    addr = proxy_addr("HTTP_PROXY")
    req = b"CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n" % (host.encode(), port, host.encode(), port)
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.setblocking(False)
        try:
            s.connect(addr)
        except BlockingIOError:
            pass
        socks.append(s)
    sel = selectors.DefaultSelector()
    state = {}
    for i, s in enumerate(socks):
        sel.register(s, selectors.EVENT_WRITE, i)
        state[i] = b""
    status = {}
    deadline = time.time() + 60
    while len(status) < n and time.time() < deadline:
        for key, ev in sel.select(timeout=1):
            i, s = key.data, key.fileobj
            if ev & selectors.EVENT_WRITE:
                err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if err:
                    status[i] = "connect " + errno.errorcode.get(err, str(err))
                    sel.unregister(s)
                    continue
                s.send(req)
                sel.modify(s, selectors.EVENT_READ, i)
                continue
            try:
                data = s.recv(4096)
            except OSError as e:
                status[i] = "recv " + ename(e)
                sel.unregister(s)
                continue
            state[i] += data
            if b"\r\n\r\n" in state[i] or not data:
                line = state[i].split(b"\r\n")[0].decode(errors="replace") or "closed"
                status[i] = "OK" if line.startswith("HTTP/1.1 200") else line
                sel.unregister(s)
    bad = {}
    for i in range(n):
        v = status.get(i, "no reply in 60 s")
        if v != "OK":
            bad[v] = bad.get(v, 0) + 1
    with open(os.path.join(outdir, "open.tmp"), "w") as f:
        f.write("OK %d\n" % n if not bad else "; ".join("%d: %s" % (c, v) for v, c in sorted(bad.items())) + "\n")
    os.rename(os.path.join(outdir, "open.tmp"), os.path.join(outdir, "open"))
    wait_for("go")
    ok_ids = [i for i in range(n) if status.get(i) == "OK"]
    want = {i: (("%06d" % i) * 700)[:4096].encode() for i in ok_ids}
    got = {i: b"" for i in ok_ids}
    for i in ok_ids:
        socks[i].setblocking(True)
        socks[i].sendall(want[i])
        socks[i].setblocking(False)
        sel.register(socks[i], selectors.EVENT_READ, i)
    deadline = time.time() + 60
    pending = set(ok_ids)
    while pending and time.time() < deadline:
        for key, _ in sel.select(timeout=1):
            i = key.data
            try:
                data = key.fileobj.recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            got[i] += data
            if not data or len(got[i]) >= len(want[i]):
                sel.unregister(key.fileobj)
                pending.discard(i)
    echoed = sum(1 for i in ok_ids if got[i] == want[i])
    with open(os.path.join(outdir, "done.tmp"), "w") as f:
        f.write("echoed %d of %d\n" % (echoed, n))
    os.rename(os.path.join(outdir, "done.tmp"), os.path.join(outdir, "done"))
    wait_for("end")  # the tunnels stay open while the caller measures again


def main():
    a = sys.argv[1:]
    cmds = {
        "http": lambda: cmd_http(a[1]),
        "socks": lambda: cmd_socks(*a[1:4]),
        "connect": lambda: cmd_connect(a[1], a[2]),
        "dns": lambda: cmd_dns(a[1], a[2]),
        "talk": lambda: cmd_talk(a[1], a[2], a[3]),
        "listen": cmd_listen,
        "relay": lambda: cmd_relay(a[1], a[2]),
        "tunnels": lambda: tunnels(int(a[1]), a[2], int(a[3]), a[4]),
    }
    if not a or a[0] not in cmds:
        print(__doc__, file=sys.stderr)
        return 2
    cmds[a[0]]()
    return 0


if __name__ == "__main__":
    sys.exit(main())
