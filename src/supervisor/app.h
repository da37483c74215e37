/* SPDX-License-Identifier: MIT */
/*
 * app.h - a resident app: its manifest, its compiled policy, its sandbox,
 * and calls to its exports over the protocol of docs/protocol.md.
 *
 * Life: berth_app_open() (manifest, digest, policy; nothing runs) →
 * berth_app_boot() (sandbox, `berth/ready`, export parity) →
 * berth_app_call()... → berth_app_stop() → berth_app_close().  A call on an
 * app that is not running boots it first; an app that crashed or hung during
 * a call is stopped, the call fails (-32002 / -32003), and the next call
 * boots it again.
 */
#ifndef BERTH_SUPERVISOR_APP_H
#define BERTH_SUPERVISOR_APP_H

#include <jansson.h>
#include <poll.h>
#include <stdbool.h>

#include "../manifest/manifest.h"
#include "../policy/policy.h"
#include "../runtime/runtime.h"
#include "../sandbox/sandbox.h"
#include "../util/error.h"
#include "app_policy.h"

#define BERTH_APP_BOOT_TIMEOUT_MS 10000 /* for `berth/ready` */
/* For `berth/ready` of an app in a microVM (opts.runtime vm, docs/vm.md):
 * its interpreter starts under TCG, an emulated CPU, after the boot. */
#define BERTH_APP_BOOT_TIMEOUT_VM_MS 60000
/* After closing the channel of an app in a microVM, before its VM is
 * killed: the app's exit, then the guest's sync and power-off. */
#define BERTH_APP_STOP_GRACE_VM_MS 10000
#define BERTH_APP_CALL_TIMEOUT_MS 30000 /* default per call */
#define BERTH_APP_STOP_GRACE_MS 2000    /* after closing the channel, before SIGKILL */
#define BERTH_APP_MAX_INFLIGHT 8        /* requests sent and not answered, per app; more wait in order */

/* JSON-RPC error codes of docs/protocol.md. */
enum {
	BERTH_RPC_PARSE_ERROR = -32700,
	BERTH_RPC_INVALID_REQUEST = -32600,
	BERTH_RPC_METHOD_NOT_FOUND = -32601,
	BERTH_RPC_INVALID_PARAMS = -32602,
	BERTH_RPC_INTERNAL = -32603,
	BERTH_RPC_APP_ERROR = -32000,
	BERTH_RPC_OS_ERROR = -32001,
	BERTH_RPC_CRASHED = -32002,
	BERTH_RPC_TIMEOUT = -32003,
	BERTH_RPC_BAD_OUTPUT = -32004,
	BERTH_RPC_AUDIT = -32005, /* the audit trail cannot record the call (fail closed) */
	BERTH_RPC_CANCELLED = -32800,
};

/* A failed call, as the app or berth reported it. */
struct berth_call_error {
	int code; /* one of the codes above */
	char message[1024];
	json_t *data;       /* the error's data object or NULL; owned (json_decref) */
	char *denial;       /* the BERTH CAPABILITY DENIAL block, or NULL; malloc'd */
	bool refused_input; /* berth refused the call before the app saw it (-32601, -32602) */
};

/* berth_call_error_free - release @ce's data and denial. */
void berth_call_error_free(struct berth_call_error *ce);

/* A line the app logged: @level is an RFC 5424 name ("info" for stderr). */
typedef void (*berth_app_log_fn)(void *ctx, const char *app, const char *level, const char *line);

struct berth_app_opts {
	unsigned force_off;   /* test-only switch, as for `berth run` */
	bool quiet;           /* no one-line notices on stderr */
	berth_app_log_fn log; /* NULL: lines go to stderr as "[app] line" */
	void *log_ctx;
	bool allow_degraded;
	/* NULL: berth_app_state_root(); else the apps' state lives here (berth test) */
	const char *state_root;
	bool dry; /* only compile: create no state directory (berth policy) */
	/* Record every boot and call in the audit trail (docs/audit.md,
	 * "Resident apps"; the log of berth_audit_dir()).  berth rpc, mcp and
	 * dev set it; berth test and berth policy do not. */
	bool audit;
	/* Who runs the app, the actor of run.start, policy and run.stop
	 * ("mcp:uid:1000"); copied; NULL: "berth". */
	const char *actor;
	/* What enforces the app's policy (src/runtime/runtime.h; `berth mcp
	 * --runtime vm`); NULL: berth_runtime_default().  With the vm runtime
	 * each boot is a microVM's (seconds under TCG: the `berth/ready` and
	 * stop deadlines are BERTH_APP_BOOT_TIMEOUT_VM_MS and
	 * BERTH_APP_STOP_GRACE_VM_MS), and its measurement is on record (an
	 * `enforced` record after `policy`, with o.audit; docs/audit.md). */
	const struct berth_runtime_ops *runtime;
};

