#!/usr/bin/env bash
# berth spawn --review, checkpoints and rollback (docs/review.md, "Sessions
# and checkpoints"): a fake agent (fake-agent.py, `sh CMD`) edits, creates,
# deletes and chmods files in two turns; a checkpoint is taken after each;
# the host's tree is byte-identical until `berth apply`; a rollback while the
# session runs is refused (exit 2) and changes nothing; after the end a
# rollback to checkpoint 1 makes the change set checkpoint 1's exactly, diff
# shows only turn 1's changes and apply lands them byte-identical; the audit
# trail has each checkpoint, the rollback and what was applied.
#
# usage: run-review-sessions.sh /path/to/berth   TAP output; exit 1 on a failure.
# Runs as root or as any user.
set -u
export LC_ALL=C.UTF-8
unset BERTH_TEST_FORCE_OFF BERTH_AUDIT_DIR
[ $# -ge 1 ] || { echo "usage: $0 /path/to/berth" >&2; exit 2; }
BERTH=$(readlink -f -- "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
T=0 FAILS=0
pass() { T=$((T + 1)); echo "ok $T - $1"; }
fail() { T=$((T + 1)); FAILS=$((FAILS + 1)); echo "not ok $T - $1 # $2"; shift 2; local l; for l in "$@"; do printf '%s\n' "$l" | head -n 12 | sed 's/^/#   /'; done; }
eq() { if [ "$2" == "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'" "stderr: ${ERR:-}"; fi; }
has() { if printf '%s' "$2" | grep -qF -- "$3"; then pass "$1"; else fail "$1" "'$3' not found" "in: $2"; fi; }

TOP=$(mktemp -d /tmp/berth-review-sessions.XXXXXX) || exit 1
chmod 755 "$TOP"
export XDG_RUNTIME_DIR=$TOP/run XDG_STATE_HOME=$TOP/state XDG_CONFIG_HOME=$TOP/config
mkdir -p "$XDG_RUNTIME_DIR" "$XDG_CONFIG_HOME/berth/profiles"
chmod 700 "$XDG_RUNTIME_DIR"
FAKE=$TOP/fake; mkdir "$FAKE"; cp "$HERE/fake-agent.py" "$FAKE/"; chmod -R a+rX "$FAKE"
cleanup() { "$BERTH" stop --all --grace 0 >/dev/null 2>&1; chmod -R u+rwX "$TOP" 2>/dev/null; rm -rf "$TOP"; }
trap cleanup EXIT
cd "$TOP" || exit 1
b() { "$BERTH" "$@" </dev/null >"$TOP/out" 2>"$TOP/err"; RC=$?; OUT=$(cat "$TOP/out"); ERR=$(cat "$TOP/err"); }
profile() { # profile NAME [options yaml]
	{ echo "agent: claude"
	  echo "command: [python3, /opt/fake/fake-agent.py, --style, claude]"
	  echo "prompt: type"
	  echo "network: none"
	  echo "options: [--ro, '$FAKE:/opt/fake'${2:+, $2}]"; } >"$XDG_CONFIG_HOME/berth/profiles/$1.yml"
}
profile fake
profile fake-review "--review, --review-size, 64M"
wait_screen() { local i; for i in $(seq 100); do "$BERTH" peek "$1" 2>/dev/null | grep -qF -- "$2" && return 0; sleep 0.1; done; return 1; }
# n_checkpoints NAME: how many `berth checkpoints --json` lists
n_checkpoints() { "$BERTH" checkpoints --json "$1" 2>/dev/null | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["checkpoints"]))' 2>/dev/null || echo -1; }
# wait_checkpoints NAME N: until N are listed (20 s)
wait_checkpoints() { local i; for i in $(seq 200); do [ "$(n_checkpoints "$1")" -ge "$2" ] && return 0; sleep 0.1; done; return 1; }
# turn NAME N CMD: the agent runs CMD as its turn N
turn() { "$BERTH" send "$1" "sh $3" --enter >/dev/null 2>&1; wait_screen "$1" "ran turn $2 (status 0)"; }
manifest() {
	(cd "$1" && find . -mindepth 1 | sort | while IFS= read -r p; do
		printf '%s %s %s\n' "$p" "$(stat -c '%F %a' "$p")" "$( [ -f "$p" ] && sha256sum <"$p" | cut -c1-64)"
	done)
}
WS=$TOP/ws
fresh() {
	chmod -R u+rwX "$WS" 2>/dev/null; rm -rf "$WS"; mkdir -p "$WS/src"
	printf 'line 1\nline 2\n' >"$WS/src/main.c"
	echo "delete me" >"$WS/gone.txt"
	printf '#!/bin/sh\necho hi\n' >"$WS/tool.sh"; chmod 644 "$WS/tool.sh"
	echo "untouched" >"$WS/keep.txt"
	chmod 755 "$WS"
}

# ------------------------------------------------------------ 1. two turns, a checkpoint each
fresh
BEFORE=$(manifest "$WS")
b spawn fake --name rv --workspace "$WS" --review
eq "spawn --review: exit 0" "$RC" 0
wait_screen rv "? for shortcuts" || fail "the agent drew its prompt" "" "$("$BERTH" peek rv)"
sleep 3 # idle at its prompt, nothing changed: that is the start (checkpoint 0), not a checkpoint
b checkpoints --json rv
eq "checkpoints before any turn: exit 0" "$RC" 0
eq "an idle agent that changed nothing: no checkpoint" "$(n_checkpoints rv)" 0
RUN=$("$BERTH" ps --json rv | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["run_id"])')
eq "ps --json: the session has review" "$("$BERTH" ps --json rv | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["review"])')" True
T1='printf "line 1\nline 2 turn 1\n" > src/main.c; echo new > src/new.c; mkdir -p docs; echo doc > docs/a.md; rm gone.txt; chmod 755 tool.sh'
turn rv 1 "$T1" && pass "turn 1: the agent ran its edits" || fail "turn 1" "" "$("$BERTH" peek rv)"
wait_checkpoints rv 1 && pass "turn 1: a checkpoint when the agent finished it" || fail "turn 1: a checkpoint" "$(n_checkpoints rv)"
T2='printf "line 1\nturn 2\n" > src/main.c; rm src/new.c; echo later > later.txt; printf "\000\001bin" > blob.bin'
turn rv 2 "$T2" && pass "turn 2: the agent ran its edits" || fail "turn 2" "" "$("$BERTH" peek rv)"
wait_checkpoints rv 2 && pass "turn 2: a second checkpoint" || fail "turn 2: a second checkpoint" "$(n_checkpoints rv)"
sleep 3 # quiet at its prompt: no third checkpoint of the same layer
eq "an unchanged layer is not checkpointed again" "$(n_checkpoints rv)" 2
eq "while the session runs, the host's tree is untouched" "$(manifest "$WS")" "$BEFORE"

b checkpoints rv
eq "checkpoints: exit 0" "$RC" 0
has "checkpoints: a table" "$OUT" "ID   TIME"
has "checkpoints: the change set is made at the end" "$OUT" "change set: none yet"
b checkpoints --json rv
CP=$(printf '%s' "$OUT" | python3 -c 'import json,sys
d = json.load(sys.stdin)
print(" ".join("%d:%d:%d" % (c["id"], c["entries"], c["changed"]) for c in d["checkpoints"]), d["name"], d["alive"], d["current"])')
# turn 1: src/main.c, src/new.c, docs, docs/a.md, gone.txt, tool.sh (6);
# turn 2: src/main.c, src/new.c (gone), later.txt, blob.bin changed (4), 7 entries
eq "checkpoints --json: ids, entries and paths changed per turn" "$CP" "1:6:6 2:7:4 rv True None"

# ------------------------------------------------------------ 2. rollback while it runs: refused
b rollback rv 1
eq "rollback of a running session: exit 2" "$RC" 2
has "rollback of a running session: says why and what to do" "$ERR" "berth stop rv"
b diff rv
eq "diff of a running session: exit 2" "$RC" 2
eq "the refused rollback changed nothing" "$(n_checkpoints rv):$(manifest "$WS" | sha256sum)" "2:$(printf '%s\n' "$BEFORE" | sha256sum)"

# ------------------------------------------------------------ 3. the end, then rollback
b stop rv
eq "stop: exit 0" "$RC" 0
b checkpoints --json rv
END=$(printf '%s' "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["current"]["digest"] == d["checkpoints"][1]["digest"], d["alive"])')
eq "the end's change set is checkpoint 2's (nothing changed after the turn)" "$END" "True False"
eq "after the end, the host's tree is untouched" "$(manifest "$WS")" "$BEFORE"
b rollback rv 9
eq "rollback to an unknown checkpoint: exit 2" "$RC" 2
has "rollback to an unknown checkpoint: names the range" "$ERR" "1 to 2"
b rollback rv x1
eq "rollback to a non-number: exit 2" "$RC" 2
b rollback rv 1
eq "rollback to checkpoint 1: exit 0" "$RC" 0
# the change set is checkpoint 1's, entry for entry (the layer as turn 1 left it)
SAME=$(python3 -c 'import json,sys
d = sys.argv[1] + "/review/"
a = json.load(open(d + "changes.json")); c = json.load(open(d + "checkpoints/1.json"))
print(a["entries"] == c["entries"], a["digest"] == c["digest"], a["checkpoint"])' "$XDG_STATE_HOME/berth/runs/$RUN")
eq "rollback: the change set is checkpoint 1's, entry for entry" "$SAME" "True True 1"
printf 'line 1\nline 2 turn 1\n' >"$TOP/want-main"; echo doc >"$TOP/want-doc"; echo new >"$TOP/want-new"
printf '#!/bin/sh\necho hi\n' >"$TOP/want-tool"
BLOBS=$XDG_STATE_HOME/berth/runs/$RUN/review/blobs
b diff --json rv
PATHS=$(printf '%s' "$OUT" | python3 -c 'import json,sys
d = json.load(sys.stdin)
print(" ".join("%s:%s" % (e["op"], e["path"]) for e in d["entries"]))')
eq "diff after rollback: only turn 1's changes" "$PATHS" "create:docs create:docs/a.md delete:gone.txt modify:src/main.c create:src/new.c mode:tool.sh"
SHA=$(printf '%s' "$OUT" | python3 -c 'import json,sys
for e in json.load(sys.stdin)["entries"]:
    if e.get("sha256"): print(e["path"], e["sha256"])')
OKB=1
while read -r p s; do
	case $p in src/main.c) w=$TOP/want-main ;; docs/a.md) w=$TOP/want-doc ;; src/new.c) w=$TOP/want-new ;; tool.sh) w=$TOP/want-tool ;; *) w=/nonexistent ;; esac
	cmp -s "$BLOBS/$s" "$w" || OKB=0
done <<<"$SHA"
eq "rollback: the kept bytes are turn 1's, byte for byte" "$OKB" 1
b diff rv
has "diff after rollback: turn 1's line" "$OUT" "+line 2 turn 1"
if printf '%s' "$OUT" | grep -q "later.txt\|turn 2"; then fail "diff after rollback: nothing of turn 2" "found"; else pass "diff after rollback: nothing of turn 2"; fi
eq "after the rollback, the host's tree is untouched" "$(manifest "$WS")" "$BEFORE"

# ------------------------------------------------------------ 4. apply lands turn 1
b apply rv
eq "apply of the rolled-back session: exit 0" "$RC" 0
eq "apply: turn 1's main.c, byte for byte" "$(cmp -s "$WS/src/main.c" "$TOP/want-main" && echo same)" same
eq "apply: turn 1's new file" "$(cmp -s "$WS/src/new.c" "$TOP/want-new" && echo same)" same
eq "apply: turn 1's new directory and file" "$(cmp -s "$WS/docs/a.md" "$TOP/want-doc" && echo same)" same
eq "apply: turn 1's deletion" "$([ -e "$WS/gone.txt" ] && echo there || echo gone)" gone
eq "apply: turn 1's chmod" "$(stat -c %a "$WS/tool.sh")" 755
eq "apply: nothing of turn 2" "$([ -e "$WS/later.txt" ] || [ -e "$WS/blob.bin" ] && echo there || echo absent)" absent
eq "apply: the rest as it was" "$(cat "$WS/keep.txt")" untouched
b rollback rv 2
eq "rollback after an apply: exit 2" "$RC" 2
has "rollback after an apply: says why" "$ERR" "partly applied"

# ------------------------------------------------------------ 5. the audit trail
b audit list --run "$RUN" --json
KINDS=$(printf '%s' "$OUT" | python3 -c 'import json,sys
t = sys.stdin.read()
try: recs = json.loads(t)
except ValueError: recs = [json.loads(l) for l in t.splitlines() if l.strip()]
if isinstance(recs, dict): recs = recs.get("records", [])
out = []
for r in recs:
    k, p = r["kind"], r.get("payload", {})
    if k == "checkpoint": out.append("checkpoint:%d:%s" % (p["checkpoint"], p["digest"][:7]))
    elif k == "rollback": out.append("rollback:%d:%s" % (p["checkpoint"], p["name"]))
    elif k == "applied": out.append("applied:%d:%s" % (len(p["applied"]), p["name"]))
    elif k == "run.stop": out.append("stop:%s" % ("review" in p))
print(" ".join(out))')
eq "audit: each checkpoint, the end's change set, the rollback and the apply" "$KINDS" "checkpoint:1:sha256: checkpoint:2:sha256: stop:True rollback:1:rv applied:6:rv"

# ------------------------------------------------------------ 6. a profile's --review, rollback to the start
fresh
BEFORE=$(manifest "$WS")
b spawn fake-review --name rv2 --workspace "$WS"
eq "spawn of a profile with --review: exit 0" "$RC" 0
wait_screen rv2 "? for shortcuts"
turn rv2 1 'echo x > x.txt' || fail "rv2: the turn ran" "" "$("$BERTH" peek rv2)"
wait_checkpoints rv2 1 && pass "a profile's --review: a checkpoint" || fail "a profile's --review: a checkpoint" "$(n_checkpoints rv2)"
b stop rv2
b rollback rv2 0
eq "rollback to 0 (the start): exit 0" "$RC" 0
b diff --json rv2
eq "rollback to 0: the change set is empty" "$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["entries"]))')" 0
b apply rv2
eq "apply of an empty change set: exit 0" "$RC" 0
eq "rollback to 0 and apply: the host's tree as it was" "$(manifest "$WS")" "$BEFORE"
b discard rv2
eq "discard of a session: exit 0" "$RC" 0
b checkpoints rv2
eq "checkpoints of a discarded session: exit 2" "$RC" 2
# ------------------------------------------------------------ 7. a supervisor killed: the checkpoints stay
fresh
b spawn fake --name rv4 --workspace "$WS" --review
wait_screen rv4 "? for shortcuts"
turn rv4 1 'echo kept > kept.txt' || fail "rv4: the turn ran" "" "$("$BERTH" peek rv4)"
wait_checkpoints rv4 1 || fail "rv4: a checkpoint" "$(n_checkpoints rv4)"
SUP=$("$BERTH" ps --json rv4 | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["pid"])')
kill -KILL "$SUP"
for _ in $(seq 50); do [ -d /proc/"$SUP" ] || break; sleep 0.1; done
b diff rv4
eq "a killed supervisor: no end change set (exit 2)" "$RC" 2
b rollback rv4 1
eq "a killed supervisor: rollback to its checkpoint, exit 0" "$RC" 0
b apply rv4
eq "a killed supervisor: apply of the checkpoint, exit 0" "$RC" 0
eq "a killed supervisor: the checkpoint's file landed" "$(cat "$WS/kept.txt" 2>/dev/null)" kept

# ------------------------------------------------------------ 8. the checkpoints stay within --review-size
fresh
b spawn fake --name rv5 --workspace "$WS" --review-size 1M
wait_screen rv5 "? for shortcuts"
turn rv5 1 'head -c 700000 /dev/urandom > big1' || fail "rv5: turn 1 ran" "" "$("$BERTH" peek rv5)"
wait_checkpoints rv5 1 || fail "rv5: a checkpoint" "$(n_checkpoints rv5)"
turn rv5 2 'rm big1; head -c 700000 /dev/urandom > big2' || fail "rv5: turn 2 ran" "" "$("$BERTH" peek rv5)"
sleep 4
eq "--review-size: a checkpoint past it is not recorded" "$(n_checkpoints rv5)" 1
RUN5=$("$BERTH" ps --json rv5 | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["run_id"])')
b audit list --run "$RUN5"
has "--review-size: checkpoint.failed in the audit trail, with the reason" "$OUT" "checkpoint.failed"
b stop rv5
b diff --json rv5
eq "--review-size: the end's change set is still collected" "$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(" ".join(e["path"] for e in json.load(sys.stdin)["entries"]))')" big2

b spawn fake --name rv3 --workspace "$WS" --review-size 0
eq "spawn --review-size 0: exit 2" "$RC" 2
b checkpoints nosuch
eq "checkpoints of no such session: exit 2" "$RC" 2

echo "1..$T"
[ $FAILS -eq 0 ] || { echo "# $FAILS of $T failed"; exit 1; }
