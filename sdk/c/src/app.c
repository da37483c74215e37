/* SPDX-License-Identifier: MIT */
/*
 * app.c - the app side of the berth resident-app protocol (docs/protocol.md).
 *
 * One request at a time: read a line, answer it, read the next.  Input is
 * read into one fixed buffer of BERTH_APP_MAX_MESSAGE bytes, so a peer can
 * never make the SDK allocate more than that for a line; what jansson builds
 * from a line that fits is bounded by the line.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "berth-app.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define NAME_MAX_LEN 128
#define LOG_MAX_LEN (64 * 1024)
#define ERROR_MESSAGE_MAX_LEN (16 * 1024)

struct export
{
	char *name;
	berth_app_handler handler;
	void *user_data;
};

struct berth_sdk_app {
	struct export *exports;
	size_t n_exports;
	size_t cap_exports;
	int fd;	      /* the channel while berth_app_run() runs, else -1 */
	bool started; /* berth_app_run() was called */
	bool closed;  /* the peer went away while we were writing */
};

struct berth_sdk_call {
	berth_app *app;
	bool failed;
	int code;
	char *message;
	json_t *data;
};

/* What reader_next() found. */
enum { LINE_READY, LINE_TOO_LONG, LINE_END, LINE_ERROR };

struct reader {
	char *buf;	 /* BERTH_APP_MAX_MESSAGE bytes */
	size_t start;	 /* the current line begins at buf[start] */
	size_t scanned;	 /* buf[start..scanned) holds no newline */
	size_t len;	 /* buf[0..len) is filled */
	bool discarding; /* throwing away the rest of a too-long line */
	bool eof;
};

/* ---- errno names ---------------------------------------------------- */

const char *berth_app_errno_name(int errnum)
{
	/* clang-format off */
#define E(x) {x, #x}
	/* clang-format on */
	/* Aliases (EWOULDBLOCK, ENOTSUP, EDEADLOCK) are listed under the name
	 * glibc's strerrorname_np() gives, so both SDKs agree. */
	static const struct {
		int num;
		const char *name;
	} tab[] = {
	    E(EPERM),	     E(ENOENT),	      E(ESRCH),		  E(EINTR),	    E(EIO),
	    E(ENXIO),	     E(E2BIG),	      E(ENOEXEC),	  E(EBADF),	    E(ECHILD),
	    E(EAGAIN),	     E(ENOMEM),	      E(EACCES),	  E(EFAULT),	    E(EBUSY),
	    E(EEXIST),	     E(EXDEV),	      E(ENODEV),	  E(ENOTDIR),	    E(EISDIR),
	    E(EINVAL),	     E(ENFILE),	      E(EMFILE),	  E(ENOTTY),	    E(ETXTBSY),
	    E(EFBIG),	     E(ENOSPC),	      E(ESPIPE),	  E(EROFS),	    E(EMLINK),
	    E(EPIPE),	     E(ERANGE),	      E(EDEADLK),	  E(ENAMETOOLONG),  E(ENOSYS),
	    E(ENOTEMPTY),    E(ELOOP),	      E(ENODATA),	  E(EOVERFLOW),	    E(EILSEQ),
	    E(ENOTSOCK),     E(EOPNOTSUPP),   E(EADDRINUSE),	  E(ENETUNREACH),   E(ECONNRESET),
	    E(ENOBUFS),	     E(EISCONN),      E(ENOTCONN),	  E(ETIMEDOUT),	    E(ECONNREFUSED),
	    E(EHOSTUNREACH), E(EALREADY),     E(EINPROGRESS),	  E(ESTALE),	    E(EDQUOT),
	    E(ECANCELED),    E(EAFNOSUPPORT), E(EPROTONOSUPPORT), E(EADDRNOTAVAIL), E(ECONNABORTED),
	};
#undef E
	for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
		if (tab[i].num == errnum)
			return tab[i].name;
#if defined(__GLIBC_PREREQ)
#if __GLIBC_PREREQ(2, 32)
	return strerrorname_np(errnum);
#endif
#endif
	return NULL;
}

/* ---- strings -------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if invalid. */
static size_t utf8_seq_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len;

	if (c >= 0x01 && c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f; /* no UTF-16 surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f; /* nothing above U+10FFFF */
	} else
		return 0; /* NUL, continuation byte, 0xc0, 0xc1, 0xf5.. */
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