struct berth_app;

/*
 * berth_app_open - load `<app_dir>/berth.yml` (problems in @d), resolve the
 * app's state directories, measure its digest and compile its policy.
 * Returns 0 with *@out, or -1 with @err filled (status 2 for an invalid
 * manifest: the problems are in @d; a missing secret).
 */
int berth_app_open(const char *app_dir, const struct berth_app_opts *o, struct berth_app **out,
		   struct berth_diags *d, struct berth_error *err);

/* The manifest, paths, policy and digest ("sha256:<hex>") of @a. */
const struct berth_manifest *berth_app_manifest(const struct berth_app *a);
const struct berth_app_paths *berth_app_paths(const struct berth_app *a);
const struct berth_policy *berth_app_policy_of(const struct berth_app *a);

/*
 * berth_app_boot - start the app's sandbox and wait (at most
 * BERTH_APP_BOOT_TIMEOUT_MS from the start's end, BERTH_APP_BOOT_TIMEOUT_VM_MS
 * in a microVM) for `berth/ready`; refuse an app whose
 * announced exports differ from the manifest (the message names what is
 * missing and what is extra; errnum EPROTO, status 125) or that declares
 * network:host (status 2).
 * @boot_us: receives the time from start to ready, in microseconds (may be
 * NULL).  With o.audit, the boot is a run of the audit trail: run.start
 * and policy are durable before the app's command starts (when they cannot
 * be written, the boot fails closed and the error names the cause), and
 * run.stop is written when the sandbox ends.
 * Returns 0, or -1 with @err filled; nothing is left running then.
 */
int berth_app_boot(struct berth_app *a, unsigned long *boot_us, struct berth_error *err);

/*
 * berth_app_set_caller - the actor of the tool.call and tool.result records
 * of later calls ("mcp:client:NAME", "rpc:uid:1000"); copied, cleaned of
 * terminal controls, at most 159 bytes; NULL or "": the app's actor.
 */
void berth_app_set_caller(struct berth_app *a, const char *caller);

/* berth_app_audit_refused - whether the last berth_app_boot() failed
 * because the audit trail could not record the run (fail closed). */
bool berth_app_audit_refused(const struct berth_app *a);

/* berth_app_running - whether the app's sandbox is up. */
bool berth_app_running(const struct berth_app *a);

/*
 * berth_app_check_input - whether @input (NULL means {}) is a valid input of
 * export @name, without booting anything.  Returns 0, or -1 with @ce filled
 * (-32601 no such export, -32602 with data.path and data.reason).
 */
int berth_app_check_input(const struct berth_app *a, const char *name, json_t *input,
			  struct berth_call_error *ce);

/*
 * berth_app_call - call export @name with @input (an object; NULL means {}),
 * booting the app first when it is not running.
 * @timeout_ms: 0 means BERTH_APP_CALL_TIMEOUT_MS.
 * Returns 0 with *@result (a new reference to the output object), or -1 with
 * @ce filled: the app's own error (-32000, -32001 with data errno_name,
 * syscall, path, and for EACCES/EPERM/EROFS on a path the denial block),
 * -32601 (no such export), -32602 (input fails the schema: data.path and
 * data.reason), -32600 (the request is over 1 MiB), -32002 (the app crashed
 * or could not boot: message says how), -32003 (timed out; the app was
 * stopped), -32004 (output fails the schema), -32005 (with o.audit: the
 * audit trail cannot record the call or its result -- the call was not
 * sent, or its result is withheld; docs/audit.md).
 * With o.audit the call is a tool.call record before it is sent, and its
 * outcome a tool.result record that is durable before it is returned.
 */
