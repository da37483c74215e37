/*
 * fsopen_mount - the new mount API: fsopen("tmpfs") and
 * open_tree(OPEN_TREE_CLONE) of /etc (a detached, possibly writable copy).
 * Both need CAP_SYS_ADMIN (and are denied by seccomp): EPERM.
 * Raw syscall numbers (x86_64: open_tree 428, fsopen 430).
 * Expected: EPERM for both.
 */
#define PROBE_NAME "fsopen_mount"
#include "probe.h"
#include <fcntl.h>
#include <sys/syscall.h>

#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#ifndef SYS_fsopen
#define SYS_fsopen 430
#endif
#define B_OPEN_TREE_CLONE 1
#define B_FSOPEN_CLOEXEC 1

int main(void)
{
	long r = syscall(SYS_fsopen, "tmpfs", B_FSOPEN_CLOEXEC);
	int e = errno;
	expect_err("fsopen(tmpfs)", r, e, EPERM);
	r = syscall(SYS_open_tree, AT_FDCWD, "/etc", B_OPEN_TREE_CLONE | O_CLOEXEC);
	e = errno;
	expect_err("open_tree(/etc, OPEN_TREE_CLONE)", r, e, EPERM);
	pass("fsopen and open_tree(OPEN_TREE_CLONE) refused with EPERM");
}