/*
 * A JSON string from n bytes that should be UTF-8 text: bytes that are not
 * (and NUL, which peers may refuse as \u0000) become U+FFFD.
 */
static json_t *string_lossy(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, o = 0;
	char *fixed;
	json_t *j;

	if (memchr(s, '\0', n) == NULL && (j = json_stringn(s, n)) != NULL)
		return j;
	if (n > SIZE_MAX / 3)
		return NULL;
	fixed = malloc(n * 3 + 1);
	if (fixed == NULL)
		return NULL;
	while (i < n) {
		size_t k = utf8_seq_len(u + i, n - i);
		if (k == 0) {
			memcpy(fixed + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		} else {
			memcpy(fixed + o, s + i, k);
			o += k;
			i += k;
		}
	}
	j = json_stringn(fixed, o);
	free(fixed);
	return j;
}

/* vasprintf() cut to max bytes; NULL on ENOMEM. */
static char *format_capped(size_t max, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

static char *format_capped(size_t max, const char *fmt, va_list ap)
{
	char *s = NULL;

	if (vasprintf(&s, fmt, ap) < 0)
		return NULL;
	if (strlen(s) > max)
		s[max] = '\0'; /* a cut UTF-8 sequence becomes U+FFFD in string_lossy() */
	return s;
}

/* ---- writing -------------------------------------------------------- */

static int write_all(berth_app *app, const char *buf, size_t len)
{
	bool is_socket = true;

	while (len > 0) {
		ssize_t k;

		/* MSG_NOSIGNAL: a closed peer must end the session, not kill the app with SIGPIPE. */
		if (is_socket)
			k = send(app->fd, buf, len, MSG_NOSIGNAL);
		else
			k = write(app->fd, buf, len);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ENOTSOCK && is_socket) {
				is_socket = false;
				continue;
			}
			if (errno == EPIPE || errno == ECONNRESET)
				app->closed = true;
			return -1;
		}
		buf += k;
		len -= (size_t)k;
	}
	return 0;
}

/*
 * docs/protocol.md: strings never carry U+0000, which jansson (and so berth)
 * refuses by default.  The encoder writes it as the escape \u0000; turn each
 * into \ufffd, which has the same length.  Backslashes only occur in escapes,
 * so stepping over each escape finds them all and nothing else.
 */
static void replace_nul_escapes(char *s, size_t n)
{
	for (size_t i = 0; i + 1 < n; i++) {
		if (s[i] != '\\')
			continue;
		if (s[i + 1] == 'u' && i + 5 < n && memcmp(s + i + 2, "0000", 4) == 0)
			memcpy(s + i + 2, "fffd", 4);
		i++; /* skip the escaped character */
	}
}

/*
 * Encode msg (stolen) as one line and send it.  Returns 0, -1 with errno on
 * a write error, or -2 when the encoded message would exceed the limit (then
 * nothing was sent and *size is its length).
 */
static int send_json(berth_app *app, json_t *msg, size_t *size)
{
	const size_t flags = JSON_COMPACT;
	size_t n;
	char *buf;
	int r;

	if (msg == NULL) {
		errno = ENOMEM;
		return -1;
	}
	n = json_dumpb(msg, NULL, 0, flags);
	if (n == 0 || n + 1 > BERTH_APP_MAX_MESSAGE) {
		json_decref(msg);
		if (n == 0) {
			errno = ENOMEM;
			return -1;
		}
		*size = n + 1;
		return -2;
	}
	buf = malloc(n + 1);
	if (buf == NULL) {
		json_decref(msg);
		errno = ENOMEM;
		return -1;
	}
	json_dumpb(msg, buf, n, flags);
	json_decref(msg);
	replace_nul_escapes(buf, n);
	buf[n] = '\n';
	r = write_all(app, buf, n + 1);
	free(buf);
	return r;
}

static json_t *error_object(int code, const char *message, json_t *data /* stolen */)
{
	json_t *e = json_object();
	json_t *m = string_lossy(message, strlen(message));

	/* json_object_set_new() consumes the value even when it fails. */
	if (e == NULL || m == NULL || json_object_set_new(e, "code", json_integer(code)) < 0) {
		json_decref(e);
		json_decref(m);
		json_decref(data);
		return NULL;
	}
	if (json_object_set_new(e, "message", m) < 0) {
		json_decref(e);
		json_decref(data);
		return NULL;
	}
	if (data != NULL && json_object_set_new(e, "data", data) < 0) {
		json_decref(e);
		return NULL;
	}
	return e;
}

