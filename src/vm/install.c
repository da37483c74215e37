/* SPDX-License-Identifier: MIT */
/*
 * install.c - `berth vm install` (install.h): one linear function, one call
 * per step, over a private work directory beside the VM directory.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../util/buf.h"
#include "../util/cleanup.h"
#include "../util/rmtree.h"
#include "../util/rundir.h"
#include "../util/sha256.h"
#include "../util/sys.h"
#include "cpio.h"
#include "exec.h"
#include "accel.h"
#include "install.h"
#include "install_int.h"
#include "pins.h"

#define INIT_MAX (256u << 20)    /* a static init is a few MiB */
#define VMLINUZ_MAX (128u << 20) /* the pinned one is 11 MiB */
#define MODULE_MAX (16u << 20)
#define WORK_PREFIX ".vm-install."

/* The files an install puts in the VM directory: nothing else is replaced. */
/* what a VM directory holds: the install's three, and the record of the
 * last KVM test boot of that guest (accel.h; an install replaces the guest,
 * so the old record goes with the old directory) */
static const char *const vm_files[] = {"vmlinuz", "initramfs.cpio", "guest.json", BERTH_VM_KVM_RECORD};

bool berth_vm_elf_static(const void *data, size_t len)
{
	const unsigned char *b = data;
	uint64_t phoff;
	uint16_t phentsize, phnum;

	/* ELF64, little-endian, x86-64, an executable or a static PIE. */
	if (len < 64 || memcmp(b, "\177ELF", 4) != 0 || b[4] != 2 || b[5] != 1 || (b[16] | b[17] << 8) < 2 ||
	    (b[16] | b[17] << 8) > 3 || (b[18] | b[19] << 8) != 62)
		return false;
	memcpy(&phoff, b + 32, 8);
	memcpy(&phentsize, b + 54, 2);
	memcpy(&phnum, b + 56, 2);
	if (phentsize < 56 || phoff > len || (uint64_t)phnum * phentsize > len - phoff)
		return false;
	for (uint16_t i = 0; i < phnum; i++) {
		uint32_t type;
		memcpy(&type, b + phoff + (uint64_t)i * phentsize, 4);
		if (type == 3 /* PT_INTERP: needs a dynamic loader */)
			return false;
	}
	return true;
}

static int resolve(const struct berth_vm_install_opts *o, struct vm_install *vi, struct berth_error *err)
{
	const char *cache = o->deb_cache != NULL ? o->deb_cache : getenv("BERTH_VM_DEB_CACHE");
	const char *apt = o->apt_dir != NULL ? o->apt_dir : getenv("BERTH_VM_APT_DIR");
	char tmp[PATH_MAX];

	if ((o->dir != NULL && berth_vm_check_path("--dir", o->dir, true, err) < 0) ||
	    (o->init != NULL && berth_vm_check_path("--init", o->init, false, err) < 0) ||
	    (o->deb_cache != NULL && berth_vm_check_path("--deb-cache", o->deb_cache, true, err) < 0) ||
	    (o->deb_cache == NULL && cache != NULL && *cache != '\0' &&
	     berth_vm_check_path("BERTH_VM_DEB_CACHE", cache, true, err) < 0) ||
	    (apt != NULL && *apt != '\0' && berth_vm_check_path("BERTH_VM_APT_DIR", apt, true, err) < 0))
		return -1;
	if (o->dir != NULL) {
		snprintf(vi->dir, sizeof vi->dir, "%s", o->dir);
	} else if (berth_vm_dir(vi->dir, sizeof vi->dir, err) < 0) {
		return -1;
	}
	for (size_t l = strlen(vi->dir); l > 1 && vi->dir[l - 1] == '/'; l--)
		vi->dir[l - 1] = '\0';
	snprintf(tmp, sizeof tmp, "%s", vi->dir);
	snprintf(vi->parent, sizeof vi->parent, "%s", dirname(tmp));
	if (strcmp(vi->dir, "/") == 0 || strcmp(vi->parent, vi->dir) == 0)
		return berth_usage_err(err, "the VM directory `%s` cannot be `/`", vi->dir);
	if (o->init != NULL)
		snprintf(vi->init, sizeof vi->init, "%s", o->init);
	else if (berth_vm_init_path(vi->init, sizeof vi->init, err) < 0)
		return -1;
	snprintf(vi->cache, sizeof vi->cache, "%s", cache != NULL ? cache : "");
	snprintf(vi->apt_dir, sizeof vi->apt_dir, "%s", apt != NULL && *apt != '\0' ? apt : "/etc/apt");
	vi->progress = o->progress;
	vi->progress_ctx = o->progress_ctx;
	return 0;
}

