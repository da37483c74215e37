/*
 * guard_vscode_create - create .vscode/tasks.json (a task with
 * "runOn": "folderOpen" runs on the host) in a workspace that has no .vscode
 * directory.  The guard covers .vscode/ even when absent: the directory
 * cannot be created writable and the file cannot be created.  The runner
 * checks on the host that neither .vscode/tasks.json appeared nor anything
 * else under .vscode.  Expected: creating tasks.json fails with EROFS
 * (read-only placeholder mount); mkdir(.vscode) fails (EEXIST when the
 * placeholder is there, else EROFS).
 */
#define PROBE_NAME "guard_vscode_create"
#include "probe.h"
#include <fcntl.h>
#include <sys/stat.h>

int main(void)
{
	int r = mkdir("/workspace/.vscode", 0755);
	int me = errno;
	if (r == 0)
		fail("mkdir(/workspace/.vscode) succeeded");
	const char *p = "/workspace/.vscode/tasks.json";
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int e = errno;
	if (fd >= 0)
		close(fd);
	expect_err("open(.vscode/tasks.json, O_CREAT)", fd, e, EROFS);
	if (me != EEXIST && me != EROFS)
		fail("mkdir(.vscode) failed with %s, expected EEXIST or EROFS", errname(me));
	pass(".vscode/tasks.json creation refused with EROFS (mkdir .vscode: %s)", errname(me));
}
