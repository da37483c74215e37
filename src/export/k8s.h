/* SPDX-License-Identifier: MIT */
/*
 * k8s.h - a berth policy as Kubernetes objects (`berth export k8s`,
 * docs/kubernetes.md): the RuntimeClass `berth`, a Pod that runs the
 * policy's command under it, and a NetworkPolicy for that Pod.
 *
 * The policy comes from where `berth run` and `berth spawn` take theirs:
 * `berth run`'s options and command (berth_run_parse), or an agent profile
 * (--profile NAME, src/session/profile.h) with options after it, as for
 * `berth spawn`.  What berth's OCI runtime cannot be told through the Pod
 * (a host path of this machine, a value from this machine's environment, a
 * widening) is refused, naming the option; what a Pod has no field for (a
 * process limit, an open-file limit) is said in a YAML comment.
 *
 * What berth wishes travel as the Pod's annotations, which containerd hands
 * to the runtime as OCI annotations (its runtime's `pod_annotations`):
 *   berth.dev/workspace    the container path of the workspace mount
 *   berth.dev/allow-hosts  the policy's allow-host patterns, comma-separated
 *                          (docs/egress.md); only when it has any
 *   berth.dev/audit-dir    a directory of the node for the audit trail (--audit-dir)
 */
#ifndef BERTH_EXPORT_K8S_H
#define BERTH_EXPORT_K8S_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../policy/flags.h"
#include "../util/error.h"

#define BERTH_K8S_ANN_WORKSPACE "berth.dev/workspace"
#define BERTH_K8S_ANN_ALLOW_HOSTS "berth.dev/allow-hosts"
#define BERTH_K8S_ANN_AUDIT_DIR "berth.dev/audit-dir"
#define BERTH_K8S_LABEL_POD "berth.dev/pod" /* the NetworkPolicy's podSelector */
#define BERTH_K8S_RUNTIME_CLASS "berth"     /* the RuntimeClass and its containerd handler */
#define BERTH_K8S_CONTAINER "agent"         /* the Pod's one container */
#define BERTH_K8S_WORKSPACE "/workspace"    /* where the workspace volume is mounted */
#define BERTH_K8S_HOME "/home/agent"        /* $HOME: a memory-backed emptyDir, as berth's tmpfs home */
#define BERTH_K8S_DEFAULT_NAME "berth-agent"
#define BERTH_K8S_DEFAULT_ID 1000U /* runAsUser and runAsGroup without --user */
#define BERTH_K8S_ID_MAX 2147483647U
#define BERTH_K8S_NOTES_MAX 40

/* What the objects are made of besides the policy; each value checked
 * (berth_k8s_prepare) before berth_k8s_yaml writes it. */
struct berth_k8s_spec {
	char *name;            /* the Pod, its label and the NetworkPolicy: an RFC 1123 label */
	char *ns;              /* metadata.namespace, or NULL: kubectl's current namespace */
	char *image;           /* the container image reference */
	char *workspace_claim; /* a PersistentVolumeClaim mounted at /workspace, or NULL: an emptyDir */
	char *audit_dir;       /* berth.dev/audit-dir: absolute, on the node; or NULL */
	uint32_t uid, gid;     /* runAsUser (not 0: runAsNonRoot), runAsGroup and fsGroup */
	bool tty;              /* stdin and tty for `kubectl attach -it` (--tty; a profile's default) */
};

struct berth_k8s_req {
	struct berth_k8s_spec spec;
	char *profile;   /* --profile NAME, or NULL */
	bool user_given; /* --user was given */
	bool help;       /* --help: nothing else is done */
	char **run_args; /* `berth run` options as given, in order */
	size_t n_run_args;
	char **command; /* after `--`, in order */
	size_t n_command;
	/* filled by berth_k8s_prepare */
	struct berth_run_opts run;
	bool have_run;
	char *notes[BERTH_K8S_NOTES_MAX]; /* lines for the CLI to print (`berth: NOTE`) */
	size_t n_notes;
};

