/*
 * namespaces_distinct - the sandbox's namespaces are not the host's: for
 * each "ns=inode" argument (the runner's /proc/self/ns/<ns> inode numbers
 * for mnt pid net ipc uts user cgroup), /proc/self/ns/<ns> inside must have a
 * different inode.  With --network host the runner leaves net out.
 * Expected: all different.
 */
#define PROBE_NAME "namespaces_distinct"
#include "probe.h"
#include <sys/stat.h>

int main(int argc, char **argv)
{
	if (argc < 2)
		fail("no host namespace inodes given: cannot test");
	char list[512] = "";
	for (int i = 1; i < argc; i++) {
		char ns[32];
		unsigned long long ino;
		if (sscanf(argv[i], "%31[a-z_]=%llu", ns, &ino) != 2)
			fail("bad argument %s", argv[i]);
		char p[64];
		snprintf(p, sizeof p, "/proc/self/ns/%s", ns);
		struct stat st;
		if (stat(p, &st) != 0)
			fail("stat(%s): %s", p, errname(errno));
		if ((unsigned long long)st.st_ino == ino)
			fail("the sandbox shares the host's %s namespace (inode %llu)", ns, ino);
		size_t l = strlen(list);
		snprintf(list + l, sizeof list - l, "%s%s", l ? " " : "", ns);
	}
	pass("namespaces differ from the host's: %s", list);
}
