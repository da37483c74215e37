/* SPDX-License-Identifier: MIT */
/*
 * cmd_doctor.c - `berth doctor`: what this machine can enforce, with a fix
 * for each missing piece.  Exit 0 only when the default posture can be
 * enforced here.
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../sandbox/landlock.h"
#include "../sandbox/limits.h"
#include "../sandbox/sandbox.h"
#include "../sandbox/seccomp.h"
#include "../sandbox/userns.h"
#include "../vm/accel.h"
#include "../vm/install.h"
#include "../vm/pins.h"
#include "cli.h"

struct check {
	const char *name;
	bool ok;
	bool required; /* needed for the default posture */
	char detail[768];
	char fix[768];
	json_t *extra; /* more of the check, in --json as "probe" (the kvm check's test boot) */
};

static const char *landlock_rights(int abi)
{
	if (abi >= 6)
		return "filesystem, TCP bind/connect, abstract unix socket and signal scoping";
	if (abi >= 4)
		return "filesystem and TCP bind/connect (no scoping: needs ABI 6)";
	return "filesystem only (no TCP rules: needs ABI 4)";
}

static void check_userns(const struct berth_features *f, struct check *c)
{
	c->name = "user namespaces";
	c->required = true;
	c->ok = f->userns;
	if (c->ok) {
		/* The clone may work and the namespace still be useless: AppArmor's
		 * unprivileged-userns restriction gives it no capabilities, a
		 * Landlock domain above berth refuses mount in it. */
		struct berth_lsm_facts lf;
		berth_lsm_facts_read(&lf);
		if (!(f->forced_off & BERTH_FEAT_USERNS) && lf.mount_probe_errno > 0) {
			c->ok = false;
			snprintf(c->detail, sizeof c->detail,
				 "can create a user namespace, but mounting in it is refused: %s",
				 strerror(lf.mount_probe_errno));
			if (berth_lsm_refusal(BERTH_STEP_MOUNT, lf.mount_probe_errno, &lf, c->fix,
					      sizeof c->fix) == NULL)
				snprintf(c->fix, sizeof c->fix,
					 "find what refuses mount(2) in a new user namespace "
					 "(`dmesg` for an LSM's denial)");
			return;
		}
		snprintf(c->detail, sizeof c->detail, "can create a user namespace");
		return;
	}
	if (!(f->forced_off & BERTH_FEAT_USERNS) && berth_userns_inside_berth()) {
		snprintf(c->detail, sizeof c->detail,
			 "cannot create a user namespace: this is inside a berth sandbox (seccomp refuses "
			 "namespaces, nested user namespaces are capped at 0)");
		snprintf(c->fix, sizeof c->fix, "%s", BERTH_NESTED_HINT);
		return;
	}
	snprintf(c->detail, sizeof c->detail, "cannot create a user namespace: %s",
		 strerror(f->userns_errno));
	if (!(f->forced_off & BERTH_FEAT_USERNS)) {
		struct berth_lsm_facts lf;
		berth_lsm_facts_read(&lf);
		if (berth_userns_clone_refusal(f->userns_errno, &lf, c->fix, sizeof c->fix) != NULL)
			return;
	}
	snprintf(c->fix, sizeof c->fix, "%s",
		 f->userns_errno == ENOSPC ? "sysctl -w user.max_user_namespaces=15000"
					   : "sysctl -w kernel.unprivileged_userns_clone=1 (Debian) or "
					     "kernel.apparmor_restrict_unprivileged_userns=0 (Ubuntu)");
}

static void check_landlock(const struct berth_features *f, struct check *c)
{
	c->name = "landlock";
	c->required = true;
	c->ok = f->landlock_abi > 0;
	if (c->ok) {
		snprintf(c->detail, sizeof c->detail, "ABI %d: %s", f->landlock_abi,
			 landlock_rights(f->landlock_abi));
		return;
	}
	snprintf(c->detail, sizeof c->detail, "%s",
		 f->landlock_abi == -ENOSYS ? "not built into this kernel" : "built in but disabled at boot");
	snprintf(
	    c->fix, sizeof c->fix, "%s",
	    f->landlock_abi == -ENOSYS
		? "use a kernel with CONFIG_SECURITY_LANDLOCK=y"
		: "add landlock to the lsm= kernel parameter, e.g. lsm=landlock,lockdown,yama,apparmor,bpf");
}

static void check_seccomp(const struct berth_features *f, struct check *c)
{
	c->name = "seccomp filters";
	c->required = true;
	c->ok = f->seccomp;
	snprintf(c->detail, sizeof c->detail, "%s",
		 c->ok ? "SECCOMP_MODE_FILTER available" : "not available");
	if (!c->ok)
		snprintf(c->fix, sizeof c->fix, "use a kernel with CONFIG_SECCOMP_FILTER=y");
}

