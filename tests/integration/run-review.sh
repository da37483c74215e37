#!/usr/bin/env bash
# berth run --review, diff, apply, discard (docs/review.md): an agent-like
# script edits, creates, deletes, renames and chmods files, makes a link and a
# directory, writes a git hook and a huge file; the host's tree is
# byte-identical while the run lasts and after it; diff shows each change;
# apply lands exactly the chosen paths, byte-identical, with the right owners;
# a guarded path needs --include-guarded; a host edit during the run (and one
# after it) makes apply refuse that path, naming it; discard leaves the tree
# as it was; a full layer is ENOSPC inside and apply refuses it whole; the
# audit trail has review, applied and discarded; the attestation says the
# host's workspace was not modified by the run.
#
# usage: run-review.sh /path/to/berth   TAP output, a final count; exit 1 on
# any failure.  Runs as root (the workspace owned by another user: files land
# owned by it) or as any user.
set -u
export LC_ALL=C
unset BERTH_TEST_FORCE_OFF BERTH_AUDIT_DIR
[ $# -ge 1 ] || { echo "usage: $0 /path/to/berth" >&2; exit 2; }
BERTH=$(readlink -f -- "$1")
T=0 FAILS=0
pass() { T=$((T + 1)); echo "ok $T - $1"; }
fail() { T=$((T + 1)); FAILS=$((FAILS + 1)); echo "not ok $T - $1 # $2"; shift 2; local l; for l in "$@"; do printf '%s\n' "$l" | head -n 12 | sed 's/^/#   /'; done; }
eq() { if [ "$2" == "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'" "stderr: $ERR"; fi; }
has() { if printf '%s' "$2" | grep -qF -- "$3"; then pass "$1"; else fail "$1" "'$3' not found" "in: $2"; fi; }
hasnt() { if printf '%s' "$2" | grep -qF -- "$3"; then fail "$1" "'$3' found" "in: $2"; else pass "$1"; fi; }

TOP=$(mktemp -d /tmp/berth-review.XXXXXX) || exit 1
chmod 755 "$TOP"
export XDG_STATE_HOME=$TOP/state XDG_CONFIG_HOME=$TOP/config
WS=$TOP/ws
BGPIDS=()
cleanup() { local p; for p in "${BGPIDS[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; chmod -R u+rwX "$TOP" 2>/dev/null; rm -rf "$TOP"; }
trap cleanup EXIT
cd "$TOP" || exit 1
b() { "$BERTH" "$@" </dev/null >"$TOP/out" 2>"$TOP/err"; RC=$?; OUT=$(cat "$TOP/out"); ERR=$(cat "$TOP/err"); }
RUNS=$XDG_STATE_HOME/berth/runs
last() { cat "$RUNS/last" 2>/dev/null; }
ROOT=0; [ "$(id -u)" -eq 0 ] && ROOT=1
OWNER=$(id -un)
[ $ROOT -eq 1 ] && id bertht >/dev/null 2>&1 && OWNER=bertht

# Every entry of a tree: path, type, mode, owner, and its bytes' sha256 or
# its link's target (.git's objects are git's, unchanged by the agent).
manifest() {
	(cd "$1" && find . -mindepth 1 | sort | while IFS= read -r p; do
		case $(stat -c %F "$p") in
		"regular file"|"regular empty file") s=$(sha256sum <"$p" | cut -c1-64) ;;
		"symbolic link") s=$(readlink "$p") ;;
		*) s=- ;;
		esac
		printf '%s %s %s %s\n' "$p" "$(stat -c '%F %a' "$p")" "${2:+$(stat -c %U "$p")}" "$s"
	done)
}

