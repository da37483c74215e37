# shellcheck shell=bash
# TAP helpers for the test scripts (tests/integration/*.sh source this file):
#   pass DESC                    ok N - DESC
#   fail DESC REASON [DETAIL...] not ok N - DESC # REASON, each DETAIL's first
#                                $TAP_DETAIL_LINES lines (default 8) as #-comments
#   has DESC HAYSTACK NEEDLE     pass if NEEDLE (a fixed string) is in HAYSTACK
#   hasnt DESC HAYSTACK NEEDLE   pass if it is not
# T counts the checks, FAILS the failed ones: a script prints the plan
# (echo "1..$T") and exits non-zero when FAILS is not 0.
T=0
FAILS=0
pass() { T=$((T + 1)); echo "ok $T - $1"; }
fail() {
	T=$((T + 1)); FAILS=$((FAILS + 1))
	local d=$1 r=${2//$'\n'/\\n}; shift 2
	echo "not ok $T - $d # $r"
	local l
	for l in "$@"; do printf '%s\n' "$l" | head -n "${TAP_DETAIL_LINES:-8}" | sed 's/^/#   /'; done
}
has() { # has DESC HAYSTACK NEEDLE  (fixed string)
	if printf '%s' "$2" | grep -qF -- "$3"; then pass "$1"; else fail "$1" "'$3' not found" "in: $2"; fi
}
hasnt() {
	if printf '%s' "$2" | grep -qF -- "$3"; then fail "$1" "'$3' unexpectedly present" "in: $2"; else pass "$1"; fi
}
