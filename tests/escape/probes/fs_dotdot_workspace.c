/*
 * fs_dotdot_workspace - escape the workspace with "..": create
 * /workspace/../berth-escape-probe through a directory fd of /workspace.
 * ".." of the workspace mount's root is the sandbox's / (read-only), never
 * the host directory containing the workspace.  Expected: EROFS (EACCES
 * accepted, as for fs_create_root).
 */
#define PROBE_NAME "fs_dotdot_workspace"
#include "probe.h"
#include <fcntl.h>

int main(void)
{
	int dfd = open("/workspace", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		fail("open(/workspace): %s", errname(errno));
	int fd = openat(dfd, "../berth-escape-probe", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	int e = errno;
	expect_err2("openat(/workspace, ../berth-escape-probe, O_CREAT)", fd, e, EROFS, EACCES);
	fd = openat(dfd, "../../../../berth-escape-probe", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	e = errno;
	expect_err2("openat(/workspace, ../../../../berth-escape-probe, O_CREAT)", fd, e, EROFS, EACCES);
	pass("creating through /workspace/.. refused with %s", errname(e));
}
