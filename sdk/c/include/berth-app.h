/* SPDX-License-Identifier: MIT */
/*
 * berth-app.h - the C SDK for berth resident apps.
 *
 * A resident app is a program that runs inside a berth sandbox and serves
 * "exports" to the berth supervisor over the JSON-RPC 2.0 channel described
 * in docs/protocol.md.  This SDK does the protocol; an app only registers
 * handlers:
 *
 *	static json_t *hello(berth_call *call, json_t *input, void *user_data)
 *	{
 *		const char *name = json_string_value(json_object_get(input, "name"));
 *		if (name == NULL)
 *			return berth_app_fail_params(call, "$.name", "expected string");
 *		return json_pack("{s:s+}", "greeting", "hello, ", name);
 *	}
 *
 *	int main(void)
 *	{
 *		berth_app *app = berth_app_new();
 *		if (app == NULL || berth_app_export(app, "hello", hello, NULL) < 0)
 *			return 1;
 *		int r = berth_app_run(app);
 *		berth_app_free(app);
 *		return r < 0 ? 1 : 0;
 *	}
 *
 * The SDK is sequential: it reads one request, runs its handler to the end,
 * writes the answer, then reads the next.  Handlers run on the thread that
 * called berth_app_run().  No function here is thread-safe.
 *
 * JSON values are jansson's (https://jansson.readthedocs.io); link with
 * `pkg-config --libs berth-app` (it pulls in jansson).
 */
#ifndef BERTH_APP_H
#define BERTH_APP_H

#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The SDK's version, announced as "c/<version>" in berth/ready. */
#define BERTH_APP_VERSION "0.1.0"

/* The largest protocol message in either direction, newline included. */
#define BERTH_APP_MAX_MESSAGE 1048576

/* JSON-RPC error codes of the protocol (docs/protocol.md, "Errors"). */
enum {
	BERTH_APP_PARSE_ERROR = -32700,	     /* the line is not JSON */
	BERTH_APP_INVALID_REQUEST = -32600,  /* not a JSON-RPC 2.0 request, or too large */
	BERTH_APP_METHOD_NOT_FOUND = -32601, /* no such export */
	BERTH_APP_INVALID_PARAMS = -32602,   /* the input is not what the export takes */
	BERTH_APP_INTERNAL_ERROR = -32603,   /* a bug in the app or the SDK */
	BERTH_APP_EXPORT_FAILED = -32000,    /* the export failed; the message says why */
	BERTH_APP_SYSCALL_FAILED = -32001,   /* the export failed on a system call */
	BERTH_APP_CANCELLED = -32800,	     /* the call was cancelled */
};

/*
 * An app: its exports and, while berth_app_run() runs, its channel.  (The
 * struct tags are berth_sdk_*: the supervisor's own `struct berth_app`, on
 * the other side of the channel, is a different thing.)
 */
typedef struct berth_sdk_app berth_app;

/* One call being served; valid only during the handler that receives it. */
typedef struct berth_sdk_call berth_call;

/*
 * berth_app_handler - the function that serves one export.
 * @call: the call; pass it to berth_app_fail*() to answer with an error
 * @input: the call's input object (the request's `params`; an empty object
 *         when the request has none).  Borrowed: the SDK owns it and frees it
 *         after the handler returns; json_incref() it to keep it longer.
 * @user_data: the pointer given to berth_app_export()
 *
 * Returns the output object as a new reference, which the SDK takes over and
 * sends as the result; or NULL after calling one of the berth_app_fail*()
 * helpers, which all return NULL so that a handler can
 * `return berth_app_fail(call, ...)`.
 *
 * If a handler returns NULL without failing, or returns something that is not
 * a JSON object, the caller gets -32603 (internal error).  If it failed and
 * still returned a value, the value is dropped and the error is sent.  A
 * result that does not fit in BERTH_APP_MAX_MESSAGE bytes once encoded is
 * replaced by -32603 "result too large".
 */
typedef json_t *(*berth_app_handler)(berth_call *call, json_t *input, void *user_data);

/*
 * berth_app_new - create an app with no exports.
 * Returns the app, or NULL with errno ENOMEM.  Free it with berth_app_free().
 */
berth_app *berth_app_new(void);

/*
 * berth_app_free - free an app and everything it owns.
 * @app: the app, or NULL (then nothing happens)
 */
void berth_app_free(berth_app *app);

/*
 * berth_app_export - register an export.
 * @app: the app
 * @name: the export's name, as in the manifest: a lowercase letter, then
 *        lowercase letters, digits and `_`, at most 128 bytes (so never a
 *        reserved `berth/...` name).  Copied.
 * @handler: the function that serves it
 * @user_data: passed to @handler unchanged; the SDK never touches it
 *
 * Exports are announced in berth/ready in the order they were registered.
 * Returns 0, or -1 with errno set: EINVAL (NULL argument or bad name),
 * EEXIST (the name is already registered), EBUSY (berth_app_run() has
 * started), ENOMEM.
 */
int berth_app_export(berth_app *app, const char *name, berth_app_handler handler, void *user_data);

