/* SPDX-License-Identifier: MIT */
/*
 * features.c - what `berth oci` accepts, said once: the `features` document
 * (runtime-spec features.md, runc's `features` command), and the lists the
 * converter checks linux.seccomp against; signal names for `kill`.
 */
#include <ctype.h>
#include <errno.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../util/cleanup.h"
#include "oci_int.h"

#ifndef BERTH_VERSION
#define BERTH_VERSION "0.0.0"
#endif

static const char *const seccomp_actions[] = {
    "SCMP_ACT_ALLOW",       "SCMP_ACT_ERRNO", "SCMP_ACT_KILL", "SCMP_ACT_KILL_PROCESS",
    "SCMP_ACT_KILL_THREAD", "SCMP_ACT_LOG",   "SCMP_ACT_TRAP", "SCMP_ACT_TRACE",
};

static const char *const seccomp_ops[] = {
    "SCMP_CMP_NE", "SCMP_CMP_LT", "SCMP_CMP_LE",        "SCMP_CMP_EQ",
    "SCMP_CMP_GE", "SCMP_CMP_GT", "SCMP_CMP_MASKED_EQ",
};

/* Flags that change only what is logged or how threads are synchronised. */
static const char *const seccomp_flags[] = {"SECCOMP_FILTER_FLAG_TSYNC", "SECCOMP_FILTER_FLAG_LOG"};

/* runtime-spec's architecture names; those this libseccomp resolves are
 * accepted. */
static const char *const seccomp_archs[] = {
    "SCMP_ARCH_X86",     "SCMP_ARCH_X86_64",   "SCMP_ARCH_X32",         "SCMP_ARCH_ARM",
    "SCMP_ARCH_AARCH64", "SCMP_ARCH_MIPS",     "SCMP_ARCH_MIPS64",      "SCMP_ARCH_MIPS64N32",
    "SCMP_ARCH_MIPSEL",  "SCMP_ARCH_MIPSEL64", "SCMP_ARCH_MIPSEL64N32", "SCMP_ARCH_PPC",
    "SCMP_ARCH_PPC64",   "SCMP_ARCH_PPC64LE",  "SCMP_ARCH_S390",        "SCMP_ARCH_S390X",
    "SCMP_ARCH_PARISC",  "SCMP_ARCH_PARISC64", "SCMP_ARCH_RISCV64",
};

