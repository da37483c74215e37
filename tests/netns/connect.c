/* SPDX-License-Identifier: MIT */
/*
 * connect.c - a client that knows nothing of proxies, for
 * tests/integration/run-netns-egress.sh: it resolves HOST with
 * getaddrinfo(3) (or takes a literal), connects with connect(2), sends
 * DATA and prints what comes back, or the errno name of the step that
 * failed ("getaddrinfo", "connect ECONNREFUSED"), or "reset" when the
 * connection was reset (berth's broker refusing it), as a program with its
 * own networking (Go's, Rust's, a C library's) does.  A reset is one result
 * whether the send or the recv saw it: the broker resets at once, without
 * waiting for a byte, so which of the two sees it is a race.
 *
 * usage: connect HOST PORT DATA
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

static const char *ename(int e)
{
	switch (e) {
	case EACCES:
		return "EACCES";
	case ECONNREFUSED:
		return "ECONNREFUSED";
	case ECONNRESET:
		return "ECONNRESET";
	case ENETUNREACH:
		return "ENETUNREACH";
	case ETIMEDOUT:
		return "ETIMEDOUT";
	case EAGAIN:
		return "EAGAIN";
	default:
		return strerror(e);
	}
}

int main(int argc, char **argv)
{
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai;
	struct timeval tv = {.tv_sec = 5};
	char buf[4096];
	ssize_t n;
	int fd;

	if (argc != 4) {
		fprintf(stderr, "usage: connect HOST PORT DATA\n");
		return 2;
	}
	if (getaddrinfo(argv[1], argv[2], &hints, &ai) != 0) {
		puts("getaddrinfo");
		return 1;
	}
	fd = socket(ai->ai_family, SOCK_STREAM, 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
		printf("connect %s\n", ename(errno));
		return 1;
	}
	if (send(fd, argv[3], strlen(argv[3]), MSG_NOSIGNAL) < 0) {
		if (errno == ECONNRESET || errno == EPIPE)
			puts("reset");
		else
			printf("send %s\n", ename(errno));
		return 1;
	}
	n = recv(fd, buf, sizeof buf - 1, 0);
	if (n < 0) {
		if (errno == ECONNRESET)
			puts("reset");
		else
			printf("recv %s\n", ename(errno));
		return 1;
	}
	buf[n] = '\0';
	printf("%s%s", buf, n > 0 && buf[n - 1] == '\n' ? "" : "\n");
	freeaddrinfo(ai);
	close(fd);
	return 0;
}
