/* SPDX-License-Identifier: MIT */
/*
 * trustknown.c - the known set of a guarded root (guard.h, `known`): the
 * directories (device and inode) that were repositories or trust names when
 * an earlier run there ended.  The exit walk (trustscan.c) asks it whether
 * such a directory is new under its name (renamed into place during this
 * run: all it holds counts as changed) and tells it which known ones now
 * sit under a harmless name (demoted); the set is then saved for the next
 * run, under a lock, only growing.
 */
#include "trustscan_int.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../util/buf.h"
#include "../util/cleanup.h"
#include "../util/rundir.h"
#include "../util/sys.h"

#define KNOWN_MAX 200000

static int devino_cmp(const void *a, const void *b)
{
	const struct devino *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* Append @k to the vector *@v (KNOWN_MAX at most: the rest is dropped);
 * false when out of memory (@sc->oom). */
static bool push_devino(struct scan *sc, struct devino **v, size_t *n, size_t *cap, struct devino k)
{
	if (*n >= KNOWN_MAX)
		return true;
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 256;
		struct devino *nv = realloc(*v, c * sizeof *nv);
		if (nv == NULL) {
			sc->oom = true;
			return false;
		}
		*v = nv;
		*cap = c;
	}
	(*v)[(*n)++] = k;
	return true;
}

/* The directory @st is neither a repository nor a trust name here: if it
 * was one when an earlier run ended, it is not any more (what it holds may
 * change under this harmless name, and come back). */
void berth_ts_demote(struct scan *sc, const struct stat *st)
{
	struct devino k = {(unsigned long long)st->st_dev, (unsigned long long)st->st_ino};

	if (sc->n_known > 0 && bsearch(&k, sc->known, sc->n_known, sizeof k, devino_cmp) != NULL)
		push_devino(sc, &sc->demoted, &sc->n_demoted, &sc->cap_demoted, k);
}

/* Record the directory @st as a repository or trust name seen now; true
 * when it was not one when the last run here ended and changed since: it
 * was renamed into place (or made) in this run, so what it holds, however
 * old, is new under this name. */
bool berth_ts_appeared(struct scan *sc, const struct stat *st)
{
	struct devino k = {(unsigned long long)st->st_dev, (unsigned long long)st->st_ino};

	if (!push_devino(sc, &sc->seen, &sc->n_seen, &sc->cap_seen, k))
		return true;
	if (!sc->have_known || !berth_ts_changed_since(st, &sc->since))
		return false;
	return sc->n_known == 0 || bsearch(&k, sc->known, sc->n_known, sizeof k, devino_cmp) == NULL;
}

/* The known set of @path into @sc (absent: none, and nothing is forced). */
void berth_ts_load_known(struct scan *sc, const char *path)
{
	struct open_how how = {.flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS};
	int fd;
	FILE *f;
	unsigned long long d, i;

	free(sc->known);
	sc->known = NULL;
	sc->n_known = 0;
	sc->have_known = false;
	if (path == NULL)
		return;
	fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
	if (fd < 0 || (f = fdopen(fd, "r")) == NULL) {
		if (fd >= 0)
			close(fd);
		return;
	}
	sc->have_known = true;
	while (sc->n_known < KNOWN_MAX && fscanf(f, "%llu %llu\n", &d, &i) == 2) {
		if ((sc->n_known & (sc->n_known - 1)) == 0) {
			struct devino *v =
			    realloc(sc->known, (sc->n_known ? sc->n_known * 2 : 1) * sizeof *v);
			if (v == NULL)
				break;
			sc->known = v;
		}
		sc->known[sc->n_known++] = (struct devino){d, i};
	}
	fclose(f);
	if (sc->n_known > 0)
		qsort(sc->known, sc->n_known, sizeof *sc->known, devino_cmp);
}

/* Add what was seen to @path, under an flock(2) of PATH.lock so that two
 * runs ending together both land: the file as it is now, plus what this
 * scan saw, into a temporary file renamed over it.  The set only grows
 * (to KNOWN_MAX): a directory that is gone costs a line; one that is
 * missing from it is only ever treated as new, the safe side.  The
 * directories on the way are made 0700. */
void berth_ts_save_known(struct scan *sc, const char *path)
{
	char lock[PATH_MAX + 8];
	cleanup_close int lfd = -1;
	struct berth_buf out = {0};
	struct berth_error err = {0};

	if (path == NULL || sc->oom)
		return;
	(void)berth_mkdir_parents(path, 0700, &err); /* a failure shows at the open */
	snprintf(lock, sizeof lock, "%s.lock", path);
	lfd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (lfd < 0 || flock(lfd, LOCK_EX) < 0)
		return;
	if (sc->n_seen > 0)
		qsort(sc->seen, sc->n_seen, sizeof *sc->seen, devino_cmp);
	size_t u = 0;
	for (size_t i = 0; i < sc->n_seen; i++)
		if (u == 0 || devino_cmp(&sc->seen[i], &sc->seen[u - 1]) != 0)
			sc->seen[u++] = sc->seen[i];
	sc->n_seen = u;
	berth_ts_load_known(sc, path); /* as it is now, with what others added */
	bool news = !sc->have_known || sc->n_demoted > 0;
	for (size_t i = 0; i < sc->n_seen && !news; i++)
		news = sc->n_known == 0 ||
		       bsearch(&sc->seen[i], sc->known, sc->n_known, sizeof *sc->known, devino_cmp) == NULL;
	if (!news)
		return; /* the usual end of a run: nothing berth has not seen before */
	if (sc->n_demoted > 0)
		qsort(sc->demoted, sc->n_demoted, sizeof *sc->demoted, devino_cmp);
	size_t n = 0;
	for (size_t i = 0; i < sc->n_seen && n < KNOWN_MAX; i++, n++)
		berth_buf_putf(&out, "%llu %llu\n", sc->seen[i].dev, sc->seen[i].ino);
	for (size_t i = 0; i < sc->n_known && n < KNOWN_MAX; i++)
		if ((sc->n_seen == 0 ||
		     bsearch(&sc->known[i], sc->seen, sc->n_seen, sizeof *sc->seen, devino_cmp) == NULL) &&
		    (sc->n_demoted == 0 || bsearch(&sc->known[i], sc->demoted, sc->n_demoted,
						   sizeof *sc->demoted, devino_cmp) == NULL)) {
			berth_buf_putf(&out, "%llu %llu\n", sc->known[i].dev, sc->known[i].ino);
			n++;
		}
	/* No fsync(2): a set lost to a crash only makes the next run treat
	 * these directories as berth's first sight of them. */
	if (!out.oom)
		(void)berth_write_atomic(path, out.p != NULL ? out.p : "", out.len, 0600, 0, &err);
	berth_buf_free(&out);
}