/*
 * berth_app_run - serve calls until berth closes the channel.
 * @app: the app, with its exports registered
 *
 * Takes the channel from the environment variable BERTH_RPC_FD (a decimal
 * file descriptor number; berth uses 3), marks it close-on-exec and blocking,
 * announces the exports with the berth/ready notification, then serves one
 * request at a time, in order:
 * - an export's request runs its handler and is answered with its result or
 *   error;
 * - a request for an unknown method (including reserved `berth/...` names) is
 *   answered with -32601; `params` that are not an object, with -32602;
 * - a line that is not JSON is answered with -32700 (id null); JSON that is
 *   not a JSON-RPC 2.0 request object (an array, a response, a bad `jsonrpc`,
 *   `method` or `id`) with -32600;
 * - a line longer than BERTH_APP_MAX_MESSAGE bytes is answered with -32600
 *   (id null) as soon as the limit is passed, and the rest of the line is
 *   read and thrown away; the SDK never buffers more than
 *   BERTH_APP_MAX_MESSAGE bytes of input;
 * - notifications are not answered.  berth/cancel is ignored: the SDK runs
 *   one call at a time and only reads the next message when the current
 *   handler has returned, by which time the call is over (berth has already
 *   failed a cancelled call on its side).  Other notifications are ignored;
 *   exports are only run for requests, since a notification cannot be
 *   answered;
 * - empty lines (only whitespace) are skipped; a last line without its
 *   newline at end of file is served as if it had one.
 *
 * Returns 0 when berth closes the channel (end of file, or the peer reset the
 * connection or went away while the SDK was writing): the app should then
 * exit with status 0.  Returns -1 with errno set when the channel cannot be
 * used: EINVAL (BERTH_RPC_FD unset or not a number), EBADF (not an open
 * descriptor), EBUSY (already running), or the errno of a failed read or
 * write; a one-line reason prefixed `berth-app:` is then written to stderr
 * (the app's log).  The channel is closed when berth_app_run() returns.
 * Call it once per app.
 */
int berth_app_run(berth_app *app);

/*
 * berth_app_fail - answer the current call with error -32000 (the export
 * failed), e.g. berth_app_fail(call, "no note with id %d", id).
 * @call: the call being served
 * @fmt: printf format of the message (one line, say what went wrong)
 *
 * Only the first failure recorded for a call is sent; later ones are
 * ignored.  Returns NULL.
 */
json_t *berth_app_fail(berth_call *call, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * berth_app_fail_errno - answer the current call with error -32001: the
 * export failed on a system call.
 * @call: the call being served
 * @errnum: the errno value, e.g. `errno` right after the failed call
 * @syscall: the call's name as in section 2 of the manual ("open", "unlink"),
 *           or NULL when unknown
 * @path: the path as the app passed it to the system call (relative or
 *        absolute), or NULL when there is none
 *
 * The error's message is "<syscall> `<path>`: <strerror>", and its `data`
 * is {"errno":N,"errno_name":"EACCES","syscall":...,"path":...} (keys with a
 * NULL argument left out; errno_name is left out for a number this libc has
 * no name for).  berth uses these fields to explain a denial.  A path that
 * is not valid UTF-8 is sent with the bad bytes replaced by U+FFFD.
 * Only the first failure recorded for a call is sent.  Returns NULL.
 */
json_t *berth_app_fail_errno(berth_call *call, int errnum, const char *syscall, const char *path);

/*
 * berth_app_fail_params - answer the current call with error -32602: the
 * input is not what the export takes.  berth validates inputs against the
 * manifest's schema before calling, so this is for what a schema cannot say.
 * @call: the call being served
 * @path: where in the input, as a JSONPath-like pointer ("$.path", "$" for
 *        the whole input)
 * @reason: what is wrong, e.g. "expected string"
 *
 * `data` is {"path":path,"reason":reason}.  Only the first failure recorded
 * for a call is sent.  Returns NULL.
 */
json_t *berth_app_fail_params(berth_call *call, const char *path, const char *reason);

/*
 * berth_app_fail_code - answer the current call with any error.
 * @call: the call being served
 * @code: the JSON-RPC error code (BERTH_APP_*)
 * @data: the error's `data`, or NULL for none.  Stolen: the SDK takes over
 *        the reference even when the call already failed.
 * @fmt: printf format of the message
 *
 * Only the first failure recorded for a call is sent.  Returns NULL.
 */
json_t *berth_app_fail_code(berth_call *call, int code, json_t *data, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/*
 * berth_call_app - the app a call belongs to (for berth_app_log()).
 * @call: the call being served
 * Returns the app passed to berth_app_run().
 */
berth_app *berth_call_app(const berth_call *call);

/*
 * berth_app_log - send a structured log line (the berth/log notification).
 * @app: the app
 * @level: one of the RFC 5424 levels "debug", "info", "notice", "warning",
 *         "error", "critical", "alert", "emergency"
 * @fmt: printf format of the message; messages longer than 64 KiB are cut
 *
 * Before berth_app_run() has connected (or after it returned) the line goes
 * to stderr as "<level>: <message>" instead, which berth logs too.
 * Returns 0, or -1 with errno set: EINVAL (bad level), or the errno of the
 * failed write.
 */
int berth_app_log(berth_app *app, const char *level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * berth_app_errno_name - the symbolic name of an errno value.
 * @errnum: the errno value
 * Returns a static string such as "ENOENT", or NULL for a number without a
 * known name.
 */
const char *berth_app_errno_name(int errnum);

#ifdef __cplusplus
}
#endif

#endif