# The host's workspace: text, a file to delete, to rename, to chmod, a
# directory to remove, one to leave alone, and a repository.
fresh() {
	chmod -R u+rwX "$WS" 2>/dev/null; rm -rf "$WS"; mkdir -p "$WS/src" "$WS/old" "$WS/keep"
	printf 'line 1\nline 2\nline 3\nline 4\nline 5\n' >"$WS/src/main.c"
	printf 'alpha\nbeta\n' >"$WS/notes.txt"
	echo "delete me" >"$WS/gone.txt"
	echo "rename me" >"$WS/before.txt"
	printf '#!/bin/sh\necho hi\n' >"$WS/tool.sh"; chmod 644 "$WS/tool.sh"
	echo "in old" >"$WS/old/x"; echo "in old too" >"$WS/old/y"
	echo "untouched" >"$WS/keep/k"
	mkdir -p "$WS/was-dir/sub"; echo "in a dir" >"$WS/was-dir/sub/f"   # becomes a file
	echo "a file" >"$WS/was-file"                                       # becomes a directory
	ln -s keep/k "$WS/was-link"                                         # becomes a file
	mkdir -p "$WS/.git/hooks"; echo "[core]" >"$WS/.git/config"
	[ $ROOT -eq 1 ] && [ "$OWNER" != root ] && chown -R "$OWNER:" "$WS"
	chmod 755 "$WS"
}

# The agent: each kind of change, then its own view of the result.
AGENT='set -e
cd /workspace
printf "line 1\nline 2 changed\nline 3\nline 4\nline 5\nline 6\n" > src/main.c
echo "new file" > src/new.c
mkdir -p docs/deep; echo "a deep doc" > docs/deep/readme.md
rm gone.txt
mv before.txt after.txt
chmod 755 tool.sh
rm -rf old
ln -s src/main.c link-to-main
rm -rf was-dir; echo "now a file" > was-dir
rm was-file; mkdir -p was-file/in; echo "now in a dir" > was-file/in/f
rm was-link; echo "no longer a link" > was-link
printf "#!/bin/sh\nexit 0\n" > .git/hooks/pre-commit; chmod 755 .git/hooks/pre-commit
head -c 48m /dev/zero > huge.bin
printf "\000\001\002binary" > small.bin
sleep "${HOLD:-0}"'

fresh
BEFORE=$(manifest "$WS" own)

