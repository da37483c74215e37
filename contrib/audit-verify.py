#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Verify a berth audit log without berth: python3 (standard library) and openssl(1).

    contrib/audit-verify.py AUDIT-DIR PUBKEY.pem

AUDIT-DIR is ~/.local/state/berth/audit (or $XDG_STATE_HOME/berth/audit); PUBKEY.pem
is the host's public key, ~/.config/berth/keys/host-ed25519.pub.pem.  Prints
`intact: N records, head HASH` and exits 0, or `BROKEN at record N (FILE:LINE): REASON`
and exits 1.  The format is docs/audit.md; this is a second, independent implementation
of its rules (RFC 8785 canonical JSON included).
"""
import hashlib
import json
import math
import os
import re
import subprocess
import sys
import tempfile


def no_duplicates(pairs):
    """A JSON object with a member name twice is refused, as berth refuses it:
    readers disagree on which value counts, so a signed record must not have one."""
    obj = {}
    for k, v in pairs:
        if k in obj:
            raise ValueError("duplicate object key %r" % k)
        obj[k] = v
    return obj

ZERO = "0" * 64
HEAD_TYPE = "berth.audit.head/1"
NAME = re.compile(r"^audit-(\d{16})\.jsonl$")


def es6_number(x):
    """ECMAScript Number.prototype.toString() for a finite double (RFC 8785 3.2.2.3)."""
    if x == 0:
        return "0"
    if x < 0:
        return "-" + es6_number(-x)
    r = repr(x)  # shortest round-trip digits
    mant, _, exp = r.partition("e")
    exp = int(exp) if exp else 0
    ip, _, fp = mant.partition(".")
    digits = (ip + fp).lstrip("0")
    n = len(ip.lstrip("0")) + exp if ip.strip("0") else exp - (len(fp) - len(fp.lstrip("0")))
    digits = digits.rstrip("0") or "0"
    k = len(digits)
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + digits
    e = n - 1
    s = digits[0] + ("." + digits[1:] if k > 1 else "")
    return s + "e" + ("+" if e >= 0 else "-") + str(abs(e))


def jcs_string(s):
    out = ['"']
    for ch in s:
        c = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif c < 0x20:
            out.append({8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r"}.get(c, "\\u%04x" % c))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def jcs(v):
    """RFC 8785 canonical JSON of a value from json.loads."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        if abs(v) > 2**53 and float(v) != v:
            raise ValueError("integer %d is no IEEE 754 double" % v)
        return str(v) if abs(v) <= 2**53 else es6_number(float(v))
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError("non-finite number")
        return es6_number(v)
    if isinstance(v, str):
        return jcs_string(v)
    if isinstance(v, list):
        return "[" + ",".join(jcs(x) for x in v) + "]"
    if isinstance(v, dict):
        keys = sorted(v, key=lambda k: k.encode("utf-16-be"))  # UTF-16 code units
        return "{" + ",".join(jcs_string(k) + ":" + jcs(v[k]) for k in keys) + "}"
    raise ValueError("unexpected type")


def openssl_verify(pub, msg, sig):
    with tempfile.TemporaryDirectory() as d:
        m, s = os.path.join(d, "msg"), os.path.join(d, "sig")
        with open(m, "wb") as f:
            f.write(msg)
        with open(s, "wb") as f:
            f.write(sig)
        r = subprocess.run(["openssl", "pkeyutl", "-verify", "-pubin", "-inkey", pub, "-rawin", "-in", m,
                            "-sigfile", s], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return r.returncode == 0


QNAME = re.compile(r"^quarantine-([0-9]{20})-[0-9]{20}(-[0-9]+)?\.jsonl$")


def broken(n, where, why):
    print("BROKEN at record %d (%s): %s" % (n, where, why))
    sys.exit(1)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: audit-verify.py AUDIT-DIR PUBKEY.pem")
    d, pub = sys.argv[1], sys.argv[2]
    files = sorted(f for f in os.listdir(d) if NAME.match(f))
    prev, n, where = ZERO, 0, d
    named = set()  # quarantine files the recovery records name
    members = ["actor", "hash", "kind", "payload", "prev", "run_id", "seq", "ts"]
    for name in files:
        path = os.path.join(d, name)
        with open(path, "rb") as f:
            data = f.read()
        lines = data.split(b"\n")
        if lines[-1] != b"":
            broken(n + 1, "%s:%d" % (path, len(lines)), "torn last line")
        for i, raw in enumerate(lines[:-1], 1):
            where = "%s:%d" % (path, i)
            text = raw.decode("utf-8")
            rec = json.loads(text, object_pairs_hook=no_duplicates)
            if sorted(rec) != members:
                broken(n + 1, where, "members are not exactly %s" % members)
            if jcs(rec) != text:
                broken(n + 1, where, "not in canonical form (RFC 8785)")
            body = dict(rec)
            del body["hash"]
            if hashlib.sha256(jcs(body).encode()).hexdigest() != rec["hash"]:
                broken(n + 1, where, "hash does not match the content")
            if rec["seq"] != n + 1:
                broken(n + 1, where, "seq %s where %d was expected" % (rec["seq"], n + 1))
            if rec["prev"] != prev:
                broken(n + 1, where, "prev does not name the previous record's hash")
            if i == 1 and int(NAME.match(name).group(1)) != rec["seq"]:
                broken(n + 1, where, "file name does not match its first seq")
            if rec["kind"] == "audit.recovery" and isinstance(rec["payload"].get("quarantined"), str):
                named.add(rec["payload"]["quarantined"])
            prev, n = rec["hash"], n + 1
    # The signed head: the newest of two 512-byte slots whose signature verifies.
    try:
        with open(os.path.join(d, "head"), "rb") as f:
            head = f.read()
    except FileNotFoundError:
        head = b""
    best = None
    for off in (0, 512):
        slot = head[off:off + 512].rstrip(b" \n\0")
        if not slot:
            continue
        try:
            h = json.loads(slot, object_pairs_hook=no_duplicates)
            msg = jcs({"hash": h["hash"], "seq": h["seq"], "type": HEAD_TYPE}).encode()
            sig = bytes.fromhex(h["sig"])
        except (ValueError, KeyError):
            broken(n, os.path.join(d, "head"), "the signed head is damaged: slot %d is neither empty nor a head"
                   % (off // 512 + 1))
        if not openssl_verify(pub, msg, sig):
            broken(n, os.path.join(d, "head"), "the signature over seq %d does not verify" % h["seq"])
        if best is None or h["seq"] > best["seq"]:
            best = h
    if best is None:
        if n:
            broken(n, where, "there is no signed head")
    elif best["seq"] > n:
        broken(n, where, "the signed head names record %d but the log ends at %d" % (best["seq"], n))
    elif best["seq"] < n:
        broken(n, where, "records %d..%d are not covered by the signed head" % (best["seq"] + 1, n))
    elif best["hash"] != prev:
        broken(n, where, "the last record's hash differs from the signed head")
    # Records moved out of the log: each quarantine file is named by a recovery record.
    for q in sorted(os.listdir(d)):
        m = QNAME.match(q)
        if m and q not in named:
            broken(int(m.group(1)), os.path.join(d, q), "no recovery record names this quarantine file")
    if n == 0:
        # Nothing to check is not "intact": an empty log cannot show whether records were removed.
        print("empty: no records in `%s` (nothing recorded yet, or everything was removed: an empty log "
              "cannot show which)" % d)
        return
    print("intact: %d records, head %s" % (n, prev))


if __name__ == "__main__":
    main()
