/* SPDX-License-Identifier: MIT */
/*
 * mcp_tasks.c - `berth mcp`'s tasks (the tasks utility of MCP 2025-11-25:
 * a tools/call with params.task is answered at once with a task, whose
 * state the client polls with tasks/get and whose result it fetches with
 * tasks/result) and the server's own requests to the client (URL-mode
 * elicitation/create, mcp.h).
 *
 * A task is a call like any other (struct pending), whose request id is
 * the task's marker, {"task": ID}: a client's ids are strings or integers,
 * so a marker never stands for one.  berth_mcpi_deliver() sends a result to
 * the request or keeps it in the task.  A done task is forgotten ttl ms
 * after its last update; a working one lives until its call ends.
 */
#include "mcp_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "../util/text.h"

static const char *const status_names[] = {"working", "completed", "failed", "cancelled"};

bool berth_mcpi_tasks_on(const struct berth_mcp *m)
{
	return strcmp(m->version, "2025-11-25") == 0;
}

static long long wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ISO 8601 in UTC with milliseconds, as the spec's createdAt wants. */
static void iso(long long ms, char *buf, size_t len)
{
	time_t s = (time_t)(ms / 1000);
	struct tm tm;
	gmtime_r(&s, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ms % 1000));
}

static json_t *task_json(const struct mcp_task *t)
{
	char c[40], u[40];
	iso(t->created_ms, c, sizeof c);
	iso(t->updated_ms, u, sizeof u);
	json_t *j =
	    json_pack("{s:s, s:s, s:I, s:s, s:s, s:i}", "taskId", t->id, "status", status_names[t->status],
		      "ttl", (json_int_t)t->ttl_ms, "createdAt", c, "lastUpdatedAt", u, "pollInterval", 500);
	if (j != NULL && t->message[0])
		json_object_set_new(j, "statusMessage", json_string(t->message));
	return j;
}

static struct mcp_task *find_task(struct berth_mcp *m, const char *id)
{
	for (size_t i = 0; id != NULL && i < m->n_tasks; i++)
		if (strcmp(m->tasks[i].id, id) == 0)
			return &m->tasks[i];
	return NULL;
}

static void task_free(struct mcp_task *t)
{
	json_decref(t->result);
	json_decref(t->waiters);
	json_decref(t->marker);
}

/* Forget done tasks past their ttl. */
static void expire(struct berth_mcp *m)
{
	long long now = wall_ms();
	for (size_t i = 0; i < m->n_tasks;) {
		struct mcp_task *t = &m->tasks[i];
		if (t->status != TASK_WORKING && t->updated_ms + t->ttl_ms <= now) {
			task_free(t);
			memmove(t, t + 1, (m->n_tasks - i - 1) * sizeof *t);
			m->n_tasks--;
		} else {
			i++;
		}
	}
}

static void notify_status(struct berth_mcp *m, const struct mcp_task *t)
{
	berth_mcpi_notify(m, "notifications/tasks/status", task_json(t));
}

/* The result of a done task, with the related-task _meta the spec asks for. */
static json_t *result_of(const struct mcp_task *t)
{
	json_t *r = json_deep_copy(t->result);
	if (r != NULL)
		json_object_set_new(
		    r, "_meta",
		    json_pack("{s:{s:s}}", "io.modelcontextprotocol/related-task", "taskId", t->id));
	return r;
}

static void answer_waiters(struct berth_mcp *m, struct mcp_task *t)
{
	size_t i;
	json_t *id;
	json_array_foreach(t->waiters, i, id) {
		if (t->status == TASK_CANCELLED)
			berth_mcpi_reply_error(m, id, BERTH_RPC_INVALID_PARAMS, "the task was cancelled");
		else
			berth_mcpi_reply(m, id, result_of(t));
	}
	json_array_clear(t->waiters);
}

void berth_mcpi_deliver(struct berth_mcp *m, json_t *req_id, json_t *result)
{
	const char *tid = json_is_object(req_id) ? json_string_value(json_object_get(req_id, "task")) : NULL;
	if (tid == NULL) {
		berth_mcpi_reply(m, req_id, result);
		return;
	}
	struct mcp_task *t = find_task(m, tid);
	if (t == NULL || t->status != TASK_WORKING) {
		json_decref(result); /* expired or cancelled meanwhile */
		return;
	}
	if (result == NULL)
		result = json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text",
				   "internal error: the result could not be encoded", "isError", true);
	t->result = result;
	t->updated_ms = wall_ms();
	if (json_is_true(json_object_get(result, "isError"))) {
		const char *text = json_string_value(
		    json_object_get(json_array_get(json_object_get(result, "content"), 0), "text"));
		t->status = TASK_FAILED;
		berth_text_clean(t->message, sizeof t->message, text != NULL ? text : "the call failed");
	} else {
		t->status = TASK_COMPLETED;
	}
	notify_status(m, t);
	answer_waiters(m, t);
}