# ------------------------------------------------------------ 1. the run
b run --review --review-size 128M --workspace "$WS" -- sh -c "$AGENT"
eq "run --review: the agent's script exits 0" "$RC" 0
ID=$(last)
has "run --review: the end names diff, apply and discard" "$ERR" "berth diff $ID"
eq "run --review: the host's tree is byte-identical after the run" "$(manifest "$WS" own)" "$BEFORE"
eq "run --review: the change set is in the run's directory, 0700" "$(stat -c %a "$RUNS/$ID/review")" 700
eq "run --review: changes.json is 0600" "$(stat -c %a "$RUNS/$ID/review/changes.json")" 600
# the huge file's bytes are kept whole
HUGE=$(python3 -c 'import json,sys
for e in json.load(open(sys.argv[1]))["entries"]:
    if e["path"]=="huge.bin": print(e["size"], e["sha256"])' "$RUNS/$ID/review/changes.json")
eq "run --review: the huge file is 48 MiB in the change set" "${HUGE%% *}" 50331648
eq "run --review: its blob is those bytes" "$(sha256sum <"$RUNS/$ID/review/blobs/${HUGE#* }" | cut -c1-64)" "${HUGE#* }"

# ------------------------------------------------------------ 2. diff
b diff "$ID"
eq "diff: exit 0" "$RC" 0
has "diff: the edited line, removed" "$OUT" "-line 2"
has "diff: the edited line, added" "$OUT" "+line 2 changed"
has "diff: a line added at the end" "$OUT" "+line 6"
has "diff: a hunk header" "$OUT" "@@ -1,5 +1,6 @@"
has "diff: the new file" "$OUT" "+++ b/src/new.c"
has "diff: the new file's line" "$OUT" "+new file"
has "diff: the new nested file" "$OUT" "+++ b/docs/deep/readme.md"
has "diff: the deletion" "$OUT" "diff --berth a/gone.txt b/gone.txt
deleted file mode 100644"
has "diff: the rename's old name deleted" "$OUT" "diff --berth a/before.txt b/before.txt
deleted file"
has "diff: the rename's new name created" "$OUT" "+++ b/after.txt"
has "diff: the rename, said" "$OUT" "rename from before.txt
rename to after.txt"
has "diff: the chmod" "$OUT" "old mode 100644
new mode 100755"
has "diff: the removed directory's files" "$OUT" "diff --berth a/old/x b/old/x"
has "diff: the removed directory" "$OUT" "deleted dir mode 40755"
has "diff: the link" "$OUT" "symbolic link -> src/main.c"
has "diff: the hook, guarded" "$OUT" "diff --berth a/.git/hooks/pre-commit b/.git/hooks/pre-commit
guarded: "
has "diff: the huge file, summarised" "$OUT" "Files too large to show /dev/null and b/huge.bin differ (0 -> 50331648 bytes"
has "diff: a small binary, summarised" "$OUT" "Binary files /dev/null and b/small.bin differ"
hasnt "diff: an untouched file is not in it" "$OUT" "keep/k"
b diff "$ID" src
has "diff PATH: the paths below it" "$OUT" "a/src/main.c"
hasnt "diff PATH: nothing else" "$OUT" "notes.txt"
hasnt "diff PATH: nothing else (huge.bin)" "$OUT" "huge.bin"
b diff --json "$ID"
eq "diff --json: exit 0" "$RC" 0
J=$(printf '%s' "$OUT" | python3 -c 'import json,sys
d=json.load(sys.stdin); m={e["path"]:e for e in d["entries"]}
print(d["digest"][:7], m["gone.txt"]["op"], m["src/main.c"]["op"], m["tool.sh"]["op"], m["tool.sh"]["mode"], m["link-to-main"]["type"], "guarded" in m[".git/hooks/pre-commit"], m["old"]["op"], m["docs"]["type"], "notes.txt" in m)' 2>&1)
eq "diff --json: ops, modes, types, guard" "$J" "sha256: delete modify mode 493 symlink True delete dir False"

# ------------------------------------------------------------ 3. audit
b audit list --run "$ID" --json
has "audit: a review record with the change set's digest" "$OUT" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["digest"])' "$RUNS/$ID/review/changes.json")"
has "audit: run.stop has the review" "$OUT" '"review":{'

# ------------------------------------------------------------ 4. apply, chosen paths
b apply "$ID" src/main.c docs
eq "apply PATHS: exit 0" "$RC" 0
has "apply PATHS: names what it applied" "$OUT" "applied: src/main.c"
has "apply PATHS: a new directory's file" "$OUT" "applied: docs/deep/readme.md"
eq "apply PATHS: main.c is the agent's, byte for byte" "$(sha256sum <"$WS/src/main.c" | cut -c1-64)" "$(printf 'line 1\nline 2 changed\nline 3\nline 4\nline 5\nline 6\n' | sha256sum | cut -c1-64)"
eq "apply PATHS: the new directory's file" "$(cat "$WS/docs/deep/readme.md")" "a deep doc"
[ -e "$WS/src/new.c" ] && fail "apply PATHS: src/new.c not chosen, not applied" "it is there" || pass "apply PATHS: src/new.c not chosen, not applied"
[ -e "$WS/gone.txt" ] && pass "apply PATHS: gone.txt not chosen, still there" || fail "apply PATHS: gone.txt still there" "removed"
eq "apply PATHS: a new file belongs to the workspace's owner" "$(stat -c %U "$WS/docs/deep/readme.md")" "$OWNER"
eq "apply PATHS: new directories too" "$(stat -c %U:%a "$WS/docs" "$WS/docs/deep" | tr '\n' ' ')" "$OWNER:755 $OWNER:755 "
eq "apply PATHS: a replaced file keeps its owner" "$(stat -c %U "$WS/src/main.c")" "$OWNER"
b apply "$ID" nosuch/path
eq "apply: a path with no change is exit 2" "$RC" 2

# ------------------------------------------------------------ 5. apply the rest: the hook held back
b apply "$ID"
eq "apply: exit 1 when a guarded path is held back" "$RC" 1
has "apply: the hook is named as held back" "$ERR" "held back: \`.git/hooks/pre-commit\` is guarded"
[ -e "$WS/.git/hooks/pre-commit" ] && fail "apply: the hook did not land" "it is there" || pass "apply: the hook did not land"
[ -e "$WS/gone.txt" ] && fail "apply: the deletion landed" "still there" || pass "apply: the deletion landed"
[ -e "$WS/old" ] && fail "apply: the directory's removal landed" "still there" || pass "apply: the directory's removal landed"
[ -e "$WS/before.txt" ] || [ ! -e "$WS/after.txt" ] && fail "apply: the rename landed" "$(ls "$WS")" || pass "apply: the rename landed"
eq "apply: the chmod landed" "$(stat -c %a "$WS/tool.sh")" 755
eq "apply: the link landed" "$(readlink "$WS/link-to-main")" src/main.c
eq "apply: a directory became a file" "$(cat "$WS/was-dir")" "now a file"
eq "apply: a file became a directory" "$(cat "$WS/was-file/in/f")" "now in a dir"
eq "apply: a link became a file" "$(stat -c %F "$WS/was-link"):$(cat "$WS/was-link")" "regular file:no longer a link"
eq "apply: the huge file, byte-identical" "$(sha256sum <"$WS/huge.bin" | cut -c1-64)" "${HUGE#* }"
hasnt "apply: no temporary file is left" "$(ls -a "$WS" "$WS/src")" ".berth-apply"
b apply "$ID" --include-guarded
eq "apply --include-guarded: exit 0" "$RC" 0
has "apply --include-guarded: a line names the guarded path" "$ERR" "applied the guarded path \`.git/hooks/pre-commit\`"
eq "apply --include-guarded: the hook landed, mode 755" "$(stat -c %a "$WS/.git/hooks/pre-commit")" 755
has "apply --include-guarded: the rest was applied before" "$ERR" "applied before"
# the host's tree is now what the agent saw at its end
b run --workspace "$WS" -- sh -c 'true'
AFTER=$(manifest "$WS" own)
APPLIED=$(manifest "$WS")
hasnt "apply: every file is the workspace owner's" "$(printf '%s\n' "$AFTER" | grep -v " $OWNER [^ ]*\$")" "./"
b audit list --run "$ID" --json
has "audit: applied records" "$OUT" '"applied"'
has "audit: the hook's application recorded" "$OUT" ".git/hooks/pre-commit"

# ------------------------------------------------------------ 6. the same result as a direct run
fresh
b run --yes --unprotect .git/hooks --workspace "$WS" -- sh -c "$AGENT"
DIRECT=$(manifest "$WS")
eq "apply: the tree equals a direct run's, byte for byte" "$APPLIED" "$DIRECT"

# ------------------------------------------------------------ 7. discard
fresh
BEFORE=$(manifest "$WS" own)
b run --review --review-size 128M --workspace "$WS" -- sh -c "$AGENT"
ID=$(last)
b discard "$ID"
eq "discard: exit 0" "$RC" 0
eq "discard: the host's tree is byte-identical" "$(manifest "$WS" own)" "$BEFORE"
[ -e "$RUNS/$ID/review" ] && fail "discard: the change set is gone" "still there" || pass "discard: the change set is gone"
b apply "$ID"
eq "discard: apply afterwards is exit 2" "$RC" 2
has "discard: it says the change set was discarded" "$ERR" "discarded"
b audit list --run "$ID" --json
has "audit: a discarded record" "$OUT" '"discarded"'

# ------------------------------------------------------------ 8. a host edit during the run
fresh
b run --review --workspace "$WS" -- true
DURING=$(manifest "$WS" own)
( HOLD=3 "$BERTH" run --review --review-size 128M --workspace "$WS" --env HOLD -- sh -c "$AGENT" </dev/null >"$TOP/bg.out" 2>"$TOP/bg.err" ) &
BG=$!; BGPIDS+=("$BG")
for _ in $(seq 1 100); do [ "$(last)" != "$ID" ] && [ -n "$(last)" ] && break; sleep 0.1; done
sleep 1.5
# while the agent holds: nothing of the run is in the host's tree (no stand-in files)
eq "host edit: while the run lasts the host's tree is as it was" "$(manifest "$WS" own)" "$DURING"
echo "the user's own edit" >>"$WS/notes.txt"   # not a path the agent touches
printf 'line 1\nhost edit\n' >"$WS/src/main.c"  # the agent rewrote this one
wait "$BG"
ID=$(last)
echo "after the run" >>"$WS/tool.sh"            # changed after the run, before apply
b apply "$ID"
eq "host edit: apply is exit 1" "$RC" 1
has "host edit: the file edited during the run is refused, named" "$ERR" "refused: \`src/main.c\`: changed on the host while the run lasted"
has "host edit: the file edited after the run is refused, named" "$ERR" "refused: \`tool.sh\`: changed on the host since the run ended"
eq "host edit: the host's edit is kept" "$(cat "$WS/src/main.c")" "line 1
host edit"
eq "host edit: the untouched file keeps the user's edit" "$(tail -n 1 "$WS/notes.txt")" "the user's own edit"
eq "host edit: the other changes landed" "$(cat "$WS/src/new.c")" "new file"
b diff "$ID" src/main.c
has "host edit: diff says so" "$OUT" "host changed"

# ------------------------------------------------------------ 9. a full layer
fresh
BEFORE=$(manifest "$WS" own)
b run --review --review-size 2M --workspace "$WS" -- sh -c 'echo small > a; head -c 4m /dev/zero > big; echo "rc=$?"'
has "full layer: the write meets ENOSPC inside" "$ERR" "No space left on device"
has "full layer: berth says the layer filled up" "$ERR" "filled up"
ID=$(last)
b apply "$ID"
eq "full layer: apply is exit 2" "$RC" 2
has "full layer: apply says why" "$ERR" "nothing is applied"
eq "full layer: the host's tree is untouched" "$(manifest "$WS" own)" "$BEFORE"
# its inodes too: one per KiB of --review-size (1024 for 1M, the layer's own directories among them)
b run --review --review-size 1M --workspace "$WS" -- sh -c 'i=0; while [ $i -lt 2000 ]; do (: > "e$i") 2>/dev/null || break; i=$((i+1)); done; echo "made $i"'
M=$(printf '%s' "$OUT" | sed -n 's/^made //p')
[ -n "$M" ] && [ "$M" -gt 900 ] && [ "$M" -lt 1024 ] && pass "full layer: empty files stop at the inode bound ($M)" || fail "full layer: empty files stop at the inode bound" "made ${M:-?}" "$ERR"
has "full layer: out of inodes is a full layer too" "$ERR" "filled up"
b apply --last
eq "full layer: apply of it is exit 2" "$RC" 2

# ------------------------------------------------------------ 10. the policy and bad input
b run --review --dry-run --json --workspace "$WS" -- true
has "dry run: the policy has the review layer" "$OUT" '"review":{"layer":"overlay","size_bytes":1073741824}'
D1=$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["digest"])')
b run --dry-run --json --workspace "$WS" -- true
D2=$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["digest"])')
[ -n "$D1" ] && [ "$D1" != "$D2" ] && pass "dry run: the digest covers --review" || fail "dry run: the digest covers --review" "$D1 = $D2"
b run --review-size 0 --workspace "$WS" -- true
eq "--review-size 0: exit 2" "$RC" 2
has "--review-size 0: named" "$ERR" "--review-size"
b run --review-size 64G --memory 1G --workspace "$WS" -- true
eq "--review-size above --memory: exit 2" "$RC" 2
b run --review --runtime vm --workspace "$WS" -- true
eq "--review --runtime vm: exit 2" "$RC" 2
has "--review --runtime vm: says why" "$ERR" "cannot give \`--review\`"
b diff my-session
eq "diff of no such run or session: exit 2" "$RC" 2
has "diff of no such run or session: says so" "$ERR" "neither a run id"
b diff 0123456789abcdef
eq "diff of an unknown run: exit 2" "$RC" 2
b run --workspace "$WS" -- true
b diff --last
eq "diff of a run without --review: exit 2" "$RC" 2
has "diff of a run without --review: says so" "$ERR" "no change set"

