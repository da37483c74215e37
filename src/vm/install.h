/* SPDX-License-Identifier: MIT */
/*
 * install.h - the installed guest of the microVM runtime: where it is
 * (berth_vm_dir), how it gets there (berth_vm_install: the pinned kernel
 * from a Debian mirror, an initramfs of berth-vminit and the pinned
 * modules) and the check every boot makes first (berth_vm_verify).
 * docs/vm.md, "The pinned guest".
 *
 * The VM directory holds three files:
 *   vmlinuz          the pinned kernel image, sha256 BERTH_VM_VMLINUZ_SHA256
 *   initramfs.cpio   uncompressed newc (src/vm/cpio.h): /init, the modules,
 *                    /dev /proc /sys /mnt /newroot /tmp
 *   guest.json       what the two are: {"kernel":{"package","version",
 *                    "deb_sha256","sha256","release"},"initramfs":{"sha256",
 *                    "size"},"init":{"sha256","path"},"modules":[{"name",
 *                    "sha256"}],"format":1}
 * An install replaces the directory as a whole (rename(2) of a complete
 * new one): a reader sees the old guest or the new one, and a failed
 * install leaves the old one as it was.
 */
#ifndef BERTH_VM_INSTALL_H
#define BERTH_VM_INSTALL_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <stddef.h>

#include "../util/error.h"

#define BERTH_VM_GUEST_FORMAT 1

/*
 * berth_vm_dir - the VM directory into @buf (@len bytes): $BERTH_VM_DIR
 * when set (it must be an absolute path), else the per-user state
 * directory's `vm` (berth_state_path("vm"): $XDG_STATE_HOME/berth/vm or
 * ~/.local/state/berth/vm).  Nothing is created.
 * Returns 0, or -1 with @err filled: a usage error (status 2) when
 * BERTH_VM_DIR is not absolute, or when there is no home nor
 * XDG_STATE_HOME (hint: set BERTH_VM_DIR); ENAMETOOLONG.
 */
int berth_vm_dir(char *buf, size_t len, struct berth_error *err);

/*
 * berth_vm_init_path - where berth-vminit is, into @buf (@len bytes):
 * $BERTH_VMINIT when set, else `berth-vminit` in the directory of
 * /proc/self/exe (meson builds both into one directory).  Not checked.
 * Returns 0, or -1 with @err filled (readlink(2)'s errno, ENAMETOOLONG).
 */
int berth_vm_init_path(char *buf, size_t len, struct berth_error *err);

struct berth_vm_install_opts {
	const char *dir;       /* the VM directory; NULL: berth_vm_dir() */
	const char *init;      /* the guest init; NULL: berth_vm_init_path() */
	const char *deb_cache; /* a directory of .debs named SHA256.deb; NULL: $BERTH_VM_DEB_CACHE, or none */
	const char
	    *apt_dir; /* the apt configuration whose sources are read; NULL: $BERTH_VM_APT_DIR or /etc/apt */
	/* Called before each step with a line for the user ("downloading ..."); may be NULL. */
	void (*progress)(void *ctx, const char *line);
	void *progress_ctx;
};

/* What berth_vm_install() installed. */
struct berth_vm_installed {
	char dir[PATH_MAX];
	char initramfs_sha256[65];
	char init_sha256[65];
	size_t initramfs_size;
	bool from_cache; /* the .deb came from the cache, not a mirror */
};

/*
 * berth_vm_install - install the pinned guest into the VM directory:
 *   1. read the guest init (a static executable: the initramfs has no
 *      dynamic loader);
 *   2. take the pinned .deb from the cache (copied, hashing it, into a
 *      private work directory) or, when it is not there, download it with
 *      apt-get from the Debian mirrors the machine's apt sources name
 *      (src/vm/aptsrc.h), through a private apt configuration of its own
 *      for the pinned suite, signed by Debian's archive keyring;
 *   3. check the .deb's size and sha256 against the pin before anything
 *      else reads it (then store it in the cache when it was downloaded);
 *   4. unpack it (dpkg-deb -x) and check vmlinuz's and every module's
 *      sha256 against the pin;
 *   5. build initramfs.cpio (src/vm/cpio.h) and write the new directory:
 *      vmlinuz, initramfs.cpio, then guest.json;
 *   6. put it in place of the old one in one rename(2), the old one
 *      looked at again before and after (only the three regular files
 *      berth installs are ever removed; anything else puts it back).
 * The work directory (`.vm-install.XXXXXX` beside the VM directory) is
 * removed on every path, and stale ones of an install that was killed are
 * removed by the next (installs hold the caller's own lock,
 * `.vm-install.UID.lock`, refused when that is not the caller's regular file).
 * @o: the options (NULL: all defaults).  @out: filled on success (may be
 * NULL).  Works as root (apt's download sandbox is turned off: the work
 * directory is private to the caller) and as any user.
 * Returns 0, or -1 with @err filled (status 125 unless said): a usage error
 * (2) for a bad BERTH_VM_DIR, --dir, --init, --deb-cache (berth_vm_check_path:
 * ENAMETOOLONG, relative, `.`/`..`/empty components) or a VM directory
 * holding anything but the three files; berth_vm_open_file()'s errors for
 * the init and the cached .deb (a FIFO, a link, too large); "the mirror
 * `URI` could not be read: APT LINE" when update said so and download
 * failed; "no guest init `PATH`" (ENOENT, hint: build
 * berth-vminit or give --init) or "`PATH` is not a static x86-64
 * executable" (errnum 0);
 * "no Debian mirror in the apt sources (read: FILES)" with the files read
 * (errnum 0);
 * "`apt-get update` failed (STATUS): LAST LINE OF ITS STDERR" (or
 * `apt-get download`, `dpkg-deb`); "the downloaded .deb is not the pinned
 * one: sha256 X, want Y" (or size; EBADMSG) and "the cached .deb `PATH` is
 * not the pinned one ..." (EBADMSG: nothing is installed; hint: remove it);
 * "`vmlinuz` in the .deb is not the pinned one" (EBADMSG); the file
 * system's errors naming the file.
 */
