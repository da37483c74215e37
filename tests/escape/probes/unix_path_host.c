/*
 * unix_path_host - connect to a unix socket the runner bound at a host path
 * outside the workspace (argv[1]; like /run/docker.sock or the D-Bus socket).
 * The directory is not mounted in the sandbox: ENOENT.  Expected: ENOENT.
 */
#define PROBE_NAME "unix_path_host"
#include "probe.h"
#include <sys/socket.h>
#include <sys/un.h>

int main(int argc, char **argv)
{
	const char *p = need_arg(argc, argv, 1, "socket path");
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		fail("socket(AF_UNIX): %s (precondition)", errname(errno));
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if (strlen(p) >= sizeof a.sun_path)
		fail("path too long");
	strcpy(a.sun_path, p);
	int r = connect(s, (struct sockaddr *)&a, sizeof a);
	int e = errno;
	expect_err("connect(host unix socket path)", r, e, ENOENT);
	static const char *const known[] = {"/run/dbus/system_bus_socket", "/var/run/docker.sock",
					    "/run/docker.sock", "/run/systemd/private", NULL};
	for (int i = 0; known[i]; i++) {
		int k = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		strcpy(a.sun_path, known[i]);
		r = connect(k, (struct sockaddr *)&a, sizeof a);
		e = errno;
		if (r == 0)
			fail("connected to host socket %s", known[i]);
		if (e != ENOENT)
			fail("connect(%s) failed with %s, expected ENOENT (not mounted)", known[i],
			     errname(e));
		close(k);
	}
	pass("host unix sockets not reachable (ENOENT)");
}
