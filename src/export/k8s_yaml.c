/* SPDX-License-Identifier: MIT */
/*
 * k8s_yaml.c - the RuntimeClass, Pod and NetworkPolicy of a policy
 * (berth_k8s_yaml, k8s.h).
 */
#include "k8s.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "../policy/addr.h"
#include "../policy/hostpat.h"
#include "../util/cleanup.h"
#include "../util/text.h"
#include "yamlw.h"

#ifndef BERTH_VERSION
#define BERTH_VERSION "0.0.0"
#endif

/* A byte count as a Kubernetes quantity: the largest binary suffix that
 * divides it (2Gi, 1536Mi), else plain bytes. */
static void quantity_bytes(char *buf, size_t n, uint64_t v)
{
	static const char *const suffix[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
	int k = -1;

	while (v > 0 && v % 1024 == 0 && k < 5) {
		v /= 1024;
		k++;
	}
	snprintf(buf, n, "%" PRIu64 "%s", v, k >= 0 ? suffix[k] : "");
}

/* Thousandths of a CPU as a quantity: `2`, `1500m`. */
static void quantity_cpu(char *buf, size_t n, uint32_t millicpus)
{
	if (millicpus % 1000 == 0)
		snprintf(buf, n, "%u", millicpus / 1000);
	else
		snprintf(buf, n, "%um", millicpus);
}

static void runtime_class(struct berth_yamlw *w)
{
	berth_yamlw_line(w, 0, "---");
	berth_yamlw_line(w, 0, "apiVersion: node.k8s.io/v1");
	berth_yamlw_line(w, 0, "kind: RuntimeClass");
	berth_yamlw_line(w, 0, "metadata:");
	berth_yamlw_line(w, 1, "name: %s", BERTH_K8S_RUNTIME_CLASS);
	berth_yamlw_comment(w, 0, "containerd's runtime of that name runs berth (docs/kubernetes.md):");
	berth_yamlw_comment(w, 0, "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.%s]",
			    BERTH_K8S_RUNTIME_CLASS);
	berth_yamlw_line(w, 0, "handler: %s", BERTH_K8S_RUNTIME_CLASS);
}

static void metadata(struct berth_yamlw *w, int indent, const struct berth_k8s_spec *s)
{
	berth_yamlw_line(w, indent, "metadata:");
	berth_yamlw_str(w, indent + 1, false, "name", s->name);
	if (s->ns != NULL)
		berth_yamlw_str(w, indent + 1, false, "namespace", s->ns);
}

static void pod_annotations(struct berth_yamlw *w, const struct berth_k8s_spec *s,
			    const struct berth_policy *p)
{
	berth_yamlw_line(w, 1, "labels:");
	berth_yamlw_str(w, 2, false, BERTH_K8S_LABEL_POD, s->name);
	berth_yamlw_comment(w, 1, "berth's wishes, handed to its runtime by containerd (pod_annotations)");
	berth_yamlw_line(w, 1, "annotations:");
	berth_yamlw_str(w, 2, false, BERTH_K8S_ANN_WORKSPACE, BERTH_K8S_WORKSPACE);
	if (p->n_allow_hosts > 0) {
		struct berth_buf hosts = {0};
		for (size_t i = 0; i < p->n_allow_hosts; i++)
			berth_buf_putf(&hosts, "%s%s", i > 0 ? "," : "", p->allow_hosts[i]);
		if (hosts.oom)
			w->b.oom = true;
		else
			berth_yamlw_str(w, 2, false, BERTH_K8S_ANN_ALLOW_HOSTS, hosts.p);
		berth_buf_free(&hosts);
	}
	if (s->audit_dir != NULL)
		berth_yamlw_str(w, 2, false, BERTH_K8S_ANN_AUDIT_DIR, s->audit_dir);
}

static void pod_security(struct berth_yamlw *w, const struct berth_k8s_spec *s)
{
	berth_yamlw_line(w, 1, "securityContext:");
	berth_yamlw_line(w, 2, "runAsNonRoot: true");
	berth_yamlw_line(w, 2, "runAsUser: %u", s->uid);
	berth_yamlw_line(w, 2, "runAsGroup: %u", s->gid);
	berth_yamlw_comment(w, 2, "the workspace's files belong to this group (a claim's too)");
	berth_yamlw_line(w, 2, "fsGroup: %u", s->gid);
	berth_yamlw_comment(w, 2, "the engine's profile; berth's own seccomp filter is applied as well");
	berth_yamlw_line(w, 2, "seccompProfile:");
	berth_yamlw_line(w, 3, "type: RuntimeDefault");
}

static void container_env(struct berth_yamlw *w, const struct berth_policy *p)
{
	bool home = false;

	for (size_t i = 0; i < p->n_env; i++)
		home = home || strcmp(p->env[i].name, "HOME") == 0;
	berth_yamlw_line(w, 3, "env:");
	if (!home) {
		berth_yamlw_str(w, 4, true, "name", "HOME");
		berth_yamlw_str(w, 5, false, "value", BERTH_K8S_HOME);
	}
	for (size_t i = 0; i < p->n_env; i++) {
		berth_yamlw_str(w, 4, true, "name", p->env[i].name);
		berth_yamlw_str(w, 5, false, "value", p->env[i].value);
	}
}

static void container_resources(struct berth_yamlw *w, const struct berth_policy *p)
{
	char q[32];

	berth_yamlw_line(w, 3, "resources:");
	berth_yamlw_line(w, 4, "limits:");
	quantity_bytes(q, sizeof q, p->memory);
	berth_yamlw_str(w, 5, false, "memory", q);
	quantity_cpu(q, sizeof q, p->millicpus);
	berth_yamlw_str(w, 5, false, "cpu", q);
	berth_yamlw_comment(w, 4, "pids: %u (berth's %s): a Pod has no field for a process limit; the",
			    p->pids, p->pids_set ? "--pids" : "default");
	berth_yamlw_comment(w, 4, "kubelet's podPidsLimit (KubeletConfiguration) bounds every pod of a node");
	berth_yamlw_comment(w, 4, "nofile: %u (berth's %s): no Pod field either; the container engine's",
			    p->nofile, p->nofile != BERTH_DEFAULT_NOFILE ? "--nofile" : "default");
	berth_yamlw_comment(w, 4, "RLIMIT_NOFILE applies (containerd: its base OCI spec)");
}

static void container(struct berth_yamlw *w, const struct berth_k8s_spec *s, const struct berth_policy *p)
{
	berth_yamlw_line(w, 1, "containers:");
	berth_yamlw_str(w, 2, true, "name", BERTH_K8S_CONTAINER);
	berth_yamlw_str(w, 3, false, "image", s->image);
	berth_yamlw_line(w, 3, "command:");
	for (size_t i = 0; i < p->argc; i++)
		berth_yamlw_str(w, 4, false, NULL, p->argv[i]);
	berth_yamlw_line(w, 3, "workingDir: %s", BERTH_K8S_WORKSPACE);
	if (s->tty) {
		berth_yamlw_line(w, 3, "stdin: true");
		berth_yamlw_line(w, 3, "tty: true");
	}
	container_env(w, p);
	container_resources(w, p);
	berth_yamlw_line(w, 3, "securityContext:");
	berth_yamlw_line(w, 4, "allowPrivilegeEscalation: false");
	berth_yamlw_line(w, 4, "privileged: false");
	berth_yamlw_line(w, 4, "readOnlyRootFilesystem: true");
	berth_yamlw_line(w, 4, "capabilities:");
	berth_yamlw_line(w, 5, "drop:");
	berth_yamlw_line(w, 6, "- ALL");
	berth_yamlw_line(w, 3, "volumeMounts:");
	berth_yamlw_line(w, 4, "- name: workspace");
	berth_yamlw_line(w, 5, "mountPath: %s", BERTH_K8S_WORKSPACE);
	berth_yamlw_line(w, 4, "- name: tmp");
	berth_yamlw_line(w, 5, "mountPath: /tmp");
	berth_yamlw_line(w, 4, "- name: home");
	berth_yamlw_line(w, 5, "mountPath: %s", BERTH_K8S_HOME);
}

static void volumes(struct berth_yamlw *w, const struct berth_k8s_spec *s, const struct berth_policy *p)
{
	static const char *const mem[] = {"tmp", "home"};
	char q[32];

	quantity_bytes(q, sizeof q, p->tmp_size);
	berth_yamlw_line(w, 1, "volumes:");
	berth_yamlw_line(w, 2, "- name: workspace");
	if (s->workspace_claim != NULL) {
		berth_yamlw_line(w, 3, "persistentVolumeClaim:");
		berth_yamlw_str(w, 4, false, "claimName", s->workspace_claim);
	} else {
		berth_yamlw_comment(w, 3, "gone with the Pod: --workspace-claim CLAIM keeps the work");
		berth_yamlw_line(w, 3, "emptyDir: {}");
	}
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(mem); i++) {
		berth_yamlw_line(w, 2, "- name: %s", mem[i]);
		if (i == 0)
			berth_yamlw_comment(w, 3,
					    "memory-backed, as berth's tmpfs (--tmp-size), counted in the "
					    "memory limit");
		berth_yamlw_line(w, 3, "emptyDir:");
		berth_yamlw_line(w, 4, "medium: Memory");
		berth_yamlw_str(w, 4, false, "sizeLimit", q);
	}
}