/*
 * berth_k8s_parse - `k8s [OPTIONS] [-- COMMAND [ARG...]]` (@argv[0] is
 * "k8s"): export's own options (--name, --namespace, --image, --profile,
 * --user UID[:GID], --workspace-claim, --audit-dir, --tty, --help) are taken
 * out, each also as `--OPT=VALUE`; every other argument must be exactly one
 * of `berth run`'s options (berth_run_option_arity; with its value) and is
 * kept for its parser.  Refused here, naming the option, because a Pod
 * cannot carry them: --workspace, --ro, --rw (host paths of this machine),
 * --env NAME without a value and --env-file (values from this machine: they
 * would be written into the manifest), --evidence, --forensic, --dns,
 * --unprotect, --allow-degraded, --dry-run, --json.  Returns 0, or -1 with
 * @err (status 2) naming the argument.  Release @r with berth_k8s_req_free()
 * in both cases.
 */
int berth_k8s_parse(int argc, char **argv, struct berth_k8s_req *r, struct berth_error *err);

/*
 * berth_k8s_prepare - after berth_k8s_parse: load the profile (when
 * given), compile the policy as `berth run` (or, with a profile, `berth
 * spawn`) would with a stand-in workspace, check it against what a Pod can
 * carry (the refusals of berth_k8s_parse again, for the profile's own
 * options, and --network host), check the spec: --image given and written
 * as an image reference (letters, digits and `._/:@-`, at most 4096 bytes),
 * --name and --namespace RFC 1123 labels (the name defaults to the
 * profile's when that is one, else BERTH_K8S_DEFAULT_NAME),
 * --workspace-claim an RFC 1123 subdomain, --audit-dir an absolute path
 * without `.` or `..` components, every string UTF-8.  Creates nothing and
 * reads no file but the profile and the network preset.  Fills @r->notes
 * (the profile's parts a Pod does not get, credentials named by --env
 * NAME=VALUE).  Returns 0, or -1 with @err (status 2 for bad input, naming
 * the value and how to fix it; 125 out of memory).
 */
int berth_k8s_prepare(struct berth_k8s_req *r, struct berth_error *err);

/*
 * berth_k8s_yaml - the three YAML documents for @p and @s (checked by
 * berth_k8s_prepare): the RuntimeClass (node.k8s.io/v1), the Pod (v1) and
 * the NetworkPolicy (networking.k8s.io/v1), each after `---`, with comments
 * saying what a Pod cannot express.  The Pod: runtimeClassName berth,
 * restartPolicy Never, no service account token, no service links, the
 * annotations of k8s.h, runAsNonRoot with @s's ids, seccompProfile
 * RuntimeDefault, allowPrivilegeEscalation false, privileged false,
 * readOnlyRootFilesystem, all capabilities dropped; limits.memory and
 * limits.cpu from the policy; activeDeadlineSeconds from its timeout;
 * memory-backed emptyDirs of the policy's tmp size at /tmp and $HOME; the
 * workspace at /workspace (an emptyDir, or @s's claim).  The NetworkPolicy
 * selects the Pod by its label and denies all ingress; egress: none when
 * the policy has no allow-host pattern; else DNS to the cluster's DNS pods
 * (kube-system, k8s-app: kube-dns) when a pattern names a host, the ports
 * of the name patterns to every address outside the ranges berth refuses
 * (addr.h, berth_addr_refused_prefix: 0.0.0.0/0 and 2000::/3 with them
 * excepted; 6to4's 2002::/16 too, which a prefix cannot look through), and
 * each literal pattern's ports to its address alone.  Returns the
 * malloc'd text, or NULL with @err: ENOMEM (125), or a string that is not
 * UTF-8 (status 2, naming it).
 */
char *berth_k8s_yaml(const struct berth_k8s_spec *s, const struct berth_policy *p, struct berth_error *err);

/* berth_k8s_req_free - release @r; it may be reused after. */
void berth_k8s_req_free(struct berth_k8s_req *r);

#endif