int berth_app_call(struct berth_app *a, const char *name, json_t *input, unsigned timeout_ms, json_t **result,
		   struct berth_call_error *ce);

/*
 * berth_app_fds - the app's log pipe and its sandbox's pidfd (-1 each when
 * stopped or closed).  Prefer berth_app_poll_fds(), which adds the channel.
 */
void berth_app_fds(const struct berth_app *a, int *log_fd, int *pid_fd);

/*
 * berth_app_idle - while no call is pending: relay the app's logs and notice
 * its end (or a channel it closed); a dead app is stopped (the next call
 * boots it again).  Returns true when it was stopped now.
 */
bool berth_app_idle(struct berth_app *a);

/*
 * Asynchronous calls, for callers that own an event loop (berth mcp).
 *
 * A finished call is reported once through a berth_app_done_fn: @result (a
 * borrowed output object) or @ce (a borrowed error: the same codes as
 * berth_app_call()).  Calls are sent in order, at most
 * BERTH_APP_MAX_INFLIGHT at a time; the rest wait.  Each has its own deadline
 * from when it was made.
 */
typedef void (*berth_app_done_fn)(void *ctx, long long id, json_t *result, const struct berth_call_error *ce);

/*
 * berth_app_start_call - check @input, boot the app if it is not running,
 * and queue the call.  @timeout_ms: 0 means BERTH_APP_CALL_TIMEOUT_MS.
 * Returns 0 with the call's *@id, or -1 with @ce filled (nothing queued): as
 * berth_app_call(), -32002 when the app could not boot.
 */
int berth_app_start_call(struct berth_app *a, const char *name, json_t *input, unsigned timeout_ms,
			 long long *id, struct berth_call_error *ce);

/* berth_app_cancel - forget call @id: a waiting call is dropped, a call in
 * flight is cancelled in the app (berth/cancel).  It is not reported. */
void berth_app_cancel(struct berth_app *a, long long id);

/* berth_app_poll_fds - the three descriptors to poll(2) (fd -1 when the app
 * is not running): the channel (POLLIN, and POLLOUT while output waits), the
 * log pipe, the sandbox's pidfd.  When any is ready, berth_app_process(). */
void berth_app_poll_fds(const struct berth_app *a, struct pollfd p[3]);

/* berth_app_process - write what waits, relay logs, finish answered calls;
 * when the app ended, fail every call it owed (-32002) and stop it. */
void berth_app_process(struct berth_app *a, berth_app_done_fn done, void *ctx);

/* berth_app_next_deadline - the earliest deadline of a pending call (ms,
 * CLOCK_MONOTONIC), or -1 when none is pending. */
long long berth_app_next_deadline(const struct berth_app *a);

/* berth_app_expire - when a call's deadline passed: kill the app at once,
 * fail that call (-32003) and every other it owed (-32002). */
void berth_app_expire(struct berth_app *a, berth_app_done_fn done, void *ctx);

/* berth_app_pending - calls made and not finished. */
size_t berth_app_pending(const struct berth_app *a);

/* berth_app_stop - close the channel, give the app BERTH_APP_STOP_GRACE_MS
 * to exit, then kill its sandbox; nothing is left.  Safe when stopped. */
void berth_app_stop(struct berth_app *a);

/* berth_app_close - stop and release @a (safe on NULL). */
void berth_app_close(struct berth_app *a);

/*
 * berth_app_denial - the BERTH CAPABILITY DENIAL block for a call of @a that
 * failed with @errno_name on @path by @syscall, or NULL when it is no denial
 * (not EACCES, EPERM or EROFS, or no path).  malloc'd.
 */
char *berth_app_denial(const struct berth_app *a, const char *errno_name, const char *syscall,
		       const char *path);

/*
 * berth_app_net_denial - the BERTH CAPABILITY DENIAL block for a call of @a
 * that failed because berth's egress broker refused @host:@port (the app
 * reports it as error data {"errno_name":"EACCES","syscall":"connect",
 * "host":H,"port":P}), or NULL when @a's own policy allows that destination
 * (the app cannot make berth explain a refusal berth would not make), @port
 * is not 1-65535 or @host is NULL.  The block names the broker and, as the
 * fix, the network:host capability that would declare it.  malloc'd.
 */
char *berth_app_net_denial(const struct berth_app *a, const char *host, long long port);

#endif
