#!/usr/bin/env bash
# `berth export k8s` (docs/kubernetes.md) against the real binary: the three
# documents are valid against the Kubernetes API schema (k8s-validate.py,
# beside this script: the Kubernetes 1.22 API of Debian's python3-kubernetes,
# walked strictly; kubectl cannot validate without a server, which is checked
# too), their content is exactly what the policy says (annotations, the
# securityContext, limits, the NetworkPolicy's rules and ports), the
# validator refuses a document with a misspelt field, an agent profile is
# exported as `berth spawn` would compile it, and every option a Pod cannot
# carry is refused (exit 2, the option named, nothing printed on stdout).
#
# usage: run-export-k8s.sh /path/to/berth
# Needs /usr/bin/python3 with python3-kubernetes and python3-yaml (Debian;
# scripts/deps.sh installs them).  Creates nothing but a temporary directory
# (XDG_CONFIG_HOME for a user profile).  Works as root and as a user.  TAP.
set -u
export LC_ALL=C
if [ $# -lt 1 ]; then
	echo "usage: $0 /path/to/berth" >&2
	exit 2
fi
BERTH=$(readlink -f -- "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3
VALIDATE=$HERE/k8s-validate.py
bail() { echo "Bail out! $*"; exit 1; }
[ -x "$BERTH" ] || bail "no berth binary at $1"
"$PY" -c 'import kubernetes.client, yaml' 2>/dev/null ||
	bail "$PY has no kubernetes module: apt-get install python3-kubernetes (scripts/deps.sh)"
T=$(mktemp -d /tmp/berth-k8s.XXXXXX) || bail "mktemp failed"
trap 'rm -rf "$T"' EXIT
chmod 755 "$T"
export XDG_CONFIG_HOME=$T/cfg BERTH_AUDIT_DIR=$T/audit
unset BERTH_TEST_FORCE_OFF
mkdir -p "$T/cfg/berth/profiles"

n=0 failn=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() {
	n=$((n + 1)); failn=$((failn + 1)); echo "not ok $n - $1"
	printf '%s\n' "${@:2}" | head -n 20 | sed 's/^/# /'
}
eq() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1" "want: $3" "got:  $2"; fi; }
has() { if [[ $2 == *"$3"* ]]; then ok "$1"; else bad "$1" "want: $3" "in:   $2"; fi; }
# ex ARGS...: berth export k8s ARGS; $RC, $OUT (file $T/out), $ERR
ex() { "$BERTH" export k8s "$@" >"$T/out" 2>"$T/err" </dev/null; RC=$?; ERR=$(cat "$T/err"); }
# q FILE EXPR: the value of the Python expression EXPR over the documents d[0..2] of FILE, as JSON
q() {
	"$PY" -c 'import json,sys,yaml
d=[x for x in yaml.safe_load_all(open(sys.argv[1])) if x is not None]
print(json.dumps(eval(sys.argv[2]), sort_keys=True))' "$1" "$2"
}
valid() { # valid DESC FILE NAME: the validator accepts the three documents
	local out rc
	out=$("$PY" "$VALIDATE" "$2" 2>&1); rc=$?
	eq "$1" "$rc:$out" "0:valid: node.k8s.io/v1 RuntimeClass berth
valid: v1 Pod $3
valid: networking.k8s.io/v1 NetworkPolicy $3"
}

# 1. A policy with hosts of each kind, limits, a timeout and a variable.
ex --image ghcr.io/example/agent:1.2 --name agent-1 --namespace agents \
	--allow-host api.example.com --allow-host '*.example.org:8443' --allow-host 192.0.2.10:5000 \
	--allow-host '[2001:db8::7]:*' --memory 2G --cpus 1.5 --pids 256 --timeout 90m \
	--env 'GREETING=say "hi"' --audit-dir /var/log/berth -- agent --task 'fix: the bug'
eq "export: exit 0" "$RC" 0
has "export: --pids has no Pod field, said" "$ERR" "berth: note: --pids 256: a Pod has no field for a process limit"
cp "$T/out" "$T/good.yaml"
valid "the three documents are valid against the Kubernetes API schema" "$T/good.yaml" agent-1
eq "RuntimeClass: name berth, handler berth" "$(q "$T/good.yaml" '[d[0]["metadata"], d[0]["handler"]]')" \
	'[{"name": "berth"}, "berth"]'
eq "Pod: the annotations, exactly" "$(q "$T/good.yaml" 'd[1]["metadata"]["annotations"]')" \
	'{"berth.dev/allow-hosts": "api.example.com,*.example.org:8443,192.0.2.10:5000,[2001:db8::7]:*", "berth.dev/audit-dir": "/var/log/berth", "berth.dev/workspace": "/workspace"}'
eq "Pod: name, namespace, label" "$(q "$T/good.yaml" '[d[1]["metadata"][k] for k in ("name", "namespace", "labels")]')" \
	'["agent-1", "agents", {"berth.dev/pod": "agent-1"}]'
eq "Pod: runtimeClassName, restartPolicy, deadline, no token, no service links" \
	"$(q "$T/good.yaml" '[d[1]["spec"][k] for k in ("runtimeClassName", "restartPolicy", "activeDeadlineSeconds", "automountServiceAccountToken", "enableServiceLinks")]')" \
	'["berth", "Never", 5400, false, false]'
eq "Pod: runAsNonRoot, ids, seccomp RuntimeDefault" "$(q "$T/good.yaml" 'd[1]["spec"]["securityContext"]')" \
	'{"fsGroup": 1000, "runAsGroup": 1000, "runAsNonRoot": true, "runAsUser": 1000, "seccompProfile": {"type": "RuntimeDefault"}}'
eq "container: no escalation, not privileged, read-only root, every capability dropped" \
	"$(q "$T/good.yaml" 'd[1]["spec"]["containers"][0]["securityContext"]')" \
	'{"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}, "privileged": false, "readOnlyRootFilesystem": true}'
eq "container: image, command as given, working directory" \
	"$(q "$T/good.yaml" '[d[1]["spec"]["containers"][0][k] for k in ("name", "image", "command", "workingDir")]')" \
	'["agent", "ghcr.io/example/agent:1.2", ["agent", "--task", "fix: the bug"], "/workspace"]'
eq "container: HOME and the variable, quotes intact" "$(q "$T/good.yaml" 'd[1]["spec"]["containers"][0]["env"]')" \
	'[{"name": "HOME", "value": "/home/agent"}, {"name": "GREETING", "value": "say \"hi\""}]'
eq "container: limits from --memory and --cpus" "$(q "$T/good.yaml" 'd[1]["spec"]["containers"][0]["resources"]')" \
	'{"limits": {"cpu": "1500m", "memory": "2Gi"}}'
has "pids: a YAML comment says a Pod cannot express it" "$(cat "$T/good.yaml")" \
	"# pids: 256 (berth's --pids): a Pod has no field for a process limit"
eq "volumes: workspace emptyDir, /tmp and home in memory of --tmp-size" "$(q "$T/good.yaml" 'd[1]["spec"]["volumes"]')" \
	'[{"emptyDir": {}, "name": "workspace"}, {"emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"}, "name": "tmp"}, {"emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"}, "name": "home"}]'
eq "mounts: /workspace, /tmp, /home/agent" \
	"$(q "$T/good.yaml" '[(m["name"], m["mountPath"]) for m in d[1]["spec"]["containers"][0]["volumeMounts"]]')" \
	'[["workspace", "/workspace"], ["tmp", "/tmp"], ["home", "/home/agent"]]'
eq "NetworkPolicy: selects the Pod, denies ingress, governs egress" \
	"$(q "$T/good.yaml" '[d[2]["metadata"], d[2]["spec"]["podSelector"], d[2]["spec"]["policyTypes"], "ingress" in d[2]["spec"]]')" \
	'[{"name": "agent-1", "namespace": "agents"}, {"matchLabels": {"berth.dev/pod": "agent-1"}}, ["Ingress", "Egress"], false]'
eq "NetworkPolicy: four egress rules: DNS, the names, each address" "$(q "$T/good.yaml" 'len(d[2]["spec"]["egress"])')" 4
eq "NetworkPolicy: DNS to the cluster's DNS pods, UDP and TCP 53" "$(q "$T/good.yaml" 'd[2]["spec"]["egress"][0]')" \
	'{"ports": [{"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}], "to": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}}, "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}]}'
eq "NetworkPolicy: the names' declared ports, TCP 80 443 8443" "$(q "$T/good.yaml" 'd[2]["spec"]["egress"][1]["ports"]')" \
	'[{"port": 80, "protocol": "TCP"}, {"port": 443, "protocol": "TCP"}, {"port": 8443, "protocol": "TCP"}]'
eq "NetworkPolicy: to every address but berth's refused ranges" \
	"$(q "$T/good.yaml" '[(b["ipBlock"]["cidr"], "10.0.0.0/8" in b["ipBlock"]["except"] or "2001:db8::/32" in b["ipBlock"]["except"], "169.254.0.0/16" in b["ipBlock"]["except"] or "2002::/16" in b["ipBlock"]["except"]) for b in d[2]["spec"]["egress"][1]["to"]]')" \
	'[["0.0.0.0/0", true, true], ["2000::/3", true, true]]'
has "NetworkPolicy: a comment says the broker enforces the names" "$(cat "$T/good.yaml")" \
	"# the declared names: a NetworkPolicy cannot match a host name"
eq "NetworkPolicy: a literal to itself on its port" "$(q "$T/good.yaml" 'd[2]["spec"]["egress"][2]')" \
	'{"ports": [{"port": 5000, "protocol": "TCP"}], "to": [{"ipBlock": {"cidr": "192.0.2.10/32"}}]}'
eq "NetworkPolicy: a literal with :* on every port" "$(q "$T/good.yaml" 'd[2]["spec"]["egress"][3]')" \
	'{"to": [{"ipBlock": {"cidr": "2001:db8::7/128"}}]}'

# 2. No allow-host: no annotation, egress denied entirely.
ex --image img -- sh -c 'echo hi'
eq "no hosts: exit 0, nothing on stderr" "$RC:$ERR" "0:"
cp "$T/out" "$T/none.yaml"
valid "no hosts: valid" "$T/none.yaml" berth-agent
eq "no hosts: only the workspace annotation" "$(q "$T/none.yaml" 'd[1]["metadata"]["annotations"]')" \
	'{"berth.dev/workspace": "/workspace"}'
eq "no hosts: egress denied entirely (Egress governed, no rule)" \
	"$(q "$T/none.yaml" '[d[2]["spec"]["policyTypes"], d[2]["spec"].get("egress")]')" '[["Ingress", "Egress"], null]'
eq "no hosts: berth's default limits, no deadline, no namespace" \
	"$(q "$T/none.yaml" '[d[1]["spec"]["containers"][0]["resources"]["limits"], "activeDeadlineSeconds" in d[1]["spec"], "namespace" in d[1]["metadata"]]')" \
	'[{"cpu": "4", "memory": "8Gi"}, false, false]'

# 3. An agent profile: compiled as `berth spawn` compiles it.
ex --image ghcr.io/example/claude:2 --profile claude --allow-host extra.example.com --workspace-claim claude-ws \
	--user 4242:4343 -- -p hello
eq "profile: exit 0" "$RC" 0
has "profile: its credentials are not exported, said" "$ERR" \
	"note: profile \`claude\`'s credentials (ANTHROPIC_API_KEY, CLAUDE_CODE_OAUTH_TOKEN) are not exported"
cp "$T/out" "$T/claude.yaml"
valid "profile: valid" "$T/claude.yaml" claude
want=$(cd "$T" && "$BERTH" run --dry-run --json --network api-only --allow-host extra.example.com -- true |
	"$PY" -c 'import json,sys; print(",".join(json.load(sys.stdin)["policy"]["network"]["allow_hosts"]))')
[ -n "$want" ] || bad "berth run --dry-run gave the api-only hosts"
eq "profile: allow-hosts is berth's own api-only list plus --allow-host" \
	"$(q "$T/claude.yaml" 'd[1]["metadata"]["annotations"]["berth.dev/allow-hosts"]')" "\"$want\""
eq "profile: its command, then the agent's arguments; a terminal" \
	"$(q "$T/claude.yaml" '[d[1]["spec"]["containers"][0][k] for k in ("command", "stdin", "tty")]')" \
	'[["claude", "--dangerously-skip-permissions", "-p", "hello"], true, true]'
eq "profile: its env" "$(q "$T/claude.yaml" '[e["name"] for e in d[1]["spec"]["containers"][0]["env"]]')" \
	'["HOME", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "DISABLE_AUTOUPDATER", "DISABLE_INSTALLATION_CHECKS"]'
eq "profile: --user and --workspace-claim" \
	"$(q "$T/claude.yaml" '[d[1]["spec"]["securityContext"]["runAsUser"], d[1]["spec"]["securityContext"]["runAsGroup"], d[1]["spec"]["volumes"][0]]')" \
	'[4242, 4343, {"name": "workspace", "persistentVolumeClaim": {"claimName": "claude-ws"}}]'
printf 'command: [sh]\noptions: [--rw, "%s:/data"]\n' "$T" >"$T/cfg/berth/profiles/wide.yml"
ex --image img --profile wide
eq "a profile's own --rw: exit 2, nothing printed" "$RC:$(cat "$T/out")" "2:"
has "... naming the option and the profile" "$ERR" "export k8s: \`--rw\` (from profile \`wide\`) binds a path of this machine"
printf 'command: [sh]\nenv: [SECRET_TOKEN]\n' >"$T/cfg/berth/profiles/hostenv.yml"
SECRET_TOKEN=hunter2 ex --image img --profile hostenv
eq "a profile's --env NAME: exit 2, nothing printed" "$RC:$(cat "$T/out")" "2:"
has "... naming the variable" "$ERR" "export k8s: \`--env SECRET_TOKEN\` (from profile \`hostenv\`) takes the value"
[[ $ERR != *hunter2* ]] && ok "... and never its value" || bad "the value of SECRET_TOKEN was printed" "$ERR"

# 4. What a Pod cannot carry: exit 2, the option named, nothing on stdout.
refuse() { # refuse WANT ARGS...
	local want=$1; shift
	ex --image img "$@" -- true
	if [ "$RC" -eq 2 ] && [ ! -s "$T/out" ] && [[ $ERR == *"$want"* ]]; then ok "refused: $*"
	else bad "refused: $* (want exit 2, no output, \`$want\`)" "rc=$RC" "$ERR"; fi
}
refuse "\`--workspace\` names a directory of this machine" --workspace "$T"
refuse "\`--ro\` binds a path of this machine" --ro /etc
refuse "\`--rw\` binds a path of this machine" --rw "$T"
refuse "\`--env HOME\` takes the value of \`HOME\` from this machine's environment" --env HOME
refuse "\`--env-file\` reads values from a file" --env-file /etc/hostname
refuse "\`--evidence\` copies files of this machine" --evidence /etc/hostname
refuse "\`--dns\` has no annotation" --dns 192.0.2.53
refuse "\`--unprotect\` has no annotation" --unprotect .git
refuse "\`--allow-degraded\` has no annotation" --allow-degraded
refuse "\`--network host\` is a widening a Pod cannot carry" --network host
refuse "\`--dry-run\` is \`berth run\`'s" --dry-run
refuse "unknown option or argument \`--mem\`" --mem 2G
refuse "invalid --name \`Agent_1\`" --name Agent_1
refuse "invalid --user \`0\`" --user 0
refuse "invalid --memory \`1K\`" --memory 1K
ex -- true
eq "no --image: exit 2, named" "$RC:$ERR" "2:berth: export k8s: no --image given
berth: hint: name the container image that holds the command, such as \`--image ghcr.io/you/agent:1.0\`"
ex --image img
eq "no command: exit 2, named" "$RC:$(head -n1 "$T/err")" "2:berth: export k8s: no command given"
"$BERTH" export yaml >/dev/null 2>"$T/err"; RC=$?
eq "an unknown format: exit 2, named" "$RC:$(head -n1 "$T/err")" "2:berth: export: unknown format \`yaml\`"

# 5. The validator catches a misspelt field (and a wrong type, value or version):
# each broken copy of the good documents fails, naming the problem.
broken() { # broken DESC SED-EXPR WANT
	local out rc
	sed "$2" "$T/good.yaml" >"$T/broken.yaml"
	cmp -s "$T/good.yaml" "$T/broken.yaml" && { bad "$1: the edit changed nothing"; return; }
	out=$("$PY" "$VALIDATE" "$T/broken.yaml" 2>&1); rc=$?
	if [ "$rc" -eq 1 ] && [[ $out == *"$3"* ]]; then ok "validator refuses $1"
	else bad "validator refuses $1 (want exit 1, \`$3\`)" "rc=$rc" "$out"; fi
}
broken "spec.runtimeClassNam" 's/runtimeClassName:/runtimeClassNam:/' \
	"doc2.spec.runtimeClassNam: unknown field 'runtimeClassNam' in V1PodSpec"
broken "allowPrivilegeEscalaton" 's/allowPrivilegeEscalation:/allowPrivilegeEscalaton:/' \
	"unknown field 'allowPrivilegeEscalaton' in V1SecurityContext"
broken "a NetworkPolicy's policyType" 's/^  policyTypes:/  policyType:/' \
	"doc3.spec.policyType: unknown field 'policyType' in V1NetworkPolicySpec"
broken "an ipBlock's cdir" '0,/cidr: "0.0.0.0\/0"/s//cdir: "0.0.0.0\/0"/' \
	"unknown field 'cdir' in V1IPBlock"
broken "a RuntimeClass without its handler" '/^handler: berth$/d' \
	"doc1: missing required field 'handler' in V1RuntimeClass"
broken "runAsUser as a string" 's/runAsUser: 1000/runAsUser: "1000"/' \
	"doc2.spec.securityContext.runAsUser: expected an integer, got str '1000'"
broken "seccompProfile type RuntimeDefalt" 's/type: RuntimeDefault/type: RuntimeDefalt/' \
	"unsupported value 'RuntimeDefalt'"
broken "node.k8s.io/v1beta9" 's#^apiVersion: node.k8s.io/v1$#apiVersion: node.k8s.io/v1beta9#' \
	"apiVersion 'node.k8s.io/v1beta9' kind 'RuntimeClass': not a kind this validator knows"
broken "a quantity 2GB" 's/memory: "2Gi"/memory: "2GB"/' "'2GB' is not a quantity"
broken "a field given twice" 's/^  restartPolicy: Never$/  restartPolicy: Never\n  restartPolicy: Always/' \
	"duplicate field 'restartPolicy'"
broken "an annotation key with a space" 's#berth.dev/workspace:#berth.dev/work space:#' \
	"key 'berth.dev/work space' is not a qualified name"

# 6. Why not kubectl: with no API server its client-side validation fails
# on the good documents too (it downloads the schema from the server), so
# it cannot tell a good document from a broken one here.
if command -v kubectl >/dev/null; then
	: >"$T/kubeconfig"
	out=$(KUBECONFIG=$T/kubeconfig timeout 60 kubectl apply --dry-run=client --validate=strict -f "$T/good.yaml" 2>&1)
	rc=$?
	if [ "$rc" -ne 0 ] && [[ $out == *openapi* || $out == *"connection refused"* ]]; then
		ok "kubectl without a server refuses even the good documents (no schema: $(printf '%s' "$out" | head -n1 | cut -c1-80))"
	else
		bad "kubectl without a server: expected a failure to fetch the schema" "rc=$rc" "$out"
	fi
else
	ok "# SKIP kubectl is not installed (the validator above does not need it)"
fi

echo "1..$n"
echo "# $((n - failn)) passed, $failn failed"
[ "$failn" -eq 0 ]
