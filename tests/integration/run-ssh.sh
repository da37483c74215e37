#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# berth run --ssh, --ssh-key and --ssh-host (docs/credentials.md, "--ssh")
# against an sshd of this script's own on loopback (its own host key, config
# and authorized_keys in a temporary directory; never the system's service)
# and an ssh-agent of its own outside the sandbox that holds two keys, one of
# them allowed.  As root and as a user.
#
# usage: run-ssh.sh /path/to/berth
#   TAP output, a final count; exit 1 on a failure.
set -u
export LC_ALL=C
unset BERTH_TEST_FORCE_OFF SSH_AUTH_SOCK SSH_AGENT_PID
[ $# -eq 1 ] || { echo "usage: $0 /path/to/berth" >&2; exit 2; }
BERTH=$(readlink -f -- "$1")
T=0 FAILS=0
pass() { T=$((T + 1)); echo "ok $T - $1"; }
fail() { T=$((T + 1)); FAILS=$((FAILS + 1)); echo "not ok $T - $1 # $2"; shift 2; local l; for l in "$@"; do printf '%s\n' "$l" | head -n 12 | sed 's/^/#   /'; done; }
eq() { if [ "$2" == "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'" "stderr: $ERR"; fi; }
has() { if printf '%s' "$2" | grep -qF -- "$3"; then pass "$1"; else fail "$1" "'$3' not found" "in: $2" "stderr: $ERR"; fi; }
hasnt() { if printf '%s' "$2" | grep -qF -- "$3"; then fail "$1" "'$3' found" "in: $2"; else pass "$1"; fi; }
finish() { echo "1..$T"; echo "# $((T - FAILS)) passed, $FAILS failed"; [ "$FAILS" -eq 0 ]; exit; }

for b in /usr/sbin/sshd ssh ssh-agent ssh-add ssh-keygen git; do
	command -v "$b" >/dev/null || { fail "$b is installed" "missing: scripts/deps.sh installs openssh-server and openssh-client"; finish; }
done

TOP=$(mktemp -d /tmp/berth-ssh.XXXXXX) || exit 1
chmod 755 "$TOP"
SSHD_PID= AGENT_PID=
cleanup() {
	[ -n "$SSHD_PID" ] && kill "$SSHD_PID" 2>/dev/null
	[ -n "$AGENT_PID" ] && kill "$AGENT_PID" 2>/dev/null
	rm -rf "$TOP"
}
trap cleanup EXIT
WS=$TOP/ws
mkdir "$WS" "$TOP/state" "$TOP/config" "$TOP/keys" && chmod 700 "$WS" "$TOP/keys" || exit 1
cd "$WS" || exit 1
export XDG_STATE_HOME=$TOP/state XDG_CONFIG_HOME=$TOP/config
ME=$(id -un)

# Keys: k1 (allowed), k2 (held by the agent, not allowed); the sshd's host key
# and another host key (for a pin that does not match).
for k in k1 k2 hk hk2; do ssh-keygen -q -t ed25519 -N '' -C "berth-test-$k" -f "$TOP/keys/$k" || exit 1; done
cat "$TOP/keys/k1.pub" "$TOP/keys/k2.pub" >"$TOP/authorized_keys"
cp "$TOP/keys/k1.pub" "$TOP/keys/k2.pub" "$WS/"
FP1=$(ssh-keygen -lf "$TOP/keys/k1.pub" | cut -d' ' -f2)
FP2=$(ssh-keygen -lf "$TOP/keys/k2.pub" | cut -d' ' -f2)
HFP=$(ssh-keygen -lf "$TOP/keys/hk.pub" | cut -d' ' -f2)

# The sshd: loopback, a port of its own, this user only.
PORT=$((20000 + ($(id -u) * 131 + $$) % 20000))
cat >"$TOP/sshd_config" <<CFG
Port $PORT
ListenAddress 127.0.0.1
HostKey $TOP/keys/hk
AuthorizedKeysFile $TOP/authorized_keys
PidFile $TOP/sshd.pid
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
AllowUsers $ME
CFG
[ "$(id -u)" -eq 0 ] && mkdir -p /run/sshd # its privilege separation directory, as root
/usr/sbin/sshd -D -e -f "$TOP/sshd_config" 2>"$TOP/sshd.log" &
SSHD_PID=$!
for _ in $(seq 50); do
	(exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
	sleep 0.1
done
# The agent, outside, with both keys.
eval "$(ssh-agent -s -a "$TOP/agent.sock")" >/dev/null
AGENT_PID=$SSH_AGENT_PID
ssh-add -q "$TOP/keys/k1" "$TOP/keys/k2" 2>/dev/null
# A bare repository on the sshd's host.
git init -q --bare "$TOP/repo.git" && git -C "$TOP/repo.git" symbolic-ref HEAD refs/heads/main
git clone -q "$TOP/repo.git" "$TOP/seed" 2>/dev/null && (cd "$TOP/seed" && git checkout -q -b main &&
	echo hello-over-ssh >README && git add README && git -c user.name=t -c user.email=t@t commit -qm one &&
	git push -q origin main) || { fail "the test repository is made" "git failed"; finish; }

ERR=
OUT=$(ssh -o BatchMode=yes -o LogLevel=ERROR -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -p "$PORT" "$ME@127.0.0.1" echo from-host 2>&1)
eq "precondition: the sshd lets the agent's key in from the host" "$OUT" "from-host"

run() { "$BERTH" run --yes "$@" </dev/null >"$TOP/out" 2>"$TOP/err"; RC=$?; OUT=$(cat "$TOP/out"); ERR=$(cat "$TOP/err"); }
SSH="ssh -o BatchMode=yes -p $PORT"
HOST=127.0.0.1:$PORT=$TOP/keys/hk.pub

# 1. ssh -T and a git clone over ssh from inside, with the key held only by the agent outside.
run --ssh-key "$WS/k1.pub" --ssh-host "$HOST" -- sh -c "echo sock=\$SSH_AUTH_SOCK; $SSH -T $ME@127.0.0.1 echo via-ssh"
eq "ssh -T from inside logs in with the allowed key (exit 0)" "$RC:$OUT" "0:sock=/run/berth/ssh/agent.sock
via-ssh"
has "the widening is named, with the fingerprint and the file" "$ERR" \
	"berth: widening: --ssh $FP1 ($WS/k1.pub): the sandbox may have your ssh-agent sign with this key"
run --ssh "$FP1" --ssh-host "$HOST" -- sh -c "git clone -q ssh://$ME@127.0.0.1:$PORT$TOP/repo.git clone && cat clone/README"
eq "git clone over ssh from inside (--ssh FINGERPRINT)" "$RC:$OUT" "0:hello-over-ssh"

# 2. What the sandbox's agent lists and does: the allowed key only; no add, remove, lock.
run --ssh "$FP1" -- sh -c 'ssh-add -L; echo "L=$?"; ssh-add -l | cut -d" " -f2'
eq "ssh-add -L lists the allowed key only" "$RC:$OUT" "0:$(cut -d' ' -f1,2 "$TOP/keys/k1.pub") berth-test-k1
L=0
$FP1"
run --ssh "$FP1" -- sh -c 'cd /tmp && ssh-keygen -q -t ed25519 -N "" -f k3 && ssh-add k3; echo "add=$?"
	ssh-add -d /workspace/k1.pub; echo "d=$?"; ssh-add -D; echo "D=$?"; ssh-add -x </dev/null; echo "x=$?"
	ssh-add -X </dev/null; echo "X=$?"; ssh-add -l | wc -l'
eq "ssh-add FILE, -d, -D, -x, -X fail inside; the list is unchanged" "$RC:$(echo $OUT)" "0:add=1 d=1 D=1 x=1 X=1 1"
has "the refusals are named at exit" "$ERR" "berth: refused: ssh-agent: add a key (ssh-add FILE)"
has "... lock" "$ERR" "berth: refused: ssh-agent: lock the agent (ssh-add -x)"
eq "outside, the agent still holds both keys, unlocked" "$(ssh-add -l | cut -d' ' -f2 | sort | tr '\n' ' ')" \
	"$(printf '%s\n' "$FP1" "$FP2" | sort | tr '\n' ' ')"

# 3. Signing: the allowed key signs (an SSHSIG through the agent); the other
#    does not, asked by ssh-keygen or by a raw SIGN_REQUEST for its key.
echo data >"$WS/data"
cat >"$WS/sign.py" <<'PY'
import base64, socket, struct, sys
def s(b): return struct.pack(">I", len(b)) + b
blob = base64.b64decode(open(sys.argv[1]).read().split()[1])
msg = bytes([13]) + s(blob) + s(b"data to sign") + struct.pack(">I", 0)
c = socket.socket(socket.AF_UNIX); c.connect(sys.argv[2]); c.sendall(struct.pack(">I", len(msg)) + msg)
n = struct.unpack(">I", c.recv(4))[0]; r = b""
while len(r) < n: r += c.recv(n - len(r))
print(r[0])
PY
run --ssh "$FP1" -- sh -c 'ssh-keygen -q -Y sign -f /workspace/k1.pub -n file /workspace/data >/dev/null 2>&1; echo "k1=$?"
	ssh-keygen -q -Y sign -f /workspace/k2.pub -n file /workspace/data 2>/dev/null; echo "k2=$?"
	python3 /workspace/sign.py /workspace/k1.pub "$SSH_AUTH_SOCK"; python3 /workspace/sign.py /workspace/k2.pub "$SSH_AUTH_SOCK"'
eq "the allowed key signs, the key not allowed cannot (ssh-keygen; raw: SIGN_RESPONSE 14, FAILURE 5)" \
	"$RC:$(echo $OUT)" "0:k1=0 k2=255 14 5"
has "the refused signature is named" "$ERR" "berth: refused: ssh-agent: 1 signature(s) with a key --ssh did not allow ($FP2)"
ssh-keygen -Y check-novalidate -n file -s "$WS/data.sig" <"$WS/data" >/dev/null 2>&1
eq "the signature made inside verifies outside" "$?" "0"
run --ssh "$FP1" --ssh-host "$HOST" -- sh -c "$SSH -i /workspace/k2.pub -o IdentitiesOnly=yes -T $ME@127.0.0.1 echo k2 2>&1; echo rc=\$?"
has "ssh with the key not allowed is refused by the server" "$OUT" "Permission denied (publickey)"

# 4. The private keys are not in the sandbox's view.
K1BODY=$(sed -n 5p "$TOP/keys/k1") # the private part (lines 2 and 3 are a header and the public key)
run --ssh "$FP1" --env "NEEDLE=$K1BODY" -- sh -c "ls $TOP/keys/k1 2>&1; grep -rlsF -- \"\$NEEDLE\" /run /tmp \$HOME /workspace /etc/ssh; cat /proc/*/environ 2>/dev/null | tr '\0' '\n' | grep -c BEGIN"
has "the private key's file is not there" "$OUT" "No such file or directory"
eq "no file inside holds the private key, nor an environment" "$(printf '%s\n' "$OUT" | tail -n +2)" "0"

# 5. Host keys: the declared key passes, another fails; undeclared hosts and ports are refused.
run --ssh "$FP1" --ssh-host "127.0.0.1:$PORT=$TOP/keys/hk2.pub" -- sh -c "$SSH -T $ME@127.0.0.1 echo no 2>&1; echo rc=\$?"
has "a host key that is not the declared one fails the host key check" "$OUT" "Host key verification failed."
has "... exit 255" "$OUT" "rc=255"
# ... and a client that skips the check (its own -o, an empty known_hosts)
# gets no signature for a server whose host key is not the pinned one
run --ssh "$FP1" --ssh-host "127.0.0.1:$PORT=$TOP/keys/hk2.pub" -- sh -c "$SSH -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o GlobalKnownHostsFile=/dev/null -T $ME@127.0.0.1 echo logged-in 2>&1; echo rc=\$?"
hasnt "ssh -o StrictHostKeyChecking=no to a server whose key is not pinned: no login" "$OUT" "logged-in"
has "... the agent refused the signature, exit 255" "$OUT" "agent refused operation"
has "... named at exit, with the server's host key" "$ERR" \
	"berth: refused: ssh-agent: 1 login(s) to a server whose host key --ssh-host did not pin ($HFP): not signed"
run --ssh "$FP1" --ssh-host "$HOST" -- sh -c "ssh -o BatchMode=yes -o StrictHostKeyChecking=no -p $((PORT + 1)) -T $ME@127.0.0.1 echo no 2>&1; echo rc=\$?"
has "a port not declared is not reachable" "$OUT" "port $((PORT + 1)): Permission denied"
eq "... exit 255" "${OUT##*rc=}" 255
run --ssh "$FP1" --ssh-host "$HOST" -- sh -c 'cat /run/berth/ssh/known_hosts; grep -c StrictHostKeyChecking /etc/ssh/ssh_config'
eq "known_hosts holds the declared key under its name; the config checks it" "$OUT" \
	"[127.0.0.1]:$PORT $(cut -d' ' -f1,2 "$TOP/keys/hk.pub")
1"
run --ssh-host github.com -- cat /run/berth/ssh/known_hosts
eq "--ssh-host github.com pins GitHub's published keys (three)" "$RC:$(cut -d' ' -f1,2 <<<"$OUT" | tr '\n' ' ')" \
	"0:github.com ssh-ed25519 github.com ecdsa-sha2-nistp256 github.com ssh-rsa "

# 6. The audit trail: one ssh.sign per signature, with the key, count, user and host.
AUD=$(cat "$TOP"/state/berth/audit/*.jsonl 2>/dev/null)
has "ssh.sign records the key, count and user of a login" "$AUD" \
	"\"kind\":\"ssh.sign\",\"payload\":{\"count\":1,\"fingerprint\":\"$FP1\",\"host\":\"[127.0.0.1]:$PORT\",\"host_fingerprint\":\"$HFP\",\"kind\":\"userauth\",\"user\":\"$ME\"}"
has "ssh.sign records an SSHSIG with its namespace" "$AUD" "\"fingerprint\":\"$FP1\",\"kind\":\"sshsig\",\"namespace\":\"file\""
hasnt "no signature with the key not allowed is recorded" "$AUD" "\"fingerprint\":\"$FP2\""
hasnt "the private key is not in berth's state" "$(grep -rlsF -- "$K1BODY" "$TOP/state")" "$TOP"

# 7. Refusals before anything runs (exit 2).
run --ssh SHA256:nope -- true
has "a fingerprint that is not one: exit 2, named" "$RC:$ERR" "2:berth: invalid --ssh \`SHA256:nope\`"
run --ssh-host 127.0.0.1:$PORT -- true
has "a host without keys (not github.com): exit 2, with the fix" "$RC:$ERR" "2:berth: --ssh-host 127.0.0.1:$PORT: berth knows no host key"
run --ssh-host "*.example.com=$TOP/keys/hk.pub" -- true
has "a wildcard host: exit 2" "$RC:$ERR" "a wildcard pins no key"
ssh-keygen -q -t ed25519 -N '' -f "$TOP/keys/k4"
run --ssh-key "$TOP/keys/k4.pub" -- true
eq "a key the agent does not hold: exit 2" "$RC" 2
has "... named, with ssh-add" "$ERR" "berth: --ssh $(ssh-keygen -lf "$TOP/keys/k4.pub" | cut -d' ' -f2): your ssh-agent does not hold this key"
(unset SSH_AUTH_SOCK; run --ssh "$FP1" -- true; eq "no SSH_AUTH_SOCK: exit 2" "$RC" 2; has "... named" "$ERR" "berth: --ssh needs your ssh-agent, and SSH_AUTH_SOCK is not set"; echo "$T $FAILS" >"$TOP/sub")
read -r T FAILS <"$TOP/sub"
mkdir -p "$TOP/config/berth" && printf 'allow:\n  credentials: [OTHER]\n' >"$TOP/config/berth/rules.yml"
run --ssh "$FP1" -- true
has "a rules file without ssh-agent refuses --ssh (exit 2), before the widening" "$RC:$ERR" \
	"2:berth: refused by rules ($TOP/config/berth/rules.yml:2): credentials does not allow forwarding \`ssh-agent\`"
hasnt "... nothing was shown as a widening" "$ERR" "widening"
printf 'allow:\n  credentials: [ssh-agent]\n' >"$TOP/config/berth/rules.yml"
run --ssh "$FP1" -- sh -c 'ssh-add -l | wc -l'
eq "a rules file that lists ssh-agent lets it go" "$RC:$OUT" "0:1"
rm -f "$TOP/config/berth/rules.yml"
finish
