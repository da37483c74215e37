#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Injected credentials (docs/credentials.md) against the test hosts of
# tests/netns/hosts.sh: its HTTPS server on web.berth.test:8443 and
# other.berth.test:8443 answers /auth with 200 only when the request carries
# the secret of $BTH_CRED_SECRET (a file on the host, never in a sandbox's
# view), and logs a digest of what it got.  The broker verifies that server
# with the test CA given to berth as SSL_CERT_FILE (OpenSSL's trust store
# variable); the clients inside trust only the run's CA for the bound host.
#
# usage: run-credentials.sh /path/to/berth [stage-dir]     (stage-dir: accepted, unused)
#   Hosts as for run-netns-egress.sh: found through $BERTH_TEST_HOSTS_DIR/env;
#   root with no hosts up brings them up and down; another user fails.
#   TAP output, a final count; exit 1 on a failure.
set -u
export LC_ALL=C
unset BERTH_TEST_FORCE_OFF
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: $0 /path/to/berth [stage-dir]" >&2; exit 2; }
BERTH=$(readlink -f -- "$1")
HERE=$(cd "$(dirname "$0")/.." && pwd) # tests/
HOSTS_DIR=${BERTH_TEST_HOSTS_DIR:-/run/berth-test-hosts}
T=0 FAILS=0
pass() { T=$((T + 1)); echo "ok $T - $1"; }
fail() { T=$((T + 1)); FAILS=$((FAILS + 1)); echo "not ok $T - $1 # $2"; shift 2; local l; for l in "$@"; do printf '%s\n' "$l" | head -n 8 | sed 's/^/#   /'; done; }
eq() { if [ "$2" == "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'" "stderr: $ERR"; fi; }
has() { if printf '%s' "$2" | grep -qF -- "$3"; then pass "$1"; else fail "$1" "'$3' not found" "in: $2" "stderr: $ERR"; fi; }
# never prints what it looked for: that may be the secret
hasnt() { if printf '%s' "$2" | grep -qF -- "$3"; then fail "$1" "found (${#2} bytes searched)"; else pass "$1"; fi; }
finish() { echo "1..$T"; echo "# $((T - FAILS)) passed, $FAILS failed"; [ "$FAILS" -eq 0 ]; exit; }

OWN_HOSTS=0
TOP=$(mktemp -d /tmp/berth-cred.XXXXXX) || exit 1
chmod 755 "$TOP"
cleanup() {
	[ -n "${BERTH_PID:-}" ] && kill "$BERTH_PID" 2>/dev/null && wait "$BERTH_PID" 2>/dev/null
	[ "$OWN_HOSTS" -eq 1 ] && bash "$HERE/netns/hosts.sh" down
	rm -rf "$TOP"
}
trap cleanup EXIT

if [ ! -f "$HOSTS_DIR/env" ]; then
	if [ "$(id -u)" -eq 0 ]; then
		OWN_HOSTS=1
		bash "$HERE/netns/hosts.sh" up >&2 || { fail "test hosts: hosts.sh up" "failed"; finish; }
	else
		fail "test hosts are up" "$HOSTS_DIR/env missing: run \`tests/netns/hosts.sh up\` as root first"
		finish
	fi
fi
# shellcheck disable=SC1090,SC1091
. "$HOSTS_DIR/env"
if [ -z "${BTH_CRED_SECRET:-}" ] || [ ! -r "$BTH_CRED_SECRET" ]; then
	fail "the test hosts have the credential server" "no BTH_CRED_SECRET: hosts brought up by an older hosts.sh"
	finish
fi
WEB=web.$BTH_ZONE OTHER=other.$BTH_ZONE PORT=8443
SECRET=$(cat "$BTH_CRED_SECRET")
TAG=$(id -u)-$$-$RANDOM

WS=$TOP/ws
mkdir "$WS" "$TOP/state" "$TOP/config" && chmod 700 "$WS" || exit 1
cd "$WS" || exit 1
export XDG_STATE_HOME=$TOP/state XDG_CONFIG_HOME=$TOP/config
export CRED_SRC=$SECRET
# berth verifies the real server against this CA (the test hosts' own)
export SSL_CERT_FILE=$BTH_CA
run() { "$BERTH" run --yes --dns "$BTH_DNS" "$@" </dev/null >"$TOP/out" 2>"$TOP/err"; RC=$?; OUT=$(cat "$TOP/out"); ERR=$(cat "$TOP/err"); }
mark() { wc -l <"$1" | tr -d ' '; }
since() { tail -n +"$(($2 + 1))" "$1"; }
sha() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }
BIND="TOK=env:CRED_SRC@$WEB:$PORT"
CURL='curl -sS -m 20'

