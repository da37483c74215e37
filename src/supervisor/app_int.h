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
#include "lines.h"

struct berth_app {
	struct berth_app_opts o;
	struct berth_manifest m;
	struct berth_app_paths paths;
	struct berth_policy p;
	char digest[65];
	struct berth_runtime_opts ro;
	struct berth_sandbox *sb;
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
	char *obuf;
	size_t olen, ocap;
	/* The audit trail (docs/audit.md, "Resident apps"): one run per boot. */
	char run_id[17];
	char actor[160];	      /* who runs the app: run.start, policy, run.stop */
	char caller[160];	      /* who calls: tool.call, tool.result */
	struct berth_audit *audit;    /* this boot's handle, or NULL */
	struct berth_audit_queue *aq; /* its writer, or NULL */
	struct berth_audit_net_cap net_cap; /* this boot's net.decision records (docs/audit.md) */
	pthread_t aud_th;
	bool aud_thread; /* aud_th runs or must be joined */
	int aud_rc;	 /* run.start + policy: 0 durable, -1 not */
	struct berth_error aud_err;
	bool audit_refused;	      /* the last boot failed for the audit trail */
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
	json_t *input;	 /* until its tool.call is recorded */
	bool recorded;	 /* its tool.call is queued */
	long long t0_us; /* when it was made */
};

/* ---- app.c */

/* CLOCK_MONOTONIC in milliseconds, and in microseconds. */
long long berth_ap_now_ms(void);
long long berth_ap_now_us(void);
/* One log line of the app to the log callback, cleaned of terminal controls. */
void berth_ap_app_log(struct berth_app *a, const char *level, const char *line);
/* Fills @ce (@code, @data taken, the formatted message); returns -1. */
int berth_ap_call_fail(struct berth_call_error *ce, int code, json_t *data, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* The export @name of @m, or NULL. */
const struct berth_export *berth_ap_find_export(const struct berth_manifest *m, const char *name);
/* Every complete log line the app wrote so far, to the log callback. */
void berth_ap_drain_logs(struct berth_app *a);
/* A notification from the app that is not an answer: berth/log. */
void berth_ap_handle_notification(struct berth_app *a, json_t *msg);
/* Stops the sandbox (gracefully: end of file first, then the grace
 * period); pending calls stay pending. */
void berth_ap_stop_sandbox(struct berth_app *a, bool graceful);

/* ---- app_audit.c */

/* Who runs the app, for run.start, policy and run.stop ("berth" by default). */
const char *berth_ap_app_actor(const struct berth_app *a);
/* The audit thread of a boot (pthread_create): run.start and policy. */
void *berth_ap_audit_main(void *arg);
/* Waits for that thread; 0 when run.start and policy are durable. */
int berth_ap_audit_join(struct berth_app *a, struct berth_error *err);
/* berth_runtime_opts.before_release: the app starts only once its run is
 * recorded. */
int berth_ap_audit_release(void *arg, struct berth_error *err);
/* berth_runtime_opts.on_net_decision: the broker's decisions, on its thread. */
void berth_ap_audit_net(const struct berth_broker_decision *d, void *arg);
/* tool.call for @q (not waited for: its tool.result is). */
int berth_ap_record_call(struct berth_app *a, struct pending *q, struct berth_error *err);
/* A call finished: queues its tool.result (its tool.call first, if it never
 * had one) and, with @report, keeps it for berth_ap_deliver(). */
void berth_ap_finish(struct berth_app *a, struct pending *q, json_t *result,
		     const struct berth_call_error *ce, bool report);
/* Reports the finished calls, each once its record is durable. */
void berth_ap_deliver(struct berth_app *a, berth_app_done_fn done, void *ctx);
/* run.stop, then closes this boot's queue and handle. */
void berth_ap_audit_end(struct berth_app *a);

/* ---- app_call.c */

/* Removes pending call @i (its line and input freed; the later ones move up). */
void berth_ap_pend_remove(struct berth_app *a, size_t i);

#endif