json_t *berth_mcpi_task_start(struct berth_mcp *m, json_t *id, json_t *task_params)
{
	unsigned char rnd[16];
	json_t *ttl = json_object_get(task_params, "ttl");

	expire(m);
	if (ttl != NULL && !json_is_null(ttl) && (!json_is_number(ttl) || json_number_value(ttl) < 0)) {
		berth_mcpi_reply_error(m, id, BERTH_RPC_INVALID_PARAMS,
				       "params.task.ttl must be milliseconds, >= 0");
		return NULL;
	}
	if (m->n_tasks >= BERTH_MCP_MAX_TASKS) {
		berth_mcpi_reply_error(m, id, BERTH_RPC_INTERNAL,
				       "too many tasks kept; fetch their results or wait for them to expire");
		return NULL;
	}
	if (m->n_tasks == m->cap_tasks) {
		size_t cap = m->cap_tasks ? m->cap_tasks * 2 : 16;
		struct mcp_task *v = realloc(m->tasks, cap * sizeof *v);
		if (v == NULL) {
			berth_mcpi_reply_error(m, id, BERTH_RPC_INTERNAL, "out of memory");
			return NULL;
		}
		m->tasks = v;
		m->cap_tasks = cap;
	}
	struct mcp_task *t = &m->tasks[m->n_tasks];
	memset(t, 0, sizeof *t);
	randombytes_buf(rnd, sizeof rnd);
	memcpy(t->id, "task-", 5);
	for (size_t i = 0; i < sizeof rnd; i++)
		snprintf(t->id + 5 + 2 * i, 3, "%02x", rnd[i]);
	t->status = TASK_WORKING;
	t->created_ms = t->updated_ms = wall_ms();
	double want = ttl != NULL && json_is_number(ttl) ? json_number_value(ttl) : BERTH_MCP_TASK_TTL_MS;
	t->ttl_ms = want > BERTH_MCP_TASK_TTL_MAX_MS ? BERTH_MCP_TASK_TTL_MAX_MS : (long long)want;
	t->waiters = json_array();
	t->marker = json_pack("{s:s}", "task", t->id);
	if (t->waiters == NULL || t->marker == NULL) {
		task_free(t);
		berth_mcpi_reply_error(m, id, BERTH_RPC_INTERNAL, "out of memory");
		return NULL;
	}
	m->n_tasks++;
	berth_mcpi_reply(m, id, json_pack("{s:o}", "task", task_json(t)));
	return t->marker;
}

void berth_mcpi_task_drop_last(struct berth_mcp *m)
{
	if (m->n_tasks > 0)
		task_free(&m->tasks[--m->n_tasks]);
}

static void on_cancel(struct berth_mcp *m, json_t *id, struct mcp_task *t)
{
	if (t->status != TASK_WORKING) {
		berth_mcpi_reply_error(
		    m, id, BERTH_RPC_INVALID_PARAMS,
		    "the task is already done: a task in a terminal status cannot be cancelled");
		return;
	}
	for (size_t i = 0; i < m->n_pend; i++)
		if (json_equal(m->pend[i].req_id, t->marker)) {
			if (!m->pend[i].via_dev)
				berth_app_cancel(m->pend[i].app->app, m->pend[i].call_id);
			berth_mcpi_pend_remove(m, i);
			break;
		}
	t->status = TASK_CANCELLED;
	t->updated_ms = wall_ms();
	snprintf(t->message, sizeof t->message, "cancelled by the client");
	berth_mcpi_reply(m, id, task_json(t));
	notify_status(m, t);
	answer_waiters(m, t);
}

bool berth_mcpi_tasks_method(struct berth_mcp *m, const char *method, json_t *id, json_t *params)
{
	if (strncmp(method, "tasks/", 6) != 0 || !berth_mcpi_tasks_on(m))
		return false;
	const char *what = method + 6;
	if (strcmp(what, "get") != 0 && strcmp(what, "result") != 0 && strcmp(what, "list") != 0 &&
	    strcmp(what, "cancel") != 0)
		return false;
	expire(m);
	if (strcmp(what, "list") == 0) {
		json_t *cursor = json_object_get(params, "cursor");
		if (cursor != NULL && !json_is_null(cursor)) {
			berth_mcpi_reply_error(m, id, BERTH_RPC_INVALID_PARAMS, "invalid cursor");
			return true;
		}
		json_t *v = json_array();
		for (size_t i = 0; i < m->n_tasks; i++)
			json_array_append_new(v, task_json(&m->tasks[i]));
		berth_mcpi_reply(m, id, json_pack("{s:o}", "tasks", v));
		return true;
	}
	const char *tid = json_string_value(json_object_get(params, "taskId"));
	struct mcp_task *t = find_task(m, tid);
	if (t == NULL) {
		char msg[160];
		snprintf(msg, sizeof msg, "%s: no such task (unknown, or expired)",
			 tid == NULL ? "params.taskId is missing" : "params.taskId");
		berth_mcpi_reply_error(m, id, BERTH_RPC_INVALID_PARAMS, msg);
		return true;
	}
	if (strcmp(what, "get") == 0) {
		berth_mcpi_reply(m, id, task_json(t));
	} else if (strcmp(what, "cancel") == 0) {
		on_cancel(m, id, t);
	} else if (t->status == TASK_WORKING) {
		json_array_append(t->waiters, id); /* answered when it is done */
	} else if (t->status == TASK_CANCELLED) {
		berth_mcpi_reply_error(m, id, BERTH_RPC_INVALID_PARAMS, "the task was cancelled");
	} else {
		berth_mcpi_reply(m, id, result_of(t));
	}
	return true;
}