# 0. The server requires the secret: without it 401, with it 200 (from the host, directly).
ERR=
OUT=$(curl -s --noproxy '*' -m 10 --cacert "$BTH_CA" --resolve "$WEB:$PORT:$BTH_WEB4" "https://$WEB:$PORT/auth"
	curl -s --noproxy '*' -m 10 --cacert "$BTH_CA" --resolve "$WEB:$PORT:$BTH_WEB4" "https://$WEB:$PORT/auth" \
		-H "Authorization: Bearer $SECRET")
eq "precondition: /auth is 401 without the secret, 200 with it" "${OUT%%sha=*}|${OUT##*$'\n'}" \
	"unauthorized |authorized bearer"

# 1. A request from inside with the placeholder succeeds; the server got the secret.
L0=$(mark "$BTH_CRED_LOG")
run --credential "$BIND" -- sh -c "echo \"ph=\$TOK\"; $CURL https://$WEB:$PORT/auth/$TAG-1 -H \"Authorization: Bearer \$TOK\""
PH=$(printf '%s\n' "$OUT" | sed -n 's/^ph=//p')
eq "bearer: the request with the placeholder is authorized (exit 0)" "$RC:$(printf '%s\n' "$OUT" | tail -n 1)" \
	"0:authorized bearer"
if [[ "$PH" =~ ^berth-cred-TOK-[0-9a-f]{32}$ ]]; then pass "inside, TOK is a placeholder berth-cred-TOK-<32 hex>"; else fail "inside, TOK is a placeholder" "got a value of ${#PH} bytes"; fi
hasnt "the placeholder is not the secret" "$PH" "$SECRET"
eq "the server's log: one request, authorized by the bearer header" \
	"$(since "$BTH_CRED_LOG" "$L0" | grep '^auth ' | cut -d' ' -f1-4)" "auth bearer /auth/$TAG-1 host=$WEB:$PORT"
has "the widening is named, with the source and the destination" "$ERR" \
	"berth: widening: --credential TOK: the secret from env \`CRED_SRC\` is sent to https://$WEB:$PORT/ in Authorization: Bearer"
hasnt "the secret is not in berth's output" "$OUT$ERR" "$SECRET"

# 1b. The same through SOCKS5 and from a client that ignores the proxy (the
#     sandbox's resolver and the broker's listener on the declared port).
run --credential "$BIND" -- sh -c "$CURL --proxy \"\$ALL_PROXY\" https://$WEB:$PORT/auth/$TAG-1s -H \"Authorization: Bearer \$TOK\"
	$CURL --noproxy '*' https://$WEB:$PORT/auth/$TAG-1t -H \"Authorization: Bearer \$TOK\""
eq "SOCKS5 and a client without the proxy: both authorized" "$RC:$OUT" "0:authorized bearer
authorized bearer"

# 1c. A request with a body: 3 MB of random bytes reach the server whole after the rewritten head.
L0=$(mark "$BTH_CRED_LOG")
run --credential "$BIND" -- sh -c "head -c 3000000 /dev/urandom >/tmp/body; sha256sum </tmp/body | cut -d' ' -f1
	$CURL -X POST --data-binary @/tmp/body https://$WEB:$PORT/auth/$TAG-1c -H \"Authorization: Bearer \$TOK\""
eq "POST through the terminated connection: authorized" "$RC:$(printf '%s\n' "$OUT" | tail -n 1)" "0:authorized bearer"
eq "the server got the body whole (length and digest)" \
	"$(since "$BTH_CRED_LOG" "$L0" | grep "^post /auth/$TAG-1c" | cut -d' ' -f3-)" \
	"len=3000000 sha=$(printf '%s\n' "$OUT" | head -n 1)"

