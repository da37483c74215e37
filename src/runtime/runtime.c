/* SPDX-License-Identifier: MIT */
/*
 * runtime.c - the table of runtimes (runtimes.def) and the calls on a
 * started sandbox through its runtime's ops.
 */
#include <stdio.h>
#include <string.h>

#include "runtime.h"

#define BERTH_RUNTIME(id) &berth_runtime_##id,
static const struct berth_runtime_ops *const runtimes[] = {
#include "runtimes.def"
};
#undef BERTH_RUNTIME

const struct berth_runtime_ops *berth_runtime_default(void)
{
	return runtimes[0];
}

const struct berth_runtime_ops *berth_runtime_find(const char *name, struct berth_error *err)
{
	char have[256] = "";
	size_t n = 0;

	if (name == NULL || name[0] == '\0')
		return runtimes[0];
	for (size_t i = 0; i < sizeof runtimes / sizeof runtimes[0]; i++) {
		if (strcmp(runtimes[i]->name, name) == 0)
			return runtimes[i];
		n += (size_t)snprintf(have + n, n < sizeof have ? sizeof have - n : 0, "%s%s", i ? ", " : "",
				      runtimes[i]->name);
	}
	berth_usage_err(err, "unknown runtime `%.64s`; this berth has: %s", name, have);
	return NULL;
}

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
