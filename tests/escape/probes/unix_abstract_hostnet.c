/*
 * unix_abstract_hostnet - run with --network host: the host's abstract unix
 * sockets (X11, D-Bus, ...) are then in the same network namespace, and only
 * Landlock's LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (ABI >= 6) stands between
 * the sandbox and the runner's abstract socket (argv[1]): EPERM from the
 * unix_stream_connect hook.  Expected: EPERM.
 */
#define PROBE_NAME "unix_abstract_hostnet"
#include "probe.h"
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

int main(int argc, char **argv)
{
	const char *name = need_arg(argc, argv, 1, "abstract name");
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		fail("socket(AF_UNIX): %s (precondition)", errname(errno));
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	size_t n = strlen(name);
	if (n + 1 > sizeof a.sun_path)
		fail("name too long");
	memcpy(a.sun_path + 1, name, n);
	int r =
	    connect(s, (struct sockaddr *)&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n));
	int e = errno;
	if (r == 0)
		(void)!write(s, "berth-escape\n", 13);
	expect_err("connect(@host-abstract) with --network host", r, e, EPERM);
	int d = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (d >= 0) {
		ssize_t w = sendto(d, "x", 1, 0, (struct sockaddr *)&a,
				   (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n));
		e = errno;
		/* the host socket is a stream socket: a datagram to it is refused
		 * by the type check (EPROTOTYPE/ECONNREFUSED) or by Landlock
		 * (EPERM); it must never be delivered. */
		if (w >= 0)
			fail("datagram to @host-abstract was sent");
	}
	pass("host abstract socket @%s refused with EPERM (Landlock scope)", name);
}
