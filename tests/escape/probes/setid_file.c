/*
 * setid_file - leave a set-user-ID (or set-group-ID) file in the workspace:
 * the file keeps its host owner (the workspace owner, root when root owns
 * the workspace and runs berth), so anyone on the host who runs it later
 * runs as that owner.  nosuid on berth's mounts does not stop the bit being
 * stored; the seccomp filter refuses every mode with S_ISUID or S_ISGID:
 * chmod, fchmod, fchmodat, open(O_CREAT), openat(O_TMPFILE), creat, mkdir,
 * mknod; openat2 is ENOSYS (its mode is out of seccomp's reach).  The runner
 * checks on the host that no file in the workspace has either bit.
 * Expected: EPERM for each, ENOSYS for openat2.
 */
#define PROBE_NAME "setid_file"
#include "probe.h"
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>

int main(void)
{
	const char *f = "/workspace/berth-escape-setid";
	int fd = open(f, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755), r, e;
	if (fd < 0)
		fail("cannot create %s: %s (precondition)", f, errname(errno));
	r = fchmod(fd, 04755);
	e = errno;
	expect_err("fchmod(04755)", r, e, EPERM);
	close(fd);
	r = chmod(f, 04755);
	e = errno;
	expect_err("chmod(04755)", r, e, EPERM);
	r = chmod(f, 02755);
	e = errno;
	expect_err("chmod(02755)", r, e, EPERM);
	r = fchmodat(AT_FDCWD, f, 06755, 0);
	e = errno;
	expect_err("fchmodat(06755)", r, e, EPERM);
	unlink(f);
	fd = open(f, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 04755);
	e = errno;
	expect_err("open(O_CREAT, 04755)", fd, e, EPERM);
	fd = openat(AT_FDCWD, "/workspace", O_WRONLY | O_TMPFILE | O_CLOEXEC, 02755);
	e = errno;
	expect_err("openat(O_TMPFILE, 02755)", fd, e, EPERM);
	fd = creat(f, 04711);
	e = errno;
	expect_err("creat(04711)", fd, e, EPERM);
	r = mkdir("/workspace/berth-escape-setgid-dir", 02777);
	e = errno;
	expect_err("mkdir(02777)", r, e, EPERM);
	r = mknod(f, S_IFREG | 04755, 0);
	e = errno;
	expect_err("mknod(S_IFREG|04755)", r, e, EPERM);
	struct open_how how = {.flags = O_WRONLY | O_CREAT, .mode = 04755};
	r = (int)syscall(SYS_openat2, AT_FDCWD, f, &how, sizeof how);
	e = errno;
	expect_err("openat2(O_CREAT, 04755)", r, e, ENOSYS);
	/* An ordinary mode still works. */
	fd = open(f, O_WRONLY | O_CREAT | O_CLOEXEC, 0755);
	if (fd < 0 || fchmod(fd, 0700) < 0)
		fail("an ordinary create/chmod failed: %s", errname(errno));
	close(fd);
	unlink(f);
	pass("set-ID modes refused with EPERM (fchmod, chmod, fchmodat, open, O_TMPFILE, creat, mkdir, "
	     "mknod), openat2 ENOSYS; 0755/0700 still work");
}
