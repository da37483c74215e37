/*
 * raw_socket - socket(AF_INET, SOCK_RAW, IPPROTO_ICMP) and SOCK_RAW
 * IPPROTO_RAW: need CAP_NET_RAW in the network namespace's user namespace,
 * which the sandbox process does not have: EPERM.  Expected: EPERM.
 */
#define PROBE_NAME "raw_socket"
#include "probe.h"
#include <netinet/in.h>
#include <sys/socket.h>

int main(void)
{
	int s = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
	int e = errno;
	expect_err("socket(AF_INET, SOCK_RAW, ICMP)", s, e, EPERM);
	s = socket(AF_INET6, SOCK_RAW, IPPROTO_RAW);
	e = errno;
	expect_err("socket(AF_INET6, SOCK_RAW, RAW)", s, e, EPERM);
	pass("raw IP sockets refused with EPERM");
}
