#!/bin/bash
# run-oci-egress.sh BERTH - egress in a container: podman with berth as its
# OCI runtime (tests/oci/common.sh) runs containers with `--annotation
# berth.dev/allow-hosts=...` against the egress test hosts of
# tests/netns/hosts.sh (network namespaces behind veth links, on the
# "public" 1.2.3.0/24 the broker does not refuse; docs/egress.md, "Test
# hosts").  The hosts are declared as IP literals: `--dns`, the way
# run-netns-egress.sh names them, has no annotation, so the broker resolves
# names with the host's resolver, which does not know berth.test.
#   - from inside, through $HTTP_PROXY (absolute-form GET) and straight to
#     the address (the transparent listener): the exact body of the web host;
#   - an undeclared host: 403 from the proxy, ECONNRESET from the transparent
#     listener; an undeclared port: 403 from the proxy, EACCES (Landlock) on a
#     direct connect; the far side's logs show nothing of them;
#   - the container's resolver: a declared name gets its 198.18.0.0/15
#     address, an undeclared one NXDOMAIN;
#   - without the annotation (--network none) the host is unreachable:
#     TCP EACCES (Landlock), UDP ENETUNREACH (only loopback), no proxy;
#   - with berth.dev/audit-dir: run.start naming the container, the policy,
#     a net.decision for each attempt, run.stop; `berth audit verify` intact;
#   - a detached proxied container's supervisor is there while it runs, and
#     after `podman rm -f` no container, state or process is left.
# As root: rootful podman, then rootless podman as bertht (when the user has
# subordinate ids); as a user: rootless podman (skipped with the reason
# without subordinate ids).  berth only: under runc (RUNTIME=runc, or a
# berth without `oci`) the suite is skipped, there is no allow-hosts there.
# The test hosts: $BERTH_TEST_HOSTS_DIR/env (default /run/berth-test-hosts);
# root brings them up when they are not, and removes them at exit; another
# user fails without them (as run-netns-egress.sh: a skip would pass).
# Prints TAP; exits 1 if a check failed.
set -u
if [ $# -ne 1 ]; then
	echo "usage: $0 BERTH" >&2
	exit 2
fi
# skip_all REASON: the whole suite (a failure under BERTH_OCI_MUST_WORK=1).
skip_all() {
	if [ "${BERTH_OCI_MUST_WORK:-0}" = 1 ]; then
		echo "1..1"
		echo "not ok 1 - egress in a container # skipped, and BERTH_OCI_MUST_WORK=1: $1"
		exit 1
	fi
	echo "1..0 # SKIP $1"
	exit 0
}
[ "${RUNTIME:-berth}" = runc ] &&
	skip_all "RUNTIME=runc: berth.dev/allow-hosts is berth's (runc gives a container no egress broker)"
# shellcheck source=common.sh
. "$(dirname "$0")/common.sh"

ME=$(id -un)
if [ "$(id -u)" -ne 0 ]; then
	why=
	grep -q "^$ME:" /etc/subuid 2>/dev/null && grep -q "^$ME:" /etc/subgid 2>/dev/null ||
		why="no subordinate ids for $ME in /etc/subuid and /etc/subgid (as root: usermod --add-subuids FIRST-LAST --add-subgids FIRST-LAST $ME; tests/run does it for bertht)"
	command -v newuidmap >/dev/null || why="no newuidmap (Debian: uidmap)"
	[ -n "$why" ] && skip_all "rootless podman: $why"
fi
oci_init "$1"
[ -n "$BERTH_WHY" ] && skip_all "$BERTH_WHY: berth.dev/allow-hosts needs berth oci"

# ------------------------------------------------------------ the test hosts
HOSTS_DIR=${BERTH_TEST_HOSTS_DIR:-/run/berth-test-hosts}
if [ ! -f "$HOSTS_DIR/env" ]; then
	if [ "$(id -u)" -eq 0 ]; then
		OCI_CLEANUPS+=("bash $(printf %q "$OCI_DIR/../netns/hosts.sh") down")
		bash "$OCI_DIR/../netns/hosts.sh" up >&2 || bail "the test hosts: tests/netns/hosts.sh up failed"
	else
		fail "the egress test hosts are up" "$HOSTS_DIR/env missing: run \`tests/netns/hosts.sh up\` as root first"
		echo "1..$T"
		exit 1
	fi
fi
# shellcheck disable=SC1090,SC1091
. "$HOSTS_DIR/env"
WEB=$BTH_WEB4 OTHER=$BTH_OTHER4 BODY="hello from the berth test host"
TAG=oci-$(id -u)-$$-$RANDOM # in every path asked for: the servers' logs are read for this run only
MARK=berth-oci-egress-$$-$RANDOM
mark() { wc -l <"$1" | tr -d ' '; }
since() { tail -n +"$(($2 + 1))" "$1"; }
out=$(curl -s --noproxy '*' --max-time 5 "http://$WEB/hello.txt"; curl -s --noproxy '*' --max-time 5 "http://$OTHER/")
is "precondition: the web and the other host answer from the host (what is refused below is refused by berth)" \
	"$out" "$BODY
reached $OTHER:80"
REC0=$(mark "$BTH_RECORD_LOG") # from here on, nothing may reach the other host

# Landlock (ABI >= 4) refuses a TCP connect to any port but the declared
# ones and the broker's, before routing does (ENETUNREACH without it).
TCP_NO=ENETUNREACH
"$BERTH" doctor 2>/dev/null | grep -q 'landlock .*TCP bind/connect' && TCP_NO=EACCES

# ---------------------------------------------------------------- the checks
# egress WHO PODMAN STATE AUDIT AS...: the checks with podman command PODMAN
# (a function), the runtime's state under STATE, the audit trail in AUDIT
# (a directory that does not exist yet), `berth audit` run as AS... (empty:
# this user).
egress() {
	local who=$1 pm=$2 state=$3 audit=$4 cid out rc
	shift 4
	local as=("$@")
	local h0 t=$TAG-${who%% *}
	h0=$(mark "$BTH_HTTP_LOG")

	# One container makes every attempt in order, one line each.
	rm -f "$audit.cid"
	out=$("$pm" run --rm --network none --cidfile "$audit.cid" \
		--annotation "berth.dev/allow-hosts=$WEB:80 web.$BTH_ZONE:80" \
		--annotation "berth.dev/audit-dir=$audit" --env "BERTH_TEST_TOKEN=tok-$t" "$OCI_IMAGE" sh -c ": $MARK tok-$t
echo \"proxy=\$HTTP_PROXY\"
/probes/oci_try http-proxy 'http://$WEB/hello.txt?$t-proxy'
/probes/oci_try http-get $WEB 80 '/hello.txt?$t-direct'
/probes/oci_try http-proxy 'http://$OTHER/$t-other'
/probes/oci_try http-get $OTHER 80 /$t-other-direct
/probes/oci_try http-proxy 'http://$WEB:8080/hello.txt?$t-port'
/probes/oci_try http-get $WEB 8080 '/hello.txt?$t-port-direct'
nslookup -type=a web.$BTH_ZONE 2>&1 | grep -o '198\.1[89]\.[0-9.]*' | head -1
nslookup -type=a other.$BTH_ZONE 2>&1 | grep -c NXDOMAIN" 2>"$TOP/err")
	rc=$?
	cid=$(cat "$audit.cid" 2>/dev/null)
	is "$who: allow-hosts container: exit status 0" "$rc" 0
	[ "$rc" -eq 0 ] || echo "# $(head -c 600 "$TOP/err")"
	local lines=()
	mapfile -t lines <<<"$out"
	if [[ ${lines[0]:-} =~ ^proxy=http://127\.0\.0\.1:[0-9]+$ ]]; then
		pass "$who: the container has HTTP_PROXY=http://127.0.0.1:PORT (${lines[0]#proxy=})"
	else
		fail "$who: the container has HTTP_PROXY=http://127.0.0.1:PORT" "got '${lines[0]:-}'"
	fi
	is "$who: GET http://$WEB/hello.txt through the proxy: 200 and the exact body" "${lines[1]:-}" "200 $BODY"
	is "$who: GET /hello.txt straight to $WEB:80 (the transparent listener): 200 and the exact body" \
		"${lines[2]:-}" "200 $BODY"
	is "$who: undeclared host $OTHER through the proxy: 403 naming the rule" "${lines[3]:-}" \
		"403 berth: refused by the egress policy: $OTHER:80 (not declared)"
	is "$who: undeclared host $OTHER:80 straight: the transparent listener resets it (ECONNRESET)" \
		"${lines[4]:-}" ECONNRESET
	is "$who: undeclared port $WEB:8080 through the proxy: 403 naming the rule" "${lines[5]:-}" \
		"403 berth: refused by the egress policy: $WEB:8080 (port 8080 not declared for $WEB)"
	is "$who: undeclared port $WEB:8080 straight: connect fails with $TCP_NO" "${lines[6]:-}" "$TCP_NO"
	if [[ ${lines[7]:-} =~ ^198\.1[89]\.[0-9]+\.[0-9]+$ ]]; then
		pass "$who: the container's resolver: the declared web.$BTH_ZONE gets an address of 198.18.0.0/15 (${lines[7]})"
	else
		fail "$who: the container's resolver: the declared web.$BTH_ZONE gets an address of 198.18.0.0/15" \
			"got '${lines[7]:-}'"
	fi
	is "$who: the container's resolver: the undeclared other.$BTH_ZONE is NXDOMAIN" "${lines[8]:-}" 1
	is "$who: the web host got exactly the two allowed requests" \
		"$(since "$BTH_HTTP_LOG" "$h0" | grep -F -- "$t-" | sort)" \
		"$WEB GET /hello.txt?$t-direct host=$WEB:80
$WEB GET /hello.txt?$t-proxy host=$WEB"
	is "$who: the other host got no connection" "$(since "$BTH_RECORD_LOG" "$REC0" | wc -l | tr -d ' ')" 0

	# The audit trail.
	local recs
	recs=$("${as[@]}" "$BERTH" audit list --dir "$audit" --json 2>&1 | python3 -c '
import json, sys
cid = sys.argv[1]
for l in sys.stdin:
    r = json.loads(l); p = r["payload"]; k = r["kind"]
    if k == "run.start":
        print(k, p.get("container") == cid, cid in p.get("bundle", ""), "[secret]" in p["argv"][-1], r["actor"])
    elif k == "policy":
        n = p["policy"]["network"]
        print(k, n["mode"], ",".join(n["allow_hosts"]), p["policy"]["container"]["id"] == cid)
    elif k == "net.decision":
        print(k, p["proxy"], p["decision"], p["host"], p["port"], p["address"] or "-", p["reason"],
              p["bytes_down"] > 0)
    elif k == "run.stop":
        print(k, p["status"])
    else:
        print(k)' "$cid" 2>&1)
	local uid=$("${as[@]}" id -u)
	is "$who: audit: run.start naming the container and its bundle (a -e value blanked in its argv), by the user (uid:$uid: rootless podman's uid 0 is that), the policy (proxy, the hosts), run.stop 0" \
		"$(grep -v '^net.decision' <<<"$recs")" "run.start True True True uid:$uid
policy proxy $WEB:80,web.$BTH_ZONE:80 True
run.stop 0"
	is "$who: audit: a net.decision for each allowed and refused attempt (the EACCES one never reached the broker)" \
		"$(grep '^net.decision' <<<"$recs" | sort)" \
		"$(sort <<EOF
net.decision http allowed $WEB 80 $WEB declared by \`$WEB:80\` True
net.decision transparent allowed $WEB 80 $WEB declared by \`$WEB:80\` True
net.decision http refused $OTHER 80 - not declared False
net.decision transparent refused $OTHER 80 - not declared False
net.decision http refused $WEB 8080 - port 8080 not declared for $WEB False
net.decision dns refused other.$BTH_ZONE 0 - not declared False
EOF
)"
	is "$who: audit: the -e value is nowhere in the log" "$(grep -rlF -- "tok-$t" "$audit" 2>&1)" ""
	has "$who: audit: berth audit verify says intact" "$("${as[@]}" "$BERTH" audit verify --dir "$audit" 2>&1)" \
		"intact: 9 records"
	is "$who: after run --rm: no state under the runtime's --root" "$(state_left "$state")" ""
	is "$who: after run --rm: no process of the container (its supervisor) left" \
		"$([ -n "$cid" ] && procs_with "$cid")$(procs_with "$MARK")" ""

	# Without the annotation: no way out at all.
	h0=$(mark "$BTH_HTTP_LOG")
	out=$("$pm" run --rm --network none "$OCI_IMAGE" sh -c ": $MARK
echo \"proxy=\${HTTP_PROXY-unset}\"
/probes/oci_try http-get $WEB 80 '/hello.txt?$t-none'
/probes/oci_try udp-send $WEB 80
/probes/oci_try http-get $OTHER 80 /$t-none" 2>&1 | tr '\n' ' ')
	is "$who: --network none, no annotation: no proxy; TCP to $WEB:80 $TCP_NO, UDP ENETUNREACH, TCP to $OTHER:80 $TCP_NO" \
		"$out" "proxy=unset $TCP_NO ENETUNREACH $TCP_NO "
	is "$who: --network none: the web host got nothing" "$(since "$BTH_HTTP_LOG" "$h0" | grep -cF -- "$t-")" 0
	is "$who: --network none: the other host got nothing" "$(since "$BTH_RECORD_LOG" "$REC0" | wc -l | tr -d ' ')" 0

	# A proxied container running: its supervisor is there (so the checks of
	# what is left can fail), and after rm -f nothing is.
	rm -f "$audit.cid"
	"$pm" run -d --network none --cidfile "$audit.cid" --annotation "berth.dev/allow-hosts=$WEB:80" \
		"$OCI_IMAGE" sh -c ": $MARK; sleep 1000" >/dev/null 2>"$TOP/err"
	cid=$(cat "$audit.cid" 2>/dev/null)
	if [ -z "$cid" ]; then
		fail "$who: run -d with allow-hosts" "no container id" "$(cat "$TOP/err")"
		return
	fi
	local sup
	sup=$(pgrep -f -- "create .*$cid" | head -1)
	if [ -n "$sup" ] && [ "$(state_left "$state")" != "" ]; then
		pass "$who: run -d with allow-hosts: its supervisor ($sup) and its state are there"
	else
		fail "$who: run -d with allow-hosts: its supervisor and its state are there" \
			"supervisor '$sup', state '$(state_left "$state")'"
	fi
	"$pm" rm -f -t 0 "$cid" >/dev/null 2>&1
	is "$who: rm -f: no container left" "$("$pm" ps -a -q 2>&1)" ""
	is "$who: rm -f: no state under the runtime's --root" "$(state_left "$state")" ""
	is "$who: rm -f: no supervisor or process of the container left" \
		"$(procs_with "$cid")$(procs_with "$MARK")" ""
}

P=$TOP/podman
_oci_podman_conf "$P" || bail "cannot write the podman configuration in $P"
OCI_CLEANUPS+=("podman_reset $(printf %q "$P")")
pod() { podman_in "$P" --runtime "$OCI_WRAPPER" "$@"; }
if out=$(pod import -q --change 'ENV PATH=/bin:/usr/bin' "$OCI_IMAGE_TAR" "$OCI_IMAGE" 2>&1); then
	if [ "$(id -u)" -eq 0 ]; then who="root (rootful podman)"; else who="$ME (rootless podman)"; fi
	egress "$who" pod "$OCI_STATE" "$TOP/audit"
else
	fail "podman import of the test image" "failed" "$out"
fi

# ---------------------------------------------------- rootless, as bertht
# as_user USER FUNCTION ARGS...: a function of common.sh, as USER.
as_user() { runuser -u "$1" -- bash -c '. "$1"; shift; "$@"' sh "$OCI_DIR/common.sh" "${@:2}"; }
rootless() {
	local u=bertht R=$TOP/rootless out
	id "$u" >/dev/null 2>&1 || { skip "rootless podman as $u" "no user $u (tests/run creates it)"; return; }
	# shellcheck source=../../scripts/deps.sh
	. "$OCI_DIR/../../scripts/deps.sh"
	berth_subids "$u" || { fail "rootless podman as $u" "no subordinate ids, and usermod --add-subuids failed"; return; }
	runuser -u "$u" -- test -x "$BERTH" || { skip "rootless podman as $u" "$BERTH is not executable by $u"; return; }
	mkdir -p "$R" && _oci_podman_conf "$R" && cp "$OCI_IMAGE_TAR" "$R/rootfs.tar" &&
		oci_wrapper "$R/bin/$OCI_RUNTIME" "$R/state" "$R/runtime.log" && chown -R "$u:" "$R" ||
		{ fail "rootless podman as $u" "cannot set up $R"; return; }
	OCI_CLEANUPS+=("as_user $u podman_reset $(printf %q "$R")")
	RU=$u RR=$R
	rpod() { (cd / && as_user "$RU" podman_in "$RR" --runtime "$RR/bin/$OCI_RUNTIME" "$@"); }
	out=$(rpod import -q "$R/rootfs.tar" "$OCI_IMAGE" 2>&1) || { fail "rootless ($u): podman import" "failed" "$out"; return; }
	egress "$u (rootless podman)" rpod "$R/state" "$R/audit" runuser -u "$u" --
}
if [ "$(id -u)" -eq 0 ]; then rootless; fi

echo "1..$T"
[ "$FAILS" -eq 0 ]
