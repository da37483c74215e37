/*
 * guard_vscode_create - create .vscode/tasks.json (a task with
 * "runOn": "folderOpen" runs on the host) in a workspace that has no .vscode
 * directory.  The guard covers .vscode/ even when absent with a read-only
 * mode-0000 FIFO placeholder: mkdir(.vscode) finds the name taken (EEXIST)
 * and nothing can be created below it (ENOTDIR).  The runner checks on the
 * host that no .vscode is left after the run.
 * Expected: mkdir EEXIST, open(.vscode/tasks.json, O_CREAT) ENOTDIR.
 */
#define PROBE_NAME "guard_vscode_create"
#include "probe.h"
#include <fcntl.h>
#include <sys/stat.h>

int main(void)
{
	int r = mkdir("/workspace/.vscode", 0755);
	int e = errno;
	expect_err("mkdir(.vscode)", r, e, EEXIST);
	const char *p = "/workspace/.vscode/tasks.json";
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	e = errno;
	if (fd >= 0)
		close(fd);
	expect_err("open(.vscode/tasks.json, O_CREAT)", fd, e, ENOTDIR);
	pass(".vscode refused: mkdir EEXIST, tasks.json below the placeholder ENOTDIR");
}
