/* SPDX-License-Identifier: MIT */
/*
 * exec.c - host tools for the microVM code (exec.h).
 */
#include "exec.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/sys.h"

extern char **environ;

/* The Debian package that ships a tool, for the hint. */
static const char *package_of(const char *tool)
{
	static const struct {
		const char *tool, *pkg;
	} t[] = {
	    {"apt-get", "apt"},
	    {"dpkg-deb", "dpkg"},
	    {"qemu-system-x86_64", "qemu-system-x86"},
	};
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(t); i++)
		if (strcmp(tool, t[i].tool) == 0)
			return t[i].pkg;
	return NULL;
}

bool berth_vm_find_tool(const char *name, char *buf, size_t len)
{
	const char *path = getenv("PATH");
	struct stat st;

	if (path == NULL || *path == '\0')
		path = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin";
	for (const char *p = path; *p != '\0';) {
		size_t n = strcspn(p, ":");

		if (n > 0 && (size_t)snprintf(buf, len, "%.*s/%s", (int)n, p, name) < len &&
		    stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
			return true;
		p += n;
		if (*p == ':')
			p++;
	}
	if (len > 0)
		buf[0] = '\0';
	return false;
}

/* The child's environment: ours with @extra's names replaced. */
static char **child_env(const char *const *extra)
{
	size_t n = 0, k = 0, ne = 0;
	char **env;

	while (environ[n] != NULL)
		n++;
	while (extra != NULL && extra[ne] != NULL)
		ne++;
	env = calloc(n + ne + 1, sizeof *env);
	if (env == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		bool replaced = false;
		for (size_t j = 0; j < ne && !replaced; j++) {
			size_t nl = strcspn(extra[j], "=");
			replaced = strncmp(environ[i], extra[j], nl) == 0 && environ[i][nl] == '=';
		}
		if (!replaced)
			env[k++] = environ[i];
	}
	for (size_t j = 0; j < ne; j++)
		env[k++] = (char *)extra[j];
	env[k] = NULL;
	return env;
}

static void child(const struct berth_vm_cmd *c, char **env, const char *tool, int report)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	int e;

	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	signal(SIGPIPE, SIG_DFL);
	if (null < 0 || dup2(null, 0) < 0 || dup2(c->out_fd >= 0 ? c->out_fd : null, 1) < 0 ||
	    dup2(c->err_fd >= 0 ? c->err_fd : null, 2) < 0 || (c->cwd != NULL && chdir(c->cwd) < 0)) {
		e = errno;
		(void)!write(report, &e, sizeof e);
		_exit(127);
	}
	berth_close_all_but(report, -1);
	execve(tool, (char *const *)c->argv, env);
	e = errno;
	(void)!write(report, &e, sizeof e);
	_exit(127);
}

/* Wait for @pid until @deadline_ms (CLOCK_MONOTONIC; 0: none).  0, or 1 on timeout. */
static int wait_child(pid_t pid, int64_t deadline_ms, int *wstatus)
{
	cleanup_close int pfd = (int)syscall(SYS_pidfd_open, pid, 0);

	for (;;) {
		pid_t r = waitpid(pid, wstatus, WNOHANG);
		int64_t left;

		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -1;
		left = deadline_ms > 0 ? deadline_ms - berth_now_ms() : 1000;
		if (left <= 0)
			return 1;
		if (pfd >= 0) {
			struct pollfd p = {.fd = pfd, .events = POLLIN};
			poll(&p, 1, left > 1000 ? 1000 : (int)left);
		} else {
			nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
		}
	}
}