static bool in(const char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

bool berth_oci_seccomp_action_ok(const char *name)
{
	return in(seccomp_actions, BERTH_ARRAY_SIZE(seccomp_actions), name);
}

bool berth_oci_seccomp_op_ok(const char *name)
{
	return in(seccomp_ops, BERTH_ARRAY_SIZE(seccomp_ops), name);
}

bool berth_oci_seccomp_flag_ok(const char *name)
{
	return in(seccomp_flags, BERTH_ARRAY_SIZE(seccomp_flags), name);
}

bool berth_oci_seccomp_arch_ok(const char *name)
{
	char lower[32];
	size_t i, n;

	if (!in(seccomp_archs, BERTH_ARRAY_SIZE(seccomp_archs), name))
		return false;
	/* SCMP_ARCH_X86_64 -> x86_64, libseccomp's own name */
	name += strlen("SCMP_ARCH_");
	n = strlen(name);
	if (n >= sizeof lower)
		return false;
	for (i = 0; i < n; i++)
		lower[i] = (char)tolower((unsigned char)name[i]);
	lower[n] = '\0';
	return seccomp_arch_resolve_name(lower) != 0;
}

static json_t *strings(const char *const *v, size_t n, bool (*keep)(const char *))
{
	json_t *a = json_array();

	for (size_t i = 0; a != NULL && i < n && v[i] != NULL; i++)
		if (keep == NULL || keep(v[i]))
			json_array_append_new(a, json_string(v[i]));
	return a;
}

json_t *berth_oci_features(void)
{
	static const char *const ns[] = {"cgroup", "ipc", "mount", "network", "pid", "user", "uts"};
	const struct scmp_version *lv = seccomp_version();
	char libseccomp[32] = "";
	size_t n_opts = 0;
	json_t *seccomp, *lx, *ann;

	while (berth_oci_mount_options[n_opts] != NULL)
		n_opts++;
	if (lv != NULL)
		snprintf(libseccomp, sizeof libseccomp, "%u.%u.%u", lv->major, lv->minor, lv->micro);
	seccomp =
	    json_pack("{s:b, s:o, s:o, s:o, s:o, s:o}", "enabled", true, "actions",
		      strings(seccomp_actions, BERTH_ARRAY_SIZE(seccomp_actions), NULL), "operators",
		      strings(seccomp_ops, BERTH_ARRAY_SIZE(seccomp_ops), NULL), "archs",
		      strings(seccomp_archs, BERTH_ARRAY_SIZE(seccomp_archs), berth_oci_seccomp_arch_ok),
		      "knownFlags", strings(seccomp_flags, BERTH_ARRAY_SIZE(seccomp_flags), NULL),
		      "supportedFlags", strings(seccomp_flags, BERTH_ARRAY_SIZE(seccomp_flags), NULL));
	/* berth makes every namespace itself; none is optional */
	lx = json_pack("{s:o, s:[], s:{s:b, s:b, s:b, s:b}, s:o, s:{s:b}, s:{s:b}}", "namespaces",
		       strings(ns, BERTH_ARRAY_SIZE(ns), NULL), "capabilities", "cgroup", "v1", true, "v2",
		       true, "systemd", false, "systemdUser", false, "seccomp", seccomp, "apparmor",
		       "enabled", false, "selinux", "enabled", false);
	ann = json_pack(
	    "{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "io.github.seccomp.libseccomp.version", libseccomp,
	    "dev.berth.version", BERTH_VERSION, "berth.dev/workspace",
	    "the destination of the bind mount that is the workspace (read-write, guarded)",
	    "berth.dev/allow-hosts",
	    "allow-host patterns separated by commas or spaces (docs/egress.md): the container "
	    "reaches only them, through berth's egress broker",
	    "berth.dev/audit-dir", "the audit directory that records the container's run",
	    "berth.dev/writable-root",
	    "`true`: a writable root where root.readonly is false (a widening; read-only by default)",
	    "berth.dev/profile",
	    "an agent profile's name: its network (egress through berth's broker) and env");
	return json_pack("{s:s, s:s, s:[], s:o, s:o, s:o}", "ociVersionMin", "1.0.0", "ociVersionMax",
			 BERTH_OCI_VERSION, "hooks", "mountOptions",
			 strings(berth_oci_mount_options, n_opts, NULL), "linux", lx, "annotations", ann);
}

/* ---------------------------------------------------------- signals */

static const struct {
	const char *name;
	int sig;
} signals[] = {
    {"HUP", SIGHUP},   {"INT", SIGINT},       {"QUIT", SIGQUIT}, {"ILL", SIGILL},     {"TRAP", SIGTRAP},
    {"ABRT", SIGABRT}, {"IOT", SIGIOT},       {"BUS", SIGBUS},   {"FPE", SIGFPE},     {"KILL", SIGKILL},
    {"USR1", SIGUSR1}, {"SEGV", SIGSEGV},     {"USR2", SIGUSR2}, {"PIPE", SIGPIPE},   {"ALRM", SIGALRM},
    {"TERM", SIGTERM}, {"STKFLT", SIGSTKFLT}, {"CHLD", SIGCHLD}, {"CONT", SIGCONT},   {"STOP", SIGSTOP},
    {"TSTP", SIGTSTP}, {"TTIN", SIGTTIN},     {"TTOU", SIGTTOU}, {"URG", SIGURG},     {"XCPU", SIGXCPU},
    {"XFSZ", SIGXFSZ}, {"VTALRM", SIGVTALRM}, {"PROF", SIGPROF}, {"WINCH", SIGWINCH}, {"IO", SIGIO},
    {"POLL", SIGPOLL}, {"PWR", SIGPWR},       {"SYS", SIGSYS},
};

int berth_oci_signal_parse(const char *s, int *sig, struct berth_error *err)
{
	const char *name = s;
	char *end;
	long n;

	if (s[0] >= '0' && s[0] <= '9') {
		errno = 0;
		n = strtol(s, &end, 10);
		if (errno == 0 && *end == '\0' && n >= 1 && n <= SIGRTMAX) {
			*sig = (int)n;
			return 0;
		}
	} else {
		if (strncasecmp(name, "SIG", 3) == 0)
			name += 3;
		for (size_t i = 0; i < BERTH_ARRAY_SIZE(signals); i++)
			if (strcasecmp(name, signals[i].name) == 0) {
				*sig = signals[i].sig;
				return 0;
			}
		if (strncasecmp(name, "RTMIN", 5) == 0 || strncasecmp(name, "RTMAX", 5) == 0) {
			bool max = strncasecmp(name, "RTMAX", 5) == 0;
			n = 0;
			if (name[5] != '\0') {
				errno = 0;
				n = strtol(name + 6, &end, 10);
				if ((name[5] != (max ? '-' : '+')) || errno != 0 || *end != '\0' ||
				    name[6] == '\0')
					n = -1;
			}
			if (n >= 0 && n <= SIGRTMAX - SIGRTMIN) {
				*sig = max ? SIGRTMAX - (int)n : SIGRTMIN + (int)n;
				return 0;
			}
		}
	}
	berth_usage_err(err, "invalid signal `%.32s`", s);
	return berth_err_hint(err, "give a number (15), a name (TERM, SIGTERM) or RTMIN+N");
}