static void check_cgroup(unsigned force_off, struct check *c)
{
	struct berth_policy p;
	struct berth_limits lim = {0};
	struct berth_error err = {0};
	char id[32];

	c->name = "resource limits";
	c->required = true;
	berth_policy_init(&p);
	/* A name of its own: two doctors at once must not share a cgroup. */
	snprintf(id, sizeof id, "doctor-%ld", (long)getpid());
	if (berth_limits_prepare(&p, id, (force_off & BERTH_FEAT_CGROUP) != 0, &lim, &err) < 0) {
		c->ok = false;
		snprintf(c->detail, sizeof c->detail, "%s", err.msg);
		snprintf(c->fix, sizeof c->fix, "mount cgroup v2, or run as root");
		return;
	}
	c->ok = true;
	snprintf(c->detail, sizeof c->detail, "%s%s%s%s", lim.how,
		 lim.unenforced[0] ? "; not enforced: " : "", lim.unenforced,
		 lim.mode == BERTH_LIMITS_RLIMITS
		     ? "; no memory limit in this mode: an explicit --memory is refused "
		       "(exit 2) unless --allow-degraded"
		     : "");
	if (lim.mode == BERTH_LIMITS_RLIMITS) {
		char advice[sizeof c->fix - 64];

		berth_limits_advice(advice, sizeof advice);
		snprintf(c->fix, sizeof c->fix, "for cgroup limits as this user: %s", advice);
	}
	berth_limits_destroy(&lim);
}

static void check_pidfd(struct check *c)
{
	int fd = (int)syscall(SYS_pidfd_open, getpid(), 0);

	c->name = "pidfd";
	c->required = false;
	c->ok = fd >= 0;
	snprintf(c->detail, sizeof c->detail, "%s", c->ok ? "pidfd_open works" : strerror(errno));
	if (!c->ok)
		snprintf(c->fix, sizeof c->fix, "use Linux 5.3 or later");
	if (fd >= 0)
		close(fd);
}

static void check_idmap(unsigned force_off, struct check *c)
{
	struct berth_error err = {0};
	struct berth_ids ids = {.in_uid = 1000,
				.in_gid = 1000,
				.host_uid = BERTH_ROOT_HOST_UID,
				.host_gid = BERTH_ROOT_HOST_GID,
				.deny_setgroups = false};
	int fd;

	c->name = "idmapped mounts";
	c->required = geteuid() == 0;
	if (geteuid() != 0) {
		c->ok = true;
		snprintf(c->detail, sizeof c->detail, "not needed: unprivileged callers keep their own uid");
		return;
	}
	if (force_off & BERTH_FEAT_IDMAP) {
		snprintf(c->detail, sizeof c->detail, "forced off");
		return;
	}
	fd = berth_idmapped_tree(-1, ".", 0, 0, &ids, true, &err);
	c->ok = fd >= 0;
	snprintf(c->detail, sizeof c->detail, "%s",
		 c->ok ? "supported for the current directory's filesystem" : err.msg);
	if (!c->ok)
		snprintf(c->fix, sizeof c->fix,
			 "use Linux 5.12+ and a filesystem that supports them (ext4, xfs, btrfs, tmpfs)");
	if (fd >= 0)
		close(fd);
}

/* The microVM runtime's pieces (docs/vm.md, "doctor"): none is needed for the default posture. */
static void check_qemu(struct check *c, bool *have_qemu)
{
	char path[PATH_MAX], version[256];

	c->name = "qemu";
	c->required = false;
	c->ok = *have_qemu = berth_vm_qemu(path, sizeof path, version, sizeof version);
	if (c->ok) {
		snprintf(c->detail, sizeof c->detail, "%s: %s", path,
			 version[0] ? version : "(no version line)");
		return;
	}
	snprintf(c->detail, sizeof c->detail, "qemu-system-x86_64 not found: no microVM runtime");
	snprintf(c->fix, sizeof c->fix, "apt-get install --no-install-recommends qemu-system-x86");
}

static void check_virtiofsd(struct check *c)
{
	char path[PATH_MAX];

	c->name = "virtiofsd";
	c->required = false;
	c->ok = berth_vm_virtiofsd(path, sizeof path);
	snprintf(c->detail, sizeof c->detail, "%s",
		 c->ok
		     ? path
		     : "neither /usr/lib/qemu/virtiofsd nor `virtiofsd` in PATH: no file system for a guest");
	if (!c->ok)
		snprintf(c->fix, sizeof c->fix,
			 "apt-get install qemu-system-common (Debian 12) or virtiofsd (Debian 13)");
}

static void check_guest(struct check *c, bool *installed)
{
	struct berth_vm_guest g;
	struct berth_error err = {0};

	c->name = "vm guest";
	c->required = false;
	c->ok = *installed = berth_vm_verify(NULL, &g, &err) == 0;
	if (c->ok) {
		snprintf(c->detail, sizeof c->detail, "%s %s in %s, verified", BERTH_VM_KERNEL_PACKAGE,
			 BERTH_VM_KERNEL_VERSION, g.dir);
		return;
	}
	snprintf(c->detail, sizeof c->detail, "%s", err.msg);
	snprintf(c->fix, sizeof c->fix, "%s", err.hint[0] ? err.hint : "run `berth vm install`");
}

