/*
 * vsock_socket - socket(AF_VSOCK): vsock is not confined by the network
 * namespace, so it reaches the hypervisor host (CID 2) even with
 * --network none.  It must not be creatable: EPERM from a seccomp filter on
 * the address family, or EAFNOSUPPORT when the kernel has no vsock transport.
 * Expected: EPERM (EAFNOSUPPORT accepted).
 */
#define PROBE_NAME "vsock_socket"
#include "probe.h"
#include <sys/socket.h>

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

int main(void)
{
	int s = socket(AF_VSOCK, SOCK_STREAM, 0);
	int e = errno;
	expect_err2("socket(AF_VSOCK, SOCK_STREAM)", s, e, EPERM, EAFNOSUPPORT);
	pass("AF_VSOCK socket refused with %s", errname(e));
}
