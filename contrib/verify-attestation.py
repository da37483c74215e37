#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check a berth attestation without berth: python3 and openssl(1) only.

usage: verify-attestation.py [--vm-kernel-sha256 HEX] ATTESTATION.json TRUSTED-PUBKEY.pem

1. canonical JSON (RFC 8785) of the record without its "signature" member;
   berth's records hold only strings, integers, booleans, null, arrays and
   objects with ASCII member names, for which JCS is json.dumps with sorted
   keys, no whitespace and literal UTF-8 (a float is refused here);
2. the signature: openssl pkeyutl -verify -rawin (Ed25519, RFC 8032) with the
   trusted public key, which must also be the key named in the record;
3. a record of the microVM runtime (enforced.runtime.name "vm") must name the
   pinned guest kernel: the sha256 given with --vm-kernel-sha256, else the one
   the source tree this script came with pins (src/vm/pins.h,
   BERTH_VM_VMLINUZ_SHA256); with neither, a vm record is refused (exit 2).
Exit 0 valid, 1 invalid, 2 usage or unreadable input.
"""
import base64, json, os, re, subprocess, sys, tempfile


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

def tree_pin():
    """The guest kernel's sha256 that the tree beside this script pins, or None."""
    pins = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src", "vm", "pins.h")
    try:
        m = re.search(r'#define BERTH_VM_VMLINUZ_SHA256 "([0-9a-f]{64})"', open(pins).read())
    except OSError:
        return None
    return m.group(1) if m else None

def main():
    args, pin = sys.argv[1:], None
    if len(args) >= 2 and args[0] == "--vm-kernel-sha256":
        pin, args = args[1], args[2:]
        if not re.fullmatch(r"[0-9a-f]{64}", pin):
            print(f"verify-attestation: --vm-kernel-sha256 {pin!r} is not 64 lowercase hex digits",
                  file=sys.stderr)
            return 2
    if len(args) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    try:
        doc = json.load(open(args[0], encoding="utf-8"), object_pairs_hook=no_duplicates)
        pem = open(args[1]).read()
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
        r = subprocess.run(["openssl", "pkeyutl", "-verify", "-pubin", "-inkey", args[1], "-rawin",
                            "-in", msg, "-sigfile", sigf], capture_output=True, text=True)
    if r.returncode != 0:
        print("INVALID: the signature does not verify")
        return 1
    enforced = doc.get("enforced")
    rt = enforced.get("runtime") if isinstance(enforced, dict) else None
    if isinstance(rt, dict) and rt.get("name") == "vm":
        pin = pin or tree_pin()
        if pin is None:
            print("verify-attestation: a microVM record, and no pinned kernel to check it against: "
                  "give --vm-kernel-sha256 HEX (src/vm/pins.h, BERTH_VM_VMLINUZ_SHA256)", file=sys.stderr)
            return 2
        if rt.get("kernel_sha256") != pin:
            print(f"INVALID: the microVM booted kernel sha256 {str(rt.get('kernel_sha256'))[:64]!r}, "
                  f"not the pinned {pin}")
            return 1
    print(f"valid: run {doc.get('run_id')}, verdict {doc.get('verdict')}")
    return 0

if __name__ == "__main__":
    sys.exit(main())