static void check_kvm(struct check *c, bool have_qemu, bool installed)
{
	struct berth_vm_probe p;
	const char *fallback =
	    have_qemu ? "; the microVM runtime falls back to TCG (qemu's software emulation: slower, "
			"the same isolation)"
		      : "";

	c->name = "kvm";
	c->required = false;
	if (!installed && berth_vm_probe_kvm_device(p.reason, sizeof p.reason)) {
		/* Not proved either way: only a test boot of the guest is. */
		memset(&p, 0, sizeof p);
		p.landlock_abi = -1;
		snprintf(
		    p.reason, sizeof p.reason,
		    "/dev/kvm can make a VM, but whether the pinned kernel runs under it needs a test boot, "
		    "and the probe needs `berth vm install`");
		p.timeout_ms = BERTH_VM_PROBE_KVM_MS;
	} else {
		berth_vm_probe(BERTH_VM_ACCEL_KVM, NULL, BERTH_VM_PROBE_KVM_MS, &p);
	}
	c->ok = p.usable;
	snprintf(c->detail, sizeof c->detail, "%s: %s%s", p.usable ? "usable" : "not usable", p.reason,
		 p.usable ? "" : fallback);
	if (!p.usable)
		snprintf(c->fix, sizeof c->fix, "%s",
			 strstr(p.reason, "/dev/kvm: Permission denied") != NULL
			     ? "add this user to the group that owns /dev/kvm (kvm), then log in again"
			 : !have_qemu ? "apt-get install --no-install-recommends qemu-system-x86"
			 : !installed ? "run `berth vm install`, then `berth doctor` again"
				      : "none needed: TCG works where KVM does not");
	c->extra = json_pack("{s:b, s:b, s:I, s:i, s:i, s:b}", "usable", p.usable, "booted", p.booted,
			     "elapsed_ms", (json_int_t)p.elapsed_ms, "deadline_ms", p.timeout_ms,
			     "landlock_abi", p.landlock_abi, "tcg_fallback", have_qemu);
}

int cmd_doctor(int argc, char **argv)
{
	struct berth_features f;
	struct check c[10];
	struct berth_error err = {0};
	unsigned force_off = 0;
	bool json = argc > 1 && strcmp(argv[1], "--json") == 0, ok = true, have_qemu = false,
	     installed = false;
	int n = 0;

	if (argc > 1 && !json) {
		fprintf(stderr,
			"berth: unknown doctor option `%s`\nberth: hint: use `berth doctor [--json]`\n",
			argv[1]);
		return 2;
	}
	if (berth_parse_force_off(getenv("BERTH_TEST_FORCE_OFF"), &force_off, &err) < 0) {
		cli_print_error(&err);
		return 2;
	}
	memset(c, 0, sizeof c);
	berth_features_detect(force_off, &f);
	check_userns(&f, &c[n++]);
	check_landlock(&f, &c[n++]);
	check_seccomp(&f, &c[n++]);
	check_cgroup(force_off, &c[n++]);
	check_idmap(force_off, &c[n++]);
	check_pidfd(&c[n++]);
	check_qemu(&c[n++], &have_qemu);
	check_virtiofsd(&c[n++]);
	check_guest(&c[n++], &installed);
	check_kvm(&c[n++], have_qemu, installed);
	for (int i = 0; i < n; i++)
		if (c[i].required && !c[i].ok)
			ok = false;
	if (json) {
		json_t *a = json_array();
		for (int i = 0; i < n; i++) {
			json_t *o = json_pack("{s:s, s:b, s:b, s:o, s:o}", "name", c[i].name, "ok", c[i].ok,
					      "required", c[i].required, "detail", cli_json_str(c[i].detail),
					      "fix", cli_json_str(c[i].fix));
			if (c[i].extra != NULL)
				json_object_set(o, "probe", c[i].extra);
			json_array_append_new(a, o);
		}
		json_t *root = json_pack("{s:b, s:o}", "default_posture_enforceable", ok, "checks", a);
		char *s = cli_json_dumps(root, JSON_SORT_KEYS | JSON_INDENT(2));
		puts(s != NULL ? s : "{}");
		free(s);
		json_decref(root);
	} else {
		for (int i = 0; i < n; i++) {
			printf("%s %-16s %s\n", c[i].ok ? "\u2714" : "\u2718", c[i].name,
			       CLI_SAFE(c[i].detail));
			if (c[i].fix[0])
				printf("  %s fix: %s\n", c[i].required && !c[i].ok ? "!" : " ",
				       CLI_SAFE(c[i].fix));
		}
		printf("%s\n", ok ? "the default posture can be enforced here"
				  : "the default posture CANNOT be enforced here");
	}
	for (int i = 0; i < n; i++)
		json_decref(c[i].extra);
	return ok ? 0 : 1;
}