static int read_init(struct vm_install *vi, char **data, size_t *len, struct berth_error *err)
{
	char real[PATH_MAX];

	/* The one path that is the user's to choose may be a link (a build's berth-vminit, --init ~/bin/x). */
	if (realpath(vi->init, real) != NULL)
		snprintf(vi->init, sizeof vi->init, "%s", real);
	if (vm_read_file(vi->init, INIT_MAX, data, len, err) < 0) {
		if (err->errnum != ENOENT)
			return -1;
		berth_err(err, ENOENT, "no guest init `%s`", vi->init);
		return berth_err_hint(
		    err, "build it (`ninja -C build berth-vminit`), or give its path with --init PATH");
	}
	if (!berth_vm_elf_static(*data, *len)) {
		berth_err(err, 0,
			  "`%s` is not a static x86-64 executable: the initramfs has no dynamic loader",
			  vi->init);
		return berth_err_hint(err, "give berth-vminit (built static by meson) with --init PATH");
	}
	return 0;
}

/*
 * Remove the work directories of killed installs (ours only: in a shared
 * parent such as /tmp another user's are theirs).  A killed install's
 * tools can outlive it for a moment: PR_SET_PDEATHSIG reaches only the
 * tool berth started, and dpkg-deb's own children (the decompressor, tar)
 * go on writing into the directory until their input ends; so what cannot
 * be removed yet is tried again for up to STALE_WAIT_MS.
 */
#define STALE_WAIT_MS 5000
static void sweep_stale(const struct vm_install *vi)
{
	int64_t deadline = berth_now_ms() + STALE_WAIT_MS;
	bool left = true;

	while (left) {
		cleanup_closedir DIR *d = opendir(vi->parent);
		struct dirent *de;

		left = false;
		while (d != NULL && (de = readdir(d)) != NULL) {
			struct berth_error ignored = {0};
			char path[PATH_MAX + 300];
			struct stat st;

			if (strncmp(de->d_name, WORK_PREFIX, sizeof WORK_PREFIX - 1) != 0 ||
			    (strlen(de->d_name) > 5 &&
			     strcmp(de->d_name + strlen(de->d_name) - 5, ".lock") == 0) ||
			    (vi->work[0] != '\0' && strcmp(de->d_name, strrchr(vi->work, '/') + 1) == 0))
				continue;
			snprintf(path, sizeof path, "%s/%s", vi->parent, de->d_name);
			if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
			    berth_rmtree(path, NULL, &ignored) < 0)
				left = true;
		}
		if (left && berth_now_ms() >= deadline)
			break;
		if (left)
			nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
	}
}

/*
 * Take the lock beside the VM directory, then sweep.  The lock is the
 * caller's own (PARENT/.vm-install.UID.lock, a regular file it owns): in a
 * shared parent such as /tmp one user's lock neither blocks another's
 * install nor can be planted to block it (a file of that name that is not
 * the caller's is refused, named).
 */