static void pod(struct berth_yamlw *w, const struct berth_k8s_spec *s, const struct berth_policy *p)
{
	berth_yamlw_line(w, 0, "---");
	berth_yamlw_line(w, 0, "apiVersion: v1");
	berth_yamlw_line(w, 0, "kind: Pod");
	metadata(w, 0, s);
	pod_annotations(w, s, p);
	berth_yamlw_line(w, 0, "spec:");
	berth_yamlw_line(w, 1, "runtimeClassName: %s", BERTH_K8S_RUNTIME_CLASS);
	berth_yamlw_comment(w, 1, "one run, as `berth run`: the Pod ends with its command");
	berth_yamlw_line(w, 1, "restartPolicy: Never");
	if (p->timeout_ms > 0) {
		berth_yamlw_comment(w, 1,
				    "--timeout: the kubelet ends the Pod then (reason DeadlineExceeded; "
				    "there is no exit status 124)");
		berth_yamlw_line(w, 1, "activeDeadlineSeconds: %" PRIu64, (p->timeout_ms + 999) / 1000);
	}
	berth_yamlw_comment(w, 1,
			    "no credential the command was not given, no variables of the cluster's "
			    "services");
	berth_yamlw_line(w, 1, "automountServiceAccountToken: false");
	berth_yamlw_line(w, 1, "enableServiceLinks: false");
	pod_security(w, s);
	container(w, s, p);
	volumes(w, s, p);
}

