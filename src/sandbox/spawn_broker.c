/* SPDX-License-Identifier: MIT */
/*
 * spawn_broker.c - --network proxy: the egress broker that serves the sandbox's listeners
 * from a thread of berth for the whole run (started by spawn.c, stopped by
 * spawn_cleanup.c).
 */

#include "../util/cleanup.h"

#include "spawn_int.h"

/* ---------------------------------------------------------- egress broker */

static void *broker_main(void *arg)
{
	berth_broker_run(arg);
	return NULL;
}

/* --network proxy: the broker serves the sandbox's listeners from a thread
 * of berth (the supervisor), outside the sandbox, for the whole run. */
int berth_sb_start_broker(struct sandbox *s, struct berth_error *err)
{
	struct berth_host_pattern pats[BERTH_POLICY_ALLOW_HOSTS_MAX];
	struct berth_broker_opts bo = {0};
	size_t n = 0;

	if (s->p->network != BERTH_NET_PROXY)
		return 0;
	if (s->p->n_allow_hosts > BERTH_ARRAY_SIZE(pats))
		return berth_usage_err(err, "at most %zu --allow-host patterns", BERTH_ARRAY_SIZE(pats));
	for (size_t i = 0; i < s->p->n_allow_hosts; i++) {
		char reason[512];
		if (berth_host_pattern_parse(s->p->allow_hosts[i], &pats[n++], reason, sizeof reason) < 0)
			return berth_usage_err(err, "invalid allow-host `%s`: %s", s->p->allow_hosts[i], reason);
	}
	bo.patterns = pats;
	bo.n_patterns = n;
	bo.dns_server = s->p->dns;
	bo.on_decision = s->o->on_net_decision;
	bo.data = s->o->net_decision_arg;
	s->broker = berth_broker_new(&bo, err);
	if (s->broker == NULL)
		return -1;
	if (berth_broker_add_listener(s->broker, s->proxy_fd[0], BERTH_BROKER_HTTP, err) < 0)
		return -1;
	s->proxy_fd[0] = -1; /* the broker's now */
	if (berth_broker_add_listener(s->broker, s->proxy_fd[1], BERTH_BROKER_SOCKS5, err) < 0)
		return -1;
	s->proxy_fd[1] = -1;
	for (int i = 0; i < s->tports.n; i++) {
		int fd = s->tfd[i];
		s->tfd[i] = -1;
		if (berth_broker_add_listener(s->broker, fd, BERTH_BROKER_TRANSPARENT, err) < 0)
			return -1;
	}
	{
		int fd = s->dns_fd;
		s->dns_fd = -1;
		if (berth_broker_add_listener(s->broker, fd, BERTH_BROKER_DNS, err) < 0)
			return -1;
	}
	if (pthread_create(&s->broker_thread, NULL, broker_main, s->broker) != 0)
		return berth_err(err, EAGAIN, "cannot start the egress broker");
	s->broker_running = true;
	return 0;
}

void berth_sb_stop_broker(struct sandbox *s)
{
	char line[600];

	if (s->broker == NULL)
		return;
	if (s->broker_running) {
		berth_broker_stop(s->broker);
		pthread_join(s->broker_thread, NULL);
		s->broker_running = false;
	}
	/* What the sandbox tried and did not get, once each. */
	for (size_t i = 0; i < berth_broker_refused_count(s->broker); i++)
		if (berth_broker_refused(s->broker, i, line, sizeof line) == 0)
			berth_sb_notice(s, "refused: %s", line);
	/* A flood of harmless refusals must not hide the ones that follow. */
	size_t more = berth_broker_refused_unlisted(s->broker);
	if (more > 0)
		berth_sb_notice(s, "refused: ... and %zu more attempts to destinations not listed above",
				more);
	berth_broker_free(s->broker);
	s->broker = NULL;
}

/* Blocks the signals berth relays; @old receives the previous mask. */
