/* SPDX-License-Identifier: MIT */
/*
 * bundle_mounts.c - config.json `mounts` into the policy's mounts.
 *
 * Three kinds, by type and destination:
 *   - the standard ones berth builds itself in every sandbox (proc at
 *     /proc, tmpfs /dev, devpts /dev/pts, sysfs /sys, /dev/shm) and two it
 *     does not make at all (mqueue at /dev/mqueue, the cgroup file system at
 *     /sys/fs/cgroup: less of the host is exposed): accepted, not copied;
 *   - bind mounts: a berth_mount of the physical source (realpath), read-only
 *     unless `rw`; always nosuid and nodev;
 *   - tmpfs anywhere else: a berth_mount with tmpfs set and its size=.
 * Any other type (overlay, nfs, ...), a mount under /dev, /proc or /sys that
 * is not one of the standard ones, and any option berth cannot honour is
 * refused, the mount named by its index and destination.
 */
#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cleanup.h"
#include "oci_int.h"

const char *const berth_oci_mount_options[] = {
    "bind",    "rbind",   "ro",        "rw",         "rro",         "nosuid",        "nodev",    "noexec",
    "rnosuid", "rnodev",  "rnoexec",   "exec",       "private",     "rprivate",      "slave",    "rslave",
    "atime",   "noatime", "relatime",  "norelatime", "strictatime", "nostrictatime", "diratime", "nodiratime",
    "size",    "mode",    "nr_inodes", "tmpcopyup",  NULL};

/* "config.json: `mounts[3]` (destination `/data`) is not supported by berth
 * oci: WHY", with the hint of every refusal.  Returns -1. */
__attribute__((format(printf, 3, 4))) static int refuse(struct berth_error *err, const char *where,
							const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	berth_usage_err(err, "config.json: %s is not supported by berth oci: %s", where, why);
	return berth_err_hint(err, "%s", BERTH_OCI_HINT_UNSUPPORTED);
}

/* "config.json: `mounts[3]` (destination `/data`) WHAT".  Returns -1. */
__attribute__((format(printf, 3, 4))) static int bad(struct berth_error *err, const char *where,
						     const char *fmt, ...)
{
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return berth_usage_err(err, "config.json: %s %s", where, what);
}

/* Options that only say how access times are kept: no access changes. */
static bool atime_option(const char *o)
{
	static const char *const atime[] = {"atime",       "noatime",       "relatime", "norelatime",
					    "strictatime", "nostrictatime", "diratime", "nodiratime"};

	for (size_t i = 0; i < BERTH_ARRAY_SIZE(atime); i++)
		if (strcmp(o, atime[i]) == 0)
			return true;
	return false;
}

/* What a mount's options said. */
struct mount_opts {
	bool ro, bind, noexec, tmpcopyup;
	bool has_size;
	uint64_t size;   /* bytes */
	uint32_t mode;   /* mode=, 0: none given */
	uint64_t inodes; /* nr_inodes=, 0: none given */
};

enum mount_kind { KIND_BIND, KIND_TMPFS, KIND_OTHER };

/* size=N[k|m|g|t] (tmpfs(5); powers of 1024, no %). */
static int parse_size(const char *v, const char *path, uint64_t *out, struct berth_error *err)
{
	uint64_t n = 0, mul = 1;
	const char *p = v;

	if (!isdigit((unsigned char)*p))
		return bad(err, path, "has `size=%.64s`: not a size (digits and k, m, g or t)", v);
	for (; isdigit((unsigned char)*p); p++) {
		if (n > (UINT64_MAX - 9) / 10)
			return bad(err, path, "has `size=%.64s`: too large", v);
		n = n * 10 + (uint64_t)(*p - '0');
	}
	switch (tolower((unsigned char)*p)) {
	case '\0':
		break;
	case 'k':
		mul = 1ULL << 10;
		break;
	case 'm':
		mul = 1ULL << 20;
		break;
	case 'g':
		mul = 1ULL << 30;
		break;
	case 't':
		mul = 1ULL << 40;
		break;
	default:
		return bad(err, path,
			   "has `size=%.64s`: berth reads a size in bytes, k, m, g or t (not a share "
			   "of memory)",
			   v);
	}
	if (*p != '\0' && p[1] != '\0')
		return bad(err, path, "has `size=%.64s`: not a size (digits and k, m, g or t)", v);
	if (n == 0)
		return bad(err, path, "has `size=0`, which tmpfs reads as no limit");
	if (n > BERTH_TMP_SIZE_MAX / mul)
		return bad(err, path, "has `size=%.64s`: larger than 1024T", v);
	*out = n * mul;
	return 0;
}

