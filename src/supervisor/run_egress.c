/* SPDX-License-Identifier: MIT */
/*
 * run_egress.c - --network proxy: the egress broker of a run (run.h).  The
 * runtime makes the listeners inside the sandbox's network and hands them
 * over at sync 2 (hooks.on_egress); the broker serves them from a thread of
 * berth, outside the sandbox, for the whole run, and records each decision.
 */
#include <errno.h>
#include <stddef.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "credentials.h"
#include "sshagent.h"
#include "run.h"

static void notice_line(const struct berth_run *r, const char *line)
{
	if (r->spec.notice != NULL && !r->spec.quiet)
		r->spec.notice(r->spec.notice_arg, line);
}

/*
 * Each decision becomes a `net.decision` record, appended by the queue's
 * writer thread so that the broker's loop does not wait for the disk --
 * except for a refusal, which is durable before the client gets its 403.
 * On the broker's thread only.
 */
static void on_decision(const struct berth_broker_decision *d, void *arg)
{
	struct berth_run *r = arg;
	struct berth_audit_queue *q;
	struct berth_error err = {0};
	json_t *payload;

	if (!r->spec.audit || !berth_audit_net_admit(&r->net_cap, d))
		return; /* over the cap: a refusal stays a refusal, it is only not recorded one by one */
	if ((q = berth_run_queue(r)) == NULL || (payload = berth_audit_net_payload(d)) == NULL)
		return; /* a queue that could not be made: berth_run_end() says so */
	if (r->spec.net_extra != NULL)
		json_object_update(payload, r->spec.net_extra);
	berth_audit_queue_push_as(q, "broker", "net.decision", payload, d->outcome == BERTH_BROKER_REFUSED,
				  &err);
}

/* A connection that injected a credential: a `credential.used` record
 * (its name, host, port and count; never its value).  On the broker's thread. */
/* --ask: an undeclared host, offered by the broker (its loop's thread).
 * The engine exists from sync 3, before the command's first instruction,
 * so every request of the command finds it. */
static int on_ask(void *data, const char *host, unsigned port, uint64_t token)
{
	struct berth_run *r = data;

	return berth_ask_hold_net(__atomic_load_n(&r->ask, __ATOMIC_ACQUIRE), host, port, token);
}

static void on_credential(const char *name, const char *host, unsigned port, uint64_t count, void *arg)
{
	struct berth_run *r = arg;
	struct berth_audit_queue *q;
	struct berth_error err = {0};
	json_t *payload;

	if (!r->spec.audit || (q = berth_run_queue(r)) == NULL)
		return;
	payload = json_pack("{s:s, s:s, s:i, s:I}", "name", name, "host", host, "port", (int)port, "count",
			    (json_int_t)count);
	if (payload != NULL)
		berth_audit_queue_push_as(q, "broker", "credential.used", payload, false, &err);
}

/* One signature by the --ssh relay: an `ssh.sign` record (the key's
 * fingerprint, the count, what was signed; never what was signed itself). */
static void on_ssh_sign(const struct berth_ssh_sign_event *e, void *arg)
{
	struct berth_run *r = arg;
	struct berth_audit_queue *q;
	struct berth_error err = {0};
	json_t *payload;

	if (!r->spec.audit || (q = berth_run_queue(r)) == NULL)
		return;
	/* (not "key" or "host_key": the audit trail redacts a member named so) */
	payload = json_pack("{s:s, s:I, s:s, s:o*, s:o*, s:o*, s:o*}", "fingerprint", e->key, "count",
			    (json_int_t)e->count, "kind", e->kind, "user",
			    e->user != NULL ? json_string(e->user) : NULL, "host",
			    e->host != NULL ? json_string(e->host) : NULL, "host_fingerprint",
			    e->host_key != NULL ? json_string(e->host_key) : NULL, "namespace",
			    e->ns != NULL ? json_string(e->ns) : NULL);
	if (payload != NULL)
		berth_audit_queue_push_as(q, "ssh-agent", "ssh.sign", payload, false, &err);
}

static void on_ssh_notice(const char *line, void *arg)
{
	notice_line(arg, line);
}

static void *broker_main(void *arg)
{
	berth_broker_run(arg);
	return NULL;
}

/* A runtime's hand-over is the broker's, to the byte (runtime.h). */
_Static_assert(sizeof(struct berth_egress_stream) == sizeof(struct berth_broker_handoff) &&
		   offsetof(struct berth_egress_stream, port) ==
		       offsetof(struct berth_broker_handoff, port) &&
		   offsetof(struct berth_egress_stream, dst) == offsetof(struct berth_broker_handoff, dst) &&
		   (int)BERTH_EGRESS_HTTP == (int)BERTH_BROKER_HTTP &&
		   (int)BERTH_EGRESS_SOCKS5 == (int)BERTH_BROKER_SOCKS5 &&
		   (int)BERTH_EGRESS_TRANSPARENT == (int)BERTH_BROKER_TRANSPARENT,
	       "struct berth_egress_stream is not struct berth_broker_handoff");

static void close_fd(int fd)
{
	if (fd >= 0)
		close(fd);
}

static void close_listeners(const struct berth_egress_listeners *l)
{
	close_fd(l->http);
	close_fd(l->socks5);
	for (size_t i = 0; i < l->n_transparent; i++)
		close_fd(l->transparent[i]);
	close_fd(l->dns);
	close_fd(l->streams);
	close_fd(l->dns_tagged);
}

/* Gives every listener of @l to @b; after a failure the rest are closed
 * (the broker owns each descriptor from its add on, also on failure). */