# ------------------------------------------------------------ 10b. a deep tree
# The collection walks the layer one level a frame: a tree 1500 deep (an
# agent's mkdir/cd loop) is collected, and one past PATH_MAX is refused by
# name, never cut short; neither kills the supervisor (it did: SIGSEGV).
fresh
b run --review --workspace "$WS" -- sh -c 'i=0; while [ $i -lt 1500 ]; do mkdir d && cd d || exit 9; i=$((i+1)); done; echo x > deep'
eq "deep tree: the run exits with the command's status" "$RC" 0
has "deep tree: every level is in the change set" "$ERR" "changed 1501 paths"
b diff --last
eq "deep tree: diff of it exits 0" "$RC" 0
# (python: a shell's cd past PATH_MAX fails, as it keeps the whole path)
b run --review --workspace "$WS" -- python3 -c 'import os
for i in range(2100): os.mkdir("d"); os.chdir("d")
open("deep", "w").write("x")'
eq "past PATH_MAX: the run exits with the command's status" "$RC" 0
has "past PATH_MAX: the path is named as too long" "$ERR" "longer than PATH_MAX"
has "past PATH_MAX: the changes are said lost" "$ERR" "could not be kept"
ID=$(last)
b audit list --run "$ID"
hasnt "past PATH_MAX: the supervisor did not die" "$OUT" "supervisor died"
b diff "$ID"
eq "past PATH_MAX: no change set (exit 2)" "$RC" 2
eq "deep trees: the host's tree is untouched" "$([ -e "$WS/d" ] && echo there || echo absent)" absent

