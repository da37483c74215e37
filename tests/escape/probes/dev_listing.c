/*
 * dev_listing - /dev contains only the allowed entries: null zero full
 * random urandom tty pts ptmx shm fd stdin stdout stderr (the contract's
 * list, exactly; anything else fails).  The device nodes must be the real
 * ones (null 1:3, zero 1:5, full 1:7, random 1:8, urandom 1:9, tty 5:0) and
 * /dev/pts must be a devpts instance that holds no host terminal (only ptmx
 * and pty numbers created by the sandbox).
 * Expected: exact set.
 */
#define PROBE_NAME "dev_listing"
#include "probe.h"
#include <ctype.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

int main(void)
{
	static const char *const ok[] = {"null", "zero", "full", "random", "urandom", "tty",    "pts",
					 "ptmx", "shm",  "fd",   "stdin",  "stdout",  "stderr", NULL};
	DIR *d = opendir("/dev");
	if (!d)
		fail("opendir(/dev): %s", errname(errno));
	struct dirent *de;
	char extra[1024] = "";
	size_t el = 0;
	int n = 0;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		int good = 0;
		for (int i = 0; ok[i]; i++)
			if (!strcmp(de->d_name, ok[i]))
				good = 1;
		if (!good) {
			int k = snprintf(extra + el, sizeof extra - el, " %s", de->d_name);
			if (k > 0 && (size_t)k < sizeof extra - el)
				el += (size_t)k;
		}
		n++;
	}
	closedir(d);
	if (el)
		fail("unexpected entries in /dev:%s", extra);
	struct {
		const char *p;
		unsigned ma, mi;
	} nodes[] = {{"/dev/null", 1, 3},   {"/dev/zero", 1, 5},    {"/dev/full", 1, 7},
		     {"/dev/random", 1, 8}, {"/dev/urandom", 1, 9}, {"/dev/tty", 5, 0}};
	for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++) {
		struct stat st;
		if (stat(nodes[i].p, &st) != 0)
			fail("stat(%s): %s", nodes[i].p, errname(errno));
		if (!S_ISCHR(st.st_mode) || major(st.st_rdev) != nodes[i].ma ||
		    minor(st.st_rdev) != nodes[i].mi)
			fail("%s is not char %u:%u", nodes[i].p, nodes[i].ma, nodes[i].mi);
	}
	d = opendir("/dev/pts");
	if (!d)
		fail("opendir(/dev/pts): %s", errname(errno));
	int npts = 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || !strcmp(de->d_name, "ptmx"))
			continue;
		if (!isdigit((unsigned char)de->d_name[0]))
			fail("unexpected /dev/pts entry %s", de->d_name);
		npts++;
	}
	closedir(d);
	if (npts > 0)
		fail("%d pty(s) in /dev/pts at start: host terminals visible", npts);
	pass("/dev has exactly the %d allowed entries, real device numbers, empty devpts", n);
}
