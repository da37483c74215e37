#!/usr/bin/env bash
# bench/bench-credentials.sh - what terminating TLS for an injected credential
# costs (docs/credentials.md), against the spliced end-to-end tunnel every
# other host gets, in the same run.
#
# The test hosts of tests/netns/hosts.sh (brought up and down here when none
# are) give web.berth.test a public-looking address and DNS; this script adds
# `openssl s_server -WWW` on web.berth.test:9443 (the hosts' certificate)
# serving a SIZE MiB file and a 1-byte one from a directory of its own, and
# stops it at exit.  Two ways to fetch them from inside `berth run`, curl
# through HTTPS_PROXY, alternated in rounds:
#   tunnel      --allow-host web.berth.test:9443: CONNECT, spliced, TLS end to end
#   terminated  --credential B=env:...@web.berth.test:9443: the broker's TLS on
#               both sides, the header rewritten (curl sends the placeholder)
# Reported: medians of MiB/s, and of curl's time to the first byte of the
# 1-byte file (10 requests per round in one sandbox after a first one, so the
# sandbox's start does not count; each request a new connection and, when
# terminated, a new leaf certificate), and the ratios.
#
# usage: bench/bench-credentials.sh [-s SIZE_MIB] [-r ROUNDS] [-b BERTH]
#   Needs root (the test hosts), curl, openssl.  Exit 0 after the report, 1 on
#   a failure, 2 on a usage error.
set -euo pipefail
SIZE=256
R=5
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BERTH="$(dirname "$here")/build/berth"
while getopts 's:r:b:h' o; do
	case $o in
	s) SIZE=$OPTARG ;;
	r) R=$OPTARG ;;
	b) BERTH=$OPTARG ;;
	*) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 2 ;;
	esac
done
[[ $SIZE =~ ^[1-9][0-9]*$ ]] || { echo "bench-credentials: -s \`$SIZE\`: a size in MiB, a whole number from 1" >&2; exit 2; }
[[ $R =~ ^[1-9][0-9]*$ ]] || { echo "bench-credentials: -r \`$R\`: a number of rounds, a whole number from 1" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "bench-credentials: run as root (the test hosts)" >&2; exit 1; }
BERTH=$(readlink -f -- "$BERTH")
HOSTS_DIR=${BERTH_TEST_HOSTS_DIR:-/run/berth-test-hosts}
OWN=0 SPID=
TOP=$(mktemp -d /tmp/berth-bench-cred.XXXXXX)
cleanup() {
	[ -n "$SPID" ] && kill "$SPID" 2>/dev/null && wait "$SPID" 2>/dev/null
	[ "$OWN" -eq 1 ] && bash "$here/../tests/netns/hosts.sh" down
	rm -rf "$TOP"
}
trap cleanup EXIT
if [ ! -f "$HOSTS_DIR/env" ]; then
	OWN=1
	bash "$here/../tests/netns/hosts.sh" up >&2
fi
# shellcheck disable=SC1090,SC1091
. "$HOSTS_DIR/env"
WEB=web.$BTH_ZONE PORT=9443
mkdir "$TOP/www" "$TOP/ws"
head -c "$((SIZE << 20))" /dev/zero >"$TOP/www/big"
printf 'x' >"$TOP/www/one"
(cd "$TOP/www" && exec ip netns exec berth-th-pub openssl s_server -quiet -WWW -accept "$BTH_WEB4:$PORT" \
	-cert "$BTH_DIR/server.pem" -key "$BTH_DIR/server.key" </dev/null >"$TOP/server.log" 2>&1) &
SPID=$!
for _ in $(seq 50); do
	curl -s --noproxy '*' -m 2 --cacert "$BTH_CA" --resolve "$WEB:$PORT:$BTH_WEB4" "https://$WEB:$PORT/one" >/dev/null && break
	sleep 0.1
done
# the tunnel's client reads a bundle as large as the one berth gives the terminated one
# (OpenSSL parses the whole file for each curl: tens of milliseconds for the system's)
cat /etc/ssl/certs/ca-certificates.crt "$BTH_CA" >"$TOP/ws/ca.pem"
chmod 755 "$TOP" "$TOP/ws"
chmod 644 "$TOP/ws/ca.pem"
cd "$TOP/ws"
export SSL_CERT_FILE=$BTH_CA BENCH_SECRET=bench-secret
# one sandbox: the download's MiB/s, then 1 + 10 first-byte times of the small file
# (the tunnel's client trusts the system's bundle and the test CA; the terminated one the
# bundle berth gives it: the system's and the run's CA)
inside='curl -s -o /dev/null $CA -H "Authorization: Bearer ${B:-none}" -w "%{speed_download}\n" https://'$WEB:$PORT'/big
for i in 0 1 2 3 4 5 6 7 8 9 10; do curl -s -o /dev/null $CA -H "Authorization: Bearer ${B:-none}" -w "%{time_starttransfer}\n" https://'$WEB:$PORT'/one; done'
measure() { # measure ROW CURL-CA-OPTION BERTH-ARGS...
	local row=$1 ca=$2 out; shift 2
	out=$("$BERTH" run --yes --dns "$BTH_DNS" "$@" -- sh -c "CA='$ca'; $inside" </dev/null 2>"$TOP/err") ||
		{ echo "bench-credentials: $row failed: $(tail -n 3 "$TOP/err")" >&2; exit 1; }
	echo "$out" | head -n 1 | awk '{ printf "%.1f\n", $1 / 1048576 }' >>"$TOP/$row.mibs"
	echo "$out" | tail -n 10 | awk '{ printf "%.2f\n", $1 * 1000 }' >>"$TOP/$row.ttfb"
}
for ((i = 1; i <= R; i++)); do
	measure tunnel "--cacert ca.pem" --allow-host "$WEB:$PORT"
	measure terminated "" --credential "B=env:BENCH_SECRET@$WEB:$PORT"
done
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "bench-credentials: $SIZE MiB over TLS from $WEB:$PORT (openssl s_server), $R rounds, berth $("$BERTH" --version 2>/dev/null | head -n 1)"
printf '%-11s %10s %14s\n' "" "MiB/s" "first byte ms"
for row in tunnel terminated; do
	printf '%-11s %10s %14s\n' "$row" "$(median "$TOP/$row.mibs")" "$(median "$TOP/$row.ttfb")"
done
awk -v a="$(median "$TOP/terminated.mibs")" -v b="$(median "$TOP/tunnel.mibs")" \
	-v c="$(median "$TOP/terminated.ttfb")" -v d="$(median "$TOP/tunnel.ttfb")" \
	'BEGIN { printf "terminated/tunnel: throughput %.2fx, first byte %+.2f ms\n", a / b, c - d }'
