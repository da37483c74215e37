/* SPDX-License-Identifier: MIT */
/*
 * audit_writer - append records to an audit log from several threads; for
 * tests/integration/run-audit.sh and bench/bench-audit.sh.
 *
 *   audit_writer DIR COUNT THREADS [PAYLOAD_BYTES] [BIG_STRINGS]
 *
 * Each of THREADS threads appends COUNT records (kind "test.append", a
 * payload with a PAYLOAD_BYTES-long string, default 64, and BIG_STRINGS
 * strings of 4000 bytes, default 0) with berth_audit_append().  Prints
 * `appended N records in S s: R records/s` and, per thread, the last
 * acknowledged seq.  Exit 0, or 1 with berth's message on the first failure.
 * $AUDIT_WRITER_SECRET, when set, is declared with berth_audit_add_secret()
 * and put into every payload.
 */
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "audit/audit.h"

static struct berth_audit *a;
static unsigned long count, pbytes, big;
static const char *secret;

static void *writer(void *arg)
{
	unsigned long id = (unsigned long)(uintptr_t)arg;
	char *filler = malloc(pbytes + 1), *bigs = malloc(4001), run[32];
	struct berth_error err = {0};

	memset(filler, 'x', pbytes);
	filler[pbytes] = '\0';
	memset(bigs, 'b', 4000);
	bigs[4000] = '\0';
	snprintf(run, sizeof run, "writer-%d-%lu", (int)getpid(), id);
	for (unsigned long i = 0; i < count; i++) {
		json_t *p = json_pack("{s:I, s:s, s:s}", "i", (json_int_t)i, "filler", filler, "note",
				      secret ? secret : "none");
		uint64_t seq;

		if (big > 0) {
			json_t *arr = json_array();

			for (unsigned long j = 0; j < big; j++)
				json_array_append_new(arr, json_string(bigs));
			json_object_set_new(p, "big", arr);
		}
		if (berth_audit_append(a, run, "test.append", "audit_writer", p, &seq, NULL, &err) < 0) {
			fprintf(stderr, "audit_writer: %s\n", err.msg);
			if (err.hint[0])
				fprintf(stderr, "audit_writer: hint: %s\n", err.hint);
			exit(1);
		}
		json_decref(p);
	}
	free(filler);
	free(bigs);
	return NULL;
}

int main(int argc, char **argv)
{
	struct berth_error err = {0};
	struct timespec t0, t1;
	unsigned long threads;
	pthread_t *tid;
	double s;

	if (argc < 4) {
		fputs("usage: audit_writer DIR COUNT THREADS [PAYLOAD_BYTES] [BIG_STRINGS]\n", stderr);
		return 2;
	}
	count = strtoul(argv[2], NULL, 10);
	threads = strtoul(argv[3], NULL, 10);
	pbytes = argc > 4 ? strtoul(argv[4], NULL, 10) : 64;
	big = argc > 5 ? strtoul(argv[5], NULL, 10) : 0;
	secret = getenv("AUDIT_WRITER_SECRET");
	a = berth_audit_open(argv[1], &err);
	if (a == NULL) {
		fprintf(stderr, "audit_writer: %s\n", err.msg);
		if (err.hint[0])
			fprintf(stderr, "audit_writer: hint: %s\n", err.hint);
		return 1;
	}
	if (berth_audit_recovered(a) != NULL)
		fprintf(stderr, "audit_writer: recovered: %s\n", berth_audit_recovered(a));
	if (secret != NULL && berth_audit_add_secret(a, secret, &err) < 0)
		return 1;
	tid = calloc(threads, sizeof *tid);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned long i = 0; i < threads; i++)
		pthread_create(&tid[i], NULL, writer, (void *)(uintptr_t)i);
	for (unsigned long i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("appended %lu records in %.3f s: %.0f records/s\n", count * threads, s,
	       (double)(count * threads) / s);
	berth_audit_close(a);
	free(tid);
	return 0;
}