/* {"jsonrpc":"2.0","id":id,<key>:value}; id borrowed, value stolen. */
static json_t *response(json_t *id, const char *key, json_t *value)
{
	json_t *r = json_object();

	if (r == NULL || value == NULL || json_object_set_new(r, "jsonrpc", json_string("2.0")) < 0 ||
	    json_object_set(r, "id", id != NULL ? id : json_null()) < 0) {
		json_decref(r);
		json_decref(value);
		return NULL;
	}
	if (json_object_set_new(r, key, value) < 0) { /* value consumed */
		json_decref(r);
		return NULL;
	}
	return r;
}

/*
 * Send an answer to request id: a result (stolen), or when result is NULL
 * the error code/message/data (data stolen).  An answer over the size limit
 * becomes -32603.
 */
static int send_answer(berth_app *app, json_t *id, json_t *result, int code, const char *message,
		       json_t *data)
{
	size_t size = 0;
	char msg[160];
	int r;

	if (result != NULL)
		r = send_json(app, response(id, "result", result), &size);
	else
		r = send_json(app, response(id, "error", error_object(code, message, data)), &size);
	if (r != -2)
		return r;
	snprintf(msg, sizeof msg, "%s too large: %zu bytes, the limit is %d",
		 result != NULL ? "result" : "error", size, BERTH_APP_MAX_MESSAGE);
	return send_json(app, response(id, "error", error_object(BERTH_APP_INTERNAL_ERROR, msg, NULL)),
			 &size);
}

static int send_error(berth_app *app, json_t *id, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int send_error(berth_app *app, json_t *id, int code, const char *fmt, ...)
{
	va_list ap;
	char *msg;
	int r;

	va_start(ap, fmt);
	msg = format_capped(ERROR_MESSAGE_MAX_LEN, fmt, ap);
	va_end(ap);
	r = send_answer(app, id, NULL, code, msg != NULL ? msg : "out of memory", NULL);
	free(msg);
	return r;
}

static int send_notification(berth_app *app, const char *method, json_t *params /* stolen */)
{
	json_t *n = json_object();
	size_t size = 0;
	int r;

	if (n == NULL || params == NULL || json_object_set_new(n, "jsonrpc", json_string("2.0")) < 0 ||
	    json_object_set_new(n, "method", json_string(method)) < 0) {
		json_decref(n);
		json_decref(params);
		errno = ENOMEM;
		return -1;
	}
	if (json_object_set_new(n, "params", params) < 0) { /* params consumed */
		json_decref(n);
		errno = ENOMEM;
		return -1;
	}
	r = send_json(app, n, &size);
	if (r == -2) {
		errno = EMSGSIZE;
		return -1;
	}
	return r;
}

/* ---- the app -------------------------------------------------------- */

berth_app *berth_app_new(void)
{
	berth_app *app = calloc(1, sizeof *app);

	if (app == NULL)
		return NULL;
	app->fd = -1;
	return app;
}

void berth_app_free(berth_app *app)
{
	if (app == NULL)
		return;
	for (size_t i = 0; i < app->n_exports; i++)
		free(app->exports[i].name);
	free(app->exports);
	if (app->fd >= 0)
		close(app->fd);
	free(app);
}

static bool valid_export_name(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > NAME_MAX_LEN)
		return false;
	/* The manifest's rule (src/manifest): ^[a-z][a-z0-9_]*$. */
	if (!(name[0] >= 'a' && name[0] <= 'z'))
		return false;
	for (size_t i = 1; i < n; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
			return false;
	}
	return true;
}

static struct export *find_export(berth_app *app, const char *name)
{
	for (size_t i = 0; i < app->n_exports; i++)
		if (strcmp(app->exports[i].name, name) == 0)
			return &app->exports[i];
	return NULL;
}

