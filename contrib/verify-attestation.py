#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check a berth attestation without berth: python3 and openssl(1) only.

usage: verify-attestation.py ATTESTATION.json TRUSTED-PUBKEY.pem

1. canonical JSON (RFC 8785) of the record without its "signature" member;
   berth's records hold only strings, integers, booleans, null, arrays and
   objects with ASCII member names, for which JCS is json.dumps with sorted
   keys, no whitespace and literal UTF-8 (a float is refused here);
2. the signature: openssl pkeyutl -verify -rawin (Ed25519, RFC 8032) with the
   trusted public key, which must also be the key named in the record.
Exit 0 valid, 1 invalid, 2 usage or unreadable input.
"""
import base64, json, os, subprocess, sys, tempfile


def no_duplicates(pairs):
    """A JSON object with a member name twice is refused, as berth refuses it:
    readers disagree on which value counts, so a signed record must not have one."""
    obj = {}
    for k, v in pairs:
        if k in obj:
            raise ValueError("duplicate object key %r" % k)
        obj[k] = v
    return obj

def no_floats(v):
    if isinstance(v, float):
        raise ValueError("a non-integer number: not a berth attestation")
    if isinstance(v, dict):
        for k, x in v.items():
            no_floats(x)
    if isinstance(v, list):
        for x in v:
            no_floats(x)

def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    try:
        doc = json.load(open(sys.argv[1], encoding="utf-8"), object_pairs_hook=no_duplicates)
        pem = open(sys.argv[2]).read()
        no_floats(doc)
    except (OSError, ValueError) as e:
        print(f"verify-attestation: {e}", file=sys.stderr)
        return 2
    sig = doc.pop("signature", None)
    if not isinstance(sig, dict) or sig.get("alg") != "Ed25519":
        print("INVALID: no Ed25519 signature")
        return 1
    # The raw 32-byte key is the last 32 bytes of the SubjectPublicKeyInfo DER (RFC 8410).
    der = base64.b64decode("".join(l for l in pem.splitlines() if not l.startswith("-----")))
    if der[-32:].hex() != sig.get("public_key"):
        print("INVALID: the record names another signing key")
        return 1
    canon = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    with tempfile.TemporaryDirectory() as d:
        msg, sigf = os.path.join(d, "msg"), os.path.join(d, "sig")
        open(msg, "wb").write(canon)
        open(sigf, "wb").write(bytes.fromhex(sig.get("value", "")))
        r = subprocess.run(["openssl", "pkeyutl", "-verify", "-pubin", "-inkey", sys.argv[2], "-rawin",
                            "-in", msg, "-sigfile", sigf], capture_output=True, text=True)
    if r.returncode != 0:
        print("INVALID: the signature does not verify")
        return 1
    print(f"valid: run {doc.get('run_id')}, verdict {doc.get('verdict')}")
    return 0

if __name__ == "__main__":
    sys.exit(main())
