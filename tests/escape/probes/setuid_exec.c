/*
 * setuid_exec - gain root through a set-user-ID-root executable.  Candidates
 * (argv[1..]) are the host's setuid-root programs (/usr/bin/passwd, su,
 * mount...) and, when the runner runs as root, a setuid-root copy of
 * /bin/true it planted in the workspace.  Each is executed in a child (stdin
 * /dev/null, output discarded); once the exec has happened (close-on-exec
 * pipe reaches EOF) and before the child is reaped, /proc/<child>/status is
 * read: its real, effective, saved and fs uids must all still be ours.  All
 * mounts are nosuid, NO_NEW_PRIVS is set and host root is not mapped, so the
 * set-user-ID bit is ignored.  At least one candidate must be present with
 * its S_ISUID bit visible, else the probe fails (cannot test).
 * Expected: uids unchanged for every candidate.
 */
#define PROBE_NAME "setuid_exec"
#include "probe.h"
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

int main(int argc, char **argv)
{
	uid_t me = getuid();
	char want[128];
	snprintf(want, sizeof want, "%u\t%u\t%u\t%u", me, me, me, me);
	int tested = 0;
	char list[1024] = "";
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0 || !(st.st_mode & S_ISUID))
			continue;
		int pfd[2];
		if (pipe2(pfd, O_CLOEXEC) != 0)
			fail("pipe2: %s", errname(errno));
		pid_t c = fork();
		if (c < 0)
			fail("fork: %s", errname(errno));
		if (c == 0) {
			close(pfd[0]);
			int n = open("/dev/null", O_RDWR);
			if (n >= 0) {
				dup2(n, 0);
				dup2(n, 1);
				dup2(n, 2);
			}
			char *const av[] = {argv[i], "--help", NULL};
			execv(argv[i], av);
			int e = errno;
			(void)!write(pfd[1], &e, sizeof e);
			_exit(127);
		}
		close(pfd[1]);
		int e = 0;
		ssize_t n = read(pfd[0], &e, sizeof e);
		close(pfd[0]);
		if (n == (ssize_t)sizeof e) {
			waitpid(c, NULL, 0);
			fail("exec %s failed: %s (cannot test)", argv[i], errname(e));
		}
		char path[64], uids[128] = "", euid_line[128] = "";
		snprintf(path, sizeof path, "/proc/%d/status", (int)c);
		int r = status_field(path, "Uid", uids, sizeof uids);
		kill(c, SIGKILL);
		waitpid(c, NULL, 0);
		if (r != 0)
			fail("cannot read %s after exec of %s", path, argv[i]);
		snprintf(euid_line, sizeof euid_line, "%s", uids);
		if (strcmp(euid_line, want) != 0)
			fail("after exec of setuid %s (owner %u) the uids are [%s], expected [%s]", argv[i],
			     st.st_uid, uids, want);
		tested++;
		size_t l = strlen(list);
		snprintf(list + l, sizeof list - l, "%s%s", l ? " " : "", argv[i]);
	}
	if (!tested)
		fail("no setuid candidate found among %d paths: cannot test", argc - 1);
	pass("set-user-ID ignored for %d binaries (%s): uids stayed %u", tested, list, me);
}
