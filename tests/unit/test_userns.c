/* SPDX-License-Identifier: MIT */
/*
 * test_userns.c - the message for a step of the user-namespace setup that a
 * security module refused (berth_lsm_refusal, userns.h): a pure function of
 * the step, the errno and the facts, so every case is checked here without
 * an AppArmor, SELinux or Landlock policy on the machine.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sandbox/userns.h"

/* No security module in the way: a plain mount in a fresh namespace works. */
static struct berth_lsm_facts none(bool root)
{
	struct berth_lsm_facts f;

	memset(&f, 0, sizeof f);
	f.apparmor_restrict = -1;
	f.root = root;
	return f;
}

static const char *msg(enum berth_userns_step step, int e, const struct berth_lsm_facts *f)
{
	static char buf[1024];
	return berth_lsm_refusal(step, e, f, buf, sizeof buf);
}

static void no_hint_about(const char *m)
{
	assert_null(strstr(m, "idmapped"));
	assert_null(strstr(m, "--allow-degraded"));
}

static void test_apparmor_restriction(void **state)
{
	struct berth_lsm_facts f = none(false);
	const char *m;

	(void)state;
	f.apparmor_restrict = 1;
	f.apparmor_label[0] = '\0';
	f.mount_probe_errno = EPERM;
	m = msg(BERTH_STEP_MOUNT, EPERM, &f);
	assert_non_null(m);
	assert_non_null(strstr(m, "AppArmor refused mounting inside the new user namespace"));
	assert_non_null(strstr(m, "kernel.apparmor_restrict_unprivileged_userns=1"));
	assert_non_null(strstr(m, "apparmor_parser -r /etc/apparmor.d/berth"));
	assert_non_null(strstr(m, "userns,"));
	no_hint_about(m);
	m = msg(BERTH_STEP_MAPS, EACCES, &f);
	assert_non_null(m);
	assert_non_null(strstr(m, "AppArmor refused writing the new user namespace's uid/gid maps"));
	/* Root has CAP_SYS_ADMIN: the restriction does not apply to it */
	f.root = true;
	assert_null(msg(BERTH_STEP_MOUNT, EPERM, &f));
	/* The sysctl at 0: not the cause */
	f.root = false;
	f.apparmor_restrict = 0;
	assert_null(msg(BERTH_STEP_MOUNT, EPERM, &f));
}

static void test_apparmor_profile(void **state)
{
	struct berth_lsm_facts f = none(true);
	const char *m;

	(void)state;
	f.mount_probe_errno = EACCES;
	strcpy(f.apparmor_label, "unconfined");
	assert_null(msg(BERTH_STEP_MOUNT, EACCES, &f));
	strcpy(f.apparmor_label, "docker-default (enforce)");
	m = msg(BERTH_STEP_MOUNT, EACCES, &f);
	assert_non_null(m);
	assert_non_null(strstr(m, "confined by the profile `docker-default (enforce)`"));
	assert_non_null(strstr(m, "aa-complain"));
	no_hint_about(m);
	f.root = false;
	m = msg(BERTH_STEP_MOUNT, EACCES, &f);
	assert_non_null(strstr(m, "an administrator's task"));
}

static void test_selinux(void **state)
{
	struct berth_lsm_facts f = none(false);
	const char *m;

	(void)state;
	f.selinux_enforcing = true;
	strcpy(f.selinux_context, "user_u:user_r:user_t:s0");
	f.mount_probe_errno = EACCES;
	m = msg(BERTH_STEP_MOUNT, EACCES, &f);
	assert_non_null(m);
	assert_non_null(strstr(m, "SELinux refused"));
	assert_non_null(strstr(m, "`user_u:user_r:user_t:s0`"));
	assert_non_null(strstr(m, "ask an administrator"));
	f.root = true;
	assert_non_null(strstr(msg(BERTH_STEP_MOUNT, EACCES, &f), "unconfined_t"));
	no_hint_about(msg(BERTH_STEP_MOUNT, EACCES, &f));
}

