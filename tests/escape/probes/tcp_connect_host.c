/*
 * tcp_connect_host - connect to the runner's TCP listener on the host's
 * 127.0.0.1:PORT (argv[1]).  With --network none the sandbox has its own
 * network namespace (whose loopback would say ECONNREFUSED) and Landlock
 * (ABI >= 4) denies LANDLOCK_ACCESS_NET_CONNECT_TCP in the socket_connect
 * hook, before the connection is attempted: EACCES.  IPv6 ::1 likewise.
 * The runner checks that the host listener saw no connection.
 * Expected: EACCES.
 */
#define PROBE_NAME "tcp_connect_host"
#include "probe.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

int main(int argc, char **argv)
{
	int port = atoi(need_arg(argc, argv, 1, "port"));
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		fail("socket(AF_INET, SOCK_STREAM): %s (precondition)", errname(errno));
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int r = connect(s, (struct sockaddr *)&a, sizeof a);
	int e = errno;
	if (r == 0)
		(void)!write(s, "berth-escape\n", 13);
	expect_err("connect(127.0.0.1:PORT)", r, e, EACCES);
	int s6 = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s6 >= 0) {
		struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port)};
		a6.sin6_addr = in6addr_loopback;
		r = connect(s6, (struct sockaddr *)&a6, sizeof a6);
		e = errno;
		expect_err("connect([::1]:PORT)", r, e, EACCES);
	}
	pass("TCP connect to 127.0.0.1:%d refused with EACCES", port);
}