/* ---------------------------------------------------------- the NetworkPolicy */

struct prefix {
	struct berth_addr net;
	unsigned bits;
};

/* Whether @a lies inside @b (or is @b). */
static bool inside(const struct prefix *a, const struct prefix *b)
{
	unsigned full = b->bits / 8, rest = b->bits % 8;

	if (a->net.family != b->net.family || a->bits < b->bits ||
	    memcmp(a->net.bytes, b->net.bytes, full) != 0)
		return false;
	return rest == 0 || ((a->net.bytes[full] ^ b->net.bytes[full]) & (0xff << (8 - rest))) == 0;
}

static int prefix_cmp(const void *x, const void *y)
{
	const struct prefix *a = x, *b = y;
	int c = memcmp(a->net.bytes, b->net.bytes, sizeof a->net.bytes);

	return c != 0 ? c : (int)a->bits - (int)b->bits;
}

#define EXCEPT_MAX 64

/*
 * The ranges berth refuses within @cidr (addr.h), as ipBlock.except: each
 * inside @cidr and not inside another, in address order, with @extra (a
 * range a prefix cannot look through; NULL: none).  Returns their number.
 */
static size_t except_list(const struct prefix *cidr, const struct prefix *extra,
			  struct prefix out[EXCEPT_MAX])
{
	struct prefix all[EXCEPT_MAX];
	size_t n = 0, k = 0;

	for (size_t i = 0; n < EXCEPT_MAX - 1 && berth_addr_refused_prefix(i, &all[n].net, &all[n].bits); i++)
		if (inside(&all[n], cidr))
			n++;
	if (extra != NULL)
		all[n++] = *extra;
	for (size_t i = 0; i < n; i++) {
		bool covered = false;
		for (size_t j = 0; j < n && !covered; j++)
			covered = j != i && inside(&all[i], &all[j]) && (all[i].bits != all[j].bits || j < i);
		if (!covered)
			out[k++] = all[i];
	}
	qsort(out, k, sizeof *out, prefix_cmp);
	return k;
}

static void cidr_text(const struct prefix *p, char *buf, size_t n)
{
	char a[BERTH_ADDR_STRLEN];

	if (berth_addr_format(&p->net, a, sizeof a) < 0)
		snprintf(a, sizeof a, "?");
	snprintf(buf, n, "%s/%u", a, p->bits);
}

/* `- ipBlock:` for @cidr; with @except, the ranges berth refuses in it
 * excepted (except_list). */