static void test_landlock_and_seccomp(void **state)
{
	struct berth_lsm_facts f = none(true);
	const char *m;

	(void)state;
	/* Landlock: the namespace is made, the mount in it refused */
	f.landlock_active = true;
	f.unshare_probe_errno = 0;
	f.mount_probe_errno = EPERM;
	m = msg(BERTH_STEP_MOUNT, EPERM, &f);
	assert_non_null(m);
	assert_non_null(strstr(m, "a Landlock domain above berth refused"));
	assert_non_null(strstr(m, "even as root"));
	no_hint_about(m);
	f.root = false;
	assert_non_null(strstr(msg(BERTH_STEP_MOUNT, EPERM, &f), "the owner of its own namespace"));
	/* ... the same with a seccomp filter on (a Landlocked process under a
	 * filter that allows unshare and mount): Landlock is the cause */
	f.seccomp_filtered = true;
	assert_non_null(strstr(msg(BERTH_STEP_MOUNT, EPERM, &f), "Landlock"));
	/* A filter that refuses unshare: seccomp */
	f.unshare_probe_errno = EPERM;
	f.mount_probe_errno = -1;
	m = msg(BERTH_STEP_MOUNT, EPERM, &f);
	assert_non_null(m);
	assert_non_null(strstr(m, "a seccomp filter above berth"));
	assert_non_null(strstr(m, "seccomp=unconfined"));
	/* Landlock not in the kernel, mount refused: not Landlock */
	f = none(true);
	f.unshare_probe_errno = 0;
	f.mount_probe_errno = EPERM;
	assert_null(msg(BERTH_STEP_MOUNT, EPERM, &f));
}

static void test_not_an_lsm(void **state)
{
	struct berth_lsm_facts f = none(false);

	(void)state;
	f.apparmor_restrict = 1;
	f.landlock_active = true;
	f.mount_probe_errno = EPERM;
	/* errnos no security module gives */
	assert_null(msg(BERTH_STEP_MOUNT, ENOENT, &f));
	assert_null(msg(BERTH_STEP_MOUNT, ENOSPC, &f));
	assert_null(msg(BERTH_STEP_MAPS, EINVAL, &f));
	/* a mount in a fresh namespace works: an EACCES in the setup is a
	 * file's permission (a source the sandbox cannot read), not an LSM */
	f.mount_probe_errno = 0;
	f.unshare_probe_errno = 0;
	assert_null(msg(BERTH_STEP_MOUNT, EACCES, &f));
}

/* clone(CLONE_NEWUSER) refused: only the knob this kernel has */
static void test_clone_refusal(void **state)
{
	static char buf[1024];
	struct berth_lsm_facts f = none(false);
	const char *m;

	(void)state;
	f.userns_clone_sysctl = -1;
	f.max_user_namespaces = 15000;
	/* nothing explains an EPERM: no knob named at all */
	assert_null(berth_userns_clone_refusal(EPERM, &f, buf, sizeof buf));
	assert_null(berth_userns_clone_refusal(EINVAL, &f, buf, sizeof buf));
	/* Debian's sysctl at 0, for a user */
	f.userns_clone_sysctl = 0;
	m = berth_userns_clone_refusal(EPERM, &f, buf, sizeof buf);
	assert_non_null(m);
	assert_non_null(strstr(m, "kernel.unprivileged_userns_clone is 0 (Debian)"));
	assert_null(strstr(m, "apparmor"));
	no_hint_about(m);
	/* ... which root is not subject to */
	f.root = true;
	assert_null(berth_userns_clone_refusal(EPERM, &f, buf, sizeof buf));
	/* the limit at 0, or ENOSPC */
	f.max_user_namespaces = 0;
	m = berth_userns_clone_refusal(EPERM, &f, buf, sizeof buf);
	assert_non_null(strstr(m, "user.max_user_namespaces is 0"));
	f.max_user_namespaces = 7;
	assert_non_null(strstr(berth_userns_clone_refusal(ENOSPC, &f, buf, sizeof buf), "is 7: raise it"));
	/* a seccomp filter above berth */
	f = none(true);
	f.userns_clone_sysctl = -1;
	f.max_user_namespaces = 15000;
	f.seccomp_filtered = true;
	m = berth_userns_clone_refusal(EPERM, &f, buf, sizeof buf);
	assert_non_null(strstr(m, "a seccomp filter above berth"));
	/* an unmapped user namespace around berth comes first */
	f.uid_unmapped = true;
	m = berth_userns_clone_refusal(EPERM, &f, buf, sizeof buf);
	assert_non_null(strstr(m, "maps no uid for it"));
	assert_non_null(strstr(m, "--map-current-user"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_apparmor_restriction),
	    cmocka_unit_test(test_apparmor_profile),
	    cmocka_unit_test(test_selinux),
	    cmocka_unit_test(test_landlock_and_seccomp),
	    cmocka_unit_test(test_not_an_lsm),
	    cmocka_unit_test(test_clone_refusal),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
