#!/usr/bin/env bash
# The workspace guard against git's indirections, and the CLI's mount
# targets: what an earlier attack on berth found (each check failed before its
# fix).
#
#  - .git/commondir: git reads the config and hooks of the directory it
#    names (gitrepository-layout(5)); written inside, the host's next
#    `git status` ran the sandbox's core.fsmonitor.  Read-only when the host
#    has one; made by the sandbox, set aside at exit.
#  - .git/config.worktree: read when extensions.worktreeConfig is on.
#  - .git/worktrees/<id>: the host's linked worktrees (outside the
#    workspace) take their commondir from there; `git worktree prune` inside,
#    where they do not exist, deleted their files.
#  - repositories below the top (nested, submodules): not preventable
#    without breaking git inside; berth sets aside what would run a program
#    (hooks, config keys outside git's inert list, .git links) and names each
#    repository the sandbox made or changed when the run ends.  The top
#    repository's .git/modules/*/config and hooks are read-only.
#  - --ro/--rw targets that are too long or hold control characters: exit 2
#    with a message naming them (was 125 with a cut-off message).
#  - the command's environment: a variable longer than 4095 bytes was cut
#    short, and the ones past the 255th dropped, silently.
#  - a project's .berth/rules.yml that is a symlink (planted by a sandbox in
#    a subdirectory): berth read the file it points to and quoted it.
#  - /tmp (any sticky world-writable directory) or a runtime directory as
#    workspace or bind source: the sandbox reached the sockets in it.
#  - a unix socket (docker's, the session bus) inside a --ro/--rw source or
#    the workspace, at any depth: the sandbox connected to it.
#  - root's workspace a system directory (/etc, /usr, ...): no widening named
#    (berth run, and then berth spawn and fleet agents).
#  - the audit log or host key dir not made yet, below a symlink into the
#    workspace; berth's own executable in the workspace or a --rw source.
#  - --evidence ./x where x is a link a sandbox made to a host secret; a
#    directory on an --evidence path swapped for a link before the copy.
#  - a fleet file that is, or is reached through, a symlink.
#  - more than 31 widenings: the 32nd was in force, never named.
#  - a --ro source swapped for a symlink after berth resolved it.
#  - a session's answer to `berth attach` (ESC ] 0 ; title BEL) printed raw.
#  - a --ro/--rw source or the workspace swapped for a symlink after berth's
#    last check, before the child mounts it; and between spawn's or a
#    fleet's check and their launch.
#
# usage: run-attack-fs.sh /path/to/berth [stage-dir]
#
# Works as root and as an unprivileged user.  Output is TAP; exit status 1 if
# any check failed.  Nothing is skipped: a missing precondition is a failure.
set -u
export LC_ALL=C
unset BERTH_TEST_FORCE_OFF

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: $0 /path/to/berth [stage-dir]" >&2
	exit 2
fi
BERTH=$(readlink -f -- "$1")
export HOME=${HOME:-/tmp}
# The host's git, as the caller, with no global config of the caller's.
HOSTPY=/usr/bin/python3
hgit() { env -u GIT_DIR -u GIT_WORK_TREE GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 git "$@"; }
GC=(-c user.name=berth-it -c user.email=it@berth.invalid)

# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"  # T, FAILS, pass, fail, has, hasnt
eq() { # eq DESC GOT WANT
	if [ "$2" == "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'" "rc=$RC" "stdout: $OUT" "stderr: $ERR"; fi
}
absent() { # absent DESC PATH
	if [ -e "$2" ] || [ -L "$2" ]; then fail "$1" "$2 exists" "$(ls -la "$2" 2>&1)"; else pass "$1"; fi
}

TOP=$(mktemp -d /tmp/berth-attack-fs.XXXXXX) || { echo "Bail out! mktemp failed"; exit 1; }
chmod 755 "$TOP"
TD=$TOP/cap; mkdir "$TD"
cleanup() { rm -rf "$TOP" 2>/dev/null || { chmod -R u+rwx "$TOP" 2>/dev/null; rm -rf "$TOP"; }; }
trap cleanup EXIT
trap 'exit 130' INT TERM

RC=; OUT=; ERR=
br() { # br ARGS... : berth run ARGS in the current directory; sets RC OUT ERR
	"$BERTH" run "$@" </dev/null >"$TD/out" 2>"$TD/err"
	RC=$?
	OUT=$(cat "$TD/out"); ERR=$(cat "$TD/err")
}
st() { printf '%s\n' "$OUT" | awk -v k="$1" '$1==k{print $2}'; }
# The test-only pauses (docs/security.md, "Mount sources"): berth waits at
# $PAUSEVAR's point (default BERTH_TEST_PAUSE_BEFORE_MOUNT) while VICTIM is
# swapped for a relative symbolic link to $W/canary; then it is put back.
race() { # race VICTIM ARGS... : berth run ARGS, VICTIM swapped for a link to the canary while berth pauses
	local victim=$1; shift
	racecmd "$victim" "$BERTH" run "$@"
}
racecmd() { # racecmd VICTIM COMMAND... : the same for any berth command line
	local victim=$1; shift
	rm -f "$W/hook/paused" "$W/hook/go"
	env "${PAUSEVAR:-BERTH_TEST_PAUSE_BEFORE_MOUNT}=$W/hook" "$@" </dev/null >"$TD/out" 2>"$TD/err" &
	local pid=$! i
	for i in $(seq 300); do [ -e "$W/hook/paused" ] && break; sleep 0.1; done
	if [ -e "$W/hook/paused" ]; then
		# relative: it leads to the canary in the child's view of the host too
		mv "$victim" "$victim.old" && ln -s "$(realpath --relative-to="${victim%/*}" "$W/canary")" "$victim"
	fi
	touch "$W/hook/go"
	wait "$pid"; RC=$?
	OUT=$(cat "$TD/out"); ERR=$(cat "$TD/err")
	[ -e "$W/hook/paused" ] && pass "race: precondition: berth paused at ${PAUSEVAR:-BERTH_TEST_PAUSE_BEFORE_MOUNT}" ||
		fail "race: precondition: berth paused at ${PAUSEVAR:-BERTH_TEST_PAUSE_BEFORE_MOUNT}" "no $W/hook/paused" "stderr: $ERR"
	rm -f "$victim" && mv "$victim.old" "$victim"
}

# errno of file operations inside, by name (python3: exact errno).
PROBE='
import errno, os, sys
def t(k, f):
    try:
        f(); r = "0"
    except OSError as e:
        r = errno.errorcode.get(e.errno, str(e.errno))
    print(k, r)
'

for tool in "$BERTH" /usr/bin/git /usr/bin/python3; do
	if [ -x "$tool" ]; then pass "precondition: $tool is executable"
	else fail "precondition: $tool is executable" "missing"; fi
done

# A repository the host trusts, with one commit.
newrepo() { # newrepo DIR
	mkdir -p "$1" && hgit -C "$1" init -q && hgit -C "$1" "${GC[@]}" commit -q --allow-empty -m base
}

# ------------------------------------------------------------ .git/commondir
# One the host does not have: no placeholder on the host (guard.h); the
# sandbox can write it, and berth sets it aside at exit (it does not name
# the repository that holds it), as it does a config.worktree holding a key
# outside git's inert list.  run-trust.sh checks the bytes kept.
W=$TOP/commondir; newrepo "$W"; cd "$W" || exit 1
sleep 0.1
br -- python3 -c "$PROBE"'
os.makedirs("evil/objects"); os.makedirs("evil/refs"); os.makedirs("evil/hooks")
open("evil/config", "w").write("[core]\n\tfsmonitor = \"touch '"$W"'/PWNED; false\"\n")
t("write", lambda: open(".git/commondir", "w").write("../evil\n"))
t("cfgwt", lambda: open(".git/config.worktree", "w").write("[core]\n\tfsmonitor = x\n"))
' 
eq "commondir: the command ran" "$RC" 0
eq "commondir: a missing .git/commondir can be written inside (no placeholder)" "$(st write)" 0
eq "config.worktree: a missing one can be written inside (no placeholder)" "$(st cfgwt)" 0
has "commondir: set aside at exit" "$ERR" "berth: warning: set aside \`$W/.git/commondir\` as \`commondir.berth-set-aside\`: "
has "config.worktree: set aside at exit" "$ERR" "berth: warning: set aside \`$W/.git/config.worktree\` as \`config.worktree.berth-set-aside\`: "
has "config.worktree: ... naming the key" "$(printf '%s\n' "$ERR" | grep -F "\`$W/.git/config.worktree\`")" core.fsmonitor
hgit status --short >/dev/null 2>&1
absent "commondir: the host's git status ran nothing of the sandbox's" "$W/PWNED"
absent "commondir: nothing left under the name on the host" "$W/.git/commondir"
absent "config.worktree: nothing left under the name on the host" "$W/.git/config.worktree"
# git works inside (commit, log, branch, gc).
sleep 0.1
br -- sh -c 'git -c user.name=a -c user.email=a@b.invalid commit -q --allow-empty -m inside && git branch b2 && git gc -q && git log --format=%s | head -1'
eq "commondir: git commit/branch/gc work inside" "$RC:$OUT" "0:inside"
eq "commondir: the sandbox's commit is on the host" "$(hgit log --format=%s -1)" inside

# A commondir the host has (any content) is kept read-only as it is.
W=$TOP/commondir2; newrepo "$W"; cd "$W" || exit 1
printf '.\n' >.git/commondir
br -- python3 -c "$PROBE"'
t("write", lambda: open(".git/commondir", "w").write("../evil\n"))'
eq "commondir: an existing one is read-only inside (EROFS)" "$(st write)" EROFS
eq "commondir: an existing one is kept after the run" "$(cat .git/commondir 2>&1)" "."

# config.worktree matters when the host's config turns worktreeConfig on.
W=$TOP/cfgwt; newrepo "$W"; cd "$W" || exit 1
hgit config extensions.worktreeConfig true
sleep 0.1
br -- sh -c 'printf "[core]\n\tfsmonitor = \"touch '"$W"'/PWNED; false\"\n" > .git/config.worktree; echo "w $?"' 
eq "config.worktree (worktreeConfig on): a missing one can be written inside" "$(st w)" 0
has "config.worktree (worktreeConfig on): ... and is set aside at exit" "$ERR" "berth: warning: set aside \`$W/.git/config.worktree\` as \`config.worktree.berth-set-aside\`: "
hgit status --short >/dev/null 2>&1
absent "config.worktree: the host's git status ran nothing of the sandbox's" "$W/PWNED"

# ------------------------------------------------------------ .git/worktrees
W=$TOP/wt; newrepo "$W"; cd "$W" || exit 1
hgit worktree add -q "$TOP/wt-outside" 2>/dev/null
id=$(basename "$(hgit -C "$TOP/wt-outside" rev-parse --git-dir)")
gitdir_before=$(cat ".git/worktrees/$id/gitdir" 2>&1)
br -- python3 -c "$PROBE"'
import subprocess
a = ".git/worktrees/'"$id"'"
os.makedirs("evil/objects"); os.makedirs("evil/refs")
open("evil/config", "w").write("[core]\n\tfsmonitor = \"touch '"$W"'/PWNED; false\"\n")
t("write", lambda: open(a + "/commondir", "w").write("/tmp/nowhere\n"))
t("rename", lambda: os.rename(a, ".git/worktrees/old"))
t("renameall", lambda: os.rename(".git/worktrees", ".git/wt2"))
t("unlink", lambda: os.unlink(a + "/gitdir"))
print("prune", subprocess.run(["git", "worktree", "prune"], capture_output=True).returncode)
print("add", subprocess.run(["git", "worktree", "add", "-q", "inner"], capture_output=True).returncode)
print("commit", subprocess.run(["git", "-C", "inner", "-c", "user.name=a", "-c", "user.email=a@b.invalid",
                                "commit", "-q", "--allow-empty", "-m", "in-wt"], capture_output=True).returncode)
'
eq "worktrees: the command ran" "$RC" 0
eq "worktrees: rewriting a host worktree's commondir fails with EROFS" "$(st write)" EROFS
eq "worktrees: renaming a host worktree's directory fails with EBUSY" "$(st rename)" EBUSY
eq "worktrees: renaming .git/worktrees fails with EBUSY" "$(st renameall)" EBUSY
eq "worktrees: deleting a host worktree's files fails with EROFS" "$(st unlink)" EROFS
eq "worktrees: git worktree add inside still works" "$(st add)" 0
eq "worktrees: git commit in the sandbox's own worktree works" "$(st commit)" 0
eq "worktrees: the host worktree's gitdir survived git worktree prune inside" \
	"$(cat ".git/worktrees/$id/gitdir" 2>&1)" "$gitdir_before"
hgit -C "$TOP/wt-outside" status --short >/dev/null 2>&1
eq "worktrees: the host's git works in its worktree" "$?" 0
absent "worktrees: the host's git status in its worktree ran nothing of the sandbox's" "$W/PWNED"
# A second run: the sandbox's own worktree is still usable.
br -- git -C inner -c user.name=a -c user.email=a@b.invalid commit -q --allow-empty -m again
eq "worktrees: the sandbox's own worktree works in the next run" "$RC" 0

# ------------------------------------------ repositories below the top
W=$TOP/nested; newrepo "$W"; cd "$W" || exit 1
mkdir -p old/deep && hgit -C old/deep init -q
sleep 0.1 # a change of the host's within the clock tick before the run counts as the sandbox's
br -- true
eq "nested: a run that changes nothing" "$RC" 0
hasnt "nested: ... warns about nothing" "$ERR" "git repository"
br -- sh -c '
mkdir x && cd x && git init -q && git config core.fsmonitor "touch '"$W"'/PWNED; false" && cd .. &&
git add x >/dev/null 2>&1
echo "#!/bin/sh" > old/deep/.git/hooks/post-checkout
mkdir -p a/b/c && ln -s ../../../x/.git a/b/c/.git'
eq "nested: the command ran" "$RC" 0
has "nested: a new nested repository is named" "$ERR" "warning: the sandbox made or changed the git repository \`$W/x/.git\`"
has "nested: an existing one whose hooks changed is named" "$ERR" "the git repository \`$W/old/deep/.git\`"
has "nested: a symlink named .git is set aside" "$ERR" "berth: warning: set aside \`$W/a/b/c/.git\` as \`.git.berth-set-aside\`: "
eq "nested: two repositories named" "$(printf '%s\n' "$ERR" | grep -c 'made or changed the git repository')" 2

# Hiding places: a directory the scan cannot open (chmod 000: root can,
# a user cannot), one deeper than the scan goes, a nested repository's own
# submodules.  Each is named, or the scan says it is incomplete.
W=$TOP/hide; newrepo "$W"; cd "$W" || exit 1
br -- sh -c 'mkdir -p h/x && git -C h/x init -q && chmod 000 h'
if [ "$(id -u)" -eq 0 ]; then
	has "hide: a repository in a chmod-000 directory is named (root)" "$ERR" "the git repository \`$W/h/x/.git\`"
else
	has "hide: a chmod-000 directory makes the scan say it is incomplete" "$ERR" "berth: warning: berth could not look into every directory of \`$W\`"
fi
chmod 755 h
# ... but a directory that was unreadable before the run (the sandbox could
# not write into it either) does not make every run warn.
mkdir -p locked/in && chmod 000 locked
sleep 0.1
br -- true
hasnt "hide: an unreadable directory from before the run: no warning" "$ERR" "could not look into every directory"
chmod 755 locked
W=$TOP/deep; newrepo "$W"; cd "$W" || exit 1
br -- sh -c 'd=.; for i in $(seq 1 70); do d=$d/d; done; mkdir -p $d/.git'
has "deep: a repository 70 levels down makes the scan say it is incomplete" "$ERR" "berth: warning: berth could not look into every directory of \`$W\`"
W=$TOP/nestmod; newrepo "$W"; cd "$W" || exit 1
mkdir -p n && hgit -C n init -q && mkdir -p n/.git/modules/s && : >n/.git/modules/s/config
sleep 0.1
br -- sh -c 'printf "[core]\n\tfsmonitor = x\n" > n/.git/modules/s/config'
has "nested submodule: a changed n/.git/modules/s/config is named" "$ERR" "the git repository \`$W/n/.git/modules/s\`"
hasnt "nested submodule: the scan was complete" "$ERR" "could not look into every directory"

# A submodule: its git directory is .git/modules/NAME, its pointer sub/.git.
S=$TOP/subsrc; newrepo "$S"
W=$TOP/super; newrepo "$W"; cd "$W" || exit 1
hgit -c protocol.file.allow=always submodule -q add "$S" sub >/dev/null 2>&1
hgit "${GC[@]}" commit -qm sub
sleep 0.1
br -- true
hasnt "submodule: a run that changes nothing warns about nothing" "$ERR" "git repository"
br -- git -C sub config core.fsmonitor "touch $W/PWNED; false"
eq "submodule: .git/modules/sub/config is read-only inside (git config exits 4)" "$RC" 4
has "submodule: ... the rename onto it is refused" "$ERR" "could not write config file /workspace/.git/modules/sub/config: Device or resource busy"
eq "submodule: the host's submodule config has no core.fsmonitor" "$(hgit -C sub config core.fsmonitor)" ""
hasnt "submodule: nothing named (nothing changed)" "$ERR" "git repository"

# -------------------------------------------------- --ro/--rw targets (CLI)
W=$TOP/targets; mkdir "$W"; cd "$W" || exit 1
long=/$(printf 'd/%.0s' $(seq 1 600))x
br --ro "$TOP/cap:$long" -- true
eq "target: a 1202-byte --ro target is a usage error (exit 2)" "$RC" 2
has "target: ... named, with its length" "$ERR" "berth: mount target \`/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d...\` is too long (1202 bytes)"
name=/$(printf 'n%.0s' $(seq 1 256))
br --rw "$TOP/cap:$name" --yes -- true
eq "target: a name over NAME_MAX in a --rw target is a usage error (exit 2)" "$RC" 2
has "target: ... named" "$ERR" "is too long (257 bytes)"
br --ro "$TOP/cap:/data"$'\n'"x" -- true
eq "target: a newline in a --ro target is a usage error (exit 2)" "$RC" 2
has "target: ... named up to the control character" "$ERR" "berth: mount target \`/data\` is followed by the control character 0x0a"
br --ro "$TD:/data" --ro "/usr:/data" -- true
eq "target: the same target twice is a usage error (exit 2)" "$RC" 2
has "target: ... named" "$ERR" "berth: mount target \`/data\` is given twice"
br --memory 1K -- true
eq "limits: --memory 1K is a usage error (exit 2; was a SIGSEGV or 'died during setup')" "$RC" 2
has "limits: ... named" "$ERR" "berth: invalid --memory \`1K\`: too small for a sandbox to start, expected 16M to 1024T"
br --memory 16M -- true
if [ "$(id -u)" != 0 ] && [ "$RC" = 2 ] && [[ $ERR == *"--memory \`16M\` cannot be enforced"* ]]; then
	pass "limits: --memory 16M refused without a cgroup (exit 2; no RLIMIT_AS, run-limits.sh)"
else eq "limits: --memory 16M runs" "$RC" 0; fi
br --pids 1 -- true
eq "limits: --pids 1 is a usage error (exit 2; was 125 'cannot fork')" "$RC" 2
has "limits: ... named" "$ERR" "berth: invalid --pids \`1\`"
br --pids 2 -- true
eq "limits: --pids 2 runs" "$RC" 0
br --ro "$TOP/cap:/$(printf 'n%.0s' $(seq 1 255))" -- sh -c 'ls / | grep -c nnnn'
eq "target: a 255-byte name still works" "$RC:$OUT" "0:1"
eq "target: nothing left in the workspace" "$(ls -A)" ""

# ------------------------------------------------- the command's environment
W=$TOP/env; mkdir "$W"; cd "$W" || exit 1
v5k=$(head -c 5000 /dev/zero | tr '\0' x)
br --env "BIG=$v5k" -- sh -c 'echo ${#BIG}'
eq "env: a 5000-byte value arrives whole" "$RC:$OUT" "0:5000"
printf 'FROMFILE=%s\n' "$(head -c 60000 /dev/zero | tr '\0' y)" >"$TD/big.env"
br --env-file "$TD/big.env" -- sh -c 'echo ${#FROMFILE}'
eq "env: a 60000-byte --env-file value arrives whole" "$RC:$OUT" "0:60000"
# A known environment: the fixed variables are then PATH HOME USER LOGNAME LC_ALL.
bre() { env -i PATH="$PATH" HOME="$HOME" LC_ALL=C "$BERTH" run "$@" </dev/null >"$TD/out" 2>"$TD/err"; RC=$?; OUT=$(cat "$TD/out"); ERR=$(cat "$TD/err"); }
many=(); for i in $(seq 1 250); do many+=(--env "V$i=$i"); done
bre "${many[@]}" -- sh -c 'env | grep -c "^V[0-9]"'
eq "env: 250 --env variables (255 with the fixed five) all arrive" "$RC:$OUT" "0:250"
bre "${many[@]}" --env V251=251 -- sh -c 'echo RAN'
eq "env: one more than fits is a usage error (exit 2), nothing ran" "$RC:$OUT" "2:"
has "env: ... naming the variable" "$ERR" "berth: too many environment variables for the command: \`V251\` is one more than the 255 berth passes"
bre "${many[@]}" --allow-host example.invalid -- sh -c 'echo RAN'
eq "env: the egress broker's 8 *_PROXY count too (exit 2)" "$RC:$OUT" "2:"
has "env: ... and the hint says so" "$ERR" "and 8 for the egress broker's *_PROXY"
eq "env: nothing left in the workspace" "$(ls -A)" ""

# ---------------------------------------------- shared directories as workspace
# `cd /tmp && berth run -- cmd`: /tmp holds other programs' sockets (tmux:
# send-keys into a shell; ssh-agent; X11); Landlock does not govern
# connect(2), and for root the idmapped workspace made root's 0700 sockets the
# sandbox's own.  A sticky world-writable directory, or one holding a runtime
# directory, is refused as workspace and as --ro/--rw source.
SH=$TOP/shared; mkdir -m 1777 "$SH"
mkdir -m 700 "$SH/tmux-x"
"$HOSTPY" -c 'import socket,sys,time; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(4); time.sleep(60)' "$SH/tmux-x/default" &
lpid=$!
for _ in $(seq 50); do [ -S "$SH/tmux-x/default" ] && break; sleep 0.1; done
cd "$SH" || exit 1
br -- python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect("/workspace/tmux-x/default"); print("CONNECTED")'
kill "$lpid" 2>/dev/null; wait "$lpid" 2>/dev/null
eq "shared: a sticky world-writable workspace is refused (exit 2), nothing ran" "$RC:$OUT" "2:"
has "shared: ... naming it" "$ERR" "berth: workspace \`.\` is a shared directory (sticky, world-writable)"
cd "$TOP" || exit 1
br --ro "$SH:/data" -- true
eq "shared: ... and as a --ro source (exit 2)" "$RC" 2
br --rw "$SH:/data" --yes -- true
eq "shared: ... and as a --rw source (exit 2)" "$RC" 2
mkdir -p "$TOP/rt/run"
XDG_RUNTIME_DIR=$TOP/rt/run br --workspace "$TOP/rt" -- true
eq "shared: a workspace holding \$XDG_RUNTIME_DIR is refused (exit 2)" "$RC" 2
has "shared: ... naming it" "$ERR" "would expose \`$TOP/rt/run\`, which holds the sockets of running programs"
# (berth spawn with no option for berth run of its own crashed here: 139)
XDG_RUNTIME_DIR=$TOP/rt/run "$BERTH" spawn shell --name expose1 --workspace "$TOP/rt" -- -c true \
	</dev/null >"$TD/out" 2>"$TD/err"
eq "shared: berth spawn --workspace holding \$XDG_RUNTIME_DIR is refused too (exit 2)" "$?" 2
eq "shared: ... naming it, and nothing else" "$(cat "$TD/err")" "berth: workspace \`$TOP/rt\` would expose \`$TOP/rt/run\`, which holds the sockets of running programs
berth: hint: name a project directory instead"
br --ro /run:/data -- true
eq "shared: --ro /run is refused (exit 2)" "$RC" 2
mkdir -m 755 "$SH/proj"
br --workspace "$SH/proj" -- true
eq "shared: a directory of its own inside a shared one is fine" "$RC" 0
HOSTPY=/usr/bin/python3

# A --rw path given through a symlink (outside the workspace): the widening
# names the directory the sandbox really gets.
W=$TOP/rwlink; mkdir -p "$W" "$TOP/rwreal"; cd "$W" || exit 1
ln -s "$TOP/rwreal" "$TOP/rwl"
br --rw ../rwl:/data --yes -- true
eq "rw link: the run goes on (exit 0)" "$RC" 0
has "rw link: the widening names the real directory" "$ERR" "berth: widening: --rw ../rwl:/data: the sandbox can change and delete these host files, in \`$TOP/rwreal\`"

# A --ro/--rw source named through the workspace that a link there leads out
# of (a sandbox made `vendor -> <a secret directory>`; the caller later
# passes --ro ./vendor): refused, naming where it leads.
W=$TOP/rolink; mkdir -p "$W/inside" "$TOP/secretdir"; cd "$W" || exit 1
echo s3cret >"$TOP/secretdir/key"
br -- ln -s "$TOP/secretdir" vendor
br --ro ./vendor:/vendor -- cat /vendor/key
eq "ro link: a --ro source leading out of the workspace through a link is refused (exit 2)" "$RC:$OUT" "2:"
has "ro link: ... naming where it leads" "$ERR" "berth: --ro source \`./vendor\` leads out of the workspace, through a symbolic link, to \`$TOP/secretdir\`"
br --rw "$W/vendor:/vendor" --yes -- true
eq "ro link: ... also for --rw given absolute (exit 2)" "$RC" 2
ln -s "$W/inside" inlink
br --ro ./inlink:/in -- true
eq "ro link: a link that stays in the workspace is fine" "$RC" 0
br --ro "$TOP/secretdir:/vendor" -- cat /vendor/key
eq "ro link: naming the directory itself works" "$RC:$OUT" "0:s3cret"

# ------------------------------------------------------------- pseudo-terminals
# The kernel's pty count is shared by every devpts instance but the host's: one
# sandbox took all of them (3070 here), and no other sandbox could get a pty.
W=$TOP/pty; mkdir -p "$W"; cd "$W" || exit 1
br -- python3 -c '
import os
fds = []
try:
    while len(fds) < 5000:
        fds.append(os.open("/dev/ptmx", os.O_RDWR | os.O_NOCTTY))
except OSError as e:
    print(len(fds), e.errno)'
eq "pty: a sandbox opens at most 128 ptys, then ENOSPC (28)" "$RC:$OUT" "0:128 28"

# --------------------------------------- unix sockets in a source (class 5)
# A --ro/--rw source or workspace that holds a unix socket (docker's,
# podman's, the session bus) gave the sandbox a connect() Landlock does not
# govern: the sandbox connected to it (exit 0), and nothing said so.  A
# source the person named (--ro, --rw) may share one on purpose (the MCP
# bridge to `berth dev`): it is a widening berth names (and asks to confirm
# at a terminal); the workspace (maybe just the current directory) is
# refused.  A listener writes a canary when anything connects.
W=$TOP/sock; mkdir -p "$W/ws" "$W/src/a/b"; cd "$W/ws" || exit 1
"$HOSTPY" -c '
import os, socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8)
open(sys.argv[3], "w").close()
s.settimeout(30)
try:
    c, _ = s.accept(); open(sys.argv[2], "w").write("connected\n")
except OSError:
    pass' "$W/src/a/b/docker.sock" "$TD/sock-canary" "$TD/sock-ready" &
SRV=$!
for _ in $(seq 100); do [ -e "$TD/sock-ready" ] && break; sleep 0.05; done
CONN='import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print("connected")'
br --yes --ro "$W/src:/data" -- true
eq "socket: a --ro source holding a live socket runs as a widening (exit 0)" "$RC" 0
has "socket: ... named as a widening, with the socket" "$ERR" "berth: widening: --ro $W/src:/data: the sandbox can connect to the unix socket \`$W/src/a/b/docker.sock\` below it"
br --yes --rw "$W/src/a:/data" -- true
has "socket: a --rw source holding it: named too" "$ERR" "berth: widening: --rw $W/src/a:/data: the sandbox can connect to the unix socket \`$W/src/a/b/docker.sock\`"
br --yes --ro "$W/src/a/b/docker.sock:/d.sock" -- true
has "socket: the socket itself as a --ro source: named" "$ERR" "can connect to the unix socket \`$W/src/a/b/docker.sock\`"
br --yes --ro "$W/ws:/data" -- true
hasnt "socket: a source without one is no such widening" "$ERR" "unix socket"
cd "$W/src" || exit 1
br --yes -- "$HOSTPY" -c "$CONN" /workspace/a/b/docker.sock
eq "socket: a workspace holding a live socket is refused (exit 2)" "$RC" 2
has "socket: ... naming it" "$ERR" "berth: workspace \`.\` holds the live unix socket \`$W/src/a/b/docker.sock\`"
has "socket: ... and how to proceed" "$ERR" "berth: hint: name a workspace that does not hold it"
absent "socket: nothing connected to the socket" "$TD/sock-canary"
kill "$SRV" 2>/dev/null; wait "$SRV" 2>/dev/null
# The socket file of a program in another network namespace is not in this
# one's /proc/net/unix (nor is a stale one): the walk of the source finds it.
"$HOSTPY" -c 'import socket, sys
socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$W/src/a/b/other.sock"
rm -f "$W/src/a/b/docker.sock"
cd "$W/ws" || exit 1
cd "$W/src" || exit 1
br --yes -- true
eq "socket: a workspace with a socket file no listener here holds is refused too (exit 2)" "$RC" 2
has "socket: ... naming it" "$ERR" "holds the unix socket \`$W/src/a/b/other.sock\`"
cd "$W/ws" || exit 1
rm -f "$W/src/a/b/other.sock"; ln -s /run/dbus/system_bus_socket "$W/src/a/bus"
br --yes --ro "$W/src:/data" -- true
eq "socket: a source without sockets (a symlink to one is not followed) still runs" "$RC" 0
hasnt "socket: ... with no socket widening" "$ERR" "unix socket"
# A socket below the walk's depth, bound through a symbolic link (as
# /var/run/x is /run/x): /proc/net/unix names it by the link, so only its
# resolved path shows that it is in the source.
deep=$W/deep; for i in $(seq 1 18); do deep=$deep/a; done; mkdir -p "$deep"
ln -s "$W/deep" "$W/deeplink"
bound=${deep/#$W\/deep/$W/deeplink}/bus.sock
rm -f "$TD/sock-ready"
"$HOSTPY" -c '
import os, socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8)
open(sys.argv[3], "w").close()
s.settimeout(30)
try:
    c, _ = s.accept(); open(sys.argv[2], "w").write("connected\n")
except OSError:
    pass' "$bound" "$TD/sock-canary2" "$TD/sock-ready" &
SRV=$!
for _ in $(seq 100); do [ -e "$TD/sock-ready" ] && break; sleep 0.05; done
cd "$W/deep" || exit 1
br --yes -- "$HOSTPY" -c "$CONN" "/workspace${deep#$W/deep}/bus.sock"
eq "socket: a workspace with a deep socket bound through a link is refused (exit 2)" "$RC" 2
has "socket: ... naming it by its resolved path" "$ERR" "holds the live unix socket \`$deep/bus.sock\`"
cd "$W/ws" || exit 1
absent "socket: ... and nothing connected to it" "$TD/sock-canary2"
kill "$SRV" 2>/dev/null; wait "$SRV" 2>/dev/null
rm -rf "$W/deep" "$W/deeplink"
# A concurrent run leaves no socket inode in the workspace (the guard's
# placeholders were mode-0000 sockets; guard v2 makes none on the host): a
# second run there still starts.
mkdir -p "$W/conc"; cd "$W/conc" || exit 1
"$BERTH" run -- sleep 4.$$ </dev/null >/dev/null 2>&1 &
FIRST=$!
for _ in $(seq 100); do pgrep -f "^sleep 4\.$$\$" >/dev/null && break; sleep 0.05; done
if pgrep -f "^sleep 4\.$$\$" >/dev/null; then pass "socket: precondition: the first run is in progress"
else fail "socket: precondition: the first run is in progress" "no sleep 4.$$"; fi
eq "socket: no socket inode in the workspace during the run" "$(find "$W/conc" -type s -printf '%P\n')" ""
br -- true
eq "socket: a second run beside a running one still runs (exit 0)" "$RC" 0
spid=$(pgrep -f "^sleep 4\.$$\$" | head -n 1)
[ -n "$spid" ] && kill "$spid"
wait "$FIRST"

# ------------------------------- a system directory as root's workspace
# Run as root, the workspace is idmapped: its owner's (root's) files are the
# sandbox's own.  `cd /etc && berth run` let the sandbox rewrite /etc with no
# widening named.  Now it is one (non-interactive: named, then run); for a
# user, who cannot write there, it is not.
cd /usr || exit 1
br -- true
if [ "$(id -u)" = 0 ]; then
	eq "sysdir: root's workspace /usr runs after the widening (exit 0)" "$RC" 0
	has "sysdir: ... which names it" "$ERR" "berth: widening: workspace \`/usr\`: a system directory (under /usr)"
	cd /etc/default 2>/dev/null || cd /etc || exit 1
	br -- true
	has "sysdir: a directory below /etc is one too" "$ERR" "berth: widening: workspace \`$PWD\`: a system directory (under /etc)"
else
	hasnt "sysdir: a user's workspace /usr is no widening (the user cannot write there)" "$ERR" "widening"
fi
cd "$TOP" || exit 1
br -- true
hasnt "sysdir: an ordinary workspace names no widening" "$ERR" "widening"
# `berth spawn --workspace /etc` and a fleet agent's `workspace: /etc` ran
# as root with no widening named.  Now they name it, and are confirmed as
# `berth run`'s are: asked at a terminal, refused without --yes in a fleet.
W=$TOP/sysws; mkdir -p "$W/run" "$W/state" "$W/config/berth/profiles"; chmod 700 "$W/run"
printf '%s\n' "agent: shell" "command: [sleep, '30']" "prompt: none" "network: none" >"$W/config/berth/profiles/idle.yml"
SY=(env XDG_RUNTIME_DIR="$W/run" XDG_STATE_HOME="$W/state" XDG_CONFIG_HOME="$W/config")
sysnames() { "${SY[@]}" "$BERTH" ps --json | "$HOSTPY" -c 'import json,sys; print(sorted(r["name"] for r in json.load(sys.stdin)))'; }
printf 'agents:\n  - name: sys1\n    profile: idle\n    workspace: /etc\n' >"$W/fleet.yml"
if [ "$(id -u)" = 0 ]; then
	"${SY[@]}" "$HOSTPY" - "$BERTH" >"$TD/out" 2>"$TD/err" <<'PY'
import os, pty, select, sys
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], ["berth", "spawn", "idle", "--name", "sys0", "--workspace", "/etc"])
buf = b""
while b"[y/N]" not in buf:
    r, _, _ = select.select([fd], [], [], 20)
    if not r:
        break
    try:
        d = os.read(fd, 4096)
    except OSError:
        break
    if not d:
        break
    buf += d
os.write(fd, b"n\n")
while True:
    try:
        d = os.read(fd, 4096)
    except OSError:
        break
    if not d:
        break
    buf += d
_, st = os.waitpid(pid, 0)
sys.stdout.write(buf.decode(errors="replace"))
print("exit", os.waitstatus_to_exitcode(st))
PY
	OUT=$(cat "$TD/out")
	has "sysdir: root's spawn --workspace /etc names the widening" "$OUT" "berth: widening: workspace \`/etc\`: a system directory (under /etc)"
	has "sysdir: ... asks, and answered no starts nothing (exit 125)" "$OUT" "berth: not confirmed; nothing was started"
	has "sysdir: ... exit 125" "$OUT" "exit 125"
	"${SY[@]}" "$BERTH" fleet up "$W/fleet.yml" </dev/null >"$TD/out" 2>"$TD/err"; RC=$?; ERR=$(cat "$TD/err")
	eq "sysdir: a fleet agent with workspace /etc is refused without --yes (exit 2)" "$RC" 2
	has "sysdir: ... naming the widening" "$ERR" "berth: sys1: widening: workspace \`/etc\`: a system directory (under /etc)"
	eq "sysdir: ... and no session was made" "$(sysnames)" "[]"
	"${SY[@]}" "$BERTH" stop --all --grace 0 >/dev/null 2>&1 # (a session made in spite of it: not left running)
else
	"${SY[@]}" "$BERTH" fleet up "$W/fleet.yml" </dev/null >"$TD/out" 2>"$TD/err"; ERR=$(cat "$TD/err")
	hasnt "sysdir: a user's fleet agent with workspace /etc names no widening" "$ERR" "widening"
	"${SY[@]}" "$BERTH" stop --all --grace 0 >/dev/null 2>&1
fi

# ------------------ the audit log, the host key, berth itself: not in reach
# The audit directory berth creates on its first run, below a symbolic link
# into the workspace (XDG_STATE_HOME=~/st/sub, ~/st -> the workspace): the
# check compared the name as written (realpath failed: it did not exist), so
# the run started and berth made its audit log inside the workspace, where
# the sandbox could rewrite it.  Now the longest existing prefix is resolved.
W=$TOP/expo; mkdir -p "$W/ws/real" "$W/home"; cd "$W/ws" || exit 1
ln -s "$W/ws/real" "$W/home/st"
benv() { env "$@" "$BERTH" run -- true </dev/null >"$TD/out" 2>"$TD/err"; RC=$?; ERR=$(cat "$TD/err"); }
benv XDG_STATE_HOME="$W/home/st/sub"
eq "expo: an audit dir to be made below a link into the workspace is refused (exit 2)" "$RC" 2
has "expo: ... naming where it would be" "$ERR" "berth: --workspace \`$W/ws\` would give the sandbox the audit log (\`$W/ws/real/sub/berth/audit\`)"
absent "expo: ... and no audit log was made in the workspace" "$W/ws/real/sub"
benv XDG_STATE_HOME="$W/home/st/x/../sub"
eq "expo: ... also with .. in the part that does not exist (exit 2)" "$RC" 2
# a dangling link: where mkdir would go once the sandbox makes its target
ln -s "$W/ws/keys" "$W/home/cfg"
benv XDG_CONFIG_HOME="$W/home/cfg"
eq "expo: a host key dir behind a dangling link into the workspace is refused (exit 2)" "$RC" 2
has "expo: ... naming it" "$ERR" "would give the sandbox berth's host key (\`$W/ws/keys/berth/keys\`)"
absent "expo: ... and no key was made there" "$W/ws/keys"
benv XDG_STATE_HOME="$W/home/fresh/state" XDG_CONFIG_HOME="$W/home/fresh/config"
eq "expo: fresh audit and key dirs outside the workspace still run (exit 0)" "$RC" 0
# berth's own executable in the workspace or a --rw source: the sandbox
# replaced it (unlink, then write: the running file is only busy), and the
# host ran the sandbox's berth next (exit 0 before).
mkdir -p "$W/ws/bin" "$W/ro"; cp "$BERTH" "$W/ws/bin/berth"; SUM=$(cksum <"$W/ws/bin/berth")
env XDG_STATE_HOME="$W/home/fresh/state" XDG_CONFIG_HOME="$W/home/fresh/config" "$W/ws/bin/berth" run -- \
	sh -c 'rm -f /workspace/bin/berth && echo "#!/bin/sh" > /workspace/bin/berth' </dev/null >"$TD/out" 2>"$TD/err"; RC=$?; ERR=$(cat "$TD/err")
eq "expo: a workspace holding berth's executable is refused (exit 2)" "$RC" 2
has "expo: ... naming it" "$ERR" "berth: --workspace \`$W/ws\` would let the sandbox replace berth's own executable (\`$W/ws/bin/berth\`)"
eq "expo: ... and the executable is unchanged" "$(cksum <"$W/ws/bin/berth")" "$SUM"
cd "$W/ro" || exit 1
env XDG_STATE_HOME="$W/home/fresh/state" XDG_CONFIG_HOME="$W/home/fresh/config" "$W/ws/bin/berth" run --yes \
	--rw "$W/ws/bin:/b" -- true </dev/null >"$TD/out" 2>"$TD/err"; RC=$?; ERR=$(cat "$TD/err")
eq "expo: a --rw source holding it is refused (exit 2)" "$RC" 2
has "expo: ... naming it" "$ERR" "berth: --rw \`$W/ws/bin\` would let the sandbox replace berth's own executable"
env XDG_STATE_HOME="$W/home/fresh/state" XDG_CONFIG_HOME="$W/home/fresh/config" "$W/ws/bin/berth" run \
	--ro "$W/ws/bin:/b" -- true </dev/null >"$TD/out" 2>"$TD/err"; RC=$?
eq "expo: a --ro source holding it still runs (exit 0)" "$RC" 0

# ------------------------------ --evidence through a link in the workspace
# A sandbox leaves report.txt -> the caller's private key; the caller later
# runs `berth run --evidence ./report.txt`: berth copied the key into
# /evidence (exit 0, the secret printed).  --ro/--rw had this check already.
W=$TOP/evd; mkdir -p "$W/ws" "$W/priv"; cd "$W/ws" || exit 1
esecret="berth-key-$(head -c 6 /dev/urandom | od -An -tx1 | tr -d ' \n')"
printf '%s\n' "$esecret" >"$W/priv/id_key"
ln -s "$W/priv/id_key" "$W/ws/report.txt"
br --evidence ./report.txt -- sh -c 'cat /evidence/*'
eq "evidence: a --evidence that leads out of the workspace through a link is refused (exit 2)" "$RC" 2
has "evidence: ... naming where it leads" "$ERR" "berth: --evidence \`$W/ws/report.txt\` leads out of the workspace, through a symbolic link, to \`$W/priv/id_key\`"
hasnt "evidence: ... and nothing of the file reached the sandbox" "$OUT$ERR" "$esecret"
br --evidence "$W/priv/id_key" -- sh -c 'cat /evidence/id_key'
eq "evidence: the file named directly is still copied (exit 0)" "$RC:$OUT" "0:$esecret"

# --------------------- --evidence below a directory swapped for a link before the copy
# berth checked each --evidence last, then opened its parent directory by
# name to copy it: a component of that path swapped for a symbolic link in
# between (the test-only pause BERTH_TEST_PAUSE_BEFORE_EVIDENCE holds berth
# there) made berth copy the link target's file of that name into /evidence.
# Now every component is opened with no link followed: refused (exit 2).
W=$TOP/evrace; mkdir -p "$W/ws" "$W/a/b" "$W/canary/b" "$W/hook"; cd "$W/ws" || exit 1
esecret2="berth-evrace-$(head -c 6 /dev/urandom | od -An -tx1 | tr -d ' \n')"
echo public >"$W/a/b/report.txt"; printf '%s\n' "$esecret2" >"$W/canary/b/report.txt"
cp "$W/canary/b/report.txt" "$W/canary/report.txt"
PAUSEVAR=BERTH_TEST_PAUSE_BEFORE_EVIDENCE
for victim in "$W/a/b" "$W/a"; do
	racecmd "$victim" "$BERTH" run --evidence "$W/a/b/report.txt" -- cat /evidence/report.txt
	eq "evidence race: \`${victim#$W/}\` swapped for a link before the copy is refused (exit 2)" "$RC" 2
	has "evidence race: ... naming it" "$ERR" "cannot read evidence \`$W/a/b/report.txt\`: a directory on its path is now a symbolic link"
	hasnt "evidence race: ... and the link target's file was not copied" "$OUT$ERR" "$esecret2"
done
PAUSEVAR=
br --evidence "$W/a/b/report.txt" -- cat /evidence/report.txt
eq "evidence race: untouched, it is copied (exit 0)" "$RC:$OUT" "0:public"

# ---------------------------------------- a fleet file that is a symlink
# A sandbox leaves fleet.yml -> a host secret in the repository; the caller
# runs `berth fleet up fleet.yml`: berth read it and quoted its first key.
W=$TOP/fleet; mkdir -p "$W/ws/sub" "$W/priv"; cd "$W/ws" || exit 1
fsecret="berth-fleet-$(head -c 6 /dev/urandom | od -An -tx1 | tr -d ' \n')"
printf '%s: x\n' "$fsecret" >"$W/priv/key"
ln -s "$W/priv/key" "$W/ws/fleet.yml"
"$BERTH" fleet up fleet.yml </dev/null >"$TD/out" 2>"$TD/err"; RC=$?; ERR=$(cat "$TD/err")
eq "fleet: a symlinked fleet file is refused (exit 2)" "$RC" 2
has "fleet: ... naming it" "$ERR" "berth: the fleet file \`fleet.yml\` is, or is reached through, a symbolic link (to \`$W/priv/key\`)"
hasnt "fleet: ... without quoting the file it points to" "$ERR" "$fsecret"
rm "$W/ws/fleet.yml"; ln -s "$W/priv" "$W/ws/sub/d"
"$BERTH" fleet up sub/d/key </dev/null >"$TD/out" 2>"$TD/err"; RC=$?; ERR=$(cat "$TD/err")
eq "fleet: a fleet file below a symlinked directory is refused (exit 2)" "$RC" 2
hasnt "fleet: ... without quoting it" "$ERR" "$fsecret"
printf 'agents:\n  - bogus: 1\n' >"$W/ws/fleet.yml"
"$BERTH" fleet up ./fleet.yml </dev/null >"$TD/out" 2>"$TD/err"; RC=$?; ERR=$(cat "$TD/err")
eq "fleet: a regular fleet file is still read (exit 2, its own error)" "$RC" 2
has "fleet: ... with its message" "$ERR" "./fleet.yml:2:5: unknown key \`bogus\`"

# --------------------------------------------- more widenings than named
# berth keeps 31 widening lines; a 32nd --rw was in force but never named
# nor confirmed (33 --rw: 31 lines, and /m33 written, exit 0).
W=$TOP/wid; mkdir -p "$W/ws"; cd "$W/ws" || exit 1
wargs=()
for i in $(seq 1 33); do mkdir -p "$W/d$i"; wargs+=(--rw "$W/d$i:/m$i"); done
br "${wargs[@]}" -- sh -c 'echo x > /m33/f'
eq "widenings: more than 31 are refused (exit 2)" "$RC" 2
has "widenings: ... saying why" "$ERR" "berth: more than 31 widenings: berth names and confirms each one"
absent "widenings: ... and the unnamed one was not written" "$W/d33/f"
br "${wargs[@]:0:62}" -- sh -c 'echo x > /m31/f'
eq "widenings: 31 still run (exit 0)" "$RC" 0
eq "widenings: ... each one named" "$(printf '%s\n' "$ERR" | grep -c '^berth: widening: --rw')" 31

# ------------------------- a source swapped for a link after berth checked it
# berth resolves --ro/--rw sources when it parses them and mounted them by
# name later: swapped for a symbolic link in between (here while berth
# waits at the widening prompt; a sandbox racing in the same workspace can
# do it too), the sandbox got the link's target (it printed the secret).
W=$TOP/toc; mkdir -p "$W/ws/vendor" "$W/secret" "$W/rwd"; cd "$W/ws" || exit 1
tsecret="berth-toc-$(head -c 6 /dev/urandom | od -An -tx1 | tr -d ' \n')"
printf '%s\n' "$tsecret" >"$W/secret/key"; echo public >"$W/ws/vendor/readme"
"$HOSTPY" - "$BERTH" "$W" >"$TD/out" 2>"$TD/err" <<'PY'
import os, pty, select, sys
berth, w = sys.argv[1], sys.argv[2]
pid, fd = pty.fork()
if pid == 0:
    os.execv(berth, ["berth", "run", "--ro", w + "/ws/vendor:/v", "--rw", w + "/rwd:/r", "--", "sh", "-c", "cat /v/*"])
buf = b""
while b"[y/N]" not in buf:
    r, _, _ = select.select([fd], [], [], 20)
    if not r:
        break
    buf += os.read(fd, 4096)
os.rename(w + "/ws/vendor", w + "/ws/vendor.old")
os.symlink(w + "/secret", w + "/ws/vendor")
os.write(fd, b"y\n")
out = b""
while True:
    try:
        d = os.read(fd, 4096)
    except OSError:
        break
    if not d:
        break
    out += d
_, st = os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors="replace"))
print("exit", os.waitstatus_to_exitcode(st))
PY
OUT=$(cat "$TD/out")
has "toctou: a --ro source swapped for a link at the prompt is refused (exit 2)" "$OUT" "exit 2"
has "toctou: ... naming what it became" "$OUT" "the --ro source \`$W/ws/vendor\` changed after berth checked it: \`$W/ws/vendor\` is now a symbolic link to \`$W/secret\`"
hasnt "toctou: ... and the sandbox did not read the link's target" "$OUT" "$tsecret"

# ---------------- a source swapped for a link after berth's last check, before the mount
# berth checked each source (and the workspace) last, then the child bound it
# by name: swapped for a symbolic link in that window (the test-only pause
# BERTH_TEST_PAUSE_BEFORE_MOUNT holds berth there; a sandbox racing in the same
# workspace has the same window), the sandbox got the link's target.  Now
# berth opens each source once, without following links, and mounts from that.
W=$TOP/race; mkdir -p "$W/ws/vendor" "$W/canary" "$W/rwd" "$W/wsx" "$W/hook"; cd "$W/ws" || exit 1
rsecret="berth-race-$(head -c 6 /dev/urandom | od -An -tx1 | tr -d ' \n')"
printf '%s\n' "$rsecret" >"$W/canary/key"; echo public >"$W/ws/vendor/readme"; echo public >"$W/wsx/readme"
# Root's mounts are idmapped trees berth makes from the descriptors it opened:
# the sandbox gets what berth checked (the original, exit 0).  A user's are
# bound by the child, which finds the name changed: refused (exit 2).
refused_or_original() { # DESC WANT-OUTPUT-AS-ROOT NAME-IN-MESSAGE
	if [ "$(id -u)" = 0 ]; then
		eq "race: $1: the sandbox got what berth checked (exit 0)" "$RC:$OUT" "0:$2"
	else
		eq "race: $1: refused (exit 2)" "$RC" 2
		has "race: ... naming it" "$ERR" "$3 changed after berth checked it: it is now, or is reached through, a symbolic link"
	fi
}
race "$W/ws/vendor" --ro "$W/ws/vendor:/v" -- sh -c 'cat /v/*'
refused_or_original "a --ro source swapped for a link before the mount" public "the --ro source \`$W/ws/vendor\`"
hasnt "race: ... and the sandbox did not read the link's target" "$OUT$ERR" "$rsecret"
race "$W/rwd" --yes --rw "$W/rwd:/r" -- sh -c 'cat /r/* 2>/dev/null; echo x > /r/written; echo done'
refused_or_original "a --rw source swapped the same way" done "the --rw source \`$W/rwd\`"
hasnt "race: ... the sandbox did not read the link's target" "$OUT$ERR" "$rsecret"
absent "race: ... nor write into it" "$W/canary/written"
rm -f "$W/rwd/written"
race "$W/wsx" --workspace "$W/wsx" -- sh -c 'cat /workspace/*; echo x > /workspace/written'
refused_or_original "a workspace swapped the same way" public "the workspace \`$W/wsx\`"
hasnt "race: ... the sandbox did not read the link's target" "$OUT$ERR" "$rsecret"
absent "race: ... nor write into it" "$W/canary/written"
rm -f "$W/hook/paused" "$W/hook/go"; touch "$W/hook/go"
BERTH_TEST_PAUSE_BEFORE_MOUNT=$W/hook "$BERTH" run --ro "$W/ws/vendor:/v" -- cat /v/readme </dev/null >"$TD/out" 2>"$TD/err"; RC=$?
eq "race: untouched, the same run reads its source (exit 0)" "$RC:$(cat "$TD/out")" "0:public"
# berth's descriptors of the sources are close-on-exec: the command holds
# only its stdio (and the directory python lists them with).
br --ro "$W/ws/vendor:/v" --yes --rw "$W/rwd:/r" -- "$HOSTPY" -c 'import os; print(sorted(os.listdir("/proc/self/fd")))'
eq "race: no descriptor of berth's reaches the command" "$RC:$OUT" "0:['0', '1', '2', '3']"
cd "$TOP" || exit 1

# ---------------- spawn and fleet: a source swapped between the check and the launch
# `berth spawn` and `berth fleet up` resolved the sources when they parsed
# them and did not look again when they launched (the person's confirmation,
# or the fleet's earlier agents, come between): a source swapped for a link
# there reached the session's sandbox.  Now each launch checks again, as
# `berth run` does, before anything is made.
W=$TOP/srace; mkdir -p "$W/ws/vendor" "$W/canary" "$W/ws2" "$W/hook" "$W/run" "$W/state" "$W/config/berth/profiles"
chmod 700 "$W/run"; cd "$W/ws2" || exit 1
printf '%s\n' "$rsecret" >"$W/canary/key"; echo public >"$W/ws/vendor/readme"
printf '%s\n' "agent: shell" "command: [sh, -c, 'cat /v/*; sleep 30']" "prompt: none" "network: none" \
	>"$W/config/berth/profiles/racer.yml"
SX=(env XDG_RUNTIME_DIR="$W/run" XDG_STATE_HOME="$W/state" XDG_CONFIG_HOME="$W/config")
sessions() { "${SX[@]}" "$BERTH" ps --json | "$HOSTPY" -c 'import json,sys; print(sorted(r["name"] for r in json.load(sys.stdin)))'; }
PAUSEVAR=BERTH_TEST_PAUSE_BEFORE_LAUNCH
racecmd "$W/ws/vendor" "${SX[@]}" "$BERTH" spawn racer --name rs1 --workspace "$W/ws2" --ro "$W/ws/vendor:/v"
eq "spawn race: a --ro source swapped for a link before the launch is refused (exit 2)" "$RC" 2
has "spawn race: ... naming what it became" "$ERR" "the --ro source \`$W/ws/vendor\` changed after berth checked it: \`$W/ws/vendor\` is now a symbolic link to \`$W/canary\`"
eq "spawn race: ... and no session was made" "$(sessions)" "[]"
hasnt "spawn race: ... nor its log kept the link's target" "$(cat "$W"/state/berth/sessions/*/output.log 2>/dev/null)" "$rsecret"
printf 'agents:\n  - name: rf1\n    profile: racer\n    workspace: %s\n    options: [--ro, "%s:/v"]\n' \
	"$W/ws2" "$W/ws/vendor" >"$W/fleet.yml"
racecmd "$W/ws/vendor" "${SX[@]}" "$BERTH" fleet up "$W/fleet.yml" --yes
eq "fleet race: the same in a fleet is refused (exit 2)" "$RC" 2
has "fleet race: ... naming what it became" "$ERR" "the --ro source \`$W/ws/vendor\` changed after berth checked it: \`$W/ws/vendor\` is now a symbolic link to \`$W/canary\`"
eq "fleet race: ... and no session was made" "$(sessions)" "[]"
rm -f "$W/hook/paused"; touch "$W/hook/go"
"${SX[@]}" BERTH_TEST_PAUSE_BEFORE_LAUNCH="$W/hook" "$BERTH" spawn racer --name rs2 --workspace "$W/ws2" \
	--ro "$W/ws/vendor:/v" </dev/null >"$TD/out" 2>"$TD/err"; RC=$?; ERR=$(cat "$TD/err")
eq "spawn race: untouched, the session starts (exit 0)" "$RC" 0
for _ in $(seq 50); do grep -q public "$W"/state/berth/sessions/rs2/output.log 2>/dev/null && break; sleep 0.1; done
has "spawn race: ... and reads its source" "$(cat "$W"/state/berth/sessions/rs2/output.log 2>/dev/null)" public
"${SX[@]}" "$BERTH" stop --all --grace 0 >/dev/null 2>&1
PAUSEVAR=
cd "$TOP" || exit 1

# ------------------------------------- a project rules file that is a symlink
# A sandbox plants sub/.berth/rules.yml -> a secret file; the caller later
# runs berth from sub/.  berth quoted the secret's first line in its error.
W=$TOP/rules; mkdir -p "$W/sub/.berth" "$W/ok/.berth"; cd "$W" || exit 1
secret="berth-secret-$(head -c 6 /dev/urandom | od -An -tx1 | tr -d ' \n')"
printf '%s: x\n' "$secret" >"$TD/secret"
ln -s "$TD/secret" "$W/sub/.berth/rules.yml"
cd "$W/sub" || exit 1
br -- true
eq "rules: a symlinked project rules file is refused (exit 2)" "$RC" 2
has "rules: ... naming it" "$ERR" "berth: the rules file \`$W/sub/.berth/rules.yml\` is, or is reached through, a symbolic link"
hasnt "rules: ... without quoting the file it points to" "$ERR" "$secret"
rm "$W/sub/.berth/rules.yml"; mkdir -p "$TD/rdir"; printf '%s: x\n' "$secret" >"$TD/rdir/rules.yml"
rmdir "$W/sub/.berth"; ln -s "$TD/rdir" "$W/sub/.berth"
br -- true
eq "rules: a project .berth that is a symlink is refused (exit 2)" "$RC" 2
hasnt "rules: ... without quoting the file it reaches" "$ERR" "$secret"
printf 'allow:\n  networks: [none]\n' >"$W/ok/.berth/rules.yml"
cd "$W/ok" || exit 1
br --network host --yes -- true
eq "rules: a regular project rules file still applies (exit 2)" "$RC" 2
has "rules: ... with its message" "$ERR" "refused by rules (.berth/rules.yml:2): networks does not allow host"

# ------------------------------------------ names the sandbox chose, in berth's messages
# Repositories under hostile names: an OSC title (with BEL), a clear-screen
# CSI, a raw C1 CSI (0x9b) and U+009B, a right-to-left override, and a
# newline that would forge a line of berth's.  berth names each one at exit;
# its stderr must hold none of those bytes (every control shown as \xHH).
W=$TOP/names; newrepo "$W"; cd "$W" || exit 1
br -- sh -c '
for n in "t\033]0;PWNED-TITLE\007" "c\033[2J" "r\233" "u\302\233" "b\342\200\256gpj.exe" "l
berth: forged line"; do
	d=$(printf "$n") && mkdir -- "$d" && git init -q -- "$d" || exit 9
done'
eq "names: the command ran" "$RC" 0
eq "names: six repositories named" "$(printf '%s\n' "$ERR" | grep -c 'made or changed the git repository')" 6
for b in '\033' '\007' '\233' '\302\233' '\342\200\256'; do
	if printf '%s' "$ERR" | LC_ALL=C grep -q "$(printf "$b")"; then
		fail "names: no raw $b in berth's stderr" "present" "stderr: $(printf '%s' "$ERR" | od -c | head -n 20)"
	else pass "names: no raw $b in berth's stderr"; fi
done
if printf '%s\n' "$ERR" | grep -q '^berth: forged line'; then fail "names: a newline in a name forges no line" "present" "stderr: $ERR"
else pass "names: a newline in a name forges no line"; fi
has "names: the title repository is named, escaped" "$ERR" "\`$W/t\\x1b]0;PWNED-TITLE\\x07/.git\`"
has "names: the override is shown as an escape" "$ERR" "\`$W/b\\u{202e}gpj.exe/.git\`"
has "names: the newline is shown as an escape" "$ERR" "\`$W/l\\x0aberth: forged line/.git\`"

# ---------------------------------------- what a session answers, in berth's messages
# `berth attach` printed the session's refusal line as it came: an answer
# holding ESC ] 0 ; title BEL set the person's window title (and a report
# request would have typed into their shell).  Now it goes through the filter.
W=$TOP/attach; mkdir -p "$W/run/berth/sessions/evil"; chmod -R 700 "$W/run"
"$HOSTPY" - "$W/run/berth/sessions/evil/ctl.sock" "$W/ready" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(1)
open(sys.argv[2], "w").close()
c, _ = s.accept(); c.recv(4096)
c.sendall(b'{"error":"\x1b]0;PWNED-TITLE\x07 \x1b]21t busy"}\n'); c.close()
PY
ASRV=$!
for _ in $(seq 100); do [ -e "$W/ready" ] && break; sleep 0.05; done
XDG_RUNTIME_DIR=$W/run "$HOSTPY" - "$BERTH" "$TD/err" <<'PY' >"$TD/out" 2>&1
import os, subprocess, sys
m, s = os.openpty()
with open(sys.argv[2], "wb") as err:
    r = subprocess.run([sys.argv[1], "attach", "evil"], stdin=s, stdout=s, stderr=err, timeout=20)
print("exit", r.returncode)
PY
wait "$ASRV" 2>/dev/null
RC=$(sed -n 's/^exit //p' "$TD/out"); ERR=$(cat "$TD/err")
eq "attach: a session's refusal is an error (exit 2)" "$RC" 2
has "attach: ... shown, escaped" "$ERR" "refused to attach: {\"error\":\"\x1b]0;PWNED-TITLE\x07 \x1b]21t busy\"}"
for b in '\033' '\007'; do
	if printf '%s' "$ERR" | LC_ALL=C grep -q "$(printf "$b")"; then
		fail "attach: no raw $b in berth's stderr" "present" "stderr: $(printf '%s' "$ERR" | od -c | head -n 10)"
	else pass "attach: no raw $b in berth's stderr"; fi
done

echo "1..$T"
[ "$FAILS" -eq 0 ] || { echo "# $FAILS of $T checks failed"; exit 1; }
exit 0
