/*
 * unix_abstract_host - connect to an abstract unix socket the runner bound on
 * the host (argv[1]: name without the leading NUL).  Abstract names live in
 * the network namespace; the sandbox has its own, so unix_find_abstract()
 * finds nothing: ECONNREFUSED (before Landlock's scope hook can run).
 * Expected: ECONNREFUSED.  (See unix_abstract_hostnet for --network host.)
 */
#define PROBE_NAME "unix_abstract_host"
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
	expect_err("connect(@host-abstract)", r, e, ECONNREFUSED);
	pass("host abstract socket @%s not reachable (ECONNREFUSED: other network namespace)", name);
}
