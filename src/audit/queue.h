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

#include "../broker/broker.h"
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

/*
 * berth_audit_net_payload - the payload of a `net.decision` record for one
 * decision of the egress broker (docs/audit.md): proxy ("http", "socks5"),
 * decision ("allowed", "refused", "failed"), host, port, address, reason,
 * bytes_up, bytes_down, duration_ms.  Returns a new object, or NULL (ENOMEM).
 */
json_t *berth_audit_net_payload(const struct berth_broker_decision *d);

/*
 * The cap on `net.decision` records of one run (docs/audit.md): at most
 * BERTH_AUDIT_NET_MAX_PER_OUTCOME records per outcome (allowed, refused,
 * failed); beyond it decisions are only counted, and one summary record
 * closes the run's decisions.  Without it a sandbox connecting in a loop
 * fills the host's disk through the audit log (and, since a refusal waits for
 * its group commit, keeps its broker waiting for the disk).  Every run that
 * has a broker -- `berth run`, an agent session, a resident app's boot --
 * keeps one, zeroed at the start of the run, touched on the broker's thread
 * only and read for the summary once the broker stopped.
 */
#define BERTH_AUDIT_NET_MAX_PER_OUTCOME 1000

struct berth_audit_net_cap {
	unsigned long long count[4], suppressed[4]; /* by enum berth_broker_outcome */
};

/*
 * berth_audit_net_admit - count decision @d in @c.  Returns true when it is
 * to be recorded one by one, false when its outcome is over the cap (the
 * decision itself stands: a refusal stays a refusal).
 */
bool berth_audit_net_admit(struct berth_audit_net_cap *c, const struct berth_broker_decision *d);

/*
 * berth_audit_net_summary - the payload of the record that closes a run's
 * decisions when some were left out: {"decision":"summary",
 * "recorded_each":1000, "allowed_not_recorded":N, "refused_not_recorded":N,
 * "failed_not_recorded":N}.  Returns a new object, or NULL when nothing was
 * left out (or ENOMEM).
 */
json_t *berth_audit_net_summary(const struct berth_audit_net_cap *c);

#endif