# A name or a link's target with a newline cannot forge a line of the diff
# (nor an escape reach the terminal): quoted as git quotes it.
fresh
b run --review --workspace "$WS" -- python3 -c 'import os
open("n\ndiff --berth a-forged", "w").write("q\n")
os.symlink("t\nnew file mode 100777", "lnk\x1b[2K")'
b diff --last
eq "diff: a newline in a name forges no line" "$(printf '%s\n' "$OUT" | grep -c '^diff --berth a-forged')" 0
eq "diff: a newline in a target forges no line" "$(printf '%s\n' "$OUT" | grep -c "^new file mode 100777")" 0
has "diff: the name is quoted" "$OUT" '"a/n\ndiff --berth a-forged"'
has "diff: the escape is shown, not sent" "$OUT" '"b/lnk\033[2K"'
hasnt "diff: no escape byte in the output" "$OUT" $'\x1b'

# ------------------------------------------------------------ 11. the diff is a patch
# Many hunks over a long file (lines changed, removed, added, at both ends, no
# newline at the end): patch(1) of berth's diff on the host's copy gives the
# agent's bytes exactly.
PY=$(command -v /usr/bin/python3 || true)
if command -v patch >/dev/null && [ -n "$PY" ]; then
	fresh
	python3 -c 'import random
