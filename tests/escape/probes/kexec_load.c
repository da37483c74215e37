/*
 * kexec_load - replace the running kernel: kexec_load and kexec_file_load
 * (KEXEC_FILE_UNLOAD, harmless even if allowed).  CAP_SYS_BOOT in the initial
 * user namespace is checked first (and seccomp denies them): EPERM.
 * Expected: EPERM.
 */
#define PROBE_NAME "kexec_load"
#include "probe.h"
#include <sys/syscall.h>

#define B_KEXEC_FILE_UNLOAD 1

int main(void)
{
	long r = syscall(SYS_kexec_load, 0UL, 0UL, NULL, 0UL);
	int e = errno;
	expect_err("kexec_load", r, e, EPERM);
	r = syscall(SYS_kexec_file_load, -1, -1, 0UL, "", (unsigned long)B_KEXEC_FILE_UNLOAD);
	e = errno;
	expect_err("kexec_file_load(UNLOAD)", r, e, EPERM);
	pass("kexec_load and kexec_file_load refused with EPERM");
}
