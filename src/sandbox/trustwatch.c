/* SPDX-License-Identifier: MIT */
/*
 * trustwatch.c - during the run, for the janitor: an inotify(7) watch on
 * the git directories that lacked a commondir, config or config.worktree
 * when the run started, and what appears there set aside at once by the
 * exit scan's rules (trustscan.h).
 */
#include "trustscan_int.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "gitrules.h"

/* What appears in a watched git directory: set aside when git would take
 * it (a commondir naming another repository, a config with a key that runs
 * a program), the way the exit scan decides.  hooks/ is not watched: a
 * hooks directory holds nothing until a hook is written, and the exit scan
 * sets aside each hook in it. */
static const struct {
	const char *name;
	unsigned bit;
} watched[] = {
    {"commondir", BERTH_GUARD_MISSING_COMMONDIR},
    {"config.worktree", BERTH_GUARD_MISSING_WORKTREE_CONFIG},
    {"config", BERTH_GUARD_MISSING_CONFIG},
};

int berth_trust_watch(const struct berth_guard *g, int wds[BERTH_GUARD_ROOTS])
{
	int fd = -1, n = 0;

	for (int i = 0; i < BERTH_GUARD_ROOTS; i++)
		wds[i] = -1;
	for (int i = 0; i < g->n_roots; i++) {
		if (g->roots[i].gitdir == NULL ||
		    (g->roots[i].missing &
		     (BERTH_GUARD_MISSING_COMMONDIR | BERTH_GUARD_MISSING_WORKTREE_CONFIG |
		      BERTH_GUARD_MISSING_CONFIG)) == 0)
			continue;
		if (fd < 0 && (fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) < 0)
			return -1;
		wds[i] = inotify_add_watch(fd, g->roots[i].gitdir,
					   IN_CREATE | IN_MOVED_TO | IN_MODIFY | IN_CLOSE_WRITE | IN_ONLYDIR |
					       IN_DONT_FOLLOW);
		if (wds[i] >= 0)
			n++;
	}
	if (fd >= 0 && n == 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

void berth_trust_watch_events(int fd, const int wds[BERTH_GUARD_ROOTS], const struct berth_policy *p,
			      const struct berth_guard *g, struct berth_trust_report *out)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	struct scan sc = {.p = p, .g = g, .out = out};
	ssize_t n;

	while ((n = read(fd, buf, sizeof buf)) > 0) {
		for (char *q = buf; q < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)q;
			q += sizeof *ev + ev->len;
			if (ev->len == 0)
				continue;
			for (int i = 0; i < g->n_roots; i++) {
				if (wds[i] != ev->wd)
					continue;
				for (size_t k = 0; k < sizeof watched / sizeof watched[0]; k++) {
					if (!(g->roots[i].missing & watched[k].bit) ||
					    strcmp(ev->name, watched[k].name) != 0)
						continue;
					struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
							       .resolve = RESOLVE_NO_SYMLINKS};
					cleanup_close int dfd = (int)syscall(
					    SYS_openat2, AT_FDCWD, g->roots[i].gitdir, &how, sizeof how);
					if (dfd < 0)
						continue;
					sc.root = g->roots[i].gitdir;
					if (watched[k].bit == BERTH_GUARD_MISSING_COMMONDIR) {
						if (!berth_git_commondir_ok(dfd))
							berth_ts_set_aside(
							    &sc, dfd, "", ev->name,
							    "it would send the host's git to the config and "
							    "hooks of another directory");
					} else {
						bool changed = false;
						sc.force = true; /* absent at the start: all of it is new */
						berth_ts_check_config(&sc, dfd, "", ev->name, &changed);
						sc.force = false;
					}
				}
				break; /* one git directory may be the repository of two roots */
			}
		}
	}
}