/* mode=OCTAL (tmpfs(5): the root's permission bits, at most 07777). */
static int parse_mode(const char *v, const char *path, uint32_t *out, struct berth_error *err)
{
	uint32_t n = 0;
	const char *p = v;

	for (; *p >= '0' && *p <= '7' && p - v < 5; p++)
		n = n * 8 + (uint32_t)(*p - '0');
	if (p == v || *p != '\0' || n > 07777)
		return bad(err, path, "has `mode=%.64s`: not an octal mode of at most 07777", v);
	if (n == 0)
		return bad(err, path,
			   "has `mode=0`: a tmpfs nobody in the container could use (berth keeps no "
			   "capability); give the mode wanted");
	*out = n;
	return 0;
}

/* nr_inodes=N[k|m|g] (tmpfs(5)); 0 would mean no limit, refused. */
static int parse_inodes(const char *v, const char *path, uint64_t *out, struct berth_error *err)
{
	uint64_t n = 0, mul = 1;
	const char *p = v;

	for (; isdigit((unsigned char)*p) && n < (1ULL << 40); p++)
		n = n * 10 + (uint64_t)(*p - '0');
	if (*p == 'k' || *p == 'K')
		mul = 1ULL << 10, p++;
	else if (*p == 'm' || *p == 'M')
		mul = 1ULL << 20, p++;
	else if (*p == 'g' || *p == 'G')
		mul = 1ULL << 30, p++;
	if (p == v || *p != '\0' || n == 0 || n >= (1ULL << 40) / mul)
		return bad(err, path,
			   "has `nr_inodes=%.64s`: not a count of at least 1 (digits and k, m or g)", v);
	*out = n * mul;
	return 0;
}

static int parse_option(const char *o, enum mount_kind kind, const char *path, struct mount_opts *m,
			struct berth_error *err)
{
	if (strcmp(o, "ro") == 0 || strcmp(o, "rro") == 0)
		m->ro = true;
	else if (strcmp(o, "rw") == 0)
		m->ro = false;
	else if (strcmp(o, "nosuid") == 0 || strcmp(o, "nodev") == 0 || strcmp(o, "rnosuid") == 0 ||
		 strcmp(o, "rnodev") == 0 || strcmp(o, "private") == 0 || strcmp(o, "rprivate") == 0 ||
		 atime_option(o))
		; /* berth's mounts are always nosuid, nodev and private */
	else if (strcmp(o, "noexec") == 0 || strcmp(o, "rnoexec") == 0)
		m->noexec = true;
	else if (kind == KIND_BIND && (strcmp(o, "bind") == 0 || strcmp(o, "rbind") == 0))
		m->bind = true;
	else if (kind == KIND_BIND &&
		 (strcmp(o, "exec") == 0 || strcmp(o, "slave") == 0 || strcmp(o, "rslave") == 0))
		; /* binds are not noexec; no mount event reaches back to the host */
	else if (kind == KIND_TMPFS && strncmp(o, "size=", 5) == 0) {
		if (parse_size(o + 5, path, &m->size, err) < 0)
			return -1;
		m->has_size = true;
	} else if (kind == KIND_TMPFS && strncmp(o, "mode=", 5) == 0) {
		if (parse_mode(o + 5, path, &m->mode, err) < 0)
			return -1;
	} else if (kind == KIND_TMPFS && strncmp(o, "nr_inodes=", 10) == 0) {
		if (parse_inodes(o + 10, path, &m->inodes, err) < 0)
			return -1;
	} else if (kind == KIND_TMPFS && strcmp(o, "tmpcopyup") == 0)
		m->tmpcopyup = true;
	else if (strcmp(o, "shared") == 0 || strcmp(o, "rshared") == 0 || strcmp(o, "unbindable") == 0 ||
		 strcmp(o, "runbindable") == 0)
		return refuse(err, path,
			      "option `%s`: berth's mounts are private (no propagation to or from "
			      "the host)",
			      o);
	else if (strcmp(o, "suid") == 0 || strcmp(o, "dev") == 0)
		return refuse(err, path, "option `%s`: berth's mounts are always nosuid and nodev", o);
	else
		return refuse(err, path, "option `%.64s` is not one berth honours", o);
	return 0;
}

static int parse_options(const json_t *opts, enum mount_kind kind, const char *path, const char *where,
			 struct mount_opts *m, struct berth_error *err)
{
	char sub[320];
	size_t i;
	json_t *o;

	snprintf(sub, sizeof sub, "%s.options", path);
	if (berth_oci_want_array(opts, sub, err) < 0)
		return -1;
	json_array_foreach((json_t *)opts, i, o) {
		const char *s;
		char one[340];
		snprintf(one, sizeof one, "%s[%zu]", sub, i);
		if (berth_oci_string(o, one, true, &s, err) < 0 || parse_option(s, kind, where, m, err) < 0)
			return -1;
	}
	return 0;
}

/* The standard destinations: what berth builds there, and which mount
 * types of the bundle it takes the place of. */