# 2. Inside, the secret is nowhere: environment, every process's environ and
#    command line, the writable places, the bundle; the host's state is not visible.
run --credential "$BIND" -- sh -c "env; for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do tr '\\0' '\\n' <\$f; done 2>/dev/null
	grep -rshI . /tmp \"\$HOME\" /workspace /dev/shm 2>/dev/null; cat /etc/ssl/certs/ca-certificates.crt
	ls $HOSTS_DIR 2>&1; $CURL https://$WEB:$PORT/auth/$TAG-2 -H \"Authorization: Bearer \$TOK\""
eq "the run whose inside is searched succeeds" "$RC:$(printf '%s\n' "$OUT" | tail -n 1)" "0:authorized bearer"
hasnt "the secret is not in the environment, /proc/*/environ, /proc/*/cmdline or files inside" "$OUT" "$SECRET"
has "the host's test-host state is not in the sandbox's view" "$OUT" "ls: cannot access '$HOSTS_DIR': No such file or directory"
has "inside, SSL_CERT_FILE names the bundle" "$OUT" "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"
has "inside, NODE_EXTRA_CA_CERTS names the bundle" "$OUT" "NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt"
has "inside, REQUESTS_CA_BUNDLE names the bundle" "$OUT" "REQUESTS_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt"
N_HOST=$(grep -c 'BEGIN CERTIFICATE' /etc/ssl/certs/ca-certificates.crt)
eq "the bundle inside is the host's plus one certificate (the run's CA)" \
	"$(printf '%s\n' "$OUT" | grep -c 'BEGIN CERTIFICATE')" "$((N_HOST + 1))"

# 3. Nor in berth's own /proc entries (argv, environ) or those of its helpers,
#    while the sandbox runs; the caller's variable is cleared in berth's environ.
descendants() { local p; for p in $(ps -o pid= --ppid "$1"); do echo "$p"; descendants "$p"; done; }
"$BERTH" run --yes --dns "$BTH_DNS" --credential "$BIND" -- sh -c "$CURL https://$WEB:$PORT/auth/$TAG-3 -H \"Authorization: Bearer \$TOK\" >/dev/null; sleep 3" </dev/null >/dev/null 2>"$TOP/err3" &
BERTH_PID=$!
for _ in $(seq 100); do grep -q "/auth/$TAG-3" "$BTH_CRED_LOG" && break; sleep 0.1; done
PROCS=
for p in $BERTH_PID $(descendants "$BERTH_PID"); do
	PROCS+=$(tr '\0' '\n' </proc/"$p"/environ 2>/dev/null; tr '\0' '\n' </proc/"$p"/cmdline 2>/dev/null)
done
ENVB=$(tr '\0' '\n' </proc/"$BERTH_PID"/environ 2>/dev/null | grep '^CRED_SRC=' | tr -d '\0')
wait "$BERTH_PID"
RC=$?
BERTH_PID=
ERR=$(cat "$TOP/err3")
eq "the run berth's /proc entries are read during exits 0" "$RC" 0
has "berth's processes' /proc entries were read" "$PROCS" "--credential"
hasnt "the secret is not in berth's (or its processes') argv or environ" "$PROCS" "$SECRET"
eq "berth's environ holds the caller's variable emptied" "$ENVB" "CRED_SRC="

