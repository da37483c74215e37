/*
 * udp_host - send a UDP datagram to the runner's UDP socket on the host's
 * 127.0.0.1:PORT (argv[1]).  Landlock does not cover UDP, so the send itself
 * succeeds: it goes to the sandbox's own loopback (its own network
 * namespace), where nothing listens.  The refusal is checked by the runner:
 * the host socket must receive nothing.  Expected: sendto() returns the
 * length (delivered to the sandbox's loopback only).
 */
#define PROBE_NAME "udp_host"
#include "probe.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

int main(int argc, char **argv)
{
	int port = atoi(need_arg(argc, argv, 1, "port"));
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		fail("socket(AF_INET, SOCK_DGRAM): %s (precondition)", errname(errno));
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	const char msg[] = "berth-escape-udp";
	ssize_t n = sendto(s, msg, sizeof msg - 1, 0, (struct sockaddr *)&a, sizeof a);
	if (n != (ssize_t)(sizeof msg - 1))
		fail("sendto(127.0.0.1:%d) returned %zd (%s), expected %zu on the sandbox loopback", port, n,
		     errname(errno), sizeof msg - 1);
	pass("UDP datagram to 127.0.0.1:%d stayed in the sandbox's network namespace (runner checks the host "
	     "saw nothing)",
	     port);
}
