#!/usr/bin/env bash
# Rules files against the real `berth run` (docs/rules.md): a refusal exits 2
# with `berth: refused by rules (FILE:LINE): ...` before anything is created
# (the command never runs, no widening prompt), an allowed run runs, every
# file found is enforced (a project file cannot widen a user file), malformed
# files are errors with file:line:col, and the lookup walks up from the
# current directory.
#
# usage: run-rules.sh /path/to/berth [stage-dir]
# The system file is never written: BERTH_TEST_SYSTEM_RULES names an extra
# system file in a temporary directory.  XDG_CONFIG_HOME points at a fresh
# temporary directory.  Works as root and as a user.  Prints ok/FAIL lines and
# a count; exit 1 if any check failed.

set -u
export LC_ALL=C
if [ $# -lt 1 ]; then
	echo "usage: $0 /path/to/berth [stage-dir]" >&2
	exit 2
fi
BERTH=$(readlink -f -- "$1")
base=${2:-/tmp}
T=$(mktemp -d "$base/berth-rules.XXXXXX")
trap 'rm -rf "$T"' EXIT
chmod 755 "$T"
export XDG_CONFIG_HOME=$T/cfg
# A fresh XDG_CONFIG_HOME means a fresh audit host key: the runs get their own
# audit log, since berth refuses to extend a log another key signed.
export BERTH_AUDIT_DIR=$T/audit
unset BERTH_TEST_SYSTEM_RULES BERTH_TEST_FORCE_OFF
mkdir -p "$T/cfg/berth" "$T/proj/.berth" "$T/proj/src/deep" "$T/other"

pass=0 failn=0
ok() { pass=$((pass + 1)); echo "ok $1"; }
bad() { failn=$((failn + 1)); echo "not ok $1"; printf '%s\n' "  rc=$RC" "  stderr: $ERR" | head -n 8 | sed 's/^/#/'; }
# run DIR ARGS... : berth run in DIR; the command touches a marker in the workspace.
run() {
	local dir=$1; shift
	rm -f "$T/proj/marker"
	ERR=$(cd "$dir" && "$BERTH" run --yes --workspace "$T/proj" "$@" -- sh -c 'touch /workspace/marker' 2>&1 </dev/null)
	RC=$?
}
# refused DESC WANT-MESSAGE DIR ARGS...
refused() {
	local desc=$1 want=$2; shift 2
	run "$@"
	if [ "$RC" -eq 2 ] && [[ $ERR == *"$want"* ]] && [ ! -e "$T/proj/marker" ] && [[ $ERR != *widening* ]]; then
		ok "$desc"
	else
		bad "$desc (want exit 2, \`$want\`, no marker, no widening line)"
	fi
}
allowed() {
	local desc=$1; shift
	run "$@"
	if [ "$RC" -eq 0 ] && [ -e "$T/proj/marker" ]; then ok "$desc"; else bad "$desc (want exit 0 and the marker)"; fi
}

# No rules at all: runs.
allowed "no rules file: the run runs" "$T/proj"

# A project file, found from a subdirectory, shown by path.
cat >"$T/proj/.berth/rules.yml" <<'YML'
# the project's limits
allow:
  networks: [none, api-only]
  memory: 2G
  pids: 256
  degraded: false
YML
refused "project: the default memory (8G) counts" \
	"berth: refused by rules ($T/proj/.berth/rules.yml:4): memory is at most 2G, and this run has 8G (the default)" \
	"$T/proj/src/deep"
refused "project: --network host refused, named by file:line, no widening prompt" \
	"berth: refused by rules (.berth/rules.yml:3): networks does not allow host" "$T/proj" --network host --memory 1G --pids 10
refused "project: --allow-degraded refused" "(.berth/rules.yml:6): degraded is false" \
	"$T/proj" --allow-degraded --memory 1G --pids 10
refused "project: --pids above the maximum" "(.berth/rules.yml:5): pids is at most 256, and this run has 300" \
	"$T/proj" --memory 1G --pids 300
[[ $ERR == *"hint: pass \`--pids 256\` or less"* ]] && ok "the refusal has a hint" || bad "the refusal has a hint"
# Without a cgroup (a user without delegation) the --memory the rules ask for cannot be
# enforced, and the rules forbid --allow-degraded: refused after the rules pass (run-limits.sh).
if ! (cd "$T/other" && "$BERTH" run --dry-run --memory 1G -- true 2>&1 >/dev/null | grep -q "cannot be enforced"); then
	allowed "project: within every limit" "$T/proj/src" --memory 1G --pids 100
else
	refused "project: within every limit, but no cgroup to enforce --memory" \
		"berth: --memory \`1G\` cannot be enforced" "$T/proj/src" --memory 1G --pids 100
fi
refused "project: run from outside the tree, the workspace's file still applies" \
	"($T/proj/.berth/rules.yml:4): memory is at most 2G, and this run has 9G" "$T/other" --memory 9G

# A --dry-run is refused the same way (it says whether a run would be allowed).
ERR=$(cd "$T/proj" && "$BERTH" run --dry-run --network host -- true 2>&1); RC=$?
[ "$RC" -eq 2 ] && [[ $ERR == *"networks does not allow host"* ]] && ok "--dry-run is checked too" || bad "--dry-run is checked too"

# The user file narrows; the project file cannot widen it.
cat >"$T/cfg/berth/rules.yml" <<'YML'
allow:
  networks: [none]
  env: [LANG, 'GIT_*']
  credentials: []
YML
cat >"$T/proj/.berth/rules.yml" <<'YML'
allow:
  networks: [none, host, api-only]
  env: [LANG, DEBUG, ANTHROPIC_API_KEY]
  credentials: [ANTHROPIC_API_KEY]
YML
refused "user file refuses what the project file allows (network)" \
	"refused by rules ($T/cfg/berth/rules.yml:2): networks does not allow host" "$T/proj" --network host
refused "user file refuses what the project file allows (env)" \
	"refused by rules ($T/cfg/berth/rules.yml:3): env does not allow \`DEBUG\`" "$T/proj" --env DEBUG=1
ERR=$(cd "$T/proj" && ANTHROPIC_API_KEY=sk-test "$BERTH" run --workspace "$T/proj" --env ANTHROPIC_API_KEY -- true 2>&1); RC=$?
[ "$RC" -eq 2 ] && [[ $ERR == *"$T/cfg/berth/rules.yml:3): env does not allow \`ANTHROPIC_API_KEY\`"* ]] \
	&& ok "credential forwarding refused by the user file" || bad "credential forwarding refused by the user file"
refused "project file refuses on its own" "(.berth/rules.yml:3): env does not allow \`GIT_DIR\`" "$T/proj" --env GIT_DIR=x
allowed "both files allow" "$T/proj" --env LANG=C

# The extra system file (test override) adds limits; it cannot lift the others.
rm -f "$T/cfg/berth/rules.yml" "$T/proj/.berth/rules.yml"
printf 'allow:\n  rw: [%s/other]\n' "$T" >"$T/system.yml"
ERR=$(cd "$T/proj" && BERTH_TEST_SYSTEM_RULES=$T/system.yml "$BERTH" run --workspace "$T/proj" -- true 2>&1); RC=$?
[ "$RC" -eq 2 ] && [[ $ERR == *"refused by rules ($T/system.yml:2): rw does not allow the workspace \`$T/proj\`"* ]] \
	&& ok "system file: workspace outside the rw prefixes" || bad "system file: workspace outside the rw prefixes"
ERR=$(cd "$T/other" && BERTH_TEST_SYSTEM_RULES=$T/system.yml "$BERTH" run --workspace "$T/other" -- true 2>&1); RC=$?
[ "$RC" -eq 0 ] && ok "system file: workspace inside the rw prefixes" || bad "system file: workspace inside the rw prefixes"

# Malformed files: exit 2, file:line:col, nothing run.
printf 'allow:\n  networks: [none]\n  memroy: 2G\n' >"$T/proj/.berth/rules.yml"
refused "unknown key" "berth: .berth/rules.yml:3:3: unknown key \`allow.memroy\`" "$T/proj"
printf 'allow:\n  pids: many\n' >"$T/proj/.berth/rules.yml"
refused "malformed value" ".berth/rules.yml:2:9: \`allow.pids\` must be a decimal integer, got \`many\`" "$T/proj"
printf 'allow:\n  networks: [none\n' >"$T/proj/.berth/rules.yml"
refused "invalid YAML" ".berth/rules.yml:3:1: invalid YAML" "$T/proj"
rm -f "$T/proj/.berth/rules.yml"
if [ "$(id -u)" -ne 0 ]; then
	printf 'allow: {}\n' >"$T/proj/.berth/rules.yml"; chmod 000 "$T/proj/.berth/rules.yml"
	ERR=$(cd "$T/proj" && "$BERTH" run --workspace "$T/proj" -- true 2>&1); RC=$?
	[ "$RC" -eq 125 ] && [[ $ERR == *"read the rules file \`$T/proj/.berth/rules.yml\`: Permission denied"* ]] \
		&& ok "unreadable rules file: exit 125, not ignored" || bad "unreadable rules file: exit 125, not ignored"
	rm -f "$T/proj/.berth/rules.yml"
fi
allowed "rules removed: runs again" "$T/proj"

# The workspace's own rules apply when berth runs from elsewhere (`--workspace DIR`).
printf '# the project\nallow:\n  networks: [none, api-only]\n' >"$T/proj/.berth/rules.yml"
refused "project: --workspace from another directory still gets the project's rules" \
	"($T/proj/.berth/rules.yml:3): networks does not allow host" "$T/other" --network host --memory 1G --pids 10
# A permissive file planted below the project's (a sandbox can write there) does not lift it:
# every .berth/rules.yml up the tree is read, not only the nearest.
mkdir -p "$T/proj/src/.berth"
printf 'allow: {}\n' >"$T/proj/src/.berth/rules.yml"
refused "a planted permissive sub/.berth/rules.yml cannot widen the project's" \
	"($T/proj/.berth/rules.yml:3): networks does not allow host" "$T/proj/src" --network host --memory 1G --pids 10
rm -f "$T/proj/src/.berth/rules.yml"
# Something that is not a regular file where a rules file belongs: refused at once (a FIFO
# must not hang berth, a dangling link or a directory must not lift the limits in silence).
mkfifo "$T/proj/src/.berth/rules.yml"
t0=$(date +%s)
refused "a FIFO as rules file: refused at once" "is a special file, not a regular file" "$T/proj/src" --memory 1G --pids 10
[ $(( $(date +%s) - t0 )) -lt 5 ] && ok "...without waiting on the FIFO" || bad "...without waiting on the FIFO"
rm -f "$T/proj/src/.berth/rules.yml"
ln -s "$T/nowhere.yml" "$T/proj/src/.berth/rules.yml"
refused "a dangling symlink as rules file: refused" "is a symbolic link to nothing" "$T/proj/src" --memory 1G --pids 10
rm -f "$T/proj/src/.berth/rules.yml"
mkdir "$T/proj/src/.berth/rules.yml"
refused "a directory as rules file: refused" "is a directory, not a regular file" "$T/proj/src" --memory 1G --pids 10
rmdir "$T/proj/src/.berth/rules.yml"
rm -f "$T/proj/.berth/rules.yml"

# Every refusal by the rules is a `denial` record in the audit trail.
den=$("$BERTH" audit --kind denial --json 2>/dev/null | python3 -c '
import sys, json
n = 0; host = 0
for l in sys.stdin:
    p = json.loads(l)["payload"]; n += 1
    host += p["by"] == "rules" and "networks does not allow host" in p["message"] and ".berth/rules.yml:3" in p["message"]
print(n, host > 0)')
case $den in
"0 "* | *False) bad "refusals are denial records in the audit trail ($den)" ;;
*) ok "refusals are denial records in the audit trail ($den)" ;;
esac
"$BERTH" audit verify >/dev/null 2>&1 && ok "the audit trail verifies" || bad "the audit trail verifies"

echo "# $pass passed, $failn failed"
[ "$failn" -eq 0 ]
