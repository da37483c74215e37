#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A resident app's `credentials:` (docs/manifest.md, docs/credentials.md): the
# binding is compiled into the app's policy as --credential's, the secret is
# read by berth when the app is opened and never enters its sandbox (the app
# sees a placeholder and the run's CA in its bundle); a bad binding is a
# diagnostic with its line; an older manifest without the key stays valid.
# The injection itself is the broker's, tested against the test hosts by
# run-credentials.sh.
#
# usage: run-app-credentials.sh /path/to/berth
#   TAP output, a final count; exit 1 on a failure.
set -u
export LC_ALL=C
[ $# -eq 1 ] || { echo "usage: $0 /path/to/berth" >&2; exit 2; }
BERTH=$(readlink -f -- "$1")
T=0 FAILS=0
pass() { T=$((T + 1)); echo "ok $T - $1"; }
fail() { T=$((T + 1)); FAILS=$((FAILS + 1)); echo "not ok $T - $1 # $2"; shift 2; local l; for l in "$@"; do printf '%s\n' "$l" | head -n 8 | sed 's/^/#   /'; done; }
eq() { if [ "$2" == "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'" "stderr: $ERR"; fi; }
has() { if printf '%s' "$2" | grep -qF -- "$3"; then pass "$1"; else fail "$1" "'$3' not found" "in: $2" "stderr: $ERR"; fi; }
hasnt() { if printf '%s' "$2" | grep -qF -- "$3"; then fail "$1" "found (${#2} bytes searched)"; else pass "$1"; fi; }
finish() { echo "1..$T"; echo "# $((T - FAILS)) passed, $FAILS failed"; [ "$FAILS" -eq 0 ]; exit; }

TOP=$(mktemp -d /tmp/berth-appcred.XXXXXX) || exit 1
chmod 755 "$TOP"
trap 'rm -rf "$TOP"' EXIT
export XDG_STATE_HOME=$TOP/state XDG_CONFIG_HOME=$TOP/config
mkdir -p "$TOP/state" "$TOP/config"
cd "$TOP" || exit 1
"$BERTH" init credapp --runtime python >/dev/null 2>&1 || { fail "berth init" "failed"; finish; }
APP=$TOP/credapp
SECRET="s3cr3t-$(id -u)-$$-$RANDOM$RANDOM"
export CRED_SRC=$SECRET
python3 - "$APP/berth.yml" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
s = s.replace("resources:", "credentials:\n  - TOK=env:CRED_SRC@api.example.com#x-api-key\nresources:", 1)
s = s.replace("""  - name: hello""", """  - name: probe
    description: What the app sees of its credential
    input: {type: object, properties: {}}
    output: {tok: string, bundle: string, found: boolean}
  - name: hello""", 1)
open(p, "w").write(s)
PY
cat >"$APP/main.py" <<'PY'
import os, subprocess
import berth_app
app = berth_app.App()
@app.export("probe")
def probe():
    tok = os.environ.get("TOK", "")
    bundle = os.environ.get("SSL_CERT_FILE", "")
    # the secret is searched for by its digest, given by the test: never its value
    want = open("/app/want").read().strip()
    found = False
    import hashlib
    for root in ("/app", "/workspace", "/tmp", os.environ.get("HOME", "/tmp")):
        for d, _, fs in os.walk(root):
            for f in fs:
                try:
                    b = open(os.path.join(d, f), "rb").read()
                except OSError:
                    continue
                found |= hashlib.sha256(b.strip()).hexdigest() == want
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                for e in open("/proc/%s/environ" % pid, "rb").read().split(b"\0"):
                    found |= hashlib.sha256(e.split(b"=", 1)[-1]).hexdigest() == want
            except OSError:
                pass
    return {"tok": tok, "bundle": bundle + ":" + str(open(bundle).read().count("BEGIN CERTIFICATE") > 0), "found": found}
@app.export("hello")
def hello(name):
    return {"greeting": "hello, " + name, "count": 1}
app.run()
PY
printf '%s' "$SECRET" | sha256sum | cut -d' ' -f1 >"$APP/want"
chmod -R a+rX "$APP"

ERR=
OUT=$("$BERTH" policy "$APP" --json 2>"$TOP/err"); ERR=$(cat "$TOP/err")
has "the policy holds the binding (canonical), never the value" "$OUT" '"credentials":["TOK=env:CRED_SRC@api.example.com:443/#x-api-key"]'
has "... and declares its host and port" "$OUT" '"allow_hosts":["api.example.com:443"]'
hasnt "... and not the secret" "$OUT" "$SECRET"
OUT=$("$BERTH" rpc credapp --app-dir "$APP" --export probe --input '{}' 2>"$TOP/err"); RC=$?; ERR=$(cat "$TOP/err")
eq "the app boots and answers (exit 0)" "$RC" 0
if [[ "$OUT" =~ \"tok\":\ ?\"berth-cred-TOK-[0-9a-f]{32}\" ]]; then pass "inside, TOK is the placeholder"; else fail "inside, TOK is the placeholder" "got $OUT"; fi
has "inside, SSL_CERT_FILE names the bundle with the run's CA" "$OUT" '/etc/ssl/certs/ca-certificates.crt:True'
has "the secret is in no file or environment the app can read" "$OUT" '"found":false'
hasnt "the secret is not in berth's output" "$OUT$ERR" "$SECRET"
hasnt "the secret is not in the audit trail or the app's state" "$(grep -rsF -- "$SECRET" "$TOP/state" | head -c 100)" "$SECRET"
(unset CRED_SRC; "$BERTH" rpc credapp --app-dir "$APP" --export probe --input '{}' >/dev/null 2>"$TOP/err"; echo "rc=$?") >"$TOP/out"
ERR=$(cat "$TOP/err")
has "an unset source refuses the boot (exit 2), named" "$(cat "$TOP/out") $ERR" "rc=2"
has "... with the variable" "$ERR" "the variable \`CRED_SRC\` is not set"

# A bad binding, a name bound twice: diagnostics with their line (berth test reads the manifest).
cp -r "$APP" "$TOP/bad" && sed -i 's/TOK=env:CRED_SRC@api.example.com#x-api-key/TOK=env:CRED_SRC@*.example.com/' "$TOP/bad/berth.yml"
OUT=$("$BERTH" policy "$TOP/bad" 2>&1); RC=$?
has "a wildcard host is a diagnostic at its line (exit 2)" "$RC:$OUT" "2:"
has "... naming the binding's grammar" "$OUT" "invalid credential binding"
cp -r "$APP" "$TOP/twice" && sed -i 's/^  - TOK=env:CRED_SRC@api.example.com#x-api-key$/&\n  - TOK=env:OTHER@api.example.com/' "$TOP/twice/berth.yml"
OUT=$("$BERTH" policy "$TOP/twice" 2>&1)
has "a name bound twice is a diagnostic" "$OUT" "credential \`TOK\` is bound twice"
cp -r "$APP" "$TOP/clash" && sed -i 's/^  - TOK=env:CRED_SRC@api.example.com#x-api-key$/  - PYTHONPATH=env:CRED_SRC@api.example.com/' "$TOP/clash/berth.yml"
OUT=$("$BERTH" policy "$TOP/clash" 2>&1)
has "a name the app's runtime is given is refused" "$OUT" "binds the credential \`PYTHONPATH\`, a variable berth sets itself"
sed -i 's/^  - PYTHONPATH=/  - TOK=/; s/^resources:/secrets: [TOK]\n&/' "$TOP/clash/berth.yml"
OUT=$(TOK=x "$BERTH" policy "$TOP/clash" 2>&1)
has "a name also in secrets is refused" "$OUT" "binds the credential \`TOK\`, a variable also in \`secrets\`"
# An older manifest, without the key: valid, its policy without credentials.
"$BERTH" init oldapp --runtime python >/dev/null 2>&1
OUT=$("$BERTH" policy "$TOP/oldapp" --json 2>&1); RC=$?
eq "a manifest without credentials: valid" "$RC" 0
hasnt "... and its policy has none" "$OUT" '"credentials"'
finish
