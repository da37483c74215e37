/* SPDX-License-Identifier: MIT */
/*
 * runtime_ns.c - the namespace runtime (sandbox.h) as a struct
 * berth_runtime_ops (src/runtime/runtime.h): the first runtime, and the
 * default.
 */
#include "limits.h"
#include "spawn_int.h"

/* The limits are what this runtime can refuse for the host's sake (no
 * writable cgroup for an explicit --memory): the rest of a valid policy it
 * always enforces, or refuses at start with the missing kernel feature. */
static int ns_check(const struct berth_policy *p, const struct berth_runtime_opts *o, struct berth_error *err)
{
	bool rlimits = o != NULL && (o->force_off & BERTH_FEAT_CGROUP) != 0;

	return berth_limits_check(p, rlimits, o != NULL ? o->journal : NULL, err);
}

static int ns_start(const struct berth_policy *p, const struct berth_runtime_opts *o, struct berth_rt **out,
		    struct berth_error *err)
{
	struct berth_sandbox *sb = NULL;
	int r = berth_sandbox_start(p, o, &sb, err);

	/* struct sandbox begins with its struct berth_rt (spawn_int.h) */
	*out = r == 0 ? &((struct sandbox *)sb)->base : NULL;
	return r;
}

/* The struct sandbox whose first member @rt is. */
#define SB(rt) ((struct berth_sandbox *)(void *)(rt))

static int ns_pidfd(const struct berth_rt *rt)
{
	return berth_sandbox_pidfd(SB(rt));
}

static int ns_wait(struct berth_rt *rt, int *status)
{
	return berth_sandbox_wait(SB(rt), status);
}

static void ns_kill(struct berth_rt *rt)
{
	berth_sandbox_kill(SB(rt));
}

static void ns_free(struct berth_rt *rt)
{
	berth_sandbox_free(SB(rt));
}

static void ns_enforced(const struct berth_rt *rt, struct berth_enforced *e)
{
	berth_sandbox_enforced(SB(rt), e);
}

static const struct berth_measure *ns_measure(const struct berth_rt *rt)
{
	return berth_sandbox_measure(SB(rt));
}

static int ns_pty_master(const struct berth_rt *rt)
{
	return berth_sandbox_pty_master(SB(rt));
}

static const char *ns_run_id(const struct berth_rt *rt)
{
	return berth_sandbox_run_id(SB(rt));
}

const struct berth_runtime_ops berth_runtime_namespace = {
    .name = "namespace",
    .check = ns_check,
    .run = berth_sandbox_run,
    .start = ns_start,
    .pidfd = ns_pidfd,
    .wait = ns_wait,
    .kill = ns_kill,
    .free = ns_free,
    .enforced = ns_enforced,
    .measure = ns_measure,
    .pty_master = ns_pty_master,
    .run_id = ns_run_id,
};
