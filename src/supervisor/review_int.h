/* SPDX-License-Identifier: MIT */
/*
 * review_int.h - what review.c shares with review_checkpoint.c: one
 * collection of the review layer, with its options.
 */
#ifndef BERTH_SUPERVISOR_REVIEW_INT_H
#define BERTH_SUPERVISOR_REVIEW_INT_H

#include "review.h"

/* What one collection writes: RUN/review/@name, from a layer that is @live
 * (the overlay is mounted: the layer is only read) or not, its new blobs
 * within @budget bytes (0: no bound).  Nothing is written when the change
 * set's digest is @same_as. */
struct collect_opts {
	const char *name; /* "changes.json", "checkpoints/ID.json" */
	bool live;
	unsigned long long budget;
	const char *same_as; /* NULL: always written */
	json_t *extra;       /* members added to the document (borrowed), or NULL */
	json_t **entries;    /* out: the entries (a new reference), or NULL */
};

/*
 * berth_review_collect_opts - berth_review_collect() as @o says.  Returns 0
 * written, 1 the same change set as @o->same_as (nothing written), or -1
 * with @err filled (nothing of RUN/review/@name written; RUN/review removed
 * when this call made it).
 */
int berth_review_collect_opts(const char *run_id, const struct berth_policy *p, int layer_fd,
			      const struct timespec *started, const struct collect_opts *o,
			      struct berth_review_summary *sum, struct berth_error *err);

/* berth_review_digest - "sha256:<hex>" over the JCS form of @entries. */
int berth_review_digest(const json_t *entries, char out[72], struct berth_error *err);

#endif
