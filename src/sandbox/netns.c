/* SPDX-License-Identifier: MIT */
/*
 * netns.c - routes and listeners of the sandbox's network namespace under
 * --network proxy (see netns.h).
 */
#include "netns.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../policy/hostpat.h"
#include "../util/cleanup.h"

/* One RTN_LOCAL route for the whole of @family's address space on lo. */
static int local_route(int nl, int family, unsigned seq)
{
	struct {
		struct nlmsghdr nh;
		struct rtmsg rt;
		char attrs[RTA_SPACE(sizeof(int))];
	} req;
	struct rtattr *ra;
	int lo = (int)if_nametoindex("lo");
	char buf[512];
	ssize_t n;

	memset(&req, 0, sizeof req);
	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof req.rt) + RTA_SPACE(sizeof(int));
	req.nh.nlmsg_type = RTM_NEWROUTE;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK;
	req.nh.nlmsg_seq = seq;
	req.rt.rtm_family = (unsigned char)family;
	req.rt.rtm_dst_len = 0;
	req.rt.rtm_table = RT_TABLE_LOCAL;
	req.rt.rtm_protocol = RTPROT_BOOT;
	req.rt.rtm_scope = RT_SCOPE_HOST;
	req.rt.rtm_type = RTN_LOCAL;
	ra = (struct rtattr *)((char *)&req + NLMSG_ALIGN(NLMSG_LENGTH(sizeof req.rt)));
	ra->rta_type = RTA_OIF;
	ra->rta_len = RTA_LENGTH(sizeof(int));
	memcpy(RTA_DATA(ra), &lo, sizeof lo);
	if (lo == 0)
		return -ENODEV;
	if (send(nl, &req, req.nh.nlmsg_len, 0) < 0)
		return -errno;
	do
		n = recv(nl, buf, sizeof buf, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n))
		if (h->nlmsg_type == NLMSG_ERROR && h->nlmsg_seq == seq) {
			const struct nlmsgerr *e = NLMSG_DATA(h);
			return e->error;
		}
	return -EPROTO;
}

int berth_netns_local_routes(struct berth_error *err)
{
	cleanup_close int nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	int r;

	if (nl < 0)
		return berth_err(err, errno,
				 "cannot open a netlink socket in the sandbox's network namespace");
	r = local_route(nl, AF_INET, 1);
	if (r < 0)
		return berth_err(err, -r, "cannot route 0.0.0.0/0 to the sandbox's loopback");
	r = local_route(nl, AF_INET6, 2);
	if (r < 0 && r != -EAFNOSUPPORT && r != -EACCES && r != -EOPNOTSUPP)
		return berth_err(err, -r, "cannot route ::/0 to the sandbox's loopback");
	return 0;
}

/* A socket of @type on the wildcard address of @port: IPv6 dual-stack, or
 * IPv4 when the namespace has no IPv6.  Returns the fd or -errno. */
static int wildcard_socket(int type, uint16_t port)
{
	int one = 1, zero = 0, e;
	int fd = socket(AF_INET6, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd >= 0) {
		struct sockaddr_in6 s6 = {
		    .sin6_family = AF_INET6, .sin6_port = htons(port), .sin6_addr = in6addr_any};
		if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero) == 0 &&
		    (type != SOCK_STREAM ||
		     setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0) &&
		    bind(fd, (struct sockaddr *)&s6, sizeof s6) == 0)
			return fd;
		e = errno;
		close(fd);
		if (e != EADDRNOTAVAIL && e != EAFNOSUPPORT)
			return -e;
	}
	fd = socket(AF_INET, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	struct sockaddr_in s4 = {
	    .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_ANY)};
	if ((type == SOCK_STREAM && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0) ||
	    bind(fd, (struct sockaddr *)&s4, sizeof s4) < 0) {
		e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

int berth_netns_listeners(const struct berth_policy_ports *ports, int *fds, int *dns_fd,
			  struct berth_error *err)
{
	int i, fd;

	*dns_fd = -1;
	for (i = 0; i < ports->n; i++) {
		fd = wildcard_socket(SOCK_STREAM, ports->port[i]);
		if (fd >= 0 && listen(fd, 512) < 0) {
			int e = errno;
			close(fd);
			fd = -e;
		}
		if (fd < 0) {
			berth_err(err, -fd, "cannot listen on port %u of the sandbox's network namespace",
				  (unsigned)ports->port[i]);
			goto fail;
		}
		fds[i] = fd;
	}
	fd = wildcard_socket(SOCK_DGRAM, 53);
	if (fd < 0) {
		berth_err(err, -fd, "cannot make the sandbox's resolver (UDP port 53)");
		goto fail;
	}
	*dns_fd = fd;
	return 0;
fail:
	while (i-- > 0)
		close(fds[i]);
	return -1;
}
