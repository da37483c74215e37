#!/usr/bin/env bash
# A full disk, and the errors no tmpfs gives (issue 15, part 3): every state
# file berth writes goes through berth_write_atomic_at (src/util/sys.h), so a
# refusal names the real file and the file system's own word for the cause,
# and nothing half-written or empty stays.  Small tmpfs mounts hold, in turn,
# the state directory, the configuration directory, the workspace and the
# runtime directory; each is filled to the last block, and each check asserts
# the exact message, the exit status, that the command did not run when berth
# refuses, that no empty run directory, empty `origin`, half-made app or
# temporary file remains, and that once space is freed the next call works
# (and prints no false warning).
# EIO and EDQUOT: a crash-point build (-Dcrash_points=true, as tests/run
# builds) fails the write of one named file with BERTH_TEST_WRITE_ERRNO
# (sys.h); the same path as ENOSPC, so the same assertions.  Other builds
# skip those checks (TAP SKIP, with the reason).
#
# usage: run-fulldisk.sh /path/to/berth /path/to/repo   (repo: holds apps/notes)
#
# Root mounts the tmpfs directly; another user runs the whole suite in a user
# and mount namespace where it may mount them (unshare -Urm), and inside that
# a second user namespace mapping its own uid back (unshare --map-user), so
# that berth runs as that user, not as the namespace's root.
# Output is TAP; exit status 1 if any check failed.

set -u
export LC_ALL=C
unset BERTH_TEST_FORCE_OFF BERTH_AUDIT_DIR BERTH_TEST_WRITE_ERRNO BERTH_TEST_CRASH_AT