/* ---------------------------------------------------------- our requests */

int berth_mcp_elicit_url(struct berth_mcp *m, const char *message, const char *url,
			 const char *elicitation_id, berth_mcp_elicit_cb cb, void *ctx,
			 struct berth_error *err)
{
	if (!m->initialized)
		return berth_usage_err(
		    err, "the MCP client cannot take a URL elicitation: it has not initialized yet");
	if (!berth_mcpi_tasks_on(m))
		return berth_usage_err(
		    err,
		    "the MCP client cannot take a URL elicitation: it speaks %s, and only 2025-11-25 "
		    "has server-to-client elicitation (a revision before it has no URL mode; "
		    "2026-07-28 has no server-to-client requests)",
		    m->version);
	if (!m->client_elicit_url)
		return berth_usage_err(err, "the MCP client cannot take a URL elicitation: it declared no "
					    "capabilities.elicitation.url");
	if (m->n_outreq == m->cap_outreq) {
		size_t cap = m->cap_outreq ? m->cap_outreq * 2 : 8;
		struct mcp_out_req *v = realloc(m->outreq, cap * sizeof *v);
		if (v == NULL)
			return berth_err(err, ENOMEM, "out of memory");
		m->outreq = v;
		m->cap_outreq = cap;
	}
	struct mcp_out_req *r = &m->outreq[m->n_outreq];
	snprintf(r->id, sizeof r->id, "berth-%llu", ++m->next_out_id);
	r->cb = cb;
	r->ctx = ctx;
	m->n_outreq++;
	berth_mcpi_send(m, json_pack("{s:s, s:s, s:s, s:{s:s, s:s, s:s, s:s}}", "jsonrpc", "2.0", "id", r->id,
				     "method", "elicitation/create", "params", "mode", "url", "message",
				     message, "url", url, "elicitationId", elicitation_id));
	return 0;
}

void berth_mcp_elicit_complete(struct berth_mcp *m, const char *elicitation_id)
{
	berth_mcpi_notify(m, "notifications/elicitation/complete",
			  json_pack("{s:s}", "elicitationId", elicitation_id));
}

void berth_mcpi_client_response(struct berth_mcp *m, json_t *msg)
{
	const char *id = json_string_value(json_object_get(msg, "id"));
	for (size_t i = 0; id != NULL && i < m->n_outreq; i++) {
		if (strcmp(m->outreq[i].id, id) != 0)
			continue;
		struct mcp_out_req r = m->outreq[i];
		memmove(&m->outreq[i], &m->outreq[i + 1], (m->n_outreq - i - 1) * sizeof r);
		m->n_outreq--;
		json_t *e = json_object_get(msg, "error");
		const char *action =
		    json_string_value(json_object_get(json_object_get(msg, "result"), "action"));
		if (e != NULL || action == NULL ||
		    (strcmp(action, "accept") != 0 && strcmp(action, "decline") != 0 &&
		     strcmp(action, "cancel") != 0)) {
			const char *em = json_string_value(json_object_get(e, "message"));
			r.cb(r.ctx, NULL,
			     e != NULL ? (em != NULL ? em : "the client answered with an error")
				       : "the client's answer has no action accept, decline or cancel");
		} else {
			r.cb(r.ctx, action, NULL);
		}
		return;
	}
}

void berth_mcpi_tasks_free(struct berth_mcp *m)
{
	for (size_t i = 0; i < m->n_tasks; i++)
		task_free(&m->tasks[i]);
	free(m->tasks);
	m->tasks = NULL;
	m->n_tasks = m->cap_tasks = 0;
	for (size_t i = 0; i < m->n_outreq; i++)
		m->outreq[i].cb(m->outreq[i].ctx, NULL, "the client went away");
	free(m->outreq);
	m->outreq = NULL;
	m->n_outreq = m->cap_outreq = 0;
}
