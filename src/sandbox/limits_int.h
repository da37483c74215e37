/* SPDX-License-Identifier: MIT */
/*
 * limits_int.h - private to src/sandbox/limits*.c: the outcome of one
 * attempt at a mode and the helpers one file shares with another.  Nothing
 * else includes it; the interface is limits.h.
 *
 * Files, one concern each (limits.c's top comment tells the order of the
 * modes and why rlimit mode sets no memory limit):
 *   limits.c         the mode chosen (berth_limits_prepare, _check), rlimit
 *                    mode, what the child applies; small string/file helpers
 *   limits_cgroup.c  the run's cgroups: made, written, joined, removed
 *   limits_find.c    the caller's cgroups, the delegated one, the advice
 *
 * The helpers keep the contracts they had as static functions of one file.
 */
#ifndef BERTH_SANDBOX_LIMITS_INT_H
#define BERTH_SANDBOX_LIMITS_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "limits.h"

#define CG_PERIOD_US 100000ULL /* cpu.max / cpu.cfs_period_us period */

/* Outcome of one attempt at a mode. */
enum { TRY_OK = 0, TRY_UNAVAILABLE = 1, TRY_FAILED = -1 };

/* berth_lim_appendf - append formatted text to the NUL-terminated @buf (truncating). */
void berth_lim_appendf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* berth_lim_add_unenforced - add one item to the comma-separated @lim->unenforced. */
void berth_lim_add_unenforced(struct berth_limits *lim, const char *what);

/* berth_lim_has_token - whether @tok is one of the @sep-separated words of @list. */
bool berth_lim_has_token(const char *list, const char *tok, char sep);

/* berth_lim_path_join - "@dir/@name" into @out; returns 0 or -ENAMETOOLONG. */
int berth_lim_path_join(char *out, size_t size, const char *dir, const char *name);

/* berth_lim_write_str - write @val to @path in one write(2); returns 0 or -errno. */
int berth_lim_write_str(const char *path, const char *val);

/* berth_lim_read_str - read up to @size-1 bytes of @path into @buf; returns 0 or -errno. */
int berth_lim_read_str(const char *path, char *buf, size_t size);

/*
 * berth_lim_cgroup_dir_at - the directory of the caller's cgroup: in the
 * cgroup v2 hierarchy when @ctrl is NULL, else in the v1 hierarchy of
 * @ctrl.  *@mnt_len (may be NULL) gets the length of the mount point's part
 * of @out.  Returns 0 or -1 when the hierarchy is not mounted or not visible.
 */
int berth_lim_cgroup_dir_at(const char *ctrl, char *out, size_t size, size_t *mnt_len);

/* berth_lim_cgroup_dir - berth_lim_cgroup_dir_at without the mount point. */
int berth_lim_cgroup_dir(const char *ctrl, char *out, size_t size);

/* berth_lim_up - cut the last component of @dir, never above its first @top
 * bytes; false when there is none to cut. */
bool berth_lim_up(char *dir, size_t top);

/*
 * berth_lim_try_cgroup2 - a cgroup v2 directory for run @run_id with the
 * limits of @p: root in its own cgroup, a user in the nearest delegated one
 * (then the next up).  @need_cpu: only a cgroup with the cpu controller will
 * do.  Returns TRY_OK (@lim filled), TRY_UNAVAILABLE (fall back), or
 * TRY_FAILED with @err filled.
 */
int berth_lim_try_cgroup2(const struct berth_policy *p, const char *run_id, bool need_cpu,
			  struct berth_limits *lim, struct berth_error *err);

/* berth_lim_try_cgroup1 - the same in the v1 memory, pids and (when
 * writable) cpu hierarchies. */
int berth_lim_try_cgroup1(const struct berth_policy *p, const char *run_id, struct berth_limits *lim,
			  struct berth_error *err);

/* berth_lim_discard - undo a failed attempt: remove and forget every directory. */
void berth_lim_discard(struct berth_limits *lim);

#endif
