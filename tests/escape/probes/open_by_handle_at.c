/*
 * open_by_handle_at - the "shocker" escape: open a file of the host by its
 * file handle, bypassing the mount tree.  Needs CAP_DAC_READ_SEARCH (and is
 * denied by seccomp): EPERM.  A handle for inode 2 of the mount of / is
 * forged; name_to_handle_at may itself be refused, which does not matter.
 * Expected: EPERM.
 */
#define PROBE_NAME "open_by_handle_at"
#include "probe.h"
#include <fcntl.h>
#include <stdint.h>

int main(void)
{
	int mfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mfd < 0)
		fail("open(/): %s", errname(errno));
	struct {
		struct file_handle fh;
		unsigned char buf[MAX_HANDLE_SZ];
	} h;
	memset(&h, 0, sizeof h);
	h.fh.handle_bytes = 8;
	h.fh.handle_type = 1; /* FILEID_INO32_GEN */
	uint32_t ino_gen[2] = {2, 0};
	memcpy(h.fh.f_handle, ino_gen, sizeof ino_gen);
	int fd = open_by_handle_at(mfd, &h.fh, O_RDONLY | O_CLOEXEC);
	int e = errno;
	expect_err("open_by_handle_at(forged handle of inode 2)", fd, e, EPERM);
	pass("open_by_handle_at refused with EPERM");
}