int berth_vm_exec(const struct berth_vm_cmd *c, int *wstatus, long *elapsed_ms, struct berth_error *err)
{
	cleanup_free char **env = NULL;
	char tool[PATH_MAX];
	int report[2], e = 0, r;
	int64_t start = berth_now_ms();
	pid_t pid;
	ssize_t got;

	if (strchr(c->argv[0], '/') != NULL)
		snprintf(tool, sizeof tool, "%s", c->argv[0]);
	else if (!berth_vm_find_tool(c->argv[0], tool, sizeof tool)) {
		const char *pkg = package_of(c->argv[0]);
		berth_err(err, ENOENT, "`%s` not found", c->argv[0]);
		return pkg != NULL ? berth_err_hint(err, "apt-get install --no-install-recommends %s", pkg)
				   : -1;
	}
	env = child_env(c->env);
	if (env == NULL)
		return berth_err(err, ENOMEM, "cannot run `%s`", c->argv[0]);
	if (pipe2(report, O_CLOEXEC) < 0)
		return berth_err(err, errno, "cannot run `%s`", c->argv[0]);
	pid = fork();
	if (pid < 0) {
		e = errno;
		close(report[0]);
		close(report[1]);
		return berth_err(err, e, "cannot run `%s`", c->argv[0]);
	}
	if (pid == 0)
		child(c, env, tool, report[1]);
	close(report[1]);
	/* EOF: execve succeeded (the pipe is close-on-exec); else its errno. */
	do
		got = read(report[0], &e, sizeof e);
	while (got < 0 && errno == EINTR);
	close(report[0]);
	r = wait_child(pid, c->timeout_ms > 0 ? start + c->timeout_ms : 0, wstatus);
	if (r == 1) {
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
		while (waitpid(pid, wstatus, 0) < 0 && errno == EINTR)
			;
	} else if (r < 0) {
		e = errno;
		kill(-pid, SIGKILL);
		return berth_err(err, e, "cannot wait for `%s`", c->argv[0]);
	}
	if (elapsed_ms != NULL)
		*elapsed_ms = (long)(berth_now_ms() - start);
	if (got == (ssize_t)sizeof e)
		return berth_err(err, e, "cannot run `%s`", tool);
	return r;
}

char *berth_vm_status_text(int wstatus, char *buf, size_t len)
{
	if (WIFEXITED(wstatus))
		snprintf(buf, len, "exit status %d", WEXITSTATUS(wstatus));
	else if (WIFSIGNALED(wstatus))
		snprintf(buf, len, "killed by signal SIG%s",
			 sigabbrev_np(WTERMSIG(wstatus)) != NULL ? sigabbrev_np(WTERMSIG(wstatus)) : "?");
	else
		snprintf(buf, len, "wait status 0x%x", (unsigned)wstatus);
	return buf;
}

char *berth_vm_log_line(int fd, bool first, char *buf, size_t len)
{
	char text[65536];
	off_t size = lseek(fd, 0, SEEK_END);
	off_t from = size > (off_t)sizeof text - 1 ? size - (off_t)sizeof text + 1 : 0;
	ssize_t n = size >= 0 ? pread(fd, text, sizeof text - 1, from) : -1;
	char *line = NULL;

	if (len > 0)
		buf[0] = '\0';
	if (n <= 0 || len == 0)
		return buf;
	text[n] = '\0';
	for (char *p = text, *save = NULL, *l; (l = strtok_r(p, "\n", &save)) != NULL; p = NULL) {
		if (l[strspn(l, " \t\r")] == '\0')
			continue;
		line = l;
		if (first)
			break;
	}
	if (line == NULL)
		return buf;
	snprintf(buf, len, "%s", line);
	for (char *p = buf; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return buf;
}

int berth_vm_qemu_opt(char *buf, size_t len, const char *prefix, const char *value)
{
	size_t k = (size_t)snprintf(buf, len, "%s", prefix);

	for (const char *c = value; k < len && *c != '\0'; c++) {
		if (*c == ',' && k + 1 < len)
			buf[k++] = ',';
		buf[k++] = *c;
	}
	if (k >= len) {
		if (len > 0)
			buf[0] = '\0';
		return -1;
	}
	buf[k] = '\0';
	return 0;
}
