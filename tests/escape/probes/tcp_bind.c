/*
 * tcp_bind - bind a TCP server socket (127.0.0.1:PORT and 0.0.0.0:PORT+1,
 * PORT from argv[1]).  Landlock (ABI >= 4) denies
 * LANDLOCK_ACCESS_NET_BIND_TCP in the socket_bind hook: EACCES.
 * Expected: EACCES.
 */
#define PROBE_NAME "tcp_bind"
#include "probe.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

int main(int argc, char **argv)
{
	int port = atoi(need_arg(argc, argv, 1, "port"));
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		fail("socket: %s (precondition)", errname(errno));
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int r = bind(s, (struct sockaddr *)&a, sizeof a);
	int e = errno;
	expect_err("bind(127.0.0.1:PORT)", r, e, EACCES);
	a.sin_addr.s_addr = htonl(INADDR_ANY);
	a.sin_port = htons((uint16_t)(port + 1));
	r = bind(s, (struct sockaddr *)&a, sizeof a);
	e = errno;
	expect_err("bind(0.0.0.0:PORT+1)", r, e, EACCES);
	pass("TCP bind refused with EACCES");
}
