/* SPDX-License-Identifier: MIT */
/*
 * queue.c - a writer thread that group-commits queued audit records; see
 * queue.h.
 */
#include "queue.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BATCH_MAX 256

/*
 * How long the writer holds records nobody waits for (a tool.call, an
 * allowed connection's net.decision) before it commits them, unless someone
 * starts waiting first: a resident app's tool.call then shares one group
 * commit with its tool.result, which is waited for, instead of the result's
 * commit queueing behind the call's (two fdatasync pairs per call).  A
 * record is durable at most this much later than with an immediate commit.
 */
#define LINGER_NS 2000000L

struct item {
	struct item *next;
	char *kind;
	char *actor; /* NULL: the queue's */
	json_t *payload;
	uint64_t ticket; /* its place in the order of pushes */
};

struct berth_audit_queue {
	struct berth_audit *a;
	char *run_id, *actor;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	struct item *head, **tail;
	uint64_t pushed, written; /* tickets: pushed so far, appended (or failed) so far */
	unsigned waiters;         /* threads in push(wait) or sync: commit at once */
	bool stop, failed;
	size_t lost;
	struct berth_error err; /* the first failure */
};

static void item_free(struct item *it)
{
	free(it->kind);
	free(it->actor);
	json_decref(it->payload);
	free(it);
}

/* The queue's own parts, once its writer has ended (or never started). */
static void queue_free(struct berth_audit_queue *q)
{
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->work);
	pthread_cond_destroy(&q->done);
	free(q->run_id);
	free(q->actor);
	free(q);
}

static void *writer(void *arg)
{
	struct berth_audit_queue *q = arg;

	pthread_mutex_lock(&q->mu);
	for (;;) {
		while (q->head == NULL && !q->stop)
			pthread_cond_wait(&q->work, &q->mu);
		if (q->head == NULL && q->stop)
			break;
		if (q->waiters == 0 && !q->stop) {
			struct timespec until;
			clock_gettime(CLOCK_MONOTONIC, &until);
			until.tv_nsec += LINGER_NS;
			if (until.tv_nsec >= 1000000000L) {
				until.tv_sec++;
				until.tv_nsec -= 1000000000L;
			}
			while (q->waiters == 0 && !q->stop &&
			       pthread_cond_timedwait(&q->work, &q->mu, &until) != ETIMEDOUT)
				;
		}
		/* take up to BATCH_MAX records, append them without the lock */
		struct item *batch = q->head, *it = batch;
		size_t n = 1;
		while (it->next != NULL && n < BATCH_MAX) {
			it = it->next;
			n++;
		}
		q->head = it->next;
		if (q->head == NULL)
			q->tail = &q->head;
		it->next = NULL;
		uint64_t last = it->ticket;
		bool failed = q->failed;
		pthread_mutex_unlock(&q->mu);

		struct berth_audit_entry e[BATCH_MAX];
		struct berth_error err = {0};
		size_t i = 0;
		for (it = batch; it != NULL; it = it->next, i++)
			e[i] = (struct berth_audit_entry){.run_id = q->run_id,
							  .kind = it->kind,
							  .actor = it->actor ? it->actor : q->actor,
							  .payload = it->payload};
		int r = failed ? -1 : berth_audit_append_batch(q->a, e, n, &err);
		while (batch != NULL) {
			it = batch->next;
			item_free(batch);
			batch = it;
		}

		pthread_mutex_lock(&q->mu);
		if (r < 0) {
			if (!q->failed)
				q->err = err;
			q->failed = true;
			q->lost += n;
		}
		q->written = last;
		pthread_cond_broadcast(&q->done);
	}
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

struct berth_audit_queue *berth_audit_queue_new(struct berth_audit *a, const char *run_id, const char *actor,
						struct berth_error *err)
{
	struct berth_audit_queue *q = calloc(1, sizeof *q);

	if (q == NULL || (q->run_id = strdup(run_id)) == NULL || (q->actor = strdup(actor)) == NULL) {
		if (q != NULL) {
			free(q->run_id);
			free(q);
		}
		berth_err(err, ENOMEM, "out of memory");
		return NULL;
	}
	q->a = a;
	q->tail = &q->head;
	pthread_condattr_t ca;
	pthread_mutex_init(&q->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&q->work, &ca);
	pthread_condattr_destroy(&ca);
	pthread_cond_init(&q->done, NULL);
	if (pthread_create(&q->th, NULL, writer, q) != 0) {
		queue_free(q);
		berth_err(err, EAGAIN, "audit: cannot start the record writer");
		return NULL;
	}
	return q;
}

/*
 * wait_written - with q->mu held, wait until the record of ticket @mine is
 * appended, or the queue has failed (then it is dropped, as every later one).
 * The writer commits at once while someone waits.  Returns 0, or -1 with
 * @err the queue's first failure.
 */
static int wait_written(struct berth_audit_queue *q, uint64_t mine, struct berth_error *err)
{
	if (q->written < mine) {
		q->waiters++;
		pthread_cond_signal(&q->work); /* no lingering: someone waits */
		while (q->written < mine && !q->failed)
			pthread_cond_wait(&q->done, &q->mu);
		q->waiters--;
	}
	if (q->failed) {
		*err = q->err;
		return -1;
	}
	return 0;
}

int berth_audit_queue_push(struct berth_audit_queue *q, const char *kind, json_t *payload, bool wait,
			   struct berth_error *err)
{
	return berth_audit_queue_push_as(q, NULL, kind, payload, wait, err);
}

int berth_audit_queue_push_as(struct berth_audit_queue *q, const char *actor, const char *kind,
			      json_t *payload, bool wait, struct berth_error *err)
{
	struct item *it = calloc(1, sizeof *it);

	if (it == NULL || (it->kind = strdup(kind)) == NULL ||
	    (actor != NULL && (it->actor = strdup(actor)) == NULL)) {
		if (it != NULL)
			free(it->kind);
		free(it);
		json_decref(payload);
		return berth_err(err, ENOMEM, "out of memory");
	}
	it->payload = payload;
	pthread_mutex_lock(&q->mu);
	if (q->failed) {
		q->lost++;
		*err = q->err;
		pthread_mutex_unlock(&q->mu);
		item_free(it);
		return -1;
	}
	it->ticket = ++q->pushed;
	*q->tail = it;
	q->tail = &it->next;
	pthread_cond_signal(&q->work);
	int r = wait ? wait_written(q, it->ticket, err) : 0; /* @it may be freed from here on */
	pthread_mutex_unlock(&q->mu);
	return r;
}

int berth_audit_queue_sync(struct berth_audit_queue *q, struct berth_error *err)
{
	pthread_mutex_lock(&q->mu);
	int r = wait_written(q, q->pushed, err);
	pthread_mutex_unlock(&q->mu);
	return r;
}

int berth_audit_queue_close(struct berth_audit_queue *q, struct berth_error *err)
{
	int r = 0;

	if (q == NULL)
		return 0;
	pthread_mutex_lock(&q->mu);
	q->stop = true;
	pthread_cond_signal(&q->work);
	pthread_mutex_unlock(&q->mu);
	pthread_join(q->th, NULL);
	if (q->failed) {
		*err = q->err;
		berth_err_wrap(err, "audit: %zu record%s could not be written", q->lost,
			       q->lost == 1 ? "" : "s");
		r = -1;
	}
	queue_free(q);
	return r;
}