int berth_app_export(berth_app *app, const char *name, berth_app_handler handler, void *user_data)
{
	char *copy;

	if (app == NULL || name == NULL || handler == NULL || !valid_export_name(name)) {
		errno = EINVAL;
		return -1;
	}
	if (app->started) {
		errno = EBUSY;
		return -1;
	}
	if (find_export(app, name) != NULL) {
		errno = EEXIST;
		return -1;
	}
	if (app->n_exports == app->cap_exports) {
		size_t cap = app->cap_exports ? app->cap_exports * 2 : 8;
		struct export *e = reallocarray(app->exports, cap, sizeof *e);
		if (e == NULL)
			return -1;
		app->exports = e;
		app->cap_exports = cap;
	}
	copy = strdup(name);
	if (copy == NULL)
		return -1;
	app->exports[app->n_exports++] = (struct export){copy, handler, user_data};
	return 0;
}

/* ---- failing a call ------------------------------------------------- */

/* Record the call's error unless one is already there; data stolen. */
static json_t *fail_v(berth_call *call, int code, json_t *data, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));

static json_t *fail_v(berth_call *call, int code, json_t *data, const char *fmt, va_list ap)
{
	if (call == NULL || call->failed) {
		json_decref(data);
		return NULL;
	}
	call->failed = true;
	call->code = code;
	call->message = format_capped(ERROR_MESSAGE_MAX_LEN, fmt, ap);
	call->data = data;
	return NULL;
}

static json_t *fail(berth_call *call, int code, json_t *data, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static json_t *fail(berth_call *call, int code, json_t *data, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fail_v(call, code, data, fmt, ap);
	va_end(ap);
	return NULL;
}

json_t *berth_app_fail(berth_call *call, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fail_v(call, BERTH_APP_EXPORT_FAILED, NULL, fmt, ap);
	va_end(ap);
	return NULL;
}

json_t *berth_app_fail_code(berth_call *call, int code, json_t *data, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fail_v(call, code, data, fmt, ap);
	va_end(ap);
	return NULL;
}

json_t *berth_app_fail_params(berth_call *call, const char *path, const char *reason)
{
	json_t *data = json_object();

	if (path == NULL)
		path = "$";
	if (reason == NULL)
		reason = "invalid";
	if (data != NULL) {
		json_object_set_new(data, "path", string_lossy(path, strlen(path)));
		json_object_set_new(data, "reason", string_lossy(reason, strlen(reason)));
	}
	return fail(call, BERTH_APP_INVALID_PARAMS, data, "invalid params: %s: %s", path, reason);
}

json_t *berth_app_fail_errno(berth_call *call, int errnum, const char *syscall, const char *path)
{
	const char *name = berth_app_errno_name(errnum);
	char desc[256];
	const char *d;
	json_t *data = json_object();

	d = strerror_r(errnum, desc, sizeof desc);
	if (data != NULL) {
		json_object_set_new(data, "errno", json_integer(errnum));
		if (name != NULL)
			json_object_set_new(data, "errno_name", json_string(name));
		if (syscall != NULL)
			json_object_set_new(data, "syscall", string_lossy(syscall, strlen(syscall)));
		if (path != NULL)
			json_object_set_new(data, "path", string_lossy(path, strlen(path)));
	}
	if (syscall != NULL && path != NULL)
		return fail(call, BERTH_APP_SYSCALL_FAILED, data, "%s `%s`: %s", syscall, path, d);
	if (syscall != NULL || path != NULL)
		return fail(call, BERTH_APP_SYSCALL_FAILED, data, "%s: %s", syscall != NULL ? syscall : path,
			    d);
	return fail(call, BERTH_APP_SYSCALL_FAILED, data, "%s", d);
}

berth_app *berth_call_app(const berth_call *call)
{
	return call != NULL ? call->app : NULL;
}

/* ---- logging -------------------------------------------------------- */

int berth_app_log(berth_app *app, const char *level, const char *fmt, ...)
{
	static const char *const levels[] = {"debug", "info",	  "notice", "warning",
					     "error", "critical", "alert",  "emergency"};
	bool known = false;
	va_list ap;
	char *msg;
	json_t *params;
	int r;

	for (size_t i = 0; level != NULL && i < sizeof levels / sizeof levels[0]; i++)
		known = known || strcmp(level, levels[i]) == 0;
	if (app == NULL || !known || fmt == NULL) {
		errno = EINVAL;
		return -1;
	}
	va_start(ap, fmt);
	msg = format_capped(LOG_MAX_LEN, fmt, ap);
	va_end(ap);
	if (msg == NULL)
		return -1;
	if (app->fd < 0 || app->closed) {
		r = fprintf(stderr, "%s: %s\n", level, msg) < 0 ? -1 : 0;
		free(msg);
		return r;
	}
	params = json_pack("{s:s, s:o}", "level", level, "message", string_lossy(msg, strlen(msg)));
	free(msg);
	return send_notification(app, "berth/log", params);
}

/* ---- reading -------------------------------------------------------- */

/*
 * The next line of the channel, without its newline, in *line and *n (valid
 * until the next call).  LINE_TOO_LONG is returned once per line that does
 * not fit; its remainder is then skipped.
 */
static int reader_next(struct reader *r, int fd, char **line, size_t *n)
{
	for (;;) {
		char *nl;
		ssize_t k;

		if (r->discarding) {
			nl = memchr(r->buf + r->start, '\n', r->len - r->start);
			if (nl != NULL) {
				r->discarding = false;
				r->start = r->scanned = (size_t)(nl - r->buf) + 1;
				continue;
			}
			r->start = r->scanned = r->len = 0;
		} else {
			nl = memchr(r->buf + r->scanned, '\n', r->len - r->scanned);
			if (nl != NULL) {
				*line = r->buf + r->start;
				*n = (size_t)(nl - *line);
				r->start = r->scanned = (size_t)(nl - r->buf) + 1;
				return LINE_READY;
			}
			r->scanned = r->len;
			/* A whole buffer and no newline: with it the line would exceed the limit. */
			if (r->len - r->start == BERTH_APP_MAX_MESSAGE) {
				r->discarding = true;
				r->start = r->scanned = r->len = 0;
				return LINE_TOO_LONG;
			}
		}
		if (r->eof) {
			if (!r->discarding && r->len > r->start) {
				*line = r->buf + r->start;
				*n = r->len - r->start;
				r->start = r->scanned = r->len;
				return LINE_READY;
			}
			return LINE_END;
		}
		if (r->start > 0) {
			memmove(r->buf, r->buf + r->start, r->len - r->start);
			r->len -= r->start;
			r->scanned -= r->start;
			r->start = 0;
		}
		k = read(fd, r->buf + r->len, BERTH_APP_MAX_MESSAGE - r->len);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			if (errno != ECONNRESET)
				return LINE_ERROR;
			k = 0; /* the peer went away: the same as end of file */
		}
		if (k == 0)
			r->eof = true;
		r->len += (size_t)k;
	}
}

