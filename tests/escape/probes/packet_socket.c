/*
 * packet_socket - socket(AF_PACKET, SOCK_RAW, ETH_P_ALL): needs CAP_NET_RAW:
 * EPERM (a filter on the family would also say EPERM).  Expected: EPERM.
 */
#define PROBE_NAME "packet_socket"
#include "probe.h"
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <sys/socket.h>

int main(void)
{
	int s = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	int e = errno;
	expect_err("socket(AF_PACKET, SOCK_RAW)", s, e, EPERM);
	s = socket(AF_PACKET, SOCK_DGRAM, htons(ETH_P_ALL));
	e = errno;
	expect_err("socket(AF_PACKET, SOCK_DGRAM)", s, e, EPERM);
	pass("AF_PACKET sockets refused with EPERM");
}
