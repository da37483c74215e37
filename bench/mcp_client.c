/* SPDX-License-Identifier: MIT */
/*
 * mcp_client.c - measures `berth mcp` from a client of its own (no Node, no
 * SDK): the MCP stdio transport is newline-delimited JSON-RPC on the
 * server's stdin and stdout.
 *
 *   mcp_client cold N BERTH APP-DIR
 *       N times (after 3 warm-up runs): fork/exec `BERTH mcp --app filesystem
 *       --app-dir APP-DIR --no-dev` with pipes, send initialize, wait for its
 *       answer, send notifications/initialized and a tools/call of
 *       write_file, and time from just before fork() to the tools/call
 *       answer read.  Then close its stdin (the MCP way to end a stdio
 *       server) and reap it; it must exit 0.  Prints min, median, p90, max.
 *   mcp_client warm N BERTH APP-DIR
 *       One server: initialize, a first write_file (boots the app), 20
 *       warm-up calls, then N sequential tools/call read_file round trips,
 *       each timed from the request written to the answer read.  Prints
 *       min, p50, p90, max.
 *
 * The server's stderr goes to /dev/null.  Exit 0 after printing, 1 on any
 * error (the message says which, with the server's answer).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WARMUP_COLD 3
#define WARMUP_WARM 20

static const char *berth, *app_dir, *runtime; /* runtime: `berth mcp --runtime`, NULL: the default */

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "mcp_client: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

struct server {
	pid_t pid;
	int in, out; /* its stdin (we write), its stdout (we read) */
	char buf[1 << 16];
	size_t len;
};