/* ---- serving -------------------------------------------------------- */

static bool blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
			return false;
	return true;
}

static int run_call(berth_app *app, struct export *e, json_t *id, json_t *params)
{
	berth_call call = {.app = app};
	json_t *input = params != NULL ? json_incref(params) : json_object();
	json_t *result;
	int r;

	if (input == NULL)
		return send_error(app, id, BERTH_APP_INTERNAL_ERROR, "out of memory");
	result = e->handler(&call, input, e->user_data);
	json_decref(input);
	if (call.failed) {
		json_decref(result);
		r = send_answer(app, id, NULL, call.code,
				call.message != NULL ? call.message : "out of memory", call.data);
		free(call.message);
		return r;
	}
	if (result == NULL)
		return send_error(app, id, BERTH_APP_INTERNAL_ERROR, "export `%s` returned no result",
				  e->name);
	if (!json_is_object(result)) {
		json_decref(result);
		return send_error(app, id, BERTH_APP_INTERNAL_ERROR,
				  "export `%s` returned a non-object result", e->name);
	}
	return send_answer(app, id, result, 0, NULL, NULL);
}

static bool valid_id(json_t *id)
{
	return json_is_integer(id) || json_is_string(id) || json_is_null(id);
}

/* Answer one line.  Returns 0, or -1 with errno when the channel failed. */
static int serve_line(berth_app *app, const char *line, size_t n)
{
	json_error_t jerr;
	json_t *msg, *id, *method, *version, *params;
	struct export *e;
	int r;

	if (blank(line, n))
		return 0;
	msg = json_loadb(line, n, JSON_DECODE_ANY, &jerr); /* any JSON: not an object is -32600 */
	if (msg == NULL)
		return send_error(app, NULL, BERTH_APP_PARSE_ERROR, "parse error: %s (column %d)", jerr.text,
				  jerr.column);
	if (!json_is_object(msg)) {
		json_decref(msg);
		return send_error(app, NULL, BERTH_APP_INVALID_REQUEST, "invalid request: not a JSON object");
	}
	id = json_object_get(msg, "id");
	method = json_object_get(msg, "method");
	version = json_object_get(msg, "jsonrpc");
	params = json_object_get(msg, "params");
	if (id != NULL && !valid_id(id))
		r = send_error(app, NULL, BERTH_APP_INVALID_REQUEST,
			       "invalid request: `id` must be an integer");
	else if (!json_is_string(version) || strcmp(json_string_value(version), "2.0") != 0)
		r = send_error(app, id, BERTH_APP_INVALID_REQUEST,
			       "invalid request: `jsonrpc` must be \"2.0\"");
	else if (!json_is_string(method))
		r = send_error(app, id, BERTH_APP_INVALID_REQUEST,
			       "invalid request: `method` must be a string");
	else if (id == NULL)
		r = 0; /* a notification: berth/cancel or unknown; see berth_app_run() */
	else if ((e = find_export(app, json_string_value(method))) == NULL)
		r = send_error(app, id, BERTH_APP_METHOD_NOT_FOUND, "no such export `%s`",
			       json_string_value(method));
	else if (params != NULL && !json_is_object(params))
		r = send_answer(app, id, NULL, BERTH_APP_INVALID_PARAMS,
				"invalid params: `params` must be an object",
				json_pack("{s:s, s:s}", "path", "$", "reason", "expected object"));
	else
		r = run_call(app, e, id, params);
	json_decref(msg);
	return r;
}

