/* SPDX-License-Identifier: MIT */
/*
 * runtime.c - the calls on a started sandbox through its runtime's ops
 * (the table of runtimes is runtimes.c: the guest init links these calls
 * without every runtime of the host).
 */
#include "runtime.h"

int berth_rt_pidfd(const struct berth_rt *rt)
{
	return rt->ops->pidfd(rt);
}

int berth_rt_wait(struct berth_rt *rt, int *status)
{
	return rt->ops->wait(rt, status);
}

void berth_rt_kill(struct berth_rt *rt)
{
	rt->ops->kill(rt);
}

void berth_rt_free(struct berth_rt *rt)
{
	if (rt != NULL)
		rt->ops->free(rt);
}

void berth_rt_enforced(const struct berth_rt *rt, struct berth_enforced *e)
{
	rt->ops->enforced(rt, e);
}

const struct berth_measure *berth_rt_measure(const struct berth_rt *rt)
{
	return rt->ops->measure(rt);
}

int berth_rt_pty_master(const struct berth_rt *rt)
{
	return rt->ops->pty_master(rt);
}

const char *berth_rt_run_id(const struct berth_rt *rt)
{
	return rt->ops->run_id(rt);
}