static const struct {
	const char *dst;
	const char *types[3];
	bool bind_ok;
	const char *note; /* NULL: berth builds it */
} standard[] = {
    {"/proc", {"proc"}, false, NULL},
    {"/dev", {"tmpfs"}, false, NULL},
    {"/dev/pts", {"devpts"}, false, NULL},
    {"/dev/shm", {"tmpfs"}, true, NULL},
    {"/sys", {"sysfs"}, true, NULL},
    {"/dev/mqueue", {"mqueue"}, true, "/dev/mqueue is not mounted (POSIX message queues are not offered)"},
    {"/sys/fs/cgroup",
     {"cgroup", "cgroup2"},
     true,
     "/sys/fs/cgroup is not mounted (less of the host is exposed; berth limits the container's cgroup "
     "from outside)"},
};

/* The file system types of the standard mounts: anywhere else, refused. */
static bool standard_type(const char *t)
{
	static const char *const types[] = {"proc", "devpts", "sysfs", "mqueue", "cgroup", "cgroup2"};

	for (size_t i = 0; i < BERTH_ARRAY_SIZE(types); i++)
		if (strcmp(t, types[i]) == 0)
			return true;
	return false;
}

static bool under(const char *dst, const char *dir)
{
	size_t n = strlen(dir);

	return strcmp(dst, dir) == 0 || (strncmp(dst, dir, n) == 0 && dst[n] == '/');
}

/* 1: a standard mount (accepted, not copied); 0: not one; -1: refused. */
static int standard_mount(const char *dst, const char *type, enum mount_kind kind, const char *path,
			  struct berth_oci_bundle *b, struct berth_error *err)
{
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(standard); i++) {
		bool ok = kind == KIND_BIND && standard[i].bind_ok;
		if (strcmp(dst, standard[i].dst) != 0)
			continue;
		for (size_t t = 0; t < 3 && standard[i].types[t] != NULL && !ok; t++)
			ok = type != NULL && strcmp(type, standard[i].types[t]) == 0;
		if (!ok)
			return refuse(err, path,
				      "berth builds `%s` itself; a `%s` mount there would replace it", dst,
				      type != NULL ? type : "bind");
		if (standard[i].note != NULL) {
			for (size_t k = 0; k < b->n_notes; k++)
				if (strcmp(b->notes[k], standard[i].note) == 0)
					return 1;
			if (berth_oci_note(b, err, "%s", standard[i].note) < 0)
				return -1;
		}
		return 1;
	}
	if (type != NULL && standard_type(type))
		return refuse(err, path, "a `%s` mount is only accepted at its standard place", type);
	if (under(dst, "/proc") || under(dst, "/sys") || under(dst, "/dev"))
		return refuse(err, path,
			      "berth builds /dev, /proc and /sys itself: nothing is mounted over "
			      "`%.200s`",
			      dst);
	return 0;
}

