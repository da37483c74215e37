/* SPDX-License-Identifier: MIT */
/*
 * dev_client.c - measures a running `berth dev` from a client that stays
 * connected to its control socket, the way an agent's tool loop would.
 *
 *   dev_client call SOCKET N EXPORT INPUT-JSON
 *       N calls of EXPORT, one at a time; prints min, p50, p90, max in ms of
 *       the round trip (request written to answer read).
 *   dev_client reload SOCKET N FILE
 *       N times: append a comment line to FILE (an app file), then ask `info`
 *       until the app's digest differs; prints min, p50, p90, max in ms from
 *       the write to the first answer with the new digest (berth dev's
 *       settle delay, the new manifest and digest, a fresh sandbox, ready).
 *
 * Exit 0 after printing, 1 on any error (the message says which).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int dial(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		fprintf(stderr, "dev_client: cannot connect to %s: %s\n", path, strerror(errno));
		exit(1);
	}
	return fd;
}

/* One request line out, one answer line back (into @buf). */
static void roundtrip(int fd, const char *req, char *buf, size_t len)
{
	size_t n = strlen(req), got = 0;

	if (write(fd, req, n) != (ssize_t)n) {
		fprintf(stderr, "dev_client: write: %s\n", strerror(errno));
		exit(1);
	}
	for (;;) {
		ssize_t r = read(fd, buf + got, len - 1 - got);
		if (r <= 0) {
			fprintf(stderr, "dev_client: berth dev closed the connection\n");
			exit(1);
		}
		got += (size_t)r;
		if (buf[got - 1] == '\n' || got == len - 1)
			break;
	}
	buf[got] = '\0';
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void report(const char *what, double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp);
	printf("%s: n=%d min %.3f ms, p50 %.3f ms, p90 %.3f ms, max %.3f ms\n", what, n, v[0],
	       n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v[(int)((n - 1) * 0.9)], v[n - 1]);
}

static void digest_of(const char *answer, char *out, size_t len)
{
	const char *p = strstr(answer, "\"digest\":\"");

	snprintf(out, len, "%.80s", p != NULL ? p + 10 : "");
}

int main(int argc, char **argv)
{
	static char buf[1 << 20];
	char req[8192];
	int n;

	if (argc < 5 || (n = atoi(argv[3])) <= 0) {
		fprintf(stderr, "usage: dev_client call SOCKET N EXPORT INPUT | reload SOCKET N FILE\n");
		return 2;
	}
	int fd = dial(argv[2]);
	double *v = calloc((size_t)n, sizeof *v);
	if (strcmp(argv[1], "call") == 0 && argc == 6) {
		snprintf(req, sizeof req,
			 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"call\",\"params\":{\"export\":\"%s\","
			 "\"input\":%s}}\n",
			 argv[4], argv[5]);
		for (int i = 0; i < 20; i++) /* warm-up */
			roundtrip(fd, req, buf, sizeof buf);
		for (int i = 0; i < n; i++) {
			double t0 = now_ms();
			roundtrip(fd, req, buf, sizeof buf);
			v[i] = now_ms() - t0;
			if (strstr(buf, "\"result\"") == NULL) {
				fprintf(stderr, "dev_client: call failed: %s", buf);
				return 1;
			}
		}
		report("warm call", v, n);
		return 0;
	}
	if (strcmp(argv[1], "reload") == 0) {
		const char *info = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"info\",\"params\":{}}\n";
		char before[128], after[128];
		for (int i = 0; i < n; i++) {
			roundtrip(fd, info, buf, sizeof buf);
			digest_of(buf, before, sizeof before);
			FILE *f = fopen(argv[4], "a");
			if (f == NULL) {
				fprintf(stderr, "dev_client: cannot append to %s: %s\n", argv[4],
					strerror(errno));
				return 1;
			}
			double t0 = now_ms();
			fprintf(f, "# bench %d\n", i);
			fclose(f);
			for (;;) {
				usleep(200);
				roundtrip(fd, info, buf, sizeof buf);
				digest_of(buf, after, sizeof after);
				if (strcmp(before, after) != 0)
					break;
				if (now_ms() - t0 > 10000) {
					fprintf(stderr, "dev_client: no reload within 10 s\n");
					return 1;
				}
			}
			v[i] = now_ms() - t0;
			usleep(100000); /* let the watcher settle */
		}
		report("reload", v, n);
		return 0;
	}
	fprintf(stderr, "dev_client: unknown mode `%s`\n", argv[1]);
	return 2;
}