random.seed(19)
print("\n".join("line %d %s" % (i, random.choice("abcdefgh")) for i in range(400)))' >"$WS/long.txt"
	[ $ROOT -eq 1 ] && chown "$OWNER:" "$WS/long.txt"
	b run --review --workspace "$WS" -- "$PY" -c 'import random
random.seed(7)
L = open("long.txt").read().split("\n")
out = []
for i, l in enumerate(L):
    r = random.random()
    if r < 0.05: continue
    if r < 0.10: out.append("changed " + l); continue
    if r < 0.13: out.append("inserted before %d" % i)
    out.append(l)
out = ["a new first line"] + out + ["a new last line"]
open("long.txt", "w").write("\n".join(out))
open("copy.txt", "w").write("\n".join(out))'
	eq "patch: the agent's edit of a long file exits 0" "$RC" 0
	ID=$(last)
	cp "$WS/long.txt" "$TOP/long.txt"
	b diff "$ID" long.txt
	H=$(printf '%s\n' "$OUT" | grep -c '^@@')
	[ "$H" -gt 5 ] && pass "patch: the diff has many hunks ($H)" || fail "patch: many hunks" "$H" "$OUT"
	printf '%s\n' "$OUT" >"$TOP/long.diff"
	mkdir "$TOP/p" && cp "$TOP/long.txt" "$TOP/p/" && patch -s -p1 -d "$TOP/p" <"$TOP/long.diff" >"$TOP/patch.out" 2>&1
	b apply "$ID" copy.txt
	eq "patch: patch(1) of berth diff gives the agent's bytes" "$(cmp "$TOP/p/long.txt" "$WS/copy.txt" && echo same)" same