static void ip_block(struct berth_yamlw *w, int indent, const struct prefix *cidr, bool except,
		     const struct prefix *extra)
{
	struct prefix ex[EXCEPT_MAX];
	size_t n = except ? except_list(cidr, extra, ex) : 0;
	char t[80];

	cidr_text(cidr, t, sizeof t);
	berth_yamlw_line(w, indent, "- ipBlock:");
	berth_yamlw_str(w, indent + 2, false, "cidr", t);
	if (n == 0)
		return;
	berth_yamlw_line(w, indent + 2, "except:");
	for (size_t i = 0; i < n; i++) {
		cidr_text(&ex[i], t, sizeof t);
		berth_yamlw_str(w, indent + 3, false, NULL, t);
	}
}

static void ports(struct berth_yamlw *w, const char *proto, const unsigned *port, size_t n)
{
	berth_yamlw_line(w, 3, "ports:");
	for (size_t i = 0; i < n; i++) {
		berth_yamlw_line(w, 4, "- protocol: %s", proto);
		berth_yamlw_line(w, 5, "port: %u", port[i]);
	}
}

static void add_port(unsigned *port, size_t *n, unsigned p)
{
	for (size_t i = 0; i < *n; i++)
		if (port[i] == p)
			return;
	port[(*n)++] = p;
}

/* One pattern's ports: 80 and 443 by default, its own, or none for `:*`. */
static size_t pattern_ports(const struct berth_host_pattern *h, unsigned port[2])
{
	if (h->ports == BERTH_PORTS_ONE) {
		port[0] = h->port;
		return 1;
	}
	if (h->ports == BERTH_PORTS_ANY)
		return 0;
	port[0] = 80;
	port[1] = 443;
	return 2;
}

static void dns_rule(struct berth_yamlw *w)
{
	static const unsigned dns[] = {53};

	berth_yamlw_comment(w, 2,
			    "DNS for berth's broker, which resolves the declared names: the cluster's DNS "
			    "pods");
	berth_yamlw_comment(w, 2,
			    "(adjust to your cluster's: NodeLocal DNSCache listens on a link-local "
			    "address)");
	berth_yamlw_line(w, 2, "- to:");
	berth_yamlw_line(w, 4, "- namespaceSelector:");
	berth_yamlw_line(w, 6, "matchLabels:");
	berth_yamlw_line(w, 7, "kubernetes.io/metadata.name: kube-system");
	berth_yamlw_line(w, 5, "podSelector:");
	berth_yamlw_line(w, 6, "matchLabels:");
	berth_yamlw_line(w, 7, "k8s-app: kube-dns");
	berth_yamlw_line(w, 3, "ports:");
	for (size_t i = 0; i < 2; i++) {
		berth_yamlw_line(w, 4, "- protocol: %s", i == 0 ? "UDP" : "TCP");
		berth_yamlw_line(w, 5, "port: %u", dns[0]);
	}
}

/* The declared names' ports, to every address berth does not refuse. */
static void names_rule(struct berth_yamlw *w, const struct berth_policy *p, const unsigned *port, size_t n,
		       bool any)
{
	static const struct prefix v4 = {{AF_INET, {0}}, 0};
	static const struct prefix v6 = {{AF_INET6, {0x20}}, 3};
	static const struct prefix sixto4 = {{AF_INET6, {0x20, 0x02}}, 16};

	berth_yamlw_comment(w, 2,
			    "the declared names: a NetworkPolicy cannot match a host name, so their ports "
			    "are open");
	berth_yamlw_comment(w, 2,
			    "to every address outside the ranges berth refuses (docs/egress.md); berth's "
			    "broker in");
	berth_yamlw_comment(w, 2, "the Pod refuses every name that is not in %s:", BERTH_K8S_ANN_ALLOW_HOSTS);
	for (size_t i = 0; i < p->n_allow_hosts; i++) {
		struct berth_host_pattern h;
		if (berth_host_pattern_parse(p->allow_hosts[i], &h, NULL, 0) == 0 &&
		    h.kind != BERTH_HOST_LITERAL)
			berth_yamlw_comment(w, 2, "  %s", p->allow_hosts[i]);
	}
	berth_yamlw_comment(w, 2, "(6to4's 2002::/16 is excepted whole: a prefix cannot look through it)");
	berth_yamlw_line(w, 2, "- to:");
	ip_block(w, 4, &v4, true, NULL);
	ip_block(w, 4, &v6, true, &sixto4);
	if (any)
		berth_yamlw_comment(w, 3, "every port: a pattern ends in `:*`");
	else
		ports(w, "TCP", port, n);
}

static void literal_rule(struct berth_yamlw *w, const char *pattern, const struct berth_host_pattern *h)
{
	struct prefix cidr = {h->addr, h->addr.family == AF_INET ? 32 : 128};
	unsigned port[2];
	size_t n = pattern_ports(h, port);

	berth_yamlw_comment(w, 2, "%s: an address, declared as it is", pattern);
	berth_yamlw_line(w, 2, "- to:");
	ip_block(w, 4, &cidr, false, NULL);
	if (n == 0)
		berth_yamlw_comment(w, 3, "every port: the pattern ends in `:*`");
	else
		ports(w, "TCP", port, n);
}

