/*
 * proc_kcore_kmsg - read host kernel memory and the kernel log through /proc:
 * /proc/kcore and /proc/kmsg are 0400 owned by the global root (unmapped in
 * the sandbox's user namespace; no CAP_DAC_OVERRIDE): EACCES.  If the kernel
 * lacks /proc/kcore (CONFIG_PROC_KCORE=n) ENOENT is what applies, and the
 * probe checks the host's answer passed in argv[1] ("present"/"absent").
 * Expected: EACCES for both (kcore ENOENT when absent on the host).
 */
#define PROBE_NAME "proc_kcore_kmsg"
#include "probe.h"
#include <fcntl.h>

int main(int argc, char **argv)
{
	const char *kcore = need_arg(argc, argv, 1, "kcore present|absent");
	int fd = open("/proc/kcore", O_RDONLY | O_CLOEXEC);
	int e = errno;
	expect_err("open(/proc/kcore)", fd, e, strcmp(kcore, "absent") == 0 ? ENOENT : EACCES);
	fd = open("/proc/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	int e2 = errno;
	expect_err("open(/proc/kmsg)", fd, e2, EACCES);
	pass("/proc/kcore refused with %s, /proc/kmsg with EACCES", errname(e));
}