# 4. The audit trail: credential.used with name, host and count; never the value.
AUD=$(cat "$TOP"/state/berth/audit/*.jsonl 2>/dev/null)
has "the audit trail records credential.used: name, host, port, count" "$AUD" \
	'"kind":"credential.used","payload":{"count":1,"host":"web.berth.test","name":"TOK","port":8443}'
hasnt "the secret is not in the audit trail" "$AUD" "$SECRET"
hasnt "the secret is not anywhere in berth's state (runs, audit)" "$(grep -rsF -- "$SECRET" "$TOP/state" | head -c 100)" "$SECRET"

# 5. Another host with the placeholder: the tunnel is untouched (end-to-end TLS,
#    the test CA's certificate), the server gets the placeholder only.
L0=$(mark "$BTH_CRED_LOG")
cp "$BTH_CA" "$WS/test-ca.pem" && chmod 644 "$WS/test-ca.pem"
run --credential "$BIND" --allow-host "$OTHER:$PORT" -- sh -c "echo \"ph=\$TOK\"
	$CURL --cacert test-ca.pem https://$OTHER:$PORT/auth/$TAG-5 -H \"Authorization: Bearer \$TOK\"
	P=\${HTTPS_PROXY#http://}; P=\${P%/}
	for h in $WEB $OTHER; do openssl s_client -proxy \$P -connect \$h:$PORT -servername \$h </dev/null 2>/dev/null | grep '^issuer='; done"
PH=$(printf '%s\n' "$OUT" | sed -n 's/^ph=//p')
has "another host: the request with the placeholder is not authorized" "$OUT" "unauthorized sha=$(sha "Bearer $PH||")"
eq "another host's server got exactly the placeholder (its log's digest)" \
	"$(since "$BTH_CRED_LOG" "$L0" | grep "^auth .*/auth/$TAG-5" | sed 's/.* sha=//')" "$(sha "Bearer $PH||")"
has "the bound host presents the run's CA's leaf" "$OUT" "issuer=CN = berth run CA "
has "another host presents its own certificate (end-to-end TLS)" "$OUT" "issuer=CN = berth test CA"
hasnt "no credential.used record names another host" "$(grep '"kind":"credential.used"' "$TOP"/state/berth/audit/*.jsonl)" \
	"\"host\":\"$OTHER\""

# 6. A Host that is not the bound host is refused (421), nothing reaches the server.
L0=$(mark "$BTH_CRED_LOG")
run --credential "$BIND" --allow-host "$OTHER:$PORT" -- sh -c "$CURL -o /dev/null -w '%{http_code}' https://$WEB:$PORT/auth/$TAG-6 -H 'Host: $OTHER:$PORT' -H \"Authorization: Bearer \$TOK\""
eq "a Host mismatch is refused with 421" "$OUT" 421
has "berth names the refusal at exit" "$ERR" "berth: refused: $WEB:$PORT (Host \`$OTHER:$PORT\` is not the bound host $WEB)"
eq "nothing of the mismatched request reached the server" "$(since "$BTH_CRED_LOG" "$L0" | grep -c "$TAG-6")" 0

# 7. An SNI that is not the bound host: the handshake is refused (unrecognized_name).
cat >"$WS/sni.py" <<'EOF'
import os, socket, ssl, sys
host, port, sni = sys.argv[1], sys.argv[2], sys.argv[3]
p = os.environ["HTTPS_PROXY"].rstrip("/").rsplit(":", 1)[1]
s = socket.create_connection(("127.0.0.1", int(p)), timeout=10)
s.sendall(("CONNECT %s:%s HTTP/1.1\r\nHost: %s:%s\r\n\r\n" % (host, port, host, port)).encode())
head = s.recv(4096).split(b"\r\n")[0].decode()
ctx = ssl.create_default_context()
ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
try:
    t = ctx.wrap_socket(s, server_hostname=sni or None)
    print(head, "| handshake done")
except ssl.SSLError as e:
    print(head, "| refused:", "unrecognized_name" if "UNRECOGNIZED_NAME" in str(e).upper() else str(e))
EOF
run --credential "$BIND" -- sh -c "python3 sni.py $WEB $PORT $OTHER; python3 sni.py $WEB $PORT ''; python3 sni.py $WEB $PORT $WEB"
eq "an SNI mismatch is refused; no SNI is refused; the bound SNI is accepted" "$OUT" \
	"HTTP/1.1 200 Connection established | refused: unrecognized_name
HTTP/1.1 200 Connection established | refused: unrecognized_name
HTTP/1.1 200 Connection established | handshake done"
has "berth names the SNI refusal at exit" "$ERR" "berth: refused: $WEB:$PORT (TLS SNI \`$OTHER\` is not the bound host $WEB)"

# 8. The real server's certificate is verified: without the test CA in berth's
#    trust store the request gets 502 and nothing (no secret) is sent.
L0=$(mark "$BTH_CRED_LOG")
SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt run --credential "$BIND" -- sh -c "$CURL -o /dev/null -w '%{http_code}' https://$WEB:$PORT/auth/$TAG-8 -H \"Authorization: Bearer \$TOK\""
eq "an upstream certificate berth does not trust: 502" "$OUT" 502
has "berth names why at exit" "$ERR" "berth: refused: $WEB:$PORT (the server's certificate is not trusted: unable to get local issuer certificate)"
eq "no request reached the untrusted server" "$(since "$BTH_CRED_LOG" "$L0" | grep -c "$TAG-8")" 0

# 9. The other sources and headers: a 0600 file as x-api-key, a command as basic
#    auth (git's user:token form), a raw header; a path prefix.
umask 077
printf '%s\n' "$SECRET" >"$TOP/secret"
L0=$(mark "$BTH_CRED_LOG")
run --credential "K=file:$TOP/secret@$WEB:$PORT#x-api-key" -- sh -c "$CURL https://$WEB:$PORT/auth/$TAG-9a -H \"x-api-key: \$K\""
eq "file source, x-api-key header" "$RC:$OUT" "0:authorized x-api-key"
run --credential "G=cmd:cat '$TOP/secret'@$WEB:$PORT#basic" -- sh -c "$CURL -u \"x-access-token:\$G\" https://$WEB:$PORT/auth/$TAG-9b"
eq "command source, basic auth" "$RC:$OUT" "0:authorized basic"
run --credential "H=env:CRED_SRC@$WEB:$PORT#header:X-Berth-Token" -- sh -c "$CURL https://$WEB:$PORT/auth/$TAG-9c -H \"X-Berth-Token: \$H\"; $CURL https://$WEB:$PORT/auth/$TAG-9d -H \"Authorization: Bearer \$H\""
eq "a raw header gets the secret; the same placeholder in another header stays the placeholder" \
	"$(printf '%s\n' "$OUT" | cut -c1-14)" "authorized hea
unauthorized s"
run --credential "P=env:CRED_SRC@$WEB:$PORT/auth/ok/" -- sh -c "$CURL https://$WEB:$PORT/auth/ok/$TAG-9e -H \"Authorization: Bearer \$P\"; $CURL https://$WEB:$PORT/auth/no/$TAG-9f -H \"Authorization: Bearer \$P\""
eq "a path prefix: inside it the secret, outside it the placeholder" "$(printf '%s\n' "$OUT" | cut -c1-14)" \
	"authorized bea
unauthorized s"
hasnt "no run of this section printed the secret" "$OUT$ERR" "$SECRET"

# 10. Sources that do not qualify are refused before anything runs (exit 2).
chmod 644 "$TOP/secret"
run --credential "K=file:$TOP/secret@$WEB:$PORT" -- true
eq "a credential file readable by others: exit 2" "$RC" 2
has "... naming the fix" "$ERR" "berth: hint: chmod 600 $TOP/secret"
run --credential "K=env:NOT_SET_$$@$WEB:$PORT" -- true
has "an unset variable: exit 2, named" "$RC:$(printf '%s\n' "$ERR" | grep -v widening)" "2:berth: --credential K: the variable \`NOT_SET_$$\` is not set"
run --credential "K=cmd:exit 3@$WEB:$PORT" -- true
has "a failing command: exit 2, named" "$RC:$(printf '%s\n' "$ERR" | grep -v widening)" "2:berth: --credential K: the command \`exit 3\` failed (exit status 3)"
run --credential "K=env:CRED_SRC" -- true
has "a binding without a host: exit 2" "$RC:$ERR" "2:berth: invalid --credential: the credential binding"
run --credential "K=env:CRED_SRC@*.example.com" -- true
has "a wildcard host: exit 2" "$RC:$ERR" "2:berth: invalid --credential: a credential is bound to one host name"
run --credential "TOK=env:CRED_SRC@$WEB" --env TOK=x -- true
has "--env of the placeholder's name: exit 2" "$RC:$ERR" "2:berth: --credential TOK and --env TOK"

# 11. Rules files: allow.credentials governs a --credential like a forwarded --env.
mkdir -p "$TOP/config/berth" && printf 'allow:\n  credentials: [OTHER_NAME]\n' >"$TOP/config/berth/rules.yml"
run --credential "$BIND" -- true
has "a rules file that does not list the name refuses the run (exit 2)" "$RC:$ERR" \
	"2:berth: refused by rules ($TOP/config/berth/rules.yml:2): credentials does not allow forwarding \`TOK\`"
hasnt "... before the widening is shown" "$ERR" "widening"
printf 'allow:\n  credentials: [TOK]\n' >"$TOP/config/berth/rules.yml"
run --credential "$BIND" -- sh -c "$CURL https://$WEB:$PORT/auth/$TAG-11 -H \"Authorization: Bearer \$TOK\""
eq "a rules file that lists it lets the run go" "$RC:$OUT" "0:authorized bearer"
rm -f "$TOP/config/berth/rules.yml"

finish
