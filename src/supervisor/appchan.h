/* SPDX-License-Identifier: MIT */
/*
 * appchan.h - one message a resident app sent berth over its channel (fd 3,
 * docs/protocol.md) turned into what berth does with it, without the app or
 * its sandbox: pure, so it is fuzzed on its own (fuzz/fuzz_appchan.c).  The
 * framing is lines.h; the channel's state (calls in flight, logs, audit) is
 * app.c and app_call.c, which act on these decisions.
 */
#ifndef BERTH_SUPERVISOR_APPCHAN_H
#define BERTH_SUPERVISOR_APPCHAN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "../manifest/manifest.h"
#include "app.h"

enum berth_appmsg_kind {
	BERTH_APPMSG_BAD,    /* not a JSON object (or duplicate members): a warning, skipped */
	BERTH_APPMSG_LOG,    /* a berth/log notification */
	BERTH_APPMSG_READY,  /* a berth/ready notification */
	BERTH_APPMSG_OTHER,  /* a notification of another method: a warning naming it */
	BERTH_APPMSG_NONE,   /* an object with neither "id" nor a string "method": nothing */
	BERTH_APPMSG_ANSWER, /* it has an "id": the answer to a call */
};

struct berth_appmsg {
	enum berth_appmsg_kind kind;
	json_t *msg;   /* the message (owned); the pointers below point into it; NULL for BAD */
	char bad[160]; /* BAD: jansson's reason, or "not an object" */
	/* Of any kind but BAD (the boot reads berth/ready and berth/log by the
	 * method alone, whether or not the message has an id): */
	const char *method; /* "method" when a string, else NULL */
	const char *level;  /* method berth/log: params.level, "info" when no string */
	const char *text;   /* method berth/log: params.message, "" when no string */
	json_t *exports;    /* method berth/ready: params.exports (any type), or NULL */
	bool id_ok;         /* ANSWER: the id is an integer (berth's ids are; others answer nothing) */
	long long id;       /* ANSWER: that integer */
};

/*
 * berth_appmsg_parse - decode the line @line of @len bytes (without its
 * newline) into @m: JSON with duplicate members refused, as the channel
 * always read it.  Always fills @m; free it with berth_appmsg_free.
 */
void berth_appmsg_parse(const char *line, size_t len, struct berth_appmsg *m);

/* berth_appmsg_free - release @m's message; @m is left empty. */
void berth_appmsg_free(struct berth_appmsg *m);

/*
 * berth_appmsg_outcome - what the answer @m means for a call of @ex that
 * was not cancelled: its "error" if it has one (the app's code, but one
 * outside 32 bits or not an integer is BERTH_RPC_INTERNAL and the codes
 * that say what berth did -- crashed, timeout, bad output -- are
 * BERTH_RPC_APP_ERROR; the message cleaned for a terminal; "data" when it is
 * an object), else its "result", which must be an object that @ex's output
 * schema accepts (BERTH_RPC_BAD_OUTPUT otherwise, data {path, reason} for a
 * schema failure).
 * Returns 0 with the result in *@result (borrowed from @m), or -1 with @ce
 * filled (free it with berth_call_error_free; ce->denial is left to the
 * caller, which knows the app's mounts).
 */
int berth_appmsg_outcome(const struct berth_appmsg *m, const struct berth_export *ex, json_t **result,
			 struct berth_call_error *ce);

/*
 * berth_appmsg_error - @ce for the "error" member @error of an app's answer
 * (any JSON value), as berth_appmsg_outcome() fills it.  Returns -1.
 */
int berth_appmsg_error(const json_t *error, struct berth_call_error *ce);

/*
 * berth_appmsg_parity - the exports @announced (a berth/ready's list, or
 * NULL) against the @n exports @ex of the manifest: the manifest's names the
 * list lacks into @missing and the list's entries the manifest lacks into
 * @extra (each "`a`, `b`", cleaned for a terminal, "(not a string)" for a
 * non-string entry; truncated to fit @size bytes).
 * Returns 0 when they are the same set, 1 when they differ, -1 when
 * @announced is no array.
 */
int berth_appmsg_parity(const json_t *announced, const struct berth_export *ex, size_t n, char *missing,
			char *extra, size_t size);

#endif
