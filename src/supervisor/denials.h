/* SPDX-License-Identifier: MIT */
/*
 * denials.h - the denial stream of one run (docs/denials.md): the kernel's
 * Landlock records of the run's own domain, read from the audit netlink
 * socket's read-only multicast group (root: CAP_AUDIT_READ, and the
 * kernel's audit on), explained (denial.h), recorded as `denial` records
 * through the run's audit queue (the first BERTH_DENIALS_RECORDED, then a
 * count) and summed up per kind for the run's end (`berth run --explain`,
 * the `denial.summary` record, the attestation).
 *
 * The join: the Landlock probe of the command's process, right before its
 * execve (src/sandbox/measure.c), is the domain's first denial; its
 * LANDLOCK_DOMAIN record names the process that made the domain, whose pid
 * namespace must be the one the command measured.  No record of another
 * domain is kept.  In order:
 *   berth_denials_open()     before the sandbox is cloned: the socket
 *   berth_denials_start()    on_spawned: the reader thread
 *   berth_denials_join()     on_measured: the run's domain (waits for it)
 *   berth_denials_stop()     the run's end: waits until every record the
 *                            sandbox caused has arrived, stops the thread
 *   berth_denials_free()
 */
#ifndef BERTH_SUPERVISOR_DENIALS_H
#define BERTH_SUPERVISOR_DENIALS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "../audit/queue.h"
#include "denial.h"

/* Denial records of one run in the audit trail at most; the rest are counted. */
#define BERTH_DENIALS_RECORDED 100
/* Distinct denials (kind, blocker, path or address, exe) kept for the summary. */
#define BERTH_DENIALS_DISTINCT 64
/* How long on_measured waits for the domain's record (ms). */
#define BERTH_DENIALS_JOIN_MS 1000
/* How long the run's end waits for the domain's deallocation record (ms). */
#define BERTH_DENIALS_END_MS 500

struct berth_denials;

/*
 * berth_denials_open - the stream for a run of @p: opens the audit socket
 * and binds it to AUDIT_NLGRP_READLOG.  Returns the stream; it is always
 * returned (NULL only on ENOMEM), seeing nothing when it cannot read the
 * kernel's records: berth_denials_seen() says why.
 */
struct berth_denials *berth_denials_open(const struct berth_policy *p);

/* berth_denials_start - start the reader thread (no process is cloned
 * from the supervisor after this).  A no-op when nothing can be seen. */
void berth_denials_start(struct berth_denials *dn, struct berth_audit_queue *(*queue)(void *), void *arg);

/*
 * berth_denials_join - the run's domain: the one whose creator lives in
 * the pid namespace (@ns_dev, @ns_ino) the command measured; waits up to
 * BERTH_DENIALS_JOIN_MS for its record.  @probed: the command's Landlock
 * probe was refused (EACCES), so a record is coming.  Returns true when
 * the domain is known.
 */
bool berth_denials_join(struct berth_denials *dn, uint64_t ns_dev, uint64_t ns_ino, bool probed);

/*
 * berth_denials_stop - after the sandbox is gone: waits until every record
 * it caused has arrived (a barrier: one AUDIT_TRUSTED_APP message "berth:
 * end of the denials of run @run_id (NONCE)" written to the kernel's audit
 * log, which comes back after them; up to 200 ms), and, with @wait_end or
 * without the barrier, up to BERTH_DENIALS_END_MS for the domain's
 * deallocation record (the kernel's own total, 20-60 ms after the end);
 * then stops the thread.  Safe on NULL.
 */
void berth_denials_stop(struct berth_denials *dn, const char *run_id, bool wait_end);

/*
 * berth_denials_seen - whether the kernel's Landlock records of this run
 * are read: the socket is, and the run's domain was joined; when not, @why
 * (@len bytes) says why in one sentence.
 */
bool berth_denials_seen(const struct berth_denials *dn, char *why, size_t len);

/*
 * berth_denials_summary - the payload of the run's `denial.summary`
 * record (docs/denials.md): {"landlock":"seen"|"not seen", "why"?,
 * "count":N, "recorded":N, "not_recorded":N, "kernel_total":N|null,
 * "kinds":{KIND:N}, "broker_refused":N}.  @broker_refused: the broker's
 * refusals of the run.  After berth_denials_stop().  Returns a new object,
 * or NULL (ENOMEM).
 */
json_t *berth_denials_summary(const struct berth_denials *dn, unsigned long long broker_refused);

/*
 * berth_denials_explain - the lines of `berth run --explain`: each distinct
 * denial (its count, blocker, what was tried, the rule, the fix), then the
 * totals and what was not seen.  Each line is given to @line (no newline).
 */
void berth_denials_explain(const struct berth_denials *dn, unsigned long long broker_refused,
			   void (*line)(void *arg, const char *text), void *arg);

/* berth_denials_free - close and free (after berth_denials_stop()).  NULL ok. */
void berth_denials_free(struct berth_denials *dn);

#endif