if [ $# -ne 2 ]; then
	echo "usage: $0 /path/to/berth /path/to/repo" >&2
	exit 2
fi
B=$(readlink -f -- "$1")
REPO=$(readlink -f -- "$2")
SELF=$(readlink -f -- "$0")

# --- the mounts: 2 MiB each, mode 0700 ---
MOUNTS="st cfg ws run"
if [ -z "${BERTH_FULLDISK_TOP:-}" ]; then
	TOP=$(mktemp -d /tmp/berth-fulldisk.XXXXXX) || { echo "Bail out! mktemp failed"; exit 1; }
	chmod 755 "$TOP" # the app's sandbox identity (root) traverses to /app
	for m in $MOUNTS; do mkdir "$TOP/$m"; done
	if [ "$(id -u)" -eq 0 ]; then
		for m in $MOUNTS; do
			mount -t tmpfs -o size=2m,mode=0700 tmpfs "$TOP/$m" ||
				{ echo "Bail out! cannot mount a tmpfs on $TOP/$m"; exit 1; }
		done
		BERTH_FULLDISK_TOP=$TOP bash "$SELF" "$B" "$REPO"; rc=$?
		for m in $MOUNTS; do umount "$TOP/$m"; done
		rm -rf "$TOP"
		exit $rc
	fi
	unshare -Urm true 2>/dev/null || { echo "Bail out! needs root or user namespaces (unshare -Urm)"; rm -rf "$TOP"; exit 1; }
	# shellcheck disable=SC2016
	BERTH_FULLDISK_TOP=$TOP unshare -Urm bash -c '
		for m in '"$MOUNTS"'; do mount -t tmpfs -o size=2m,mode=0700 tmpfs "$BERTH_FULLDISK_TOP/$m" || exit 9; done
		exec unshare -U --map-user="$1" --map-group="$2" bash "$3" "$4" "$5"' _ "$(id -u)" "$(id -g)" "$SELF" "$B" "$REPO"
	rc=$?
	[ $rc -eq 9 ] && echo "Bail out! cannot mount a tmpfs in a user namespace"
	rm -rf "$TOP"
	exit $rc
fi
TOP=$BERTH_FULLDISK_TOP
ST=$TOP/st CFG=$TOP/cfg WS=$TOP/ws RUN=$TOP/run
export XDG_STATE_HOME=$ST XDG_CONFIG_HOME=$CFG XDG_RUNTIME_DIR=$RUN
export HOME=$TOP/home
mkdir -p "$HOME"

N=0 FAILS=0
pass() { N=$((N + 1)); echo "ok $N - $1"; }
skip() { N=$((N + 1)); echo "ok $N - $1 # SKIP $2"; }
bad() {
	N=$((N + 1)); FAILS=$((FAILS + 1)); echo "not ok $N - $1"; shift
	local l; for l in "$@"; do printf '%s\n' "$l" | head -n 12 | sed 's/^/#   /'; done
}
check() { # check NAME CMD...
	local name=$1; shift
	if "$@" >/dev/null 2>&1; then pass "$name"; else bad "$name" "rc=$RC" "stdout: $OUT" "stderr: $ERR"; fi
}
eq() { # eq NAME GOT WANT
	if [ "$2" == "$3" ]; then pass "$1"; else bad "$1" "got:  $2" "want: $3" "rc=$RC"; fi
}

# berth ARGS...: run it (stdin /dev/null) in $PWD; RC OUT ERR.  ERR lacks the
# one-line notice of how limits are enforced ("berth: limits: ..."), which an
# unprivileged caller without a delegated cgroup gets on every run.
RC=0 OUT='' ERR=''
b() {
	"$B" "$@" </dev/null >"$TOP/out" 2>"$TOP/err"; RC=$?
	OUT=$(cat "$TOP/out"); ERR=$(grep -v '^berth: limits: ' "$TOP/err")
}
fill() { dd if=/dev/zero of="$1/.fill" bs=4k 2>/dev/null; : >"$1/.fill2" 2>/dev/null; dd if=/dev/zero of="$1/.fill2" bs=512 2>/dev/null; true; }
unfill() { rm -f "$1/.fill" "$1/.fill2"; }
# what a refusal must not leave: temporary files, empty regular files (lock
# files, an empty trust list and a session's output log that got no output
# yet are empty by design), empty run directories
leftovers() {
	find "$1" \( -name '*.tmp' -o \( -type f -empty ! -name lock ! -name '*.lock' ! -name known ! -name output.log ! -name '.fill*' \) \
		-o \( -type d -empty -path '*/runs/*' \) \) -print 2>/dev/null | sort
}
runs_dirs() { find "$ST/berth/runs" -mindepth 1 -maxdepth 1 -type d 2>/dev/null | wc -l; }
FAIL_CLOSED='berth: the audit trail cannot record this run, so it does not start (fail closed)'
JOURNAL_CLOSED='berth: the run journal cannot be written, so the run does not start (fail closed)'

# Does this build have crash points (and so the injected write errors)?
HAVE_INJECT=0
mkdir -p "$TOP/probe"
BERTH_TEST_WRITE_ERRNO=berth.yml:EIO "$B" init probeapp --dir "$TOP/probe/y" >/dev/null 2>&1 || HAVE_INJECT=1
rm -rf "$TOP/probe"
NOINJ="a build without -Dcrash_points=true has no BERTH_TEST_WRITE_ERRNO"

cp -r "$REPO/apps/notes" "$TOP/notes"
chmod -R a+rX "$TOP/notes"
NOTES=$TOP/notes

cd "$WS" || exit 1
b run -- true
eq "set-up: a first run on the empty tmpfs mounts works" "$RC" 0

# --- the state directory full ---
before_runs=$(runs_dirs)
before_last=$(cat "$ST/berth/runs/last")
log=$(ls "$ST"/berth/audit/audit-*.jsonl)
before_log=$(sha256sum "$log")
fill "$ST"
b run -- touch ran
eq "state full: berth run refuses (125)" "$RC" 125
check "state full: the command did not run" test ! -e "$WS/ran"
# the run journal is the first file a run writes (before its audit records)
eq "state full: one message naming the run journal (not its temporary) and the cause, then the refusal" \
	"$(sed -E 's|/live/[0-9a-f]{16}`|/live/ID`|' <<<"$ERR")" \
	"berth: cannot write the run journal \`$ST/berth/live/ID\`: No space left on device
$JOURNAL_CLOSED"
eq "state full: no run directory left (empty or not)" "$(runs_dirs)" "$before_runs"
eq "state full: runs/last unchanged" "$(cat "$ST/berth/runs/last")" "$before_last"
eq "state full: the audit log unchanged (nothing half-written)" "$(sha256sum "$log")" "$before_log"
eq "state full: no temporary or empty file left" "$(leftovers "$ST")" ""

# a resident app's first boot on the full disk: no empty origin
cd "$TOP" || exit 1
b rpc notes --app-dir "$NOTES" --export add_note --input '{"text":"first"}'
eq "state full: an app's first boot refuses (125)" "$RC" 125
eq "state full: the message names the app's origin file and the cause" "$ERR" \
	"berth: cannot write \`$ST/berth/apps/notes/origin\`: No space left on device"
check "state full: no origin file (not even an empty one)" test ! -e "$ST/berth/apps/notes/origin"
check "state full: no state directory of the app that did not boot" test ! -e "$ST/berth/apps/notes"
eq "state full: no temporary or empty file left" "$(leftovers "$ST")" ""
unfill "$ST"
b rpc notes --app-dir "$NOTES" --export add_note --input '{"text":"first"}'
eq "state freed: the app boots and answers" "$RC:$OUT" '0:{"id":1}'
eq "state freed: origin names the app directory" "$(cat "$ST/berth/apps/notes/origin")" "$NOTES"
b rpc notes --app-dir "$NOTES" --export list_notes --input '{}'
eq "state freed: the next call works" "$RC:$OUT" '0:{"notes":[{"id":1,"text":"first","done":false}]}'
eq "state freed: and prints no (false) warning" "$ERR" ""
cd "$WS" || exit 1
b run -- touch ran
eq "state freed: berth run runs the command" "$RC" 0
check "state freed: the command ran" test -e "$WS/ran"
rm -f "$WS/ran"
b audit verify
check "state freed: the audit trail verifies" grep -q '^intact: ' <<<"$OUT"

# --- the audit directory full (on another file system than the state) ---
mkdir -m 700 "$RUN/aud"
BERTH_AUDIT_DIR=$RUN/aud b run -- true
eq "audit full: set-up run" "$RC" 0
before_runs=$(runs_dirs)
before_last=$(cat "$ST/berth/runs/last")
log=$(ls "$RUN"/aud/audit-*.jsonl)
before_log=$(sha256sum "$log")
fill "$RUN"
BERTH_AUDIT_DIR=$RUN/aud b run -- touch ran
eq "audit full: berth run refuses (125)" "$RC" 125
check "audit full: the command did not run" test ! -e "$WS/ran"
eq "audit full: the first line names the audit log and the cause" "$(printf '%s\n' "$ERR" | sed -n 1p)" \
	"berth: cannot write the audit log \`$log\`: No space left on device"
eq "audit full: the last line says the run did not start" "$(printf '%s\n' "$ERR" | tail -n 1)" "$FAIL_CLOSED"
eq "audit full: no run directory left (empty or not)" "$(runs_dirs)" "$before_runs"
eq "audit full: runs/last unchanged" "$(cat "$ST/berth/runs/last")" "$before_last"
eq "audit full: the audit log unchanged (nothing half-written)" "$(sha256sum "$log")" "$before_log"
eq "audit full: no temporary or empty file left" "$(leftovers "$ST")$(leftovers "$RUN/aud")" ""
unfill "$RUN"
rm -rf "$RUN/aud"

# --- the audit trail refuses after the run record was written: taken back ---
# (a read-only audit directory: root through a read-only bind mount, another
# user through its mode bits)
AUD=$TOP/aud
mkdir -m 700 "$AUD"
BERTH_AUDIT_DIR=$AUD b run -- true
eq "audit refused later: set-up run" "$RC" 0
before_runs=$(runs_dirs)
before_last=$(cat "$ST/berth/runs/last")
if [ "$(id -u)" -eq 0 ]; then
	mount --bind "$AUD" "$AUD" && mount -o remount,bind,ro "$AUD"
else
	chmod 0400 "$AUD"/audit-*.jsonl "$AUD/head" && chmod 0500 "$AUD"
fi
BERTH_AUDIT_DIR=$AUD b run -- touch ran
eq "audit refused later: berth run refuses (125)" "$RC" 125
check "audit refused later: the command did not run" test ! -e "$WS/ran"
check "audit refused later: the first line names the audit directory's file" \
	grep -qE "^berth: .*\`$AUD/(audit-[0-9]{16}\.jsonl|head|lock)\`: (Permission denied|Read-only file system)\$" \
	<<<"$(printf '%s\n' "$ERR" | sed -n 1p)"
eq "audit refused later: the last line says the run did not start" "$(printf '%s\n' "$ERR" | tail -n 1)" "$FAIL_CLOSED"
eq "audit refused later: the run record written meanwhile is taken back" "$(runs_dirs)" "$before_runs"
eq "audit refused later: runs/last names the run before again" "$(cat "$ST/berth/runs/last")" "$before_last"
if [ "$(id -u)" -eq 0 ]; then umount "$AUD"; else chmod 0700 "$AUD" && chmod 0600 "$AUD"/audit-*.jsonl "$AUD/head"; fi
BERTH_AUDIT_DIR=$AUD b run -- true
eq "audit writable again: berth run works" "$RC" 0

# --- the configuration directory full, before the host key exists ---
mv "$CFG/berth" "$TOP/cfg-saved"
fill "$CFG"
b run -- touch ran
eq "config full: berth run refuses (125)" "$RC" 125
check "config full: the command did not run" test ! -e "$WS/ran"
eq "config full: the message names the host key file and the cause" "$ERR" \
	"berth: audit: cannot write \`$CFG/berth/keys/host-ed25519.pem\`: No space left on device
$FAIL_CLOSED"
eq "config full: no key file, temporary or empty file left" \
	"$(find "$CFG/berth" -type f | sort)" ""
unfill "$CFG"
rm -rf "$CFG/berth"
mv "$TOP/cfg-saved" "$CFG/berth"

# --- the workspace full: the command's own writes fail, berth's do not ---
fill "$WS"
before_ws=$(ls -A "$WS")
b run -- sh -c 'echo out; head -c 65536 /dev/zero >written'
eq "workspace full: berth runs the command; its exit status is the command's" "$RC:$OUT" "1:out"
eq "workspace full: the error is the command's own" "$ERR" "head: error writing 'standard output': No space left on device"
rm -f "$WS/written" # the command's
eq "workspace full: berth left nothing of its own in the workspace" "$(ls -A "$WS")" "$before_ws"
# berth init: a multi-file change that fails midway is taken back
b init fullapp --dir "$WS/fullapp"
eq "workspace full: berth init fails (125)" "$RC" 125
eq "workspace full: berth init names the file and the cause, and takes the directory back" "$ERR" \
	"berth: init: cannot write \`$WS/fullapp/berth.yml\`: No space left on device
berth: init: removed \`$WS/fullapp\` again: nothing was created"
check "workspace full: no half-made app directory" test ! -e "$WS/fullapp"
unfill "$WS"
b init fullapp --dir "$WS/fullapp"
eq "workspace freed: berth init works" "$RC" 0
check "workspace freed: the app is whole" test -s "$WS/fullapp/berth.yml" -a -s "$WS/fullapp/main.py"
rm -rf "$WS/fullapp"

# --- the runtime directory full: a session's metadata ---
fill "$RUN"
b spawn shell --name fd1 --workspace "$WS"
eq "runtime full: berth spawn refuses (125)" "$RC" 125
eq "runtime full: the message names session.json and the cause" "$(printf '%s\n' "$ERR" | sed -n 1p)" \
	"berth: cannot write \`$RUN/berth/sessions/fd1/session.json\`: No space left on device"
check "runtime full: no session.json, temporary or empty file" \
	test -z "$(find "$RUN/berth/sessions/fd1" \( -name '*.tmp' -o -name session.json \) 2>/dev/null)"
b ps
check "runtime full: berth ps lists no session" test "$(printf '%s\n' "$OUT" | wc -l)" -le 1
unfill "$RUN"
b spawn shell --name fd1 --workspace "$WS"
eq "runtime freed: the same name starts" "$RC" 0
b stop fd1
eq "runtime freed: and stops" "$RC" 0

# --- EIO and EDQUOT (the test build's injected errors) ---
if [ "$HAVE_INJECT" -eq 1 ]; then
	rm -rf "$ST/berth/apps/notes"
	cd "$TOP" || exit 1
	BERTH_TEST_WRITE_ERRNO=origin:EIO b rpc notes --app-dir "$NOTES" --export list_notes --input '{}'
	eq "EIO: an app's first boot refuses (125)" "$RC" 125
	eq "EIO: the message names origin and the cause" "$ERR" \
		"berth: cannot write \`$ST/berth/apps/notes/origin\`: Input/output error"
	check "EIO: no origin file" test ! -e "$ST/berth/apps/notes/origin"
	check "EIO: no state directory of the app that did not boot" test ! -e "$ST/berth/apps/notes"
	eq "EIO: no temporary or empty file left" "$(leftovers "$ST")" ""
	b rpc notes --app-dir "$NOTES" --export list_notes --input '{}'
	eq "EIO gone: the next boot works, no warning" "$RC:$OUT:$ERR" '0:{"notes":[]}:'
	cd "$WS" || exit 1
	before_runs=$(runs_dirs)
	before_last=$(cat "$ST/berth/runs/last")
	BERTH_TEST_WRITE_ERRNO=run.json:EDQUOT b run -- touch ran
	eq "EDQUOT: berth run refuses (125)" "$RC" 125
	check "EDQUOT: the command did not run" test ! -e "$WS/ran"
	check "EDQUOT: the message names run.json and the cause" \
		grep -qxE "berth: cannot write \`$ST/berth/runs/[0-9a-f]{16}/run.json\`: Disk quota exceeded" <<<"$ERR"
	eq "EDQUOT: one line, the run record's (the audit trail took the run)" "$(printf '%s\n' "$ERR" | wc -l)" 1
	eq "EDQUOT: no run directory left" "$(runs_dirs)" "$before_runs"
	eq "EDQUOT: runs/last unchanged" "$(cat "$ST/berth/runs/last")" "$before_last"
	eq "EDQUOT: no temporary or empty file left" "$(leftovers "$ST")" ""
	# The measurement's record fails (sync 3): the command, already built
	# and measured, must not execve.  Before the go byte of sync 3 it did
	# in about half of the runs, while berth said it had not run.
	ran=0 rcs=""
	for _ in 1 2 3 4 5 6; do
		rm -f "$WS/ran"
		BERTH_TEST_WRITE_ERRNO=enforced.json:EIO b run -- touch ran
		rcs="$rcs$RC "
		[ -e "$WS/ran" ] && ran=$((ran + 1))
	done
	eq "EIO: enforced.json unwritable: berth run refuses (125) every time" "$rcs" "125 125 125 125 125 125 "
	eq "EIO: enforced.json unwritable: the command never ran (0 of 6)" "$ran" 0
	check "EIO: the message names enforced.json and the cause" \
		grep -qxE "berth: cannot write \`$ST/berth/runs/[0-9a-f]{16}/enforced.json\`: Input/output error" <<<"$ERR"
	BERTH_TEST_WRITE_ERRNO=session.json:EIO b spawn shell --name fd2 --workspace "$WS"
	eq "EIO: berth spawn refuses (125)" "$RC" 125
	eq "EIO: the message names session.json and the cause" "$(printf '%s\n' "$ERR" | sed -n 1p)" \
		"berth: cannot write \`$RUN/berth/sessions/fd2/session.json\`: Input/output error"
	b run -- true
	eq "EIO/EDQUOT gone: berth run works" "$RC" 0
	b audit verify
	check "EIO/EDQUOT: the audit trail verifies" grep -q '^intact: ' <<<"$OUT"
else
	for d in "EIO: origin" "EDQUOT: run.json" "EIO: enforced.json" "EIO: session.json"; do skip "$d" "$NOINJ"; done
fi

"$B" stop --all --grace 0 >/dev/null 2>&1
echo "1..$N"
[ "$FAILS" -eq 0 ]