static void spawn(struct server *s)
{
	int to[2], from[2];

	if (pipe2(to, O_CLOEXEC) < 0 || pipe2(from, O_CLOEXEC) < 0)
		die("pipe: %s", strerror(errno));
	s->pid = fork();
	if (s->pid < 0)
		die("fork: %s", strerror(errno));
	if (s->pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(to[0], 0);
		dup2(from[1], 1);
		if (null >= 0)
			dup2(null, 2);
		if (runtime != NULL)
			execl(berth, berth, "mcp", "--runtime", runtime, "--app", "filesystem", "--app-dir",
			      app_dir, "--no-dev", (char *)NULL);
		else
			execl(berth, berth, "mcp", "--app", "filesystem", "--app-dir", app_dir, "--no-dev",
			      (char *)NULL);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	s->in = to[1];
	s->out = from[0];
	s->len = 0;
}

static void send_msg(struct server *s, const char *msg)
{
	size_t n = strlen(msg);

	for (size_t off = 0; off < n;) {
		ssize_t w = write(s->in, msg + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			die("write to berth mcp: %s", strerror(errno));
		off += (size_t)w;
	}
}

/* Read lines until the answer to request @id (log notifications are
 * skipped); it must be a result, and a tool result must not be isError.
 * The line stays in s->buf (NUL-terminated) until the next call. */
static const char *await(struct server *s, int id)
{
	char key[32];

	snprintf(key, sizeof key, "\"id\":%d,", id);
	for (;;) {
		char *nl = memchr(s->buf, '\n', s->len);
		if (nl != NULL) {
			*nl = '\0';
			if (strstr(s->buf, key) != NULL) {
				if (strstr(s->buf, "\"result\":") == NULL ||
				    strstr(s->buf, "\"isError\":true") != NULL)
					die("berth mcp failed: %s", s->buf);
				/* the line is consumed by the next call */
				size_t used = (size_t)(nl - s->buf) + 1;
				static char line[1 << 16];
				memcpy(line, s->buf, used);
				memmove(s->buf, nl + 1, s->len - used);
				s->len -= used;
				return line;
			}
			size_t used = (size_t)(nl - s->buf) + 1;
			memmove(s->buf, nl + 1, s->len - used);
			s->len -= used;
			continue;
		}
		if (s->len == sizeof s->buf)
			die("an answer over 64 KiB");
		struct pollfd p = {s->out, POLLIN, 0};
		if (poll(&p, 1, 30000) != 1)
			die("no answer from berth mcp in 30 s");
		ssize_t r = read(s->out, s->buf + s->len, sizeof s->buf - s->len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			die("berth mcp closed its output (see its stderr: run it by hand)");
		s->len += (size_t)r;
	}
}

/* Close its stdin and reap it: it must exit 0. */
static void finish(struct server *s)
{
	int st;

	close(s->in);
	while (waitpid(s->pid, &st, 0) < 0)
		if (errno != EINTR)
			die("waitpid: %s", strerror(errno));
	close(s->out);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		die("berth mcp did not exit 0 at the end of its input (status 0x%x)", st);
}

static const char init_msg[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
			       "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
			       "\"clientInfo\":{\"name\":\"mcp_client\",\"version\":\"1\"}}}\n";
static const char inited_msg[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";

static void handshake(struct server *s)
{
	send_msg(s, init_msg);
	await(s, 1);
	send_msg(s, inited_msg);
}

static void call(struct server *s, int id, const char *tool, const char *args)
{
	char msg[1024];

	snprintf(msg, sizeof msg,
		 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\","
		 "\"arguments\":%s}}\n",
		 id, tool, args);
	send_msg(s, msg);
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* min, median (mean of the two middle values), p90 (nearest rank), max */
static void report(const char *what, const char *mid, double *v, int n)
{
	int r90 = (9 * n + 9) / 10;

	qsort(v, (size_t)n, sizeof *v, cmp);
	printf("%s: n=%d min %.3f ms, %s %.3f ms, p90 %.3f ms, max %.3f ms\n", what, n, v[0], mid,
	       n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v[r90 - 1], v[n - 1]);
}

static void cold(int n)
{
	double *v = calloc((size_t)n, sizeof *v), *vi = calloc((size_t)n, sizeof *vi);

	for (int i = -WARMUP_COLD; i < n; i++) {
		struct server s;
		double t0 = now_ms();
		spawn(&s);
		handshake(&s);
		double ti = now_ms() - t0;
		call(&s, 2, "write_file", "{\"path\":\"bench.txt\",\"content\":\"hello from a sandbox\"}");
		const char *a = await(&s, 2);
		double t = now_ms() - t0;
		if (strstr(a, "\"bytes\":20") == NULL)
			die("unexpected answer: %s", a);
		finish(&s);
		if (i >= 0) {
			v[i] = t;
			vi[i] = ti;
		}
	}
	report("cold: spawn to the first tools/call answer", "median", v, n);
	report("cold: spawn to the initialize answer", "median", vi, n);
	free(v);
	free(vi);
}

static void warm(int n)
{
	double *v = calloc((size_t)n, sizeof *v);
	struct server s;

	spawn(&s);
	handshake(&s);
	call(&s, 2, "write_file", "{\"path\":\"bench.txt\",\"content\":\"hello from a sandbox\"}");
	await(&s, 2);
	for (int i = -WARMUP_WARM; i < n; i++) {
		int id = 100 + WARMUP_WARM + i;
		double t0 = now_ms();
		call(&s, id, "read_file", "{\"path\":\"bench.txt\"}");
		const char *a = await(&s, id);
		double t = now_ms() - t0;
		if (strstr(a, "hello from a sandbox") == NULL)
			die("unexpected answer: %s", a);
		if (i >= 0)
			v[i] = t;
	}
	finish(&s);
	report("warm: tools/call round trip (read_file)", "p50", v, n);
	free(v);
}

int main(int argc, char **argv)
{
	int n;

	if ((argc != 5 && argc != 6) || (strcmp(argv[1], "cold") != 0 && strcmp(argv[1], "warm") != 0) ||
	    (n = atoi(argv[2])) < 1) {
		fprintf(stderr, "usage: mcp_client cold|warm N BERTH APP-DIR [RUNTIME]\n");
		return 2;
	}
	berth = argv[3];
	app_dir = argv[4];
	runtime = argc == 6 ? argv[5] : NULL;
	signal(SIGPIPE, SIG_IGN);
	if (strcmp(argv[1], "cold") == 0)
		cold(n);
	else
		warm(n);
	return 0;
}
