/* SPDX-License-Identifier: MIT */
/*
 * trustrepair.c - the end-of-run trust scan (trustscan.h) for a run whose
 * berth AND janitor were both killed (a whole process group or cgroup
 * killed, the OOM killer): the run journal (util/journal.h) names the
 * writable roots, the policy's trust lists and the guard's start time, and
 * the next berth's repair (src/supervisor/orphans.c) scans as the janitor
 * would have.
 */
#include "trustscan.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/journal.h"

/* One journal line, its value with '%' and '\n' as %25 and %0a (a path may
 * hold a newline; a journal line may not). */
static int note(const struct berth_journal *j, const char *kind, const char *v, struct berth_error *err)
{
	char out[3 * PATH_MAX + 1];
	size_t o = 0;

	for (; *v != '\0'; v++) {
		if (o + 4 > sizeof out)
			return berth_usage_err(err, "a trust-scan value is too long for the run journal");
		if (*v == '%' || *v == '\n')
			o += (size_t)snprintf(out + o, sizeof out - o, "%%%02x", (unsigned char)*v);
		else
			out[o++] = *v;
	}
	out[o] = '\0';
	return berth_journal_note(j, kind, out, err);
}

static int note_list(const struct berth_journal *j, const char *kind, char *const *v, size_t n,
		     struct berth_error *err)
{
	for (size_t i = 0; i < n; i++)
		if (note(j, kind, v[i], err) < 0)
			return -1;
	return 0;
}

int berth_trust_unescape(char *s)
{
	char *o = s;

	for (const char *c = s; *c != '\0'; c++) {
		if (*c != '%') {
			*o++ = *c;
			continue;
		}
		if (strncmp(c, "%25", 3) == 0)
			*o++ = '%';
		else if (strncmp(c, "%0a", 3) == 0)
			*o++ = '\n';
		else
			return -1;
		c += 2;
	}
	*o = '\0';
	return 0;
}

int berth_trust_journal(const struct berth_journal *j, const struct berth_policy *p,
			const struct berth_guard *g, struct berth_error *err)
{
	char start[48];

	if (j == NULL || j->fd < 0)
		return 0;
	if (note_list(j, "trust-unprotect", p->unprotect, p->n_unprotect, err) < 0 ||
	    note_list(j, "trust-ro", p->guard_ro, p->n_guard_ro, err) < 0 ||
	    note_list(j, "trust-named", p->guard_named, p->n_guard_named, err) < 0)
		return -1;
	/* Each root's kept HEAD after it: the scan puts it back when the run
	 * left one git does not take (as the janitor does, from memory). */
	for (int i = 0; i < g->n_roots; i++)
		if (note(j, "trust-root", g->roots[i].host, err) < 0 ||
		    (g->roots[i].head != NULL && note(j, "trust-head", g->roots[i].head, err) < 0))
			return -1;
	/* Last: a journal with its start names every root before it. */
	snprintf(start, sizeof start, "%lld.%09ld", (long long)g->started.tv_sec, g->started.tv_nsec);
	return berth_journal_note(j, "trust-start", start, err);
}

int berth_trust_parse_start(const char *text, struct timespec *out)
{
	char *end;
	long long sec;
	long nsec;

	errno = 0;
	sec = strtoll(text, &end, 10);
	if (errno != 0 || end == text || *end != '.' || sec <= 0 || strlen(end + 1) != 9)
		return -1;
	for (const char *c = end + 1; *c; c++)
		if (*c < '0' || *c > '9')
			return -1;
	nsec = strtol(end + 1, NULL, 10);
	out->tv_sec = (time_t)sec;
	out->tv_nsec = nsec;
	return 0;
}

int berth_trust_repair(const struct berth_trust_journaled *in, struct berth_trust_report *out,
		       struct berth_error *err)
{
	struct berth_policy p = {0};
	struct berth_mount mounts[BERTH_GUARD_ROOTS];
	struct berth_guard g;
	bool short_watch;
	int r;

	memset(out, 0, sizeof *out);
	if (in->n_roots < 1 || in->n_roots > BERTH_GUARD_ROOTS)
		return berth_usage_err(err, "a run journal names %d writable roots (1 to %d)", in->n_roots,
				       BERTH_GUARD_ROOTS);
	/* The roots as a policy's (guard.c: the workspace first, then each
	 * --rw directory): the guard read again finds each root's repository,
	 * includes and hooks directory as they are now. */
	p.workspace = (char *)in->roots[0];
	for (int i = 1; i < in->n_roots; i++)
		mounts[i - 1] = (struct berth_mount){
		    .src = (char *)in->roots[i], .dst = (char *)in->roots[i], .rw = true};
	p.mounts = mounts;
	p.n_mounts = (size_t)in->n_roots - 1;
	p.unprotect = in->unprotect;
	p.n_unprotect = in->n_unprotect;
	p.guard_ro = in->guard_ro;
	p.n_guard_ro = in->n_guard_ro;
	p.guard_named = in->guard_named;
	p.n_guard_named = in->n_guard_named;
	/* The guard's refusals are not the repair's: a symlink the sandbox
	 * made at a trust name refused the whole scan, and left what it
	 * planted beside it live (the janitor, prepared at the start, sets
	 * both aside). */
	if (berth_guard_prepare_scan(&p, &g, &short_watch, err) < 0)
		return -1;
	/* ... but what changed since the run's start is the run's doing, and
	 * the HEAD to put back is the start's (the one read now may be what
	 * the run broke: then none). */
	g.started = in->started;
	for (int i = 0; i < g.n_roots && i < in->n_roots; i++)
		if (in->heads[i] != NULL && strlen(in->heads[i]) <= BERTH_GUARD_HEAD_MAX &&
		    strcmp(g.roots[i].host, in->roots[i]) == 0) {
			char *h = strdup(in->heads[i]);
			if (h == NULL)
				continue;
			free(g.roots[i].head);
			g.roots[i].head = h;
		}
	r = berth_trust_scan(&p, &g, out, err);
	if (r == 0 && short_watch)
		out->incomplete = true;
	berth_guard_free(&g);
	return r;
}