static int add_mount(struct berth_policy *p, struct berth_mount *m, struct berth_error *err)
{
	struct berth_mount *v = realloc(p->mounts, (p->n_mounts + 1) * sizeof *v);

	if (v == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	p->mounts = v;
	v[p->n_mounts++] = *m;
	return 0;
}

static int bind_mount(const json_t *e, char *dst, const char *path, const struct mount_opts *mo,
		      struct berth_oci_bundle *b, struct berth_error *err)
{
	char joined[PATH_MAX], real[PATH_MAX], sub[320];
	const char *src;
	struct berth_mount m = {0};

	snprintf(sub, sizeof sub, "%s.source", path);
	if (berth_oci_string(json_object_get(e, "source"), sub, true, &src, err) < 0)
		return -1;
	if (src[0] == '\0')
		return berth_oci_bad(err, sub, "is empty");
	if ((size_t)snprintf(joined, sizeof joined, "%s%s%s", src[0] == '/' ? "" : b->dir,
			     src[0] == '/' ? "" : "/", src) >= sizeof joined)
		return berth_oci_bad(err, sub, "is too long");
	if (realpath(joined, real) == NULL) {
		berth_err_status(err, errno, BERTH_EXIT_USAGE, "config.json: `%s` `%.200s` cannot be used",
				 sub, joined);
		return berth_err_hint(err, "a bind mount's source must exist before `create`");
	}
	if (strcmp(real, "/") == 0)
		return berth_oci_unsupported(err, sub, "binding the host's root `/` into a container");
	m.noexec = mo->noexec;
	m.dst = dst;
	m.rw = !mo->ro;
	if ((m.src = berth_oci_strdup(real, err)) == NULL)
		return -1;
	if (add_mount(&b->policy, &m, err) < 0) {
		free(m.src);
		return -1;
	}
	return 0;
}

static int tmpfs_mount(char *dst, const char *path, const struct mount_opts *mo, struct berth_oci_bundle *b,
		       struct berth_error *err)
{
	struct berth_mount m = {.dst = dst, .rw = true, .tmpfs = true};

	if (mo->ro)
		return refuse(err, path, "a read-only tmpfs: berth's tmpfs mounts are writable");
	m.tmpfs_size = mo->has_size ? mo->size : BERTH_DEFAULT_TMP_SIZE;
	if (mo->tmpcopyup &&
	    berth_oci_note(b, err, "%s: tmpcopyup is not done: the tmpfs starts empty", path) < 0)
		return -1;
	m.tmpfs_mode = mo->mode;
	m.tmpfs_inodes = mo->inodes;
	m.noexec = mo->noexec;
	return add_mount(&b->policy, &m, err);
}

static int convert_one(const json_t *e, size_t i, struct berth_oci_bundle *b, struct berth_error *err)
{
	static const char *const keys[] = {"destination", "type", "source", "options", NULL};
	struct mount_opts mo = {0};
	cleanup_free char *dst = NULL;
	char path[64], shown[320], sub[96];
	const char *type, *d;
	enum mount_kind kind;
	int r;

	snprintf(path, sizeof path, "mounts[%zu]", i);
	if (berth_oci_want_object(e, path, err) < 0 || e == NULL)
		return -1;
	if (json_object_get(e, "uidMappings") != NULL || json_object_get(e, "gidMappings") != NULL) {
		snprintf(sub, sizeof sub, "%s.%s", path,
			 json_object_get(e, "uidMappings") != NULL ? "uidMappings" : "gidMappings");
		return berth_oci_unsupported(err, sub,
					     "idmapped mounts are berth's own (the sandbox's identity)");
	}
	if (berth_oci_keys(e, path, keys, err) < 0)
		return -1;
	snprintf(sub, sizeof sub, "%s.destination", path);
	if (berth_oci_string(json_object_get(e, "destination"), sub, true, &d, err) < 0 ||
	    berth_oci_container_path(d, sub, &dst, err) < 0)
		return -1;
	snprintf(shown, sizeof shown, "`%s` (destination `%.200s`)", path, dst);
	snprintf(sub, sizeof sub, "%s.type", path);
	if (berth_oci_string(json_object_get(e, "type"), sub, false, &type, err) < 0)
		return -1;
	if (strcmp(dst, "/") == 0)
		return refuse(err, shown, "a mount over the container's root (root.path is the root)");
	/* A mount with no type (or "none") is a bind when its options say so
	 * (runc's reading of runtime-spec 1.1). */
	if (type != NULL && strcmp(type, "bind") == 0)
		kind = KIND_BIND;
	else if (type != NULL && strcmp(type, "tmpfs") == 0)
		kind = KIND_TMPFS;
	else if (type == NULL || strcmp(type, "none") == 0 || type[0] == '\0') {
		const json_t *o;
		size_t k;
		kind = KIND_OTHER;
		json_array_foreach(json_object_get(e, "options"), k, o) {
			if (json_is_string(o) && (strcmp(json_string_value(o), "bind") == 0 ||
						  strcmp(json_string_value(o), "rbind") == 0))
				kind = KIND_BIND;
		}
		if (kind == KIND_OTHER)
			return bad(err, shown, "has no type and is no bind mount (no `bind` option)");
		type = NULL;
	} else
		kind = KIND_OTHER;
	r = standard_mount(dst, kind == KIND_BIND ? NULL : type, kind, shown, b, err);
	if (r != 0)
		return r < 0 ? -1 : 0;
	if (kind == KIND_OTHER)
		return refuse(err, shown,
			      "type `%.64s`: berth mounts binds and tmpfs only (the engine mounts "
			      "other file systems on the host and binds them)",
			      type);
	for (size_t k = 0; k < b->policy.n_mounts; k++)
		if (strcmp(b->policy.mounts[k].dst, dst) == 0)
			return bad(err, shown, "mounts over an earlier mount at the same destination");
	if (parse_options(json_object_get(e, "options"), kind, path, shown, &mo, err) < 0)
		return -1;
	if (kind == KIND_BIND && bind_mount(e, dst, path, &mo, b, err) == 0) {
		dst = NULL; /* the mount's now */
		return 0;
	}
	if (kind == KIND_TMPFS && tmpfs_mount(dst, shown, &mo, b, err) == 0) {
		dst = NULL;
		return 0;
	}
	return -1;
}

int berth_oci_convert_mounts(const json_t *mounts, struct berth_oci_bundle *b, struct berth_error *err)
{
	size_t i;
	json_t *e;

	if (berth_oci_want_array(mounts, "mounts", err) < 0)
		return -1;
	json_array_foreach((json_t *)mounts, i, e) {
		if (convert_one(e, i, b, err) < 0)
			return -1;
	}
	return 0;
}
