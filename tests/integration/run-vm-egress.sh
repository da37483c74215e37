#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The microVM runtime's egress (`berth run --runtime vm --network proxy`,
# docs/vm.md "The channel"): the guest's connections and DNS queries cross
# the channel to the host's egress broker, which decides, against the test
# hosts of tests/netns/hosts.sh (as the netns-egress suite uses them), with
# the real guest init (berth-vminit, installed from the .deb cache the vm
# suites share).  Boots are slow: one boot carries most checks.
#   boot 1, 20 MiB on stdin the command never reads (it must end with its
#   own status, 7): the declared web host through HTTP_PROXY, transparently
#   (its name from the sandbox's resolver, the broker's fake address),
#   through SOCKS5, over TLS (CONNECT); an undeclared host refused (403, the
#   summary, the audit trail's net.decision records, the host saw nothing);
#   DNS of the declared name answers, of an undeclared one does not; a
#   50 MiB download byte-identical;
#   boot 2: `head -c1` of 20 MiB: one byte, status 0;
#   boot 3: --timeout with a connection open: 124, nothing left behind.
# And --dry-run accepts --network proxy as the run does.
# usage: run-vm-egress.sh /path/to/berth /path/to/source-tree
# The hosts come from $BERTH_TEST_HOSTS_DIR/env (tests/netns/hosts.sh up);
# root with no hosts up brings them up itself and down at exit, another
# user fails.  As root and as an unprivileged user.  Output is TAP.
set -u
export LC_ALL=C
unset BERTH_TEST_FORCE_OFF
B=$(readlink -f -- "${1:?usage: $0 /path/to/berth /path/to/source}")
SRC=$(readlink -f -- "${2:?usage: $0 /path/to/berth /path/to/source}")
HOSTS_DIR=${BERTH_TEST_HOSTS_DIR:-/run/berth-test-hosts}
T=$(mktemp -d "${TMPDIR:-/tmp}/vm-egress.XXXXXX")
chmod 755 "$T"
export XDG_STATE_HOME="$T/state" XDG_CONFIG_HOME="$T/config" XDG_RUNTIME_DIR="$T/run"
export BERTH_AUDIT_DIR="$T/audit" BERTH_VM_DIR="$T/g"
mkdir -p "$T/state" "$T/config" "$T/run"
chmod 700 "$T/run"
OWN_HOSTS=0
cleanup() {
	pkill -KILL -f "$T/g/vmlinuz" 2>/dev/null
	[ "$OWN_HOSTS" = 1 ] && bash "$SRC/tests/netns/hosts.sh" down >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT
n=0 fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
show() { sed 's/^/# /' "$@"; }
# eq NAME GOT WANT: the reason in the name (CI shows only the not-ok lines)
eq() {
	if [ "$2" == "$3" ]; then ok "$1"; else
		not_ok "$1 (got \`$(printf '%s' "$2" | head -c 300 | tr '\n' '|')\`)"
		printf 'want: %s\n' "$3" | show
		show "$T/err"
	fi
}
finish() { echo "1..$n"; [ "$fails" = 0 ]; exit; }

if [ ! -f "$HOSTS_DIR/env" ]; then
	if [ "$(id -u)" = 0 ]; then
		OWN_HOSTS=1
		bash "$SRC/tests/netns/hosts.sh" up >&2 || { not_ok "test hosts: hosts.sh up"; finish; }
	else
		not_ok "the test hosts are up ($HOSTS_DIR/env missing: run \`tests/netns/hosts.sh up\` as root first)"
		finish
	fi
fi
# shellcheck disable=SC1090,SC1091
. "$HOSTS_DIR/env"
WEB=web.$BTH_ZONE OTHER=other.$BTH_ZONE

CACHE=${BERTH_VM_DEB_CACHE:-/var/tmp/berth-vm-deb-cache}
[ -d "$CACHE" ] || { mkdir -p "$CACHE" && chmod 1777 "$CACHE"; }
"$B" vm install --dir "$T/g" --deb-cache "$CACHE" >"$T/out" 2>"$T/err" </dev/null
rc=$?
eq "berth vm install of the real guest" "$rc" 0
[ "$rc" = 0 ] || finish

W=$T/ws
mkdir -p "$W" && cp "$BTH_CA" "$W/ca.pem" && chmod 644 "$W/ca.pem"
cd "$W" || exit 1
# --dry-run accepts exactly what the run accepts
"$B" run --dry-run --runtime vm --network proxy --dns "$BTH_DNS" --allow-host "$WEB" -- true >"$T/out" 2>"$T/err"
rc=$?
"$B" run --dry-run --runtime vm --network host --yes -- true >"$T/out2" 2>"$T/err2"
eq "--dry-run: --network proxy accepted (0), --network host refused (2, named)" \
	"$rc $? $(head -1 "$T/err2")" "0 2 berth: the vm runtime cannot give \`--network host\` yet"

BIG=$((50 << 20))
want_big=$(python3 -c 'import hashlib, sys
sys.path.insert(0, sys.argv[1])
import servers
h = hashlib.sha256()
for c in servers.pattern_bytes(int(sys.argv[2])):
    h.update(c)
print(h.hexdigest())' "$SRC/tests/netns" "$BIG")
records() { tail -n +"$((REC0 + 1))" "$BTH_RECORD_LOG" | wc -l | tr -d ' '; }
REC0=$(wc -l <"$BTH_RECORD_LOG" | tr -d ' ')

# --- boot 1
head -c $((20 << 20)) /dev/zero >"$T/stdin"
timeout 300 "$B" run --runtime vm --network proxy --dns "$BTH_DNS" --allow-host "$WEB" -- sh -c '
W=$1 O=$2
curl -s --max-time 60 "http://$W/whoami"
curl -s --max-time 60 --noproxy "*" "http://$W/whoami"
curl -s --max-time 60 --socks5-hostname "${ALL_PROXY#socks5h://}" "http://$W/whoami"
curl -s --max-time 60 --cacert ca.pem "https://$W/hello.txt"
curl -s --max-time 60 -w "%{http_code}\n" "http://$O/"
curl -s --max-time 120 "http://$W/bytes/$3" | sha256sum | cut -d" " -f1
python3 -c "
import socket, sys
for n in sys.argv[1:]:
    try:
        print(n, socket.getaddrinfo(n, 80, socket.AF_INET)[0][4][0].split(\".\")[0])
    except socket.gaierror as e:
        print(n, \"gaierror\")
" "$W" "$O"
exit 7' sh "$WEB" "$OTHER" "$BIG" <"$T/stdin" >"$T/out" 2>"$T/err"
rc=$?
eq "boot 1: the command's own status (7), 20 MiB of stdin it never read did not fail the run" "$rc" 7
mapfile -t L <"$T/out"
who="host=$WEB server=$BTH_WEB4:80 path=/whoami"
eq "the declared host through HTTP_PROXY: the request arrives, the reply returns" "${L[0]:-}" "$who"
eq "... transparently (the sandbox's resolver, the broker's address for the name)" "${L[1]:-}" "$who"
eq "... through SOCKS5" "${L[2]:-}" "$who"
eq "... over TLS through CONNECT (the CA from --cacert)" "${L[3]:-}" "hello from the berth test host"
eq "an undeclared host: 403 naming the rule" "${L[4]:-}|${L[5]:-}" \
	"berth: refused by the egress policy: $OTHER:80 (not declared)|403"
eq "a 50 MiB download through the broker arrives byte-identical" "${L[6]:-}" "$want_big"
eq "DNS of the declared name answers (the broker's 198.18/15), of an undeclared one does not" \
	"${L[7]:-}|${L[8]:-}" "$WEB 198|$OTHER gaierror"
eq "the summary names the refused host and the refused lookup" \
	"$(grep -c -e "^berth: refused: $OTHER:80 (not declared)\$" -e "^berth: refused: $OTHER (name lookup: not declared)\$" "$T/err")" 2
eq "the undeclared host got no connection" "$(records)" 0
net=$("$B" audit --kind net.decision --json 2>"$T/aerr" | python3 -c '
import json, sys
for l in sys.stdin:
    p = json.loads(l)["payload"]
    print(p["decision"], p["proxy"], p["host"], p["port"], p["reason"])' | sort | uniq)
eq "the audit trail: each decision a net.decision record, as the namespace runtime's" "$net" \
	"$(printf '%s\n' "allowed http $WEB 443 declared by \`$WEB\`" "allowed http $WEB 80 declared by \`$WEB\`" \
		"allowed socks5 $WEB 80 declared by \`$WEB\`" "allowed transparent $WEB 80 declared by \`$WEB\`" \
		"refused dns $OTHER 0 not declared" "refused http $OTHER 80 not declared" | sort)"

# --- boot 2
head -c $((20 << 20)) /dev/urandom >"$T/stdin"
timeout 300 "$B" run --runtime vm -- head -c1 <"$T/stdin" >"$T/out" 2>"$T/err"
rc=$?
eq "boot 2: \`head -c1\` of 20 MiB: status 0, one byte, the stdin's first" \
	"$rc $(wc -c <"$T/out" | tr -d ' ') $(od -An -tx1 "$T/out" | tr -d ' ')" \
	"0 1 $(head -c1 "$T/stdin" | od -An -tx1 | tr -d ' ')"

# --- boot 3
timeout 300 "$B" run --runtime vm --network proxy --dns "$BTH_DNS" --allow-host "$WEB" --timeout 20s -- python3 -c '
import socket, sys, time
s = socket.create_connection((sys.argv[1], 80))
s.sendall(b"GET /whoami HTTP/1.0\r\nHost: " + sys.argv[1].encode() + b"\r\n\r\n")
print(s.recv(4096).split(b"\r\n")[0].decode(), flush=True)
time.sleep(600)' "$WEB" </dev/null >"$T/out" 2>"$T/err"
rc=$?
eq "boot 3: --timeout with a connection open: 124, after the reply came" "$rc $(head -1 "$T/out")" "124 HTTP/1.0 200 OK"
sleep 1
eq "nothing left behind: no qemu, no virtiofsd, no run directory" \
	"$(pgrep -f "$T/g/vmlinuz" | wc -l) $(pgrep -f "$T/run/berth/vm-" | wc -l) $(ls -A "$T/run/berth" 2>/dev/null | grep -c vm-)" "0 0 0"
finish
