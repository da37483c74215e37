/* SPDX-License-Identifier: MIT */
/*
 * log.c - the --log file of `berth oci`, in runc's two formats (logrus):
 *   json: {"level":"error","msg":"...","time":"2026-12-02T14:54:35Z"}
 *   text: time="2026-12-02T14:54:35Z" level=error msg="..."
 * One write(2) per line on an O_APPEND descriptor, so that the lines of
 * `create`, the supervisor and later commands sharing the file do not mix.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../util/text.h"
#include "oci_int.h"

void berth_oci_now_rfc3339(char *buf, size_t len, bool nanos)
{
	struct timespec ts;
	struct tm tm;
	char base[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
	if (nanos)
		snprintf(buf, len, "%s.%09ldZ", base, ts.tv_nsec);
	else
		snprintf(buf, len, "%sZ", base);
}

int berth_oci_log_open(struct berth_oci_log *l, const char *path, bool json, bool debug,
		       struct berth_error *err)
{
	l->fd = -1;
	l->json = json;
	l->debug = debug;
	if (path == NULL || path[0] == '\0')
		return 0;
	l->fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
	if (l->fd < 0)
		return berth_err(err, errno, "cannot open the log `%.200s`", path);
	return 0;
}

static const char *level_name(enum berth_oci_level level)
{
	switch (level) {
	case BERTH_OCI_ERROR:
		return "error";
	case BERTH_OCI_WARNING:
		return "warning";
	case BERTH_OCI_INFO:
		return "info";
	case BERTH_OCI_DEBUG:
		return "debug";
	default:
		return "info";
	}
}

static void write_line(int fd, const char *s, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

static void log_msg(const struct berth_oci_log *l, enum berth_oci_level level, const char *msg)
{
	char when[48], *line = NULL;
	int n;

	if (l == NULL || l->fd < 0 || (level == BERTH_OCI_DEBUG && !l->debug))
		return;
	berth_oci_now_rfc3339(when, sizeof when, false);
	if (l->json) {
		/* jansson escapes what JSON must; bytes that are not UTF-8 are
		 * replaced first (a message quotes config.json's values) */
		char fixed[BERTH_ERR_MSG_MAX + BERTH_ERR_HINT_MAX + 64];
		json_t *o = json_pack("{s:s, s:s, s:s}", "level", level_name(level), "msg",
				      berth_utf8_fix(fixed, sizeof fixed, msg), "time", when);
		char *s = o != NULL ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
		json_decref(o);
		if (s == NULL)
			return;
		n = asprintf(&line, "%s\n", s);
		free(s);
	} else {
		char clean[BERTH_ERR_MSG_MAX + BERTH_ERR_HINT_MAX + 64], quoted[2 * sizeof clean];
		size_t k = 0;
		berth_text_clean(clean, sizeof clean, msg);
		for (const char *p = clean; *p != '\0' && k + 2 < sizeof quoted; p++) {
			if (*p == '"' || *p == '\\')
				quoted[k++] = '\\';
			quoted[k++] = *p;
		}
		quoted[k] = '\0';
		n = asprintf(&line, "time=\"%s\" level=%s msg=\"%s\"\n", when, level_name(level), quoted);
	}
	if (n > 0)
		write_line(l->fd, line, (size_t)n);
	free(line);
}

void berth_oci_logf(const struct berth_oci_log *l, enum berth_oci_level level, const char *fmt, ...)
{
	char msg[BERTH_ERR_MSG_MAX + BERTH_ERR_HINT_MAX + 16];
	va_list ap;

	if (l == NULL || l->fd < 0)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	log_msg(l, level, msg);
}

void berth_oci_log_error(const struct berth_oci_log *l, const struct berth_error *err)
{
	if (err->hint[0] != '\0')
		berth_oci_logf(l, BERTH_OCI_ERROR, "%s (hint: %s)", err->msg[0] ? err->msg : "unknown error",
			       err->hint);
	else
		berth_oci_logf(l, BERTH_OCI_ERROR, "%s", err->msg[0] ? err->msg : "unknown error");
}
