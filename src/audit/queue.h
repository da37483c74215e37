/* SPDX-License-Identifier: MIT */
/*
 * queue.h - records for the audit trail from a thread that must not wait
 * for the disk on every event (the egress broker's event loop): pushed
 * records are appended by a writer thread of the queue, as one group commit
 * for all that are waiting (berth_audit_append_batch).  Records nobody waits
 * for are held up to 2 ms, or until somebody waits, so that they share the
 * next waited-for commit (a tool.call with its tool.result).  A push can also wait
 * until its record is durable: the broker does so for a refusal, so that the
 * 403 reaches the client only once the refusal is on disk (docs/audit.md,
 * "Durability").
 */
#ifndef BERTH_AUDIT_QUEUE_H
#define BERTH_AUDIT_QUEUE_H

#include <jansson.h>
#include <stdbool.h>

#include "../util/error.h"
#include "audit.h"

struct berth_audit_queue;

/*
 * berth_audit_queue_new - a queue appending to @a records of run @run_id by
 * @actor (both copied; @a must outlive the queue), with its writer thread.
 * Returns the queue, or NULL with @err filled (ENOMEM, or EAGAIN when the
 * thread cannot be created).
 */
struct berth_audit_queue *berth_audit_queue_new(struct berth_audit *a, const char *run_id, const char *actor,
						struct berth_error *err);

/*
 * berth_audit_queue_push - queue a record of @kind with @payload (the queue
 * takes the reference, also on failure).  With @wait, return only once the
 * record is durable.  Any thread.
 * Returns 0; -1 with @err filled when the queue failed before (an append
 * failed: the record is dropped, and so are all later ones), or, with @wait,
 * when this record's group could not be written (ENOSPC, EIO, ...).
 */
int berth_audit_queue_push(struct berth_audit_queue *q, const char *kind, json_t *payload, bool wait,
			   struct berth_error *err);

/*
 * berth_audit_queue_push_as - as berth_audit_queue_push(), with @actor (a
 * non-empty UTF-8 string, copied; NULL: the queue's) for this record only:
 * resident apps record calls of several callers in one run.
 */
int berth_audit_queue_push_as(struct berth_audit_queue *q, const char *actor, const char *kind,
			      json_t *payload, bool wait, struct berth_error *err);

/*
 * berth_audit_queue_sync - wait until every record pushed so far is durable.
 * A caller that pushed several records without waiting (one per finished
 * call) waits once, so that they share one group commit.  Any thread.
 * Returns 0, or -1 with @err filled when the queue failed (some record
 * pushed so far, or before, could not be written: ENOSPC, EIO, ...).
 */
int berth_audit_queue_sync(struct berth_audit_queue *q, struct berth_error *err);

/*
 * berth_audit_queue_close - append what is queued, stop the writer and free
 * the queue.  NULL is a no-op (0).
 * Returns 0 when every record pushed was appended; -1 with @err filled (the
 * first failure, and how many records were lost) otherwise.
 */
int berth_audit_queue_close(struct berth_audit_queue *q, struct berth_error *err);

#endif