fi

# ------------------------------------------------------------ 11b. --last is the caller's login's own
# Two people root with the same HOME (their login uids differ: sudo and su keep
# it) do not get each other's run from --last.  Root only: a login uid can be set
# once, by a process with CAP_AUDIT_CONTROL, when it is unset.
if [ $ROOT -eq 1 ] && [ "$(cat /proc/self/loginuid)" = 4294967295 ] && sh -c 'echo 4100 >/proc/self/loginuid' 2>/dev/null; then
	fresh
	sh -c 'echo 4100 >/proc/self/loginuid; exec "$@"' - "$BERTH" run --review --workspace "$WS" -- sh -c 'echo mine > mine.txt' </dev/null >/dev/null 2>&1
	A=$(last)
	sh -c 'echo 4200 >/proc/self/loginuid; exec "$@"' - "$BERTH" run --review --workspace "$WS" -- sh -c 'echo theirs > theirs.txt' </dev/null >/dev/null 2>&1
	OUT=$(sh -c 'echo 4100 >/proc/self/loginuid; exec "$@"' - "$BERTH" diff --last 2>&1)
	has "--last: a login's own last run, not another login's newer one" "$OUT" "mine.txt"
	OUT=$(sh -c 'echo 4300 >/proc/self/loginuid; exec "$@"' - "$BERTH" apply --last 2>&1); RC=$?
	eq "--last of a login with no run: exit 2" "$RC" 2
	has "--last of a login with no run: says so" "$OUT" "no run started from your login (login uid 4300)"
	eq "--last of a login with no run: nothing applied" "$([ -e "$WS/mine.txt" ] || [ -e "$WS/theirs.txt" ] && echo applied || echo none)" none
	b discard "$A"
fi

# ------------------------------------------------------------ 12. attestation
b run --review --workspace "$WS" -- sh -c 'echo x > attested'
ID=$(last)
b attest "$ID"
W=$(printf '%s' "$OUT" | python3 -c 'import json,sys; w=json.load(sys.stdin)["workspace"]; print(w["mode"], w["host_tree_modified_by_run"], w["change_set_digest"][:7])' 2>&1)
eq "attest: the host's workspace was not modified by the run" "$W" "review False sha256:"
[ -e "$WS/attested" ] && fail "attest: and it was not" "the file is there" || pass "attest: and it was not"

echo "1..$T"
[ $FAILS -eq 0 ] || { echo "# $FAILS of $T failed"; exit 1; }