static int send_ready(berth_app *app)
{
	json_t *names = json_array();

	for (size_t i = 0; names != NULL && i < app->n_exports; i++) {
		if (json_array_append_new(names, json_string(app->exports[i].name)) < 0) {
			json_decref(names);
			names = NULL;
		}
	}
	if (names == NULL) {
		errno = ENOMEM;
		return -1;
	}
	return send_notification(app, "berth/ready",
				 json_pack("{s:o, s:s}", "exports", names, "sdk", "c/" BERTH_APP_VERSION));
}

static int open_channel(berth_app *app)
{
	const char *s = getenv("BERTH_RPC_FD");
	char *end = NULL;
	long fd;
	int fl;

	if (s == NULL || *s == '\0') {
		fprintf(stderr, "berth-app: BERTH_RPC_FD is not set; resident apps are started by berth\n");
		errno = EINVAL;
		return -1;
	}
	errno = 0;
	fd = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || fd < 0 || fd > INT32_MAX) {
		fprintf(stderr, "berth-app: invalid BERTH_RPC_FD `%s`\n", s);
		errno = EINVAL;
		return -1;
	}
	/* Close-on-exec: programs the app runs must not speak for it.  Blocking:
	 * the SDK waits for the peer. */
	if (fcntl((int)fd, F_SETFD, FD_CLOEXEC) < 0 || (fl = fcntl((int)fd, F_GETFL)) < 0 ||
	    fcntl((int)fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		int saved = errno;
		fprintf(stderr, "berth-app: BERTH_RPC_FD `%s`: %s\n", s, strerror(saved));
		errno = saved;
		return -1;
	}
	app->fd = (int)fd;
	return 0;
}

int berth_app_run(berth_app *app)
{
	struct reader rd = {0};
	int r = 0, saved;

	if (app == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (app->started) {
		errno = EBUSY;
		return -1;
	}
	app->started = true;
	if (open_channel(app) < 0)
		return -1;
	rd.buf = malloc(BERTH_APP_MAX_MESSAGE);
	if (rd.buf == NULL)
		r = -1;
	else
		r = send_ready(app);
	while (r == 0) {
		char *line = NULL;
		size_t n = 0;
		int what = reader_next(&rd, app->fd, &line, &n);

		if (what == LINE_END)
			break;
		if (what == LINE_ERROR)
			r = -1;
		else if (what == LINE_TOO_LONG)
			r = send_error(app, NULL, BERTH_APP_INVALID_REQUEST,
				       "invalid request: message larger than %d bytes",
				       BERTH_APP_MAX_MESSAGE);
		else
			r = serve_line(app, line, n);
	}
	saved = errno;
	if (r < 0 && app->closed)
		r = 0; /* berth closed the channel while we answered: a normal end */
	if (r < 0)
		fprintf(stderr, "berth-app: the channel failed: %s\n", strerror(saved));
	free(rd.buf);
	close(app->fd);
	app->fd = -1;
	errno = saved;
	return r;
}
