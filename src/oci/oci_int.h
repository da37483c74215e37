/* SPDX-License-Identifier: MIT */
/*
 * oci_int.h - private to src/oci: the JSON readers the converter's files
 * share (bundle.c, bundle_mounts.c, bundle_linux.c, bundle_seccomp.c), and
 * the supervisor's entry for lifecycle.c.  The interface is oci.h.
 *
 * Every reader names the value by its JSON path (`process.user.uid`,
 * `mounts[3].options[1]`) in its refusal; @path is that path.
 */
#ifndef BERTH_OCI_INT_H
#define BERTH_OCI_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "oci.h"

/* The hint of every refusal of something berth does not do. */
#define BERTH_OCI_HINT_UNSUPPORTED                                                                           \
	"remove it from the bundle's config.json (the engine's option that sets it), or run this container " \
	"with another runtime; docs/oci.md lists what berth oci accepts"

/*
 * berth_oci_unsupported - "config.json: `PATH` is not supported by berth oci:
 * WHY" (status 2) with the hint above.  Returns -1.
 */
int berth_oci_unsupported(struct berth_error *err, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* berth_oci_bad - "config.json: `PATH` WHAT" (status 2), no hint.  Returns -1. */
int berth_oci_bad(struct berth_error *err, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * berth_oci_keys - refuse a member of @obj whose name is not in @known
 * (NULL-ended): "`PATH.KEY` is not supported by berth oci: berth does not
 * know what it would change, so it refuses it".  Returns 0 or -1.
 */
int berth_oci_keys(const json_t *obj, const char *path, const char *const *known, struct berth_error *err);

/* The typed readers: @v may be NULL (absent) unless said otherwise; a
 * value of another type is refused ("must be a string"...). */
int berth_oci_want_object(const json_t *v, const char *path, struct berth_error *err);
int berth_oci_want_array(const json_t *v, const char *path, struct berth_error *err);
/* *@out the string (borrowed), or NULL when absent and !@required. */
int berth_oci_string(const json_t *v, const char *path, bool required, const char **out,
		     struct berth_error *err);
/* *@out the boolean, false when absent. */
int berth_oci_bool(const json_t *v, const char *path, bool *out, struct berth_error *err);
/* *@out an integer of @min..@max; @set false when absent (and !@required). */
int berth_oci_int(const json_t *v, const char *path, bool required, long long min, long long max,
		  long long *out, bool *set, struct berth_error *err);

/* berth_oci_note - add a line to @b's notes, formatted.  Returns 0, or -1 (ENOMEM). */
int berth_oci_note(struct berth_oci_bundle *b, struct berth_error *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* berth_oci_strdup - strdup with ENOMEM in @err.  Returns the copy or NULL. */
char *berth_oci_strdup(const char *s, struct berth_error *err);

/*
 * berth_oci_container_path - whether @s is an absolute path in the
 * container without `.` or `..` components; *@out a copy without repeated
 * or trailing slashes ("/" stays "/").  Returns 0, or -1 with @err naming
 * @path.
 */
int berth_oci_container_path(const char *s, const char *path, char **out, struct berth_error *err);

/* berth_oci_rlimit_name - "RLIMIT_NOFILE" for RLIMIT_NOFILE ("RLIMIT_?" for
 * one berth does not know). */
const char *berth_oci_rlimit_name(int resource);

/* The converter's parts, in the order bundle.c calls them. */
int berth_oci_convert_mounts(const json_t *mounts, struct berth_oci_bundle *b, struct berth_error *err);
int berth_oci_convert_linux(const json_t *l, struct berth_oci_bundle *b, struct berth_error *err);
/* linux.seccomp: checked against what berth accepts, kept as compact JSON. */
int berth_oci_convert_seccomp(const json_t *seccomp, struct berth_oci_bundle *b, struct berth_error *err);

/*
 * berth_oci_supervise - the container's supervisor, in the child `create`
 * forked; never returns.  @notify: the pipe `create` waits on (one struct
 * berth_oci_notice); @dfd: the container's state directory; @console: the
 * connected --console-socket or -1; @created_at, @owner: for state.json.
 */
struct berth_oci_notice {
	int ok; /* 1: created; 0: @err says why not */
	struct berth_error err;
};

struct berth_oci_sup_args {
	const struct berth_oci_ctx *ctx;
	const char *id;
	struct berth_oci_bundle *b;
	int notify, dfd, console;
	unsigned identity;
	const char *created_at;
};

__attribute__((noreturn)) void berth_oci_supervise(const struct berth_oci_sup_args *a);

/*
 * berth_oci_cgroup_join - put the calling process (the supervisor) in the
 * cgroup @cgpath (`linux.cgroupsPath`, absolute) of every mounted hierarchy,
 * making the directories (0755) that are missing.  As a user, a hierarchy
 * this uid cannot write is skipped, logged to @log (runc's rootless rule).
 * Returns 0, or -1 with @err naming the directory (as root: any failure).
 */
int berth_oci_cgroup_join(const char *cgpath, const struct berth_oci_log *log, const char *id,
			  struct berth_error *err);

/* berth_oci_cgroup_remove - rmdir @cgpath in every hierarchy (once its
 * processes are gone); what cannot be removed is logged to @log. */
void berth_oci_cgroup_remove(const char *cgpath, const struct berth_oci_log *log, const char *id);

/* berth_oci_convert_annotations - config.json's `annotations` (@ann, may
 * be NULL) into @b (bundle_annotations.c).  Returns 0 or -1. */
int berth_oci_convert_annotations(const json_t *ann, struct berth_oci_bundle *b, struct berth_error *err);

/*
 * berth_oci_add_allow_host - the allow-host pattern @tok (docs/egress.md's
 * grammar) into @p's list, canonical, once.  @what names the field in
 * errors.  Returns 0, or -1 with @err filled (status 2 for a bad pattern).
 */
int berth_oci_add_allow_host(struct berth_policy *p, const char *tok, const char *what,
			     struct berth_error *err);

/* berth_oci_egress_on - the container's network becomes berth's broker
 * (BERTH_NET_PROXY), noted when it joins a pod's.  Returns 0 or -1. */
int berth_oci_egress_on(struct berth_oci_bundle *b, const char *what, struct berth_error *err);

/*
 * berth_oci_annotation_profile - berth.dev/profile NAME: the agent profile
 * NAME (berth_profile_load: the user's, then berth's own) gives the
 * container its egress (its `network:` and `allow_hosts:` as `berth run`
 * reads them) and each NAME=VALUE of its `env:` that process.env does not
 * set; what of it a container cannot take is noted or refused
 * (bundle_profile.c).  Returns 0, or -1 with @err filled.
 */
int berth_oci_annotation_profile(const char *name, struct berth_oci_bundle *b, struct berth_error *err);

/* berth_oci_now_rfc3339 - the current time, UTC, RFC 3339 with nanoseconds
 * (`2026-12-02T14:54:35.365614703Z`), into @buf (40 bytes). */
void berth_oci_now_rfc3339(char *buf, size_t len, bool nanos);

#endif
