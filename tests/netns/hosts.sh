#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The egress tests' hosts: two network namespaces joined to the host by veth
# pairs, with an HTTP and an HTTPS server (a CA made here by openssl; clients
# trust it only through an explicit CA file), a dumb-HTTP git repository, a TCP
# echo server, dnsmasq with a query log, a DNS responder that changes its
# answer (rebinding), and servers on a private address that record every
# connection they get.  See docs/egress.md, "Test hosts".
#
# usage: hosts.sh up      as root: create everything (an earlier set is removed
#                         first); on any failure what was made is removed again
#        hosts.sh down    as root: stop the servers, delete the namespaces,
#                         links and state; safe to run when nothing is up
#        hosts.sh env     print the environment file's path (exit 1 if not up)
#        hosts.sh status  exit 0 when up and every server answers
# Environment: BERTH_TEST_HOSTS_DIR (default /run/berth-test-hosts) holds the
# state: `env` (sourced by the tests, readable by every user), ca.pem, logs.
#
# Addresses.  The broker refuses names that resolve to loopback, private, CGNAT,
# documentation, benchmarking or reserved ranges, so the "public" hosts need
# addresses outside all of them (docs/egress.md, Refused ranges):
#   IPv4 1.2.3.0/24: global unicast in APNIC's 1.0.0.0/8, among the blocks its
#        2010 study ("Traffic in Network 1.0.0.0/8", Huston and Michaelson)
#        found so polluted by misconfigured traffic that APNIC held them back
#        from allocation; only this /24 is routed to the veth while the hosts
#        are up.  Should it ever be assigned, change NET4 below.
#   IPv6 3ffe:b17::/64: inside 3ffe::/16, the 6bone's block, returned to IANA
#        in 2006 (RFC 3701) and unallocated since; inside global unicast
#        2000::/3 and in none of the refused IPv6 ranges.
# The "private" host uses 10.213.7.0/24 (RFC 1918) and fd42:b17::/64 (RFC 4193).
set -uo pipefail
export LC_ALL=C

DIR=${BERTH_TEST_HOSTS_DIR:-/run/berth-test-hosts}
HERE=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3
NS_PUB=berth-th-pub NS_PRIV=berth-th-priv
L_PUB=bth-pub0 L_PUB_NS=bth-pub1 L_PRIV=bth-priv0 L_PRIV_NS=bth-priv1

NET4=1.2.3 NET6=3ffe:b17: PNET4=10.213.7 PNET6=fd42:b17:
HOST4=$NET4.1 HOST6=${NET6}:1
WEB4=$NET4.10 WEB6=${NET6}:10
OTHER4=$NET4.11 OTHER6=${NET6}:11
DNS4=$NET4.53 REBIND_DNS4=$NET4.54
LATE4=$NET4.99 # assigned to nobody: a test gives it to the host while berth runs
PRIV4=$PNET4.10 PRIV6=${PNET6}:10
ZONE=berth.test

die() { echo "hosts.sh: $*" >&2; exit 1; }
need_root() { [ "$(id -u)" -eq 0 ] || die "$1 needs root (network namespaces and veth links); run it as root before the tests"; }

