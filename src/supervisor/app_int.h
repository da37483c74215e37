/* SPDX-License-Identifier: MIT */
/*
 * app_int.h - private to src/supervisor/app*.c (not app_policy.c): one
 * resident app (struct berth_app), its calls, and the helpers its parts
 * share.  Nothing else includes it; the interface is app.h.
 *
 * Files:
 *   app.c        open, the channel (log lines, notifications), boot and
 *                stop, denials explained; small helpers
 *   app_audit.c  the audit trail: one run per boot, tool.call/tool.result
 *   app_call.c   calls: schema checks, async calls in flight, sync calls
 */
#ifndef BERTH_SUPERVISOR_APP_INT_H
#define BERTH_SUPERVISOR_APP_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "app.h"
#include "../audit/audit.h"
#include "../audit/exposure.h"
#include "../audit/queue.h"
#include "appchan.h"
#include "lines.h"
#include "outq.h"
#include "../util/sys.h"
#include "run.h"

struct berth_cred_run;

struct berth_app {
	struct berth_app_opts o;
	struct berth_manifest m;
	struct berth_app_paths paths;
	struct berth_policy p;
	/* the manifest's credentials, read once when the app is opened
	 * (credentials.h), or NULL */
	struct berth_cred_run *creds;
	char digest[65];
	struct berth_runtime_opts ro;
	struct berth_rt *sb; /* the started sandbox, or NULL */
	struct berth_enforced enforced;
	int rpc;   /* berth's end of the channel, non-blocking; -1 when stopped */
	int logfd; /* read end of the app's stdout+stderr; -1 when stopped */
	struct berth_lines rin, lin;
	long long next_id;
	/* Calls not answered yet, in the order they were made.  At most
	 * BERTH_APP_MAX_INFLIGHT are sent; the rest wait in order. */
	struct pending *pend;
	size_t n_pend, cap_pend;
	/* Bytes queued for the channel (requests, cancellations). */
	struct berth_outq out;
	/* The audit trail (docs/audit.md, "Resident apps"): one run per boot
	 * (src/supervisor/run.h), which also serves the app's egress. */
	struct berth_run run;
	bool run_live;                /* run is initialised and not ended yet */
	json_t *run_extra[3];         /* its run.start, policy and net.decision members */
	char actor[160];              /* who runs the app: run.start, policy, run.stop */
	char caller[160];             /* who calls: tool.call, tool.result */
	struct berth_audit_queue *aq; /* the run's queue while booted with audit, or NULL */
	bool audit_refused;           /* the last boot failed for the audit trail */
	struct berth_error audit_why; /* why */
	long long boot_ms;
	int exit_status; /* -1 unknown */
	const char *stop_reason;
	unsigned long calls;
	/* Calls finished and not yet reported: their tool.result records are
	 * queued; they are reported once those are durable (one group commit
	 * for all that finished in one wakeup). */
	struct completion *comp;
	size_t n_comp, cap_comp;
};

struct completion {
	long long id;
	json_t *result; /* or NULL: ce */
	struct berth_call_error ce;
	bool audit_failed; /* its record could not be written */
	struct berth_error why;
};

struct pending {
	long long id;
	const struct berth_export *ex;
	long long deadline; /* ms, CLOCK_MONOTONIC */
	unsigned timeout_ms;
	char *line; /* the request with its newline, until it is sent */
	size_t len;
	bool sent, cancelled;
	json_t *input;   /* until its tool.call is recorded */
	bool recorded;   /* its tool.call is queued */
	long long t0_us; /* when it was made */
};

/* ---- app.c */

/* One log line of the app to the log callback, cleaned of terminal controls. */
void berth_ap_app_log(struct berth_app *a, const char *level, const char *line);
/* Fills @ce (@code, @data taken, the formatted message); returns -1. */
int berth_ap_call_fail(struct berth_call_error *ce, int code, json_t *data, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The export @name of @m, or NULL. */
const struct berth_export *berth_ap_find_export(const struct berth_manifest *m, const char *name);
/* Every complete log line the app wrote so far, to the log callback. */
void berth_ap_drain_logs(struct berth_app *a);
/* The next complete line on the app's channel parsed into *@m (free it
 * with berth_appmsg_free): 1, or 0 when no line is complete yet.  Lines
 * over the bound are warned about and skipped. */
int berth_ap_next_line(struct berth_app *a, struct berth_appmsg *m);
/* A message from the app that is not an answer (appchan.h): berth/log is
 * logged, another method warned about, a message without one ignored. */
void berth_ap_handle_notification(struct berth_app *a, const struct berth_appmsg *m);
/* Stops the sandbox (gracefully: end of file first, then the grace
 * period); pending calls stay pending. */
void berth_ap_stop_sandbox(struct berth_app *a, bool graceful);

/* ---- app_audit.c */

/* Who runs the app, for run.start, policy and run.stop ("berth" by default). */
const char *berth_ap_app_actor(const struct berth_app *a);
/* The boot's run: initialised and attached to a->ro (run.start and policy
 * are recorded while the sandbox is built).  Returns 0, or -1 (ENOMEM). */
int berth_ap_run_begin(struct berth_app *a, struct berth_error *err);
/* The sandbox started: a->aq is the run's queue (with audit). */
void berth_ap_run_started(struct berth_app *a);
/* The sandbox did not start: notes whether the audit trail refused it,
 * then ends the run ("boot failed"). */
void berth_ap_run_failed(struct berth_app *a);
/* Frees the run's extra members. */
void berth_ap_run_free_extra(struct berth_app *a);
/* tool.call for @q (not waited for: its tool.result is). */
int berth_ap_record_call(struct berth_app *a, struct pending *q, struct berth_error *err);
/* A call finished: queues its tool.result (its tool.call first, if it never
 * had one) and, with @report, keeps it for berth_ap_deliver(). */
void berth_ap_finish(struct berth_app *a, struct pending *q, json_t *result,
		     const struct berth_call_error *ce, bool report);
/* Reports the finished calls, each once its record is durable. */
void berth_ap_deliver(struct berth_app *a, berth_app_done_fn done, void *ctx);
/* run.stop (src/supervisor/run.c), the broker stopped, the queue and
 * handle closed; the sandbox must be freed before. */
void berth_ap_audit_end(struct berth_app *a);

/* ---- app_call.c */

/* Removes pending call @i (its line and input freed; the later ones move up). */
void berth_ap_pend_remove(struct berth_app *a, size_t i);

#endif
