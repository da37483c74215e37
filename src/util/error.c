/* SPDX-License-Identifier: MIT */
#include "error.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static void vfill(struct berth_error *err, int errnum, const char *fmt, va_list ap)
{
	int n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	if (n < 0)
		n = 0;
	if (errnum != 0 && (size_t)n < sizeof err->msg)
		snprintf(err->msg + n, sizeof err->msg - (size_t)n, ": %s", strerror(errnum));
	err->errnum = errnum;
}

int berth_err_status(struct berth_error *err, int errnum, int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfill(err, errnum, fmt, ap);
	va_end(ap);
	err->status = status;
	err->hint[0] = '\0';
	return -1;
}

int berth_err_hint(struct berth_error *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err->hint, sizeof err->hint, fmt, ap);
	va_end(ap);
	return -1;
}

int berth_err_wrap(struct berth_error *err, const char *fmt, ...)
{
	char old[BERTH_ERR_MSG_MAX];
	va_list ap;
	int n;

	memcpy(old, err->msg, sizeof old);
	va_start(ap, fmt);
	n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n + 2 < sizeof err->msg) {
		err->msg[n] = ':';
		err->msg[n + 1] = ' ';
		memcpy(err->msg + n + 2, old, sizeof err->msg - (size_t)n - 3);
		err->msg[sizeof err->msg - 1] = '\0';
	}
	return -1;
}

void berth_err_clear(struct berth_error *err)
{
	memset(err, 0, sizeof *err);
}

int berth_reasonf(char *reason, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (reason != NULL && len > 0) {
		va_start(ap, fmt);
		vsnprintf(reason, len, fmt, ap);
		va_end(ap);
	}
	return -1;
}