static void egress_rules(struct berth_yamlw *w, const struct berth_policy *p)
{
	unsigned port[BERTH_POLICY_PORTS_MAX + 2];
	size_t n = 0;
	bool names = false, any = false;

	for (size_t i = 0; i < p->n_allow_hosts; i++) {
		struct berth_host_pattern h;
		unsigned pp[2];
		if (berth_host_pattern_parse(p->allow_hosts[i], &h, NULL, 0) < 0 ||
		    h.kind == BERTH_HOST_LITERAL)
			continue;
		size_t k = pattern_ports(&h, pp);
		names = true;
		any = any || k == 0;
		for (size_t j = 0; j < k && n < BERTH_ARRAY_SIZE(port); j++)
			add_port(port, &n, pp[j]);
	}
	berth_yamlw_line(w, 1, "egress:");
	if (names) {
		dns_rule(w);
		names_rule(w, p, port, n, any);
	}
	for (size_t i = 0; i < p->n_allow_hosts; i++) {
		struct berth_host_pattern h;
		if (berth_host_pattern_parse(p->allow_hosts[i], &h, NULL, 0) == 0 &&
		    h.kind == BERTH_HOST_LITERAL)
			literal_rule(w, p->allow_hosts[i], &h);
	}
}

static void network_policy(struct berth_yamlw *w, const struct berth_k8s_spec *s,
			   const struct berth_policy *p)
{
	berth_yamlw_line(w, 0, "---");
	berth_yamlw_line(w, 0, "apiVersion: networking.k8s.io/v1");
	berth_yamlw_line(w, 0, "kind: NetworkPolicy");
	metadata(w, 0, s);
	berth_yamlw_line(w, 0, "spec:");
	berth_yamlw_line(w, 1, "podSelector:");
	berth_yamlw_line(w, 2, "matchLabels:");
	berth_yamlw_str(w, 3, false, BERTH_K8S_LABEL_POD, s->name);
	berth_yamlw_line(w, 1, "policyTypes:");
	berth_yamlw_line(w, 2, "- Ingress");
	berth_yamlw_line(w, 2, "- Egress");
	berth_yamlw_comment(w, 1, "ingress: none, as a berth sandbox accepts no connection from outside");
	if (p->n_allow_hosts > 0) {
		egress_rules(w, p);
		return;
	}
	berth_yamlw_comment(w, 1, "egress: none, as berth's default network (loopback only).  Without %s",
			    BERTH_K8S_ANN_ALLOW_HOSTS);
	berth_yamlw_comment(w, 1,
			    "berth leaves the Pod's network to the cluster, so this policy is what denies");
	berth_yamlw_comment(w, 1, "it: the cluster's network plugin must enforce NetworkPolicy");
}

char *berth_k8s_yaml(const struct berth_k8s_spec *s, const struct berth_policy *p, struct berth_error *err)
{
	struct berth_yamlw w = {0};

	berth_yamlw_comment(&w, 0,
			    "berth export k8s (berth %s): the RuntimeClass `%s`, the Pod `%s` that runs",
			    BERTH_VERSION, BERTH_K8S_RUNTIME_CLASS, s->name);
	berth_yamlw_comment(&w, 0,
			    "under it and its NetworkPolicy (docs/kubernetes.md).  The Pod runs under "
			    "berth on the nodes");
	berth_yamlw_comment(&w, 0, "whose containerd has the `%s` runtime, which adds berth's own posture",
			    BERTH_K8S_RUNTIME_CLASS);
	berth_yamlw_comment(&w, 0,
			    "(Landlock, its seccomp filter, no capabilities, the workspace guard) to this "
			    "manifest's.");
	runtime_class(&w);
	pod(&w, s, p);
	network_policy(&w, s, p);
	if (w.b.oom) {
		berth_buf_free(&w.b);
		return berth_err(err, ENOMEM, "out of memory"), NULL;
	}
	if (w.bad != NULL) {
		char clean[200];
		berth_usage_err(
		    err, "export k8s: `%s` is not UTF-8 text, which a Kubernetes manifest cannot carry",
		    berth_text_clean(clean, sizeof clean, w.bad));
		berth_err_hint(err, "give the value as UTF-8");
		berth_buf_free(&w.b);
		return NULL;
	}
	return w.b.p;
}
