/* SPDX-License-Identifier: MIT */
/*
 * spawn_cleanup.c - step 15 of berth_sandbox_run() (spawn.c): the trust scan and its log,
 * then cgroups and descriptors; the janitor is told it is done.
 */

#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/wait.h>

#include "../util/text.h"
#include "../util/cleanup.h"
#include "../util/journal.h"
#include "../util/rmtree.h"
#include "trustscan.h"
#include "mounts.h"

#include "spawn_int.h"

/* ---------------------------------------------------------- 15. cleanup */

/* What the sandbox made or changed on the host's trust surface: set aside,
 * restored or named (trustscan.h). */
/* The trust log of a session (berth_runtime_opts.trust_log), opened at
 * its first line only: a run that planted nothing leaves no file. */
struct trust_log {
	const char *path;
	FILE *f;
};

static void trust_line(const struct sandbox *s, struct trust_log *log, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void trust_line(const struct sandbox *s, struct trust_log *log, const char *fmt, ...)
{
	va_list ap;
	char raw[8192], safe[sizeof raw];

	va_start(ap, fmt);
	vsnprintf(raw, sizeof raw, fmt, ap);
	va_end(ap);
	berth_sb_notice(s, "%s", raw);
	if (log->path != NULL && log->f == NULL) {
		int fd = open(log->path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 && (log->f = fdopen(fd, "a")) == NULL)
			close(fd);
		if (log->f == NULL)
			log->path = NULL;
	}
	if (log->f != NULL)
		fprintf(log->f, "berth: %s\n", berth_text_clean(safe, sizeof safe, raw));
}

/* What the janitor's watch set aside during the run: it flushes them on
 * 'F' and closes its end. */
static void janitor_watch_lines(const struct sandbox *s, struct trust_log *log)
{
	char buf[16384];
	size_t have = 0;

	if (s->janitor_fd < 0 || s->janitor_lines < 0 || berth_sb_janitor_send(s, "F", 1) != 1)
		return;
	for (;;) {
		struct pollfd p = {.fd = s->janitor_lines, .events = POLLIN};
		if (poll(&p, 1, 2000) <= 0)
			break;
		ssize_t n = read(s->janitor_lines, buf + have, sizeof buf - 1 - have);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = '\0';
		char *nl, *start = buf;
		while ((nl = strchr(start, '\n')) != NULL) {
			*nl = '\0';
			trust_line(s, log, "warning: %s", start);
			start = nl + 1;
		}
		have = strlen(start);
		memmove(buf, start, have);
		if (have == sizeof buf - 1)
			have = 0; /* a line longer than the buffer: dropped */
	}
}

static void trust_scan(const struct sandbox *s)
{
	struct berth_trust_report r;
	struct berth_error e = {0};
	struct trust_log tl = {.path = s->o->trust_log}, *log = &tl;

	janitor_watch_lines(s, log);
	int rc = berth_trust_scan(s->p, &s->guard, &r, &e);
	if (rc == 0) {
		struct berth_error ignored = {0};
		berth_journal_note(s->o->journal, "trust-done", "1", &ignored);
	}
	if (rc < 0) {
		trust_line(
		    s, log,
		    "warning: berth could not finish looking for what the sandbox planted on the host's "
		    "trust surface (%s): review `%s` before running git or an agent there",
		    e.msg, s->p->workspace);
	} else {
		for (int i = 0; i < r.n_lines; i++)
			trust_line(s, log, "warning: %s", r.lines[i]);
		if (r.n_more > 0)
			trust_line(s, log,
				   "warning: and %d more such lines (%d set aside in all: look for "
				   "`*.berth-set-aside` "
				   "in `%s`)",
				   r.n_more, r.n_set_aside, s->p->workspace);
		if (r.incomplete)
			trust_line(s, log,
				   "warning: berth could not look into every directory of `%s` (and the --rw "
				   "directories) for what the sandbox planted (at most %ld entries, %d ms, "
				   "%d levels; "
				   "unreadable or too long paths): review any `.git`, `.vscode`, `.claude`, "
				   "`.envrc` or "
				   "`.npmrc` below it before running git or an agent there",
				   s->p->workspace, BERTH_TRUST_SCAN_ENTRIES, BERTH_TRUST_SCAN_MS,
				   BERTH_TRUST_SCAN_DEPTH);
		berth_trust_report_free(&r);
	}
	if (tl.f != NULL)
		fclose(tl.f);
}

void berth_sb_cleanup(struct sandbox *s)
{
	if (s->child > 0) {
		kill(s->child, SIGKILL);
		waitpid(s->child, NULL, 0);
	}
	berth_sb_free_env(s);
	for (int i = 0; i < 2; i++)
		if (s->proxy_fd[i] >= 0)
			close(s->proxy_fd[i]);
	for (int i = 0; i < BERTH_TRANSPARENT_PORTS_MAX; i++)
		if (s->tfd[i] >= 0)
			close(s->tfd[i]);
	if (s->dns_fd >= 0)
		close(s->dns_fd);
	berth_limits_destroy(&s->lim);
	if (s->guard_ready) {
		/* A `.git` the sandbox made is named by the scan's repository line. */
		trust_scan(s);
	}
	berth_guard_free(&s->guard);
	if (s->janitor_fd >= 0) {
		(void)berth_sb_janitor_send(s, "D", 1);
		close(s->janitor_fd);
	}
	if (s->janitor_lines >= 0)
		close(s->janitor_lines);
	if (s->janitor > 0)
		waitpid(s->janitor, NULL, 0);
	if (s->ws_fd >= 0)
		close(s->ws_fd);
	if (s->root_fd >= 0)
		close(s->root_fd);
	if (s->home_fd >= 0)
		close(s->home_fd);
	if (s->sys_fd >= 0)
		close(s->sys_fd);
	if (s->evidence_fd >= 0)
		close(s->evidence_fd);
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(s->mount_fds); i++)
		if (s->mount_fds[i] >= 0)
			close(s->mount_fds[i]);
	if (s->pty_master >= 0)
		close(s->pty_master);
	if (s->sock[0] >= 0)
		close(s->sock[0]);
	if (s->sock[1] >= 0)
		close(s->sock[1]);
	if (s->pidfd >= 0)
		close(s->pidfd);
	berth_bpf_free(&s->bpf);
	berth_bpf_free(&s->cbpf);
	berth_bpf_free(&s->nbpf);
	/* What lives as long as the run (remove_at_end), once nothing of the
	 * sandbox can still use it.  Quietly: a caller that must know checks
	 * that it is gone (src/supervisor/run.c removes once more and says
	 * what stayed). */
	for (size_t i = 0; i < s->o->n_remove_at_end; i++) {
		struct berth_error e = {0};
		if (s->o->remove_at_end[i] != NULL)
			berth_rmtree(s->o->remove_at_end[i], NULL, &e);
	}
}