static int add_listeners(struct berth_broker *b, const struct berth_egress_listeners *l,
			 struct berth_error *err)
{
	struct {
		int fd;
		enum berth_broker_kind kind;
	} v[5 + BERTH_EGRESS_TRANSPARENT_MAX];
	size_t n = 0;
	int rc = 0;

	v[n++] = (typeof(v[0])){l->http, BERTH_BROKER_HTTP};
	v[n++] = (typeof(v[0])){l->socks5, BERTH_BROKER_SOCKS5};
	for (size_t i = 0; i < l->n_transparent; i++)
		v[n++] = (typeof(v[0])){l->transparent[i], BERTH_BROKER_TRANSPARENT};
	v[n++] = (typeof(v[0])){l->dns, BERTH_BROKER_DNS};
	v[n++] = (typeof(v[0])){l->streams, BERTH_BROKER_HANDOFF};
	v[n++] = (typeof(v[0])){l->dns_tagged, BERTH_BROKER_DNS_TAGGED};
	for (size_t i = 0; i < n; i++) {
		if (v[i].fd < 0)
			continue; /* none of that kind */
		if (rc < 0)
			close(v[i].fd);
		else
			rc = berth_broker_add_listener(b, v[i].fd, v[i].kind, err);
	}
	return rc;
}

int berth_run_egress_start(void *run, const struct berth_egress_listeners *l, struct berth_error *err)
{
	struct berth_run *r = run;
	const struct berth_policy *p = r->spec.policy;
	struct berth_host_pattern pats[BERTH_POLICY_ALLOW_HOSTS_MAX];
	struct berth_broker_opts bo = {.dns_server = p->dns, .on_decision = on_decision, .data = r};
	if (r->spec.ask) {
		bo.on_ask = on_ask;
		bo.ask_timeout_ms =
		    r->spec.ask_timeout_ms != 0 ? r->spec.ask_timeout_ms : BERTH_ASK_TIMEOUT_MS;
	}

	/* a policy with credentials needs them read (berth run does; a run
	 * without them would hand the sandbox an unset variable, fail closed) */
	if ((p->n_ssh_keys > 0 || p->n_ssh_known_hosts > 0) && r->spec.ssh == NULL) {
		close_listeners(l);
		berth_usage_err(err, "--ssh is only for `berth run`");
		return berth_err_hint(err, "give --ssh to a `berth run` (docs/credentials.md)");
	}
	if (p->n_credentials > 0 && r->spec.creds == NULL) {
		close_listeners(l);
		berth_usage_err(err, "--credential is only for `berth run`");
		return berth_err_hint(err, "bind the credential in a `berth run` (docs/credentials.md)");
	}
	/* berth_policy_validate() refused these before anything was recorded;
	 * checked again since an unchecked count would overrun @pats */
	if (p->n_allow_hosts > BERTH_ARRAY_SIZE(pats)) {
		close_listeners(l);
		return berth_usage_err(err, "too many --allow-host patterns (%zu, at most %d)",
				       p->n_allow_hosts, BERTH_POLICY_ALLOW_HOSTS_MAX);
	}
	for (size_t i = 0; i < p->n_allow_hosts; i++) {
		char reason[BERTH_HOST_REASON_MAX];
		if (berth_host_pattern_parse(p->allow_hosts[i], &pats[i], reason, sizeof reason) < 0) {
			close_listeners(l);
			return berth_usage_err(err, "invalid allow-host `%s`: %s", p->allow_hosts[i], reason);
		}
	}
	bo.patterns = pats;
	bo.n_patterns = p->n_allow_hosts;
	if (r->spec.creds != NULL) {
		bo.creds = r->spec.creds->creds;
		bo.n_creds = r->spec.creds->n;
		bo.ca = r->spec.creds->ca;
		bo.on_credential = on_credential;
	}
	r->broker = berth_broker_new(&bo, err);
	if (r->broker == NULL) {
		close_listeners(l);
		return -1;
	}
	if (add_listeners(r->broker, l, err) < 0)
		return -1; /* berth_run_end() frees the broker */
	if (pthread_create(&r->broker_th, NULL, broker_main, r->broker) != 0)
		return berth_err(err, EAGAIN, "cannot start the egress broker");
	r->broker_running = true;
	if (r->spec.ssh != NULL && berth_ssh_start(r->spec.ssh, on_ssh_sign, on_ssh_notice, r, err) < 0)
		return -1; /* berth_run_end() stops the broker */
	return 0;
}

void berth_run_egress_stop(struct berth_run *r)
{
	char line[620], text[600];

	if (r->spec.ssh != NULL)
		berth_ssh_stop(r->spec.ssh); /* its refusal lines; no signature after this */
	if (r->broker == NULL)
		return;
	if (r->broker_running) {
		berth_broker_stop(r->broker);
		pthread_join(r->broker_th, NULL);
		r->broker_running = false;
	}
	/* What the sandbox tried and did not get, once each. */
	for (size_t i = 0; i < berth_broker_refused_count(r->broker); i++)
		if (berth_broker_refused(r->broker, i, text, sizeof text) == 0) {
			snprintf(line, sizeof line, "refused: %s", text);
			notice_line(r, line);
		}
	/* A flood of harmless refusals must not hide the ones that follow. */
	size_t more = berth_broker_refused_unlisted(r->broker);
	if (more > 0) {
		snprintf(line, sizeof line,
			 "refused: ... and %zu more attempts to destinations not listed above", more);
		notice_line(r, line);
	}
	berth_broker_free(r->broker);
	r->broker = NULL;
}
