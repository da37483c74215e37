#!/usr/bin/env bash
# `berth oci` against a hostile image and bundle: the attacks known from
# other container runtimes (runc's CVEs, their bug classes), each with what
# the host must show afterwards (docs/security.md, "A container's root";
# docs/oci.md).  The container image and the bundle are untrusted input.
#
#   - process.cwd and process.args[0] through /proc/self/fd/N (runc
#     CVE-2024-21626): no descriptor of the host is open when the
#     container's process resolves them, the working directory cannot be
#     outside the container's root, and a host file the attack would change
#     keeps its mode; the same for `exec` (as root), whose process is in
#     each of the container's namespaces (its cgroup namespace too)
#   - `exec` as uid or gid 4294967295 ((uid_t)-1: "unchanged" to
#     setresuid(2)), which would leave the process the host's root
#   - a bundle seccomp profile that answers seccomp(2) with errnoRet 0 (a
#     fake success): berth's own filter is in force anyway
#   - `exec` confined by the bundle as it was at `create`, not as it is on
#     disk at the time of `exec`
#   - a container that joins a network namespace by path gets the host's
#     /sys read-only: its cgroup tree is not shown
#   - links in the image: mount targets, masked paths, /proc through a link
#   - the host's berth binary through /proc/self/exe and /proc/1/exe (runc
#     CVE-2019-5736); --pid-file and --log through a link; a FIFO config.json
#   - a namespace to join that is a FIFO or a device (never opened)
#
# usage: run-oci-attack.sh /path/to/berth
# Needs a statically linked busybox (/usr/bin/busybox) and python3.  As
# root and as an unprivileged user (exec and the joined network namespace
# are root's: skipped as a user, with the reason).  Output is TAP.
set -u
export LC_ALL=C
B=${1:?usage: $0 /path/to/berth}
BB=${BUSYBOX:-/usr/bin/busybox}
T=$(mktemp -d "${TMPDIR:-/tmp}/oci-attack.XXXXXX")
chmod 755 "$T"
R=$T/root
# 0711, as containerd makes its runc root: a descriptor of it is a way out
# for anyone, not only for its owner
mkdir -m 711 "$R"
NS=berth-attack-$$
export XDG_STATE_HOME="$T/state" XDG_CONFIG_HOME="$T/config"
cleanup() {
	for d in "$R"/*/; do [ -d "$d" ] && "$B" oci --root "$R" delete --force "$(basename "$d")" >/dev/null 2>&1; done
	[ "$(id -u)" = 0 ] && ip netns del "$NS" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
n=0 fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
show() { sed 's/^/# /' "$@"; }
alive() { [ -r "/proc/$1/stat" ] && ! sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | grep -q '^[ZX]'; }
root=false
[ "$(id -u)" = 0 ] && root=true

if ! file -L "$BB" 2>/dev/null | grep -q 'statically linked'; then
	echo "1..0 # SKIP no statically linked busybox at $BB (apt install busybox-static)"
	exit 0
fi

mkdir -p "$T/rootfs/bin" "$T/rootfs/etc" "$T/rootfs/tmp" "$T/rootfs/proc" "$T/rootfs/dev" "$T/rootfs/sys"
cp "$BB" "$T/rootfs/bin/busybox"
for c in sh cat echo id sleep ls chmod mkdir touch unshare grep pwd true; do ln -s busybox "$T/rootfs/bin/$c"; done
# A host file that each attack tries to make world-writable, at every depth
# a descriptor of the state directory, its root or the bundle leads to.
for v in "$T/victim" "$R.victim"; do echo secret >"$v" && chmod 600 "$v"; done
# victims: their modes into $v, then 600 again for the next attack; vok
# says whether both still had 600
victims() {
	v=$(stat -c %a "$T/victim" "$R.victim" | tr '\n' ' ')
	chmod 600 "$T/victim" "$R.victim"
	vok=false
	[ "$v" = "600 600 " ] && vok=true
}
CHMODS='for p in ../victim ../../victim ../../../victim ../root.victim ../../root.victim; do chmod 666 $p; done 2>/dev/null; echo RAN'

# bundle NAME ARGS_JSON [EXTRA_PY]: $T/NAME/config.json, EXTRA_PY edits `c`
bundle() {
	mkdir -p "$T/$1"
	[ -e "$T/$1/rootfs" ] || ln -sfn ../rootfs "$T/$1/rootfs"
	python3 - "$T/$1/config.json" "$2" "${3:-}" "$T" <<'EOF'
import json, sys
path, args, extra, T = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
c = {
    "ociVersion": "1.0.2",
    "process": {"user": {"uid": 0, "gid": 0}, "args": json.loads(args), "env": ["PATH=/bin"], "cwd": "/"},
    "root": {"path": "rootfs", "readonly": True},
    "mounts": [{"destination": "/proc", "type": "proc", "source": "proc"}],
    "linux": {"namespaces": [{"type": t} for t in ["pid", "network", "ipc", "uts", "mount"]]},
}
exec(extra)
json.dump(c, open(path, "w"))
EOF
}

# run ID BUNDLE: create and start, wait until the supervisor is gone;
# `create RC start RC` on stdout, the container's output in $T/ID.out
run() {
	local pid
	"$B" oci --root "$R" --log "$T/log" create --bundle "$2" --pid-file "$T/$1.pid" "$1" \
		</dev/null >"$T/$1.out" 2>"$T/$1.err"
	local rc=$?
	if [ $rc != 0 ]; then
		echo "create $rc"
		return
	fi
	"$B" oci --root "$R" start "$1" 2>>"$T/$1.err"
	echo "create 0 start $?"
	pid=$(cat "$T/$1.pid")
	for _ in $(seq 1 100); do alive "$pid" || break; sleep 0.1; done
	"$B" oci --root "$R" delete --force "$1" 2>/dev/null
}

# 1: process.cwd through a descriptor (runc CVE-2024-21626)
bad=""
for fd in 3 4 5 6 7 8 9 10 11 12; do
	bundle cwd "[\"/bin/sh\", \"-c\", \"$CHMODS\"]" "c['process']['cwd'] = '/proc/self/fd/$fd'"
	got=$(run cwd$fd "$T/cwd")
	if [ "$got" != "create 0 start 1" ] || grep -q RAN "$T/cwd$fd.out" ||
		! grep -q "cannot enter the container's working directory \`/proc/self/fd/$fd\`" "$T/cwd$fd.err"; then
		bad="$bad $fd($got)"
		show "$T/cwd$fd.out" "$T/cwd$fd.err"
	fi
done
victims
if [ -z "$bad" ] && $vok; then
	ok "process.cwd /proc/self/fd/3..12: refused at start (1), the command never runs, the host's files keep their mode"
else
	not_ok "process.cwd through a descriptor entered:$bad (victims $v)"
fi
bundle cwdin '["/bin/sh", "-c", "pwd"]' "c['process']['cwd'] = '/tmp'"
got=$(run cwdin "$T/cwdin")
if [ "$got:$(cat "$T/cwdin.out")" = "create 0 start 0:/tmp" ]; then
	ok "process.cwd /tmp: entered"
else
	not_ok "process.cwd /tmp: $got"
	show "$T/cwdin.err"
fi

# 2: process.args[0] through a descriptor: nothing of the host to run
bad=""
for fd in 3 4 5 6 7 8 9 10; do
	bundle argv "[\"/proc/self/fd/$fd/bin/busybox\", \"sh\", \"-c\", \"echo RAN\"]"
	got=$(run argv$fd "$T/argv")
	if [ "$got" != "create 0 start 1" ] || grep -q RAN "$T/argv$fd.out"; then
		bad="$bad $fd($got)"
		show "$T/argv$fd.err"
	fi
done
if [ -z "$bad" ]; then
	ok "process.args[0] /proc/self/fd/3..10/bin/busybox: start fails (1), nothing of the host's is run"
else
	not_ok "process.args[0] through a descriptor ran:$bad"
fi

# 3: berth's own seccomp filter whatever the bundle's profile answers to
# seccomp(2) (errnoRet 0: a success that loads nothing)
fake='c["linux"]["seccomp"] = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["seccomp"], "action": "SCMP_ACT_ERRNO", "errnoRet": 0}]}'
bundle fake '["/bin/sh", "-c", "unshare -U true"]' "$fake"
got=$(run fake "$T/fake")
if [ "$got" = "create 0 start 0" ] && grep -q 'unshare(0x10000000): Operation not permitted' "$T/fake.err"; then
	ok "a profile faking seccomp(2) (errnoRet 0): berth's filter still denies unshare (EPERM)"
else
	not_ok "a profile faking seccomp(2): $got"
	show "$T/fake.err"
fi
deny='c["linux"]["seccomp"] = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 13}]}'
bundle prof '["/bin/sh", "-c", "mkdir /tmp/d; unshare -U true"]' "$deny"
got=$(run prof "$T/prof")
if [ "$got" = "create 0 start 1" ] || { [ "$got" = "create 0 start 0" ] &&
	grep -q "can't create directory '/tmp/d': Permission denied" "$T/prof.err" &&
	grep -q 'unshare(0x10000000): Operation not permitted' "$T/prof.err"; }; then
	ok "a bundle's profile and berth's filter both apply (mkdir EACCES from the profile, unshare EPERM from berth)"
else
	not_ok "the bundle's profile with berth's: $got"
	show "$T/prof.err"
fi

# 4: links in the image: mount targets stay in the container's root, /proc
# through a link is berth's own, a masked path that is a link masks nothing
# of the host's
mkdir -p "$T/hostdir" "$T/rootfs2/d"
echo hostfile >"$T/hostdir/f"
cp -a "$T/rootfs/." "$T/rootfs2/"
ln -s "/oldroot$T/hostdir" "$T/rootfs2/abs"
ln -s ../../../../../../../../.. "$T/rootfs2/d/up"
ln -s /proc "$T/rootfs2/mnt"
ln -s "/oldroot$T/hostdir/f" "$T/rootfs2/etc/masked"
bundle links '["/bin/sh", "-c", "cat /proc/sys/kernel/ostype; ls /abs /d/up/srv/berth-attack-z; echo RAN"]' \
	"c['root']['path'] = T + '/rootfs2'
c['mounts'] += [{'destination': d, 'type': 'tmpfs', 'source': 'tmpfs', 'options': ['size=1m']} for d in ['/abs', '/d/up/srv/berth-attack-z', '/mnt/sys']]
c['linux']['maskedPaths'] = ['/etc/masked']"
got=$(run links "$T/links")
if [ "$got" = "create 0 start 0" ] && [ "$(cat "$T/links.out")" = "Linux
/abs:

/d/up/srv/berth-attack-z:
RAN" ] && [ "$(ls "$T/hostdir")" = f ] && [ "$(cat "$T/hostdir/f")" = hostfile ] && [ ! -e /srv/berth-attack-z ]; then
	ok "mount targets through absolute, relative and /proc links: inside the container's root; the host's directory untouched"
else
	not_ok "mount targets through links: $got"
	show "$T/links.out" "$T/links.err"
	ls -la "$T/hostdir" | show
fi
mkdir -p "$T/rootfs3" && cp -a "$T/rootfs/." "$T/rootfs3/"
rmdir "$T/rootfs3/proc" && ln -s "/oldroot/proc" "$T/rootfs3/proc"
bundle proclink '["/bin/true"]' "c['root']['path'] = T + '/rootfs3'"
got=$(run proclink "$T/proclink")
if [ "$got" = "create 1" ] && grep -q "the container's root has \`/proc\` and it is not a directory" "$T/proclink.err" &&
	[ ! -e "$R/proclink" ]; then
	ok "/proc a link in the image (runc CVE-2023-28642): refused (1), nothing left"
else
	not_ok "/proc a link in the image: $got"
	show "$T/proclink.err"
fi

# A directory on a mount target's way swapped with a link out of the root
# while containers are made (another container writing a volume both share:
# runc CVE-2021-30465): no mount point is ever made through the link, on
# the host (a directory anyone may write, as /tmp), nor a mount put there.
mkdir -p "$T/rootfs4/data/sub" "$T/hostpub" && chmod 1777 "$T/hostpub"
cp -a "$T/rootfs/." "$T/rootfs4/"
ln -s "/oldroot$T/hostpub" "$T/rootfs4/data/sublink"
bundle swap '["/bin/true"]' "c['root']['path'] = T + '/rootfs4'
c['mounts'] += [{'destination': '/data/sub/d/e', 'type': 'tmpfs', 'source': 'tmpfs', 'options': ['size=1m']},
                {'destination': '/data/sub/f', 'type': 'bind', 'source': '/etc/hostname', 'options': ['ro', 'bind']}]"
python3 - "$T/rootfs4/data" "$T/swap.stop" <<'EOF2' &
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
os.chdir(sys.argv[1])
while not os.path.exists(sys.argv[2]):
    for _ in range(1000):
        libc.renameat2(-100, b"sub", -100, b"sublink", 2)  # RENAME_EXCHANGE
EOF2
racer=$!
made=0 other=0
for i in $(seq 1 "${SWAP_RUNS:-150}"); do
	if "$B" oci --root "$R" create --bundle "$T/swap" "swap$i" </dev/null >/dev/null 2>"$T/swap.err"; then
		made=$((made + 1))
		"$B" oci --root "$R" delete --force "swap$i"
	elif [ -e "$R/swap$i" ] || ! grep -q . "$T/swap.err"; then
		other=$((other + 1))
	fi
	[ -n "$(ls -A "$T/hostpub")" ] && break
done
touch "$T/swap.stop"
wait "$racer"
if [ -z "$(ls -A "$T/hostpub")" ] && [ "$other" = 0 ] && ! grep -q " $T/hostpub" /proc/self/mountinfo; then
	ok "a directory swapped with a link out of the root at create ($i runs, $made made): nothing made or mounted through it, every refusal said why and left nothing"
else
	not_ok "a directory swapped with a link at create (run $i, $other bad refusals): the host got $(ls -A "$T/hostpub" | tr '\n' ' ')"
	show "$T/swap.err"
fi

# runc CVE-2019-5736: the host's berth binary, the sandbox's pid 1 and the
# command's own /proc/self/exe before its execve, is neither run nor written
sum0=$(sha256sum <"$(realpath "$B")")
bundle selfexe '["/proc/self/exe", "--version"]'
got=$(run selfexe "$T/selfexe")
bundle pid1exe '["/bin/sh", "-c", "echo x >>/proc/1/exe || echo refused; cat /proc/1/environ >/dev/null 2>&1 || echo refused"]'
got2=$(run pid1exe "$T/pid1exe")
if [ "$got" = "create 0 start 1" ] && grep -q "cannot run \`/proc/self/exe\`: Permission denied" "$T/selfexe.err" &&
	[ "$got2:$(cat "$T/pid1exe.out" | tr '\n' ' ')" = "create 0 start 0:refused refused " ] &&
	[ "$(sha256sum <"$(realpath "$B")")" = "$sum0" ]; then
	ok "/proc/self/exe (the host's berth) not run (EACCES), /proc/1/exe not written, pid 1's environ not read (runc CVE-2019-5736)"
else
	not_ok "/proc/self/exe, /proc/1/exe: $got / $got2: $(cat "$T/pid1exe.out")"
	show "$T/selfexe.err" "$T/pid1exe.err"
fi

# --pid-file and --log through a link: never written through it
echo keep >"$T/target"
ln -s "$T/target" "$T/pidlink"
ln -s "$T/target" "$T/loglink"
bundle plain '["/bin/true"]'
"$B" oci --root "$R" create --bundle "$T/plain" --pid-file "$T/pidlink" plain </dev/null >/dev/null 2>&1
rc=$?
"$B" oci --root "$R" delete --force plain
"$B" oci --root "$R" --log "$T/loglink" state nothere >/dev/null 2>"$T/err"
rc2=$?
if [ "$rc:$rc2:$(cat "$T/target")" = "0:1:keep" ] && [ -f "$T/pidlink" ] && [ ! -L "$T/pidlink" ] &&
	grep -q "cannot open the log \`$T/loglink\`: Too many levels of symbolic links" "$T/err"; then
	ok "--pid-file a link: replaced, its target untouched; --log a link: refused (1)"
else
	not_ok "--pid-file, --log through a link: $rc:$rc2:$(cat "$T/target")"
	show "$T/err"
fi

# config.json a FIFO (nobody writes it): refused at once, never waited on
mkdir -p "$T/fifo" && ln -s ../rootfs "$T/fifo/rootfs" && mkfifo "$T/fifo/config.json"
timeout 10 "$B" oci --root "$R" create --bundle "$T/fifo" fifo </dev/null >/dev/null 2>"$T/err"
rc=$?
if [ $rc = 1 ] && grep -q "cannot read the bundle's config.json \`$T/fifo/config.json\`: not a regular file" "$T/err" && [ ! -e "$R/fifo" ]; then
	ok "config.json a FIFO: refused at once (1), nothing left"
else
	not_ok "config.json a FIFO: $rc"
	show "$T/err"
fi

# A namespace to join (linux.namespaces path) that is a FIFO or a device:
# refused as no namespace before it is opened (open(2) of a FIFO waits for
# a writer: the supervisor, and create with it, would hang for good; of a
# device, does what the device does on open)
mkfifo "$T/nsfifo"
bad=""
for tp in "ipc:IPC:$T/nsfifo" "uts:UTS:/dev/null" "network:network:$T/nsfifo"; do
	t=${tp%%:*} p=${tp#*:*:} w=${tp#*:}
	w=${w%%:*}
	bundle nsf '["/bin/true"]' "[e.update(path='$p') for e in c['linux']['namespaces'] if e['type'] == '$t']"
	timeout 10 "$B" oci --root "$R" create --bundle "$T/nsf" "nsf-$t" </dev/null >/dev/null 2>"$T/err"
	rc=$?
	# a reader blocked on the FIFO (the bug) let go
	python3 -c 'import os, sys
try: os.open(sys.argv[1], os.O_WRONLY | os.O_NONBLOCK)
except OSError: pass' "$T/nsfifo"
	if [ $rc != 1 ] || ! grep -q "joins \`$p\` as the $w namespace, and it is not a namespace" "$T/err" ||
		[ -e "$R/nsf-$t" ]; then
		bad="$bad $t($rc)"
		show "$T/err"
	fi
done
if [ -z "$bad" ]; then
	ok "linux.namespaces path a FIFO, a device: refused at once (1), named, nothing left"
else
	not_ok "linux.namespaces path a FIFO, a device:$bad"
fi

# 5-8: exec, root's (berth_sandbox_enter joins the container from the host)
if ! $root; then
	for what in "exec: process.cwd through a descriptor" "exec: uid 4294967295" \
		"exec: a profile faking seccomp(2)" "exec: the bundle as created" \
		"exec: process.user keys" "exec: the container's namespaces" \
		"a joined network namespace: no cgroup tree"; do
		skip "$what" "exec and joining a network namespace are root's"
	done
else
	bundle long '["/bin/sleep", "1000"]'
	"$B" oci --root "$R" create --bundle "$T/long" --pid-file "$T/long.pid" long </dev/null >/dev/null 2>"$T/long.err" &&
		"$B" oci --root "$R" start long
	proc() { # proc FILE JSON: a process.json
		printf '%s' "$2" >"$T/$1"
	}
	bad=""
	for fd in 3 4 5 6 7 8 9 10 11 12; do
		proc p.json "{\"args\": [\"/bin/sh\", \"-c\", \"$CHMODS\"], \"cwd\": \"/proc/self/fd/$fd\"}"
		"$B" oci --root "$R" exec --process "$T/p.json" long >"$T/e.out" 2>"$T/e.err"
		rc=$?
		if [ $rc != 1 ] || grep -q RAN "$T/e.out" ||
			! grep -q "cannot enter the working directory \`/proc/self/fd/$fd\`" "$T/e.err"; then
			bad="$bad $fd($rc)"
			show "$T/e.out" "$T/e.err"
		fi
	done
	victims
	if [ -z "$bad" ] && $vok; then
		ok "exec: process.cwd /proc/self/fd/3..12 refused (1), nothing runs, the host's files keep their mode"
	else
		not_ok "exec: process.cwd through a descriptor:$bad (victims $v)"
	fi

	# every namespace of the container's command, the cgroup one too (a
	# process in the host's would see the host's cgroup paths)
	bad=""
	cmd=$("$B" oci --root "$R" ps long | tail -1)
	for t in mnt pid net ipc uts user cgroup; do
		want=$(readlink "/proc/$cmd/ns/$t")
		got=$("$B" oci --root "$R" exec long /bin/busybox readlink "/proc/self/ns/$t" 2>&1)
		[ -n "$want" ] && [ "$got" = "$want" ] || bad="$bad $t($got, not $want)"
	done
	if [ -z "$bad" ]; then
		ok "exec: the process is in each of the container's namespaces (mnt pid net ipc uts user cgroup)"
	else
		not_ok "exec: the container's namespaces:$bad"
	fi

	bad=""
	for ids in '"uid": 4294967295' '"gid": 4294967295' '"uid": 4294967295, "gid": 4294967295'; do
		proc p.json "{\"args\": [\"/bin/sh\", \"-c\", \"$CHMODS\"], \"cwd\": \"/proc/self/fd/3\", \"user\": {$ids}}"
		"$B" oci --root "$R" exec --process "$T/p.json" long >"$T/e.out" 2>"$T/e.err"
		rc=$?
		if [ $rc != 1 ] || grep -q RAN "$T/e.out" || ! grep -q 'must be 0 to 4294967294, not 4294967295' "$T/e.err"; then
			bad="$bad {$ids}($rc)"
			show "$T/e.out" "$T/e.err"
		fi
	done
	proc p.json '{"args": ["/bin/sleep", "30"], "user": {"uid": 4294967295, "gid": 4294967295}}'
	"$B" oci --root "$R" exec --process "$T/p.json" long >/dev/null 2>&1 &
	sleep 1
	sb=$("$B" oci --root "$R" ps --format json long | python3 -c 'import json,sys; print(json.load(sys.stdin)[1])')
	nsid=$(readlink "/proc/$sb/ns/pid")
	host0=$(for p in /proc/[0-9]*; do
		[ "$(readlink "$p/ns/pid" 2>/dev/null)" = "$nsid" ] && awk '/^Uid:/ {print $2}' "$p/status" 2>/dev/null
	done | grep -x 0)
	wait
	victims
	if [ -z "$bad" ] && [ -z "$host0" ] && $vok; then
		ok "exec: uid or gid 4294967295 ((uid_t)-1, the host's root kept) refused (1), named; no process of the host's uid 0 in the container"
	else
		not_ok "exec: uid 4294967295:$bad; host uids in the container: $host0; victims $v"
	fi

	proc p.json '{"args": ["/bin/sh", "-c", "unshare -U true"]}'
	bundle fakex '["/bin/sleep", "1000"]' "$fake"
	"$B" oci --root "$R" create --bundle "$T/fakex" fakex </dev/null >/dev/null 2>&1 && "$B" oci --root "$R" start fakex
	"$B" oci --root "$R" exec --process "$T/p.json" fakex >"$T/e.out" 2>"$T/e.err"
	rc=$?
	if [ $rc = 1 ] && grep -q 'unshare(0x10000000): Operation not permitted' "$T/e.err"; then
		ok "exec: a profile faking seccomp(2): berth's filter still denies unshare (EPERM)"
	else
		not_ok "exec: a profile faking seccomp(2): $rc"
		show "$T/e.err"
	fi
	"$B" oci --root "$R" delete --force fakex

	# the bundle changed after create: exec keeps the container's profile
	bundle asis '["/bin/sleep", "1000"]' "$deny"
	"$B" oci --root "$R" create --bundle "$T/asis" asis </dev/null >/dev/null 2>&1 && "$B" oci --root "$R" start asis
	bundle asis '["/bin/sleep", "1000"]' 'c["process"]["user"] = {"uid": 5, "gid": 5}'
	proc p.json '{"args": ["/bin/sh", "-c", "mkdir /tmp/d; id -u"]}'
	"$B" oci --root "$R" exec --process "$T/p.json" asis >"$T/e.out" 2>"$T/e.err"
	rc=$?
	rm -f "$T/asis/config.json"
	"$B" oci --root "$R" exec asis /bin/true 2>"$T/e2.err"
	rc2=$?
	if [ "$rc:$(cat "$T/e.out"):$rc2" = "0:0:0" ] && grep -q "can't create directory '/tmp/d': Permission denied" "$T/e.err"; then
		ok "exec: confined by the bundle as it was at create (its profile, its user), also with config.json gone"
	else
		not_ok "exec: the bundle as created: $rc:$(cat "$T/e.out"):$rc2"
		show "$T/e.err" "$T/e2.err"
	fi
	"$B" oci --root "$R" delete --force asis

	proc p.json '{"args": ["/bin/true"], "user": {"uid": 0, "gid": 0, "username": "root"}}'
	"$B" oci --root "$R" exec --process "$T/p.json" long >/dev/null 2>"$T/e.err"
	rc=$?
	if [ $rc = 1 ] && grep -q '`process.user.username` is not supported by berth oci' "$T/e.err"; then
		ok "exec: an unknown key of process.user refused (1), named"
	else
		not_ok "exec: an unknown key of process.user: $rc"
		show "$T/e.err"
	fi
	"$B" oci --root "$R" delete --force long

	# 9: a network namespace joined by path: the host's /sys, no cgroup tree
	if ip netns add "$NS" 2>/dev/null; then
		bundle joined '["/bin/sh", "-c", "ls /sys/fs/cgroup | wc -l; ls /sys/kernel >/dev/null && echo sys"]' \
			"c['linux']['namespaces'][1]['path'] = '/var/run/netns/$NS'"
		got=$(run joined "$T/joined")
		if [ "$got:$(cat "$T/joined.out" | tr '\n' ' ')" = "create 0 start 0:0 sys " ]; then
			ok "a joined network namespace: /sys is the host's, read-only, without its cgroup tree"
		else
			not_ok "a joined network namespace: $got: $(cat "$T/joined.out" | tr '\n' ' ')"
			show "$T/joined.err"
		fi
	else
		skip "a joined network namespace: no cgroup tree" "ip netns add failed"
	fi
fi

left=$(ps -eo pid,args | grep -F -- "--root $R" | grep -v grep)
if [ -z "$left" ] && [ -z "$(ls "$R" 2>/dev/null)" ]; then
	ok "nothing is left: no supervisor, no state"
else
	not_ok "left behind: $left $(ls "$R")"
fi

echo "1..$n"
exit $((fails > 0))