int berth_vm_install(const struct berth_vm_install_opts *o, struct berth_vm_installed *out,
		     struct berth_error *err);

/* The installed guest as berth_vm_verify() found it. */
struct berth_vm_guest {
	char dir[PATH_MAX];
	char vmlinuz[PATH_MAX];   /* DIR/vmlinuz */
	char initramfs[PATH_MAX]; /* DIR/initramfs.cpio */
	char kernel_sha256[65];   /* as checked: the pin's */
	char initramfs_sha256[65];
	char init_sha256[65];
	char init_path[PATH_MAX]; /* the init it was built from, as guest.json says */
};

/*
 * berth_vm_verify - check the guest installed in @dir (NULL: berth_vm_dir())
 * before a boot: guest.json names the pinned kernel (package, version, the
 * .deb's and vmlinuz's sha256, src/vm/pins.h), vmlinuz's sha256 is the
 * pin's and initramfs.cpio's is the one guest.json records.  @g is filled
 * as far as it got (may be NULL).
 * Returns 0, or -1 with @err filled, status 125, hint `berth vm install`:
 * "no guest installed in `DIR`" (ENOENT), "`DIR/guest.json` is not a guest
 * description: WHAT" (EINVAL), "the guest in `DIR` is not the pinned one:
 * FIELD is `X`, berth pins `Y`" (EINVAL: installed by another berth),
 * "`DIR/vmlinuz` is damaged: sha256 X, want Y" (EBADMSG; initramfs.cpio
 * likewise), or the open(2)/read(2) error naming the file.
 */
int berth_vm_verify(const char *dir, struct berth_vm_guest *g, struct berth_error *err);

/*
 * berth_vm_elf_static - whether the @len bytes at @data are an x86-64 ELF64
 * executable (or static PIE) with no PT_INTERP program header: one the
 * initramfs, which has no dynamic loader, can run as /init.  Pure.
 */
bool berth_vm_elf_static(const void *data, size_t len);

/* The longest VM directory, cache or init path (bytes): PATH_MAX less room for the names under it. */
#define BERTH_VM_PATH_MAX (PATH_MAX - 256)

/*
 * berth_vm_check_path - refuse the path @path of the option @what
 * ("--dir", "BERTH_VM_DIR"...) before anything is made from it: longer
 * than BERTH_VM_PATH_MAX (ENAMETOOLONG), not absolute when @absolute, or
 * with an empty (`//`), `.` or `..` component (a trailing `/` is fine).
 * Returns 0, or -1 with @err filled, status BERTH_EXIT_USAGE, naming
 * @what and the value, with a hint.  Pure.
 */
int berth_vm_check_path(const char *what, const char *path, bool absolute, struct berth_error *err);

/* The largest file berth hashes from the VM directory (bytes). */
#define BERTH_VM_FILE_MAX (512ull << 20)

/*
 * berth_vm_open_file - open @path for reading the way every file berth
 * reads from the VM directory, the .deb cache or --init is opened: not
 * followed if a link, O_NONBLOCK until fstat has shown a regular file (a
 * FIFO cannot block), at most @max bytes long; *@st its fstat.  Nothing is
 * read.  Returns the descriptor (O_CLOEXEC, blocking), or -1 with @err
 * filled: ELOOP "`PATH` is a symbolic link", EINVAL "`PATH` is not a
 * regular file" (both with a hint), EFBIG "`PATH` is too large", or
 * "cannot read `PATH`" and open's errno (ENOENT, EACCES...).
 */
int berth_vm_open_file(const char *path, uint64_t max, struct stat *st, struct berth_error *err);

/*
 * berth_vm_sha256_file - sha256 of the file @path (berth_vm_open_file(), at
 * most BERTH_VM_FILE_MAX bytes) into @hex; *@size (may be NULL) its length
 * in bytes.  Returns 0, or -1 with @err filled: berth_vm_open_file()'s
 * errors, or "cannot read `PATH`" and the errno.
 */
int berth_vm_sha256_file(const char *path, char hex[65], size_t *size, struct berth_error *err);

#endif
