/*
 * init_module - load a kernel module: init_module, finit_module and
 * delete_module.  may_init_module() checks CAP_SYS_MODULE first (and seccomp
 * denies them): EPERM.  Expected: EPERM.
 */
#define PROBE_NAME "init_module"
#include "probe.h"
#include <fcntl.h>
#include <sys/syscall.h>

int main(void)
{
	static char img[64];
	long r = syscall(SYS_init_module, img, sizeof img, "");
	int e = errno;
	expect_err("init_module", r, e, EPERM);
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	r = syscall(SYS_finit_module, fd, "", 0);
	e = errno;
	expect_err("finit_module", r, e, EPERM);
	r = syscall(SYS_delete_module, "berth_escape_nonexistent", 0);
	e = errno;
	expect_err("delete_module", r, e, EPERM);
	pass("init_module/finit_module/delete_module refused with EPERM");
}