down() {
	local f pid ns
	# The servers this script started (their pids were recorded at start) ...
	for f in "$DIR"/pids/*; do
		[ -f "$f" ] || continue
		pid=$(cat "$f")
		[ -n "$pid" ] && kill "$pid" 2>/dev/null
	done
	# ... and anything else still living in the namespaces (nothing else is ever started there).
	for ns in $NS_PUB $NS_PRIV; do
		ip netns list 2>/dev/null | grep -qw "^$ns" || continue
		for pid in $(ip netns pids "$ns" 2>/dev/null); do kill "$pid" 2>/dev/null; done
	done
	sleep 0.2
	for ns in $NS_PUB $NS_PRIV; do
		ip netns list 2>/dev/null | grep -qw "^$ns" || continue
		for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
		ip netns del "$ns" 2>/dev/null
	done
	for f in $L_PUB $L_PRIV; do ip link del "$f" 2>/dev/null; done
	case $DIR in /run/*|/tmp/*) rm -rf "$DIR" ;; *) rm -rf "$DIR"/{env,ca.pem,ca.key,ca.srl,server.*,www,pids,log,dnsmasq.*} 2>/dev/null ;; esac
	return 0
}

# start NAME NS CMD...: a server in NS, its stdout to log/NAME.out; waits for "ready".
start() {
	local name=$1 ns=$2; shift 2
	ip netns exec "$ns" setsid "$@" </dev/null >"$DIR/log/$name.out" 2>&1 &
	echo $! >"$DIR/pids/$name"
	for _ in $(seq 100); do
		grep -q '^ready' "$DIR/log/$name.out" 2>/dev/null && return 0
		kill -0 "$(cat "$DIR/pids/$name")" 2>/dev/null || break
		sleep 0.1
	done
	die "server $name did not start: $(tail -n 5 "$DIR/log/$name.out")"
}

make_certs() {
	local d=$DIR
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=berth test CA" \
		-keyout "$d/ca.key" -out "$d/ca.pem" -addext "basicConstraints=critical,CA:TRUE" \
		-addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null || return 1
	openssl req -newkey rsa:2048 -nodes -subj "/CN=web.$ZONE" -keyout "$d/server.key" -out "$d/server.csr" \
		2>/dev/null || return 1
	printf '%s\n' "subjectAltName=DNS:web.$ZONE,DNS:v6.$ZONE,DNS:other.$ZONE,IP:$WEB4,IP:$WEB6" \
		"basicConstraints=CA:FALSE" "extendedKeyUsage=serverAuth" >"$d/server.ext"
	openssl x509 -req -in "$d/server.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" -CAcreateserial -days 2 \
		-extfile "$d/server.ext" -out "$d/server.pem" 2>/dev/null || return 1
	chmod 644 "$d/ca.pem"
	chmod 600 "$d/ca.key" "$d/server.key"
	# the secret the HTTPS server's /auth requires (docs/credentials.md, "Tests"): readable by the
	# tests' users on the host, never in a sandbox's view (/run is not)
	openssl rand -hex 24 | sed 's/^/s3cr3t-/' >"$d/cred-secret" || return 1
	chmod 644 "$d/cred-secret"
}

make_www() {
	local w=$DIR/www src=$DIR/repo-src
	mkdir -p "$w" || return 1
	echo "berth test host $WEB4" >"$w/index.html"
	echo "hello from the berth test host" >"$w/hello.txt"
	git init -q -b main "$src" && git -C "$src" -c user.name=berth -c user.email=berth@berth.test \
		commit -q --allow-empty -m init || return 1
	echo "cloned over dumb HTTP" >"$src/README"
	git -C "$src" add README &&
		git -C "$src" -c user.name=berth -c user.email=berth@berth.test commit -q -m readme || return 1
	git clone -q --bare "$src" "$w/repo.git" || return 1
	git -C "$w/repo.git" update-server-info || return 1
	rm -rf "$src"
	chmod -R a+rX "$w"
}

link() { # link NS HOSTSIDE NSSIDE ADDR4/24 ADDR6/64 NSADDR...
	local ns=$1 l0=$2 l1=$3 a4=$4 a6=$5 a; shift 5
	ip netns add "$ns" || return 1
	ip link add "$l0" type veth peer name "$l1" netns "$ns" || return 1
	ip addr add "$a4/24" dev "$l0" || return 1
	ip addr add "$a6/64" dev "$l0" nodad || return 1
	ip link set "$l0" up || return 1
	ip -n "$ns" link set lo up || return 1
	for a in "$@"; do
		case $a in
		*:*) ip -n "$ns" addr add "$a/64" dev "$l1" nodad || return 1 ;;
		*) ip -n "$ns" addr add "$a/24" dev "$l1" || return 1 ;;
		esac
	done
	ip -n "$ns" link set "$l1" up || return 1
	ip -n "$ns" route add default via "$a4" || return 1
	ip -n "$ns" -6 route add default via "$a6" || return 1
}

up() {
	need_root up
	command -v dnsmasq >/dev/null || die "dnsmasq not found; install dnsmasq-base (scripts/deps.sh)"
	down
	trap 'echo "hosts.sh: set-up failed; removing what was made" >&2; down' EXIT
	mkdir -p "$DIR"/{pids,log} || exit 1
	chmod 755 "$DIR" "$DIR/log"
	link $NS_PUB $L_PUB $L_PUB_NS $HOST4 $HOST6 $WEB4 $OTHER4 $DNS4 $REBIND_DNS4 $WEB6 $OTHER6 ||
		die "cannot create $NS_PUB"
	link $NS_PRIV $L_PRIV $L_PRIV_NS $PNET4.1 ${PNET6}:1 $PRIV4 $PRIV6 || die "cannot create $NS_PRIV"
	make_certs || die "openssl failed"
	make_www || die "cannot make the git repository"
	: >"$DIR/log/http.log"; : >"$DIR/log/record.log"; : >"$DIR/log/rebind.log"; : >"$DIR/log/cred.log"
	chmod 644 "$DIR"/log/*.log

	start http $NS_PUB "$PY" "$HERE/servers.py" http --root "$DIR/www" --log "$DIR/log/http.log" \
		--bind "$WEB4:80" --bind "[$WEB6]:80" --bind "$WEB4:8080"
	start https $NS_PUB "$PY" "$HERE/servers.py" http --root "$DIR/www" --log "$DIR/log/http.log" \
		--tls "$DIR/server.pem" "$DIR/server.key" --bind "$WEB4:443" --bind "[$WEB6]:443"
	# injected credentials (tests/integration/run-credentials.sh): /auth requires the secret;
	# web.$ZONE:8443 is the bound host, other.$ZONE:8443 another one
	start cred $NS_PUB "$PY" "$HERE/servers.py" http --root "$DIR/www" --log "$DIR/log/cred.log" \
		--tls "$DIR/server.pem" "$DIR/server.key" --secret "$DIR/cred-secret" \
		--bind "$WEB4:8443" --bind "$OTHER4:8443"
	# the echo server holds a socket per tunnel: the 1000-tunnel test needs more than 1024
	start echo $NS_PUB bash -c 'ulimit -n 16384 && exec "$@"' - "$PY" "$HERE/servers.py" echo \
		--bind "$WEB4:7" --bind "[$WEB6]:7"
	start other $NS_PUB "$PY" "$HERE/servers.py" record --log "$DIR/log/record.log" \
		--bind "$OTHER4:80" --bind "$OTHER4:443" --bind "[$OTHER6]:80"
	start private $NS_PRIV "$PY" "$HERE/servers.py" record --log "$DIR/log/record.log" \
		--bind "$PRIV4:80" --bind "$PRIV4:443" --bind "$PRIV4:7" --bind "[$PRIV6]:80"
	start rebind $NS_PUB "$PY" "$HERE/servers.py" dns-rebind --bind "$REBIND_DNS4:53" \
		--zone "rebind.$ZONE" --first "$WEB4" --then "$PRIV4" --log "$DIR/log/rebind.log"
	# dnsmasq: our own instance, no configuration file, no /etc/hosts, no upstream, bound to
	# the test address only (the host's port 53 is not touched); --keep-in-foreground so its
	# pid is the one recorded; the log goes to stderr, a file every user may read (a log file
	# of its own would be made 0660).
	ip netns exec $NS_PUB dnsmasq --keep-in-foreground --conf-file=/dev/null --no-resolv --no-hosts \
		--no-poll --listen-address=$DNS4 --bind-interfaces --port=53 --pid-file= --cache-size=0 \
		--log-queries --log-facility=- --local=/$ZONE/ \
		--host-record=web.$ZONE,$WEB4,$WEB6 --host-record=echo.$ZONE,$WEB4 \
		--host-record=other.$ZONE,$OTHER4,$OTHER6 --host-record=v6.$ZONE,$WEB6 \
		--host-record=private.$ZONE,$PRIV4 --host-record=private6.$ZONE,$PRIV6 \
		--host-record=mixed.$ZONE,$WEB4 --host-record=mixed.$ZONE,$PRIV4 \
		--host-record=meta.$ZONE,169.254.169.254 --address=/wild.$ZONE/$WEB4 \
		--host-record=self.$ZONE,$HOST4,$HOST6 --host-record=late.$ZONE,$LATE4 \
		</dev/null >"$DIR/log/dnsmasq.out" 2>"$DIR/log/dnsmasq.log" &
	echo $! >"$DIR/pids/dnsmasq"
	for _ in $(seq 50); do
		grep -q 'started, version' "$DIR/log/dnsmasq.log" 2>/dev/null && break
		kill -0 "$(cat "$DIR/pids/dnsmasq")" 2>/dev/null || die "dnsmasq did not start: $(cat "$DIR/log/dnsmasq.log")"
		sleep 0.1
	done

	cat >"$DIR/env.tmp" <<EOF
# written by tests/netns/hosts.sh up; sourced by the tests
BTH_DIR=$DIR
BTH_ZONE=$ZONE
BTH_CA=$DIR/ca.pem
BTH_DNS=$DNS4
BTH_REBIND_DNS=$REBIND_DNS4
BTH_WEB4=$WEB4
BTH_HOST4=$HOST4
BTH_HOST6=$HOST6
BTH_LATE4=$LATE4
BTH_HOST_LINK=$L_PUB
BTH_WEB6=$WEB6
BTH_OTHER4=$OTHER4
BTH_OTHER6=$OTHER6
BTH_PRIV4=$PRIV4
BTH_PRIV6=$PRIV6
BTH_HTTP_LOG=$DIR/log/http.log
BTH_RECORD_LOG=$DIR/log/record.log
BTH_DNS_LOG=$DIR/log/dnsmasq.log
BTH_REBIND_LOG=$DIR/log/rebind.log
BTH_CRED_SECRET=$DIR/cred-secret
BTH_CRED_LOG=$DIR/log/cred.log
EOF
	chmod 644 "$DIR/env.tmp" && mv "$DIR/env.tmp" "$DIR/env" || exit 1
	status || die "the hosts do not answer: $(status 2>&1)"
	trap - EXIT
	echo "hosts.sh: up; environment in $DIR/env"
}

# Every server answers, from the host's namespace.
status() {
	[ -f "$DIR/env" ] || { echo "hosts.sh: not up ($DIR/env missing)" >&2; return 1; }
	local u bad=0
	for u in "http://$WEB4/hello.txt" "http://[$WEB6]/hello.txt" "http://$WEB4:8080/hello.txt" \
		"https://web.$ZONE/hello.txt --resolve web.$ZONE:443:$WEB4" "https://[$WEB6]/hello.txt"; do
		# shellcheck disable=SC2086
		curl -sf --noproxy '*' --max-time 5 --cacert "$DIR/ca.pem" $u >/dev/null ||
			{ echo "hosts.sh: $u does not answer" >&2; bad=1; }
	done
	[ "$(printf 'x' | timeout 5 "$PY" -c "
import socket; s = socket.create_connection(('$WEB4', 7), timeout=5); s.sendall(b'x'); print(s.recv(1).decode())")" = x ] ||
		{ echo "hosts.sh: echo $WEB4:7 does not answer" >&2; bad=1; }
	# (the rebinding responder answers a name's first query with the public address)
	for u in "$DNS4 web.$ZONE A $WEB4" "$REBIND_DNS4 status-$$-$RANDOM.rebind.$ZONE A $WEB4"; do
		set -- $u
		[ "$(dnsq "$1" "$2")" = "$4" ] ||
			{ echo "hosts.sh: DNS $1 does not answer $2 with $4" >&2; bad=1; }
	done
	return $bad
}

# dnsq SERVER NAME: the first A record in the answer (python3 stdlib, no dig needed).
dnsq() {
	"$PY" - "$1" "$2" <<'EOF'
import socket, struct, sys
srv, name = sys.argv[1], sys.argv[2]
q = struct.pack("!HHHHHH", 0x4242, 0x0100, 1, 0, 0, 0)
q += b"".join(bytes([len(l)]) + l.encode() for l in name.split(".")) + b"\0" + struct.pack("!HH", 1, 1)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(3)
s.sendto(q, (srv, 53)); r = s.recv(4096)
an = struct.unpack("!H", r[6:8])[0]
if an: print(socket.inet_ntoa(r[-4:]))
EOF
}

case ${1:-} in
up) up ;;
down) need_root down; down ;;
env) [ -f "$DIR/env" ] && echo "$DIR/env" || { echo "hosts.sh: not up ($DIR/env missing)" >&2; exit 1; } ;;
status) status ;;
*) echo "usage: $0 up|down|env|status" >&2; exit 2 ;;
esac
