/* SPDX-License-Identifier: MIT */
/*
 * bundle_seccomp.c - config.json `linux.seccomp`: the engine's profile,
 * loaded by the sandbox as a second filter after berth's own (a call passes
 * only when both allow it).  Here it is checked for what berth does not
 * honour - a notify listener (SCMP_ACT_NOTIFY, listenerPath), a flag that
 * weakens the kernel's defences (SECCOMP_FILTER_FLAG_SPEC_ALLOW), an
 * architecture, action or operator it does not know - and kept as compact
 * JSON (struct berth_container.seccomp).  Syscall names are not checked:
 * a name this kernel does not have is skipped, as runc does.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oci_int.h"

static int check_action(const json_t *v, const char *path, struct berth_error *err)
{
	const char *a;

	if (berth_oci_string(v, path, true, &a, err) < 0)
		return -1;
	if (strcmp(a, "SCMP_ACT_NOTIFY") == 0)
		return berth_oci_unsupported(err, path,
					     "`SCMP_ACT_NOTIFY`: no seccomp agent listens for berth");
	if (!berth_oci_seccomp_action_ok(a))
		return berth_oci_bad(err, path, "`%.64s` is not a seccomp action berth knows", a);
	return 0;
}

static int check_args(const json_t *args, const char *path, struct berth_error *err)
{
	static const char *const keys[] = {"index", "value", "valueTwo", "op", NULL};
	char sub[160];
	size_t i;
	json_t *a;

	if (berth_oci_want_array(args, path, err) < 0)
		return -1;
	json_array_foreach((json_t *)args, i, a) {
		char one[128];
		const char *op;
		long long n;
		snprintf(one, sizeof one, "%s[%zu]", path, i);
		if (berth_oci_want_object(a, one, err) < 0 || a == NULL ||
		    berth_oci_keys(a, one, keys, err) < 0)
			return -1;
		snprintf(sub, sizeof sub, "%s.index", one);
		if (berth_oci_int(json_object_get(a, "index"), sub, true, 0, 5, &n, NULL, err) < 0)
			return -1;
		snprintf(sub, sizeof sub, "%s.value", one);
		if (berth_oci_int(json_object_get(a, "value"), sub, true, 0, LLONG_MAX, &n, NULL, err) < 0)
			return -1;
		snprintf(sub, sizeof sub, "%s.valueTwo", one);
		if (berth_oci_int(json_object_get(a, "valueTwo"), sub, false, 0, LLONG_MAX, &n, NULL, err) <
		    0)
			return -1;
		snprintf(sub, sizeof sub, "%s.op", one);
		if (berth_oci_string(json_object_get(a, "op"), sub, true, &op, err) < 0)
			return -1;
		if (!berth_oci_seccomp_op_ok(op))
			return berth_oci_bad(err, sub, "`%.64s` is not a seccomp operator berth knows", op);
	}
	return 0;
}

static int check_syscalls(const json_t *calls, struct berth_error *err)
{
	static const char *const keys[] = {"names", "action", "errnoRet", "args", NULL};
	size_t i;
	json_t *c;

	if (berth_oci_want_array(calls, "linux.seccomp.syscalls", err) < 0)
		return -1;
	json_array_foreach((json_t *)calls, i, c) {
		char path[64], sub[96];
		const json_t *names;
		long long n;
		size_t k;
		json_t *name;

		snprintf(path, sizeof path, "linux.seccomp.syscalls[%zu]", i);
		if (berth_oci_want_object(c, path, err) < 0 || c == NULL ||
		    berth_oci_keys(c, path, keys, err) < 0)
			return -1;
		snprintf(sub, sizeof sub, "%s.names", path);
		names = json_object_get(c, "names");
		if (names == NULL)
			return berth_oci_bad(err, sub, "is missing");
		if (berth_oci_want_array(names, sub, err) < 0)
			return -1;
		json_array_foreach(names, k, name) {
			char one[128];
			const char *s;
			snprintf(one, sizeof one, "%s[%zu]", sub, k);
			if (berth_oci_string(name, one, true, &s, err) < 0)
				return -1;
		}
		snprintf(sub, sizeof sub, "%s.action", path);
		if (check_action(json_object_get(c, "action"), sub, err) < 0)
			return -1;
		snprintf(sub, sizeof sub, "%s.errnoRet", path);
		if (berth_oci_int(json_object_get(c, "errnoRet"), sub, false, 0, 4095, &n, NULL, err) < 0)
			return -1;
		snprintf(sub, sizeof sub, "%s.args", path);
		if (check_args(json_object_get(c, "args"), sub, err) < 0)
			return -1;
	}
	return 0;
}

int berth_oci_convert_seccomp(const json_t *s, struct berth_oci_bundle *b, struct berth_error *err)
{
	static const char *const keys[] = {"defaultAction", "defaultErrnoRet",  "architectures", "flags",
					   "listenerPath",  "listenerMetadata", "syscalls",      NULL};
	const char *lp;
	long long n;
	size_t i;
	json_t *v;

	if (s == NULL || json_is_null(s))
		return 0;
	if (berth_oci_want_object(s, "linux.seccomp", err) < 0 ||
	    berth_oci_keys(s, "linux.seccomp", keys, err) < 0)
		return -1;
	if (check_action(json_object_get(s, "defaultAction"), "linux.seccomp.defaultAction", err) < 0 ||
	    berth_oci_int(json_object_get(s, "defaultErrnoRet"), "linux.seccomp.defaultErrnoRet", false, 0,
			  4095, &n, NULL, err) < 0)
		return -1;
	if (berth_oci_string(json_object_get(s, "listenerPath"), "linux.seccomp.listenerPath", false, &lp,
			     err) < 0)
		return -1;
	if (lp != NULL && lp[0] != '\0')
		return berth_oci_unsupported(err, "linux.seccomp.listenerPath",
					     "no seccomp agent listens for berth (`%.200s`)", lp);
	if (berth_oci_string(json_object_get(s, "listenerMetadata"), "linux.seccomp.listenerMetadata", false,
			     &lp, err) < 0)
		return -1;
	if (lp != NULL && lp[0] != '\0')
		return berth_oci_unsupported(err, "linux.seccomp.listenerMetadata",
					     "no seccomp agent listens for berth");
	v = json_object_get(s, "architectures");
	if (berth_oci_want_array(v, "linux.seccomp.architectures", err) < 0)
		return -1;
	for (i = 0; i < json_array_size(v); i++) {
		char path[64];
		const char *a;
		snprintf(path, sizeof path, "linux.seccomp.architectures[%zu]", i);
		if (berth_oci_string(json_array_get(v, i), path, true, &a, err) < 0)
			return -1;
		if (!berth_oci_seccomp_arch_ok(a))
			return berth_oci_bad(err, path,
					     "`%.64s` is not an architecture berth's libseccomp knows", a);
	}
	v = json_object_get(s, "flags");
	if (berth_oci_want_array(v, "linux.seccomp.flags", err) < 0)
		return -1;
	for (i = 0; i < json_array_size(v); i++) {
		char path[64];
		const char *f;
		snprintf(path, sizeof path, "linux.seccomp.flags[%zu]", i);
		if (berth_oci_string(json_array_get(v, i), path, true, &f, err) < 0)
			return -1;
		if (strcmp(f, "SECCOMP_FILTER_FLAG_SPEC_ALLOW") == 0)
			return berth_oci_unsupported(
			    err, path,
			    "`SECCOMP_FILTER_FLAG_SPEC_ALLOW` turns off the kernel's "
			    "speculative store bypass mitigation");
		if (!berth_oci_seccomp_flag_ok(f))
			return berth_oci_unsupported(err, path, "the flag `%.64s`", f);
	}
	if (check_syscalls(json_object_get(s, "syscalls"), err) < 0)
		return -1;
	if ((b->policy.container->seccomp = json_dumps(s, JSON_COMPACT | JSON_SORT_KEYS)) == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	return 0;
}