static int lock_and_sweep(const struct vm_install *vi, int *lock, struct berth_error *err)
{
	char path[PATH_MAX + 48];
	struct stat st;

	/* The directories above the VM directory are made when missing, never
	 * chmod'ed: BERTH_VM_DIR=/tmp/vm must leave /tmp as it is. */
	if (berth_mkdir_parents(vi->dir, 0700, err) < 0)
		return -1;
	snprintf(path, sizeof path, "%s/" WORK_PREFIX "%ld.lock", vi->parent, (long)geteuid());
	*lock = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
	if (*lock < 0 && errno != EACCES && errno != ELOOP)
		return berth_err(err, errno, "cannot open `%s`", path);
	if (*lock < 0 || fstat(*lock, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		berth_err(
		    err, *lock < 0 ? errno : EPERM,
		    "the install lock `%s` is not a file of yours (uid %ld): refusing to install beside it",
		    path, (long)geteuid());
		return berth_err_hint(err, "remove it if it is stale, or give a VM directory in a directory "
					   "of your own (--dir, BERTH_VM_DIR)");
	}
	if (flock(*lock, LOCK_EX | LOCK_NB) < 0) {
		berth_err(err, errno, "another `berth vm install` is running (it holds `%s`)", path);
		return berth_err_hint(err, "wait for it to finish");
	}
	sweep_stale(vi);
	return 0;
}

static int make_work(struct vm_install *vi, struct berth_error *err)
{
	if ((size_t)snprintf(vi->work, sizeof vi->work, "%s/" WORK_PREFIX "XXXXXX", vi->parent) >=
	    sizeof vi->work - 200)
		return berth_err(err, ENAMETOOLONG, "the VM directory `%s` is too long", vi->dir);
	if (mkdtemp(vi->work) == NULL) {
		int e = errno;
		vi->work[0] = '\0';
		return berth_err(err, e, "cannot create a work directory in `%s`", vi->parent);
	}
	return 0;
}

/* The work directory goes on every path (cleanup attribute). */
static void work_cleanup(struct vm_install **vip)
{
	struct berth_error ignored = {0};

	if (*vip != NULL && (*vip)->work[0] != '\0')
		berth_rmtree((*vip)->work, NULL, &ignored);
}

static int unpack(const struct vm_install *vi, struct berth_error *err)
{
	char x[PATH_MAX + 8], log[PATH_MAX + 16], last[512], st[64];
	const char *argv[] = {"dpkg-deb", "-x", vi->deb, x, NULL};
	cleanup_close int lfd = -1;
	int ws = 0, r;

	snprintf(x, sizeof x, "%s/x", vi->work);
	snprintf(log, sizeof log, "%s/dpkg-deb.log", vi->work);
	lfd = open(log, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (lfd < 0 || mkdir(x, 0700) < 0)
		return berth_err(err, errno, "cannot unpack the .deb in `%s`", vi->work);
	struct berth_vm_cmd c = {.argv = argv, .out_fd = -1, .err_fd = lfd, .timeout_ms = 300 * 1000};
	r = berth_vm_exec(&c, &ws, NULL, err);
	if (r < 0)
		return -1;
	if (r == 1 || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
		return berth_err(err, 0, "`dpkg-deb -x` of the pinned .deb failed (%s): %s",
				 r == 1 ? "timed out" : berth_vm_status_text(ws, st, sizeof st),
				 berth_vm_log_line(lfd, false, last, sizeof last));
	return 0;
}

/* A file of the unpacked .deb, its sha256 the pin's. */
static int take_pinned(const struct vm_install *vi, const char *rel, const char *want, size_t max,
		       char **data, size_t *len, struct berth_error *err)
{
	char path[PATH_MAX * 2], hex[65];

	snprintf(path, sizeof path, "%s/x/%s", vi->work, rel);
	if (vm_read_file(path, max, data, len, err) < 0)
		return berth_err_wrap(err, "the pinned .deb has no `%s`", rel);
	if (berth_sha256_hex(*data, *len, hex, err) < 0)
		return -1;
	if (strcmp(hex, want) != 0)
		return berth_err(err, EBADMSG, "`%s` in the .deb is not the pinned one: sha256 %s, want %s",
				 rel, hex, want);
	return 0;
}

/* Everything the new VM directory will hold, in memory. */
struct guest_files {
	char *vmlinuz, *init, *modules[8];
	size_t vmlinuz_len, init_len, module_len[8], n_modules;
	struct berth_buf cpio;
	char init_sha256[65], cpio_sha256[65];
};

static void guest_files_free(struct guest_files *g)
{
	free(g->vmlinuz);
	free(g->init);
	for (size_t i = 0; i < g->n_modules; i++)
		free(g->modules[i]);
	berth_buf_free(&g->cpio);
}

static int take_kernel(const struct vm_install *vi, struct guest_files *g, struct berth_error *err)
{
	size_t n;
	const struct berth_vm_module_pin *m = berth_vm_modules(&n);
	char rel[PATH_MAX];

	if (take_pinned(vi, BERTH_VM_VMLINUZ_PATH, BERTH_VM_VMLINUZ_SHA256, VMLINUZ_MAX, &g->vmlinuz,
			&g->vmlinuz_len, err) < 0)
		return -1;
	for (size_t i = 0; i < n && i < BERTH_ARRAY_SIZE(g->modules); i++) {
		snprintf(rel, sizeof rel, "%s/%s", BERTH_VM_MODULE_SRC_DIR, m[i].name);
		if (take_pinned(vi, rel, m[i].sha256, MODULE_MAX, &g->modules[i], &g->module_len[i], err) < 0)
			return -1;
		g->n_modules = i + 1;
	}
	return 0;
}

/* initramfs.cpio: /init, the modules and the directories the guest mounts on. */
static int build_initramfs(struct guest_files *g, struct berth_error *err)
{
	static const char *const dirs[] = {
	    "dev", "lib", "lib/modules", BERTH_VM_MODULE_DST_DIR, "mnt", "newroot", "proc", "sys", "tmp",
	};
	struct berth_cpio_entry e[BERTH_ARRAY_SIZE(dirs) + 1 + 8];
	char paths[8][PATH_MAX];
	size_t n = 0, nm;
	const struct berth_vm_module_pin *m = berth_vm_modules(&nm);

	for (size_t i = 0; i < BERTH_ARRAY_SIZE(dirs); i++)
		e[n++] = (struct berth_cpio_entry){.path = dirs[i], .mode = S_IFDIR | 0755};
	e[n++] = (struct berth_cpio_entry){
	    .path = "init", .mode = S_IFREG | 0755, .data = g->init, .len = g->init_len};
	for (size_t i = 0; i < g->n_modules; i++) {
		snprintf(paths[i], sizeof paths[i], "%s/%s", BERTH_VM_MODULE_DST_DIR, m[i].name);
		e[n++] = (struct berth_cpio_entry){
		    .path = paths[i], .mode = S_IFREG | 0644, .data = g->modules[i], .len = g->module_len[i]};
	}
	if (berth_cpio_build(e, n, &g->cpio, err) < 0 ||
	    berth_sha256_hex(g->init, g->init_len, g->init_sha256, err) < 0 ||
	    berth_sha256_hex(g->cpio.p, g->cpio.len, g->cpio_sha256, err) < 0)
		return -1;
	return 0;
}

static char *guest_json(const struct vm_install *vi, const struct guest_files *g)
{
	size_t nm;
	const struct berth_vm_module_pin *m = berth_vm_modules(&nm);
	json_t *mods = json_array(), *root;
	char *s;

	for (size_t i = 0; i < g->n_modules; i++)
		json_array_append_new(mods,
				      json_pack("{s:s, s:s}", "name", m[i].name, "sha256", m[i].sha256));
	root = json_pack("{s:i, s:{s:s, s:s, s:s, s:s, s:s}, s:{s:s, s:I}, s:{s:s, s:s}, s:o}", "format",
			 BERTH_VM_GUEST_FORMAT, "kernel", "package", BERTH_VM_KERNEL_PACKAGE, "version",
			 BERTH_VM_KERNEL_VERSION, "release", BERTH_VM_KERNEL_RELEASE, "deb_sha256",
			 BERTH_VM_DEB_SHA256, "sha256", BERTH_VM_VMLINUZ_SHA256, "initramfs", "sha256",
			 g->cpio_sha256, "size", (json_int_t)g->cpio.len, "init", "sha256", g->init_sha256,
			 "path", vi->init, "modules", mods);
	if (root == NULL)
		return NULL;
	s = json_dumps(root, JSON_SORT_KEYS | JSON_INDENT(2));
	json_decref(root);
	return s;
}

/* WORK/new: vmlinuz, initramfs.cpio, then guest.json, each durable before the next. */
static int write_new(const struct vm_install *vi, const struct guest_files *g, struct berth_error *err)
{
	char dir[PATH_MAX + 8], shown[PATH_MAX + 32];
	cleanup_free char *json = guest_json(vi, g);
	cleanup_close int dfd = -1;
	const unsigned f = BERTH_WRITE_SYNC | BERTH_WRITE_MODE;

	if (json == NULL)
		return berth_err(err, ENOMEM, "cannot describe the guest");
	snprintf(dir, sizeof dir, "%s/new", vi->work);
	if (mkdir(dir, 0755) < 0 || chmod(dir, 0755) < 0 ||
	    (dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return berth_err(err, errno, "cannot create `%s`", dir);
	snprintf(shown, sizeof shown, "%s/vmlinuz", vi->dir);
	if (berth_write_atomic_at(dfd, "vmlinuz", shown, g->vmlinuz, g->vmlinuz_len, 0644, f, err) < 0)
		return -1;
	snprintf(shown, sizeof shown, "%s/initramfs.cpio", vi->dir);
	if (berth_write_atomic_at(dfd, "initramfs.cpio", shown, g->cpio.p, g->cpio.len, 0644, f, err) < 0)
		return -1;
	snprintf(shown, sizeof shown, "%s/guest.json", vi->dir);
	return berth_write_atomic_at(dfd, "guest.json", shown, json, strlen(json), 0644,
				     f | BERTH_WRITE_SYNC_DIR, err) < 0
		   ? -1
		   : 0;
}

/*
 * The first entry of the directory @dfd that an install did not put there
 * (a name other than the three, or one of them that is not a regular file)
 * into @name; 0 when there is none, -1 with errno.
 */
static int foreign_entry(int dfd, char *name, size_t len)
{
	cleanup_closedir DIR *d = NULL;
	struct dirent *de;
	int fd = dup(dfd);

	if (fd < 0 || (d = fdopendir(fd)) == NULL) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		bool ours = strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0;
		struct stat st;
		for (size_t i = 0; i < BERTH_ARRAY_SIZE(vm_files) && !ours; i++)
			ours = strcmp(de->d_name, vm_files[i]) == 0 &&
			       fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
		if (!ours && strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
			snprintf(name, len, "%s", de->d_name);
			return 1;
		}
	}
	return 0;
}

/*
 * An existing VM directory holds only what an install puts there: the
 * three names, each a regular file (BERTH_VM_DIR=$HOME, or a directory
 * named vmlinuz, must not be swapped away).
 */
static int replaceable(const char *dir, struct berth_error *err)
{
	cleanup_close int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	char name[256];
	int r;

	if (dfd < 0 && errno == ENOENT)
		return 0;
	if (dfd < 0 && (errno == ENOTDIR || errno == ELOOP)) {
		berth_usage_err(err, "`%s` is not a VM directory (not a directory): refusing to replace it",
				dir);
		return berth_err_hint(err, "give an empty or new directory (--dir, BERTH_VM_DIR)");
	}
	if (dfd < 0 || (r = foreign_entry(dfd, name, sizeof name)) < 0)
		return berth_err(err, errno, "cannot read the VM directory `%s`", dir);
	if (r > 0) {
		berth_usage_err(
		    err,
		    "`%s` is not a VM directory (it holds `%s`, not a file berth installs): refusing "
		    "to replace it",
		    dir, name);
		return berth_err_hint(err, "give an empty or new directory (--dir, BERTH_VM_DIR)");
	}
	return 0;
}

/*
 * The old VM directory, now at @old (in WORK), is removed only when it
 * still holds nothing but the install's three regular files: what was
 * written into it during the install is never removed.  When it holds
 * more, it is put back in place of the new one (which goes with WORK)
 * and the install fails; 0 when removed or there was none.
 */
static int drop_old(struct vm_install *vi, const char *old, const char *new_dir, bool exchanged,
		    struct berth_error *err)
{
	cleanup_close int dfd = open(old, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	char name[256];
	int r;

	if (dfd < 0)
		return errno == ENOENT ? 0 : berth_err(err, errno, "cannot read `%s`", old);
	r = foreign_entry(dfd, name, sizeof name);
	if (r == 0) {
		for (size_t i = 0; i < BERTH_ARRAY_SIZE(vm_files); i++)
			unlinkat(dfd, vm_files[i], 0);
		if (rmdir(old) == 0 || errno == ENOENT)
			return 0;
	}
	/* Something appeared: the old directory, with it, back where it was. */
	if (exchanged ? renameat2(AT_FDCWD, old, AT_FDCWD, vi->dir, RENAME_EXCHANGE) < 0
		      : rename(vi->dir, new_dir) < 0 || rename(old, vi->dir) < 0) {
		int e = errno;
		vi->work[0] = '\0'; /* WORK holds the user's files now: it stays */
		berth_err(err, e,
			  "the VM directory `%s` changed during the install; its old contents are in `%s`",
			  vi->dir, old);
		return berth_err_hint(err, "move `%s` somewhere safe before anything else", old);
	}
	berth_usage_err(err,
			"the VM directory `%s` changed during the install (it now holds `%s`): kept as it is",
			vi->dir, r > 0 ? name : "a new entry");
	return berth_err_hint(err, "move what you put there elsewhere, then run `berth vm install` again");
}

/* WORK/new in place of the VM directory, in one rename; the old one is then dropped (drop_old). */
static int swap_in(struct vm_install *vi, struct berth_error *err)
{
	char new_dir[PATH_MAX + 8], old[PATH_MAX + 8];
	cleanup_close int pfd = -1;
	bool exchanged = true;
	const char *gone = new_dir; /* where the old one is after the swap */

	snprintf(new_dir, sizeof new_dir, "%s/new", vi->work);
	snprintf(old, sizeof old, "%s/old", vi->work);
	/* the last look before the swap; drop_old() looks again after it */
	if (replaceable(vi->dir, err) < 0)
		return -1;
	if (renameat2(AT_FDCWD, new_dir, AT_FDCWD, vi->dir, RENAME_EXCHANGE) < 0) {
		if (errno == ENOENT) {
			if (rename(new_dir, vi->dir) < 0)
				return berth_err(err, errno, "cannot install the guest in `%s`", vi->dir);
		} else if (errno == EINVAL || errno == ENOSYS) {
			/* No RENAME_EXCHANGE on this file system: the old one aside, the new one in, or back. */
			if (rename(vi->dir, old) < 0)
				return berth_err(err, errno, "cannot install the guest in `%s`", vi->dir);
			if (rename(new_dir, vi->dir) < 0) {
				int e = errno;
				rename(old, vi->dir);
				return berth_err(err, e, "cannot install the guest in `%s`", vi->dir);
			}
			exchanged = false;
			gone = old;
		} else {
			return berth_err(err, errno, "cannot install the guest in `%s`", vi->dir);
		}
	}
	if (drop_old(vi, gone, new_dir, exchanged, err) < 0)
		return -1;
	pfd = open(vi->parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd >= 0)
		fsync(pfd);
	return 0;
}

int berth_vm_install(const struct berth_vm_install_opts *o, struct berth_vm_installed *out,
		     struct berth_error *err)
{
	static const struct berth_vm_install_opts defaults;
	struct vm_install vi = {0};
	__attribute__((cleanup(work_cleanup))) struct vm_install *work = NULL;
	cleanup_close int lock = -1;
	struct guest_files g = {0};
	int r = -1;

	if (resolve(o != NULL ? o : &defaults, &vi, err) < 0 || read_init(&vi, &g.init, &g.init_len, err) < 0)
		goto out;
	if (lock_and_sweep(&vi, &lock, err) < 0 || replaceable(vi.dir, err) < 0 || make_work(&vi, err) < 0)
		goto out;
	work = &vi;
	if (vm_fetch_deb(&vi, err) < 0 || unpack(&vi, err) < 0 || take_kernel(&vi, &g, err) < 0)
		goto out;
	vm_say(&vi, "building the initramfs from %s", vi.init);
	if (build_initramfs(&g, err) < 0 || write_new(&vi, &g, err) < 0 || swap_in(&vi, err) < 0)
		goto out;
	if (out != NULL) {
		memset(out, 0, sizeof *out);
		snprintf(out->dir, sizeof out->dir, "%s", vi.dir);
		snprintf(out->initramfs_sha256, sizeof out->initramfs_sha256, "%s", g.cpio_sha256);
		snprintf(out->init_sha256, sizeof out->init_sha256, "%s", g.init_sha256);
		out->initramfs_size = g.cpio.len;
		out->from_cache = vi.from_cache;
	}
	r = 0;
out:
	guest_files_free(&g);
	return r;
}
