/* SPDX-License-Identifier: MIT */
/*
 * fetch.c - the pinned kernel's .deb: from the cache or a Debian mirror,
 * checked against the pin before anything reads it (install_int.h).
 *
 * The mirror is whatever the machine's apt sources name (berth names no
 * host); the suite, the component and the key are berth's own, in a private
 * apt configuration, so the machine's other sources, preferences and
 * pinning have no say in which file arrives.  apt checks the Release
 * file's signature and the .deb's hash from the signed index; berth checks
 * the .deb's sha256 against the one compiled in, which is what makes the
 * result the pinned kernel whatever the mirror serves.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/buf.h"
#include "../util/cleanup.h"
#include "../util/rundir.h"
#include "../util/sha256.h"
#include "../util/sys.h"
#include "aptsrc.h"
#include "exec.h"
#include "install.h"
#include "install_int.h"
#include "pins.h"

#define APT_UPDATE_TIMEOUT_MS (300 * 1000)
#define APT_DOWNLOAD_TIMEOUT_MS (900 * 1000)

void vm_say(const struct vm_install *vi, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	if (vi->progress == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	vi->progress(vi->progress_ctx, line);
}

/*
 * Copy @src_fd to a new file @dst (O_EXCL, mode 0644), hashing what is
 * copied: at most @max + 1 bytes, so that a file that grew after its size
 * was checked is still found too long, without filling the disk.
 */
static int copy_hashing(int src_fd, const char *dst, size_t max, char hex[65], size_t *size,
			struct berth_error *err)
{
	cleanup_close int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	struct berth_sha256 *c = NULL;
	char chunk[1 << 16];
	size_t total = 0;
	ssize_t n;

	if (out < 0)
		return berth_err(err, errno, "cannot write `%s`", dst);
	c = berth_sha256_new(err);
	if (c == NULL)
		return -1;
	while (total <= max && (n = read(src_fd, chunk, sizeof chunk)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || write(out, chunk, (size_t)n) != n) {
			int e = n < 0 ? errno : errno != 0 ? errno : EIO;
			berth_sha256_final(c, hex, err);
			return berth_err(err, e, n < 0 ? "cannot read the .deb" : "cannot write `%s`", dst);
		}
		if (berth_sha256_update(c, chunk, (size_t)n) < 0)
			break;
		total += (size_t)n;
	}
	*size = total;
	return berth_sha256_final(c, hex, err);
}

/* The size is the pin's; else EBADMSG, the file @what named. */
static int check_size(const char *what, uint64_t size, struct berth_error *err)
{
	if (size != (uint64_t)BERTH_VM_DEB_SIZE)
		return berth_err(err, EBADMSG, "%s is not the pinned one: %llu bytes, want %lu", what,
				 (unsigned long long)size, (unsigned long)BERTH_VM_DEB_SIZE);
	return 0;
}

/* The size and digest are the pin's; else EBADMSG, the file @what named. */
static int check_pin(const char *what, const char *hex, size_t size, struct berth_error *err)
{
	if (check_size(what, size, err) < 0)
		return -1;
	if (strcmp(hex, BERTH_VM_DEB_SHA256) != 0)
		return berth_err(err, EBADMSG, "%s is not the pinned one: sha256 %s, want %s", what, hex,
				 BERTH_VM_DEB_SHA256);
	return 0;
}

/* The cached .deb into WORK/kernel.deb; 1 when the cache does not hold it. */
static int from_cache(struct vm_install *vi, struct berth_error *err)
{
	char path[PATH_MAX + 80], hex[65], what[PATH_MAX + 120];
	cleanup_close int fd = -1;
	size_t size = 0;
	struct stat st;

	if (vi->cache[0] == '\0')
		return 1;
	snprintf(path, sizeof path, "%s/%s.deb", vi->cache, BERTH_VM_DEB_SHA256);
	snprintf(what, sizeof what, "the cached .deb `%s`", path);
	/* type and size judged before a byte is read: a FIFO or a huge sparse file is refused */
	fd = berth_vm_open_file(path, UINT64_MAX, &st, err);
	if (fd < 0 && err->errnum == ENOENT && err->hint[0] == '\0') {
		memset(err, 0, sizeof *err);
		return 1;
	}
	if (fd < 0 || check_size(what, (uint64_t)st.st_size, err) < 0) {
		err->hint[0] = '\0';
		return berth_err_hint(err, "remove it (`rm %s`), then run `berth vm install` again", path);
	}
	if (copy_hashing(fd, vi->deb, (size_t)BERTH_VM_DEB_SIZE, hex, &size, err) < 0)
		return -1;
	snprintf(what, sizeof what, "the cached .deb `%s`", path);
	if (check_pin(what, hex, size, err) < 0) {
		unlink(vi->deb);
		return berth_err_hint(err, "remove it (`rm %s`), then run `berth vm install` again", path);
	}
	vi->from_cache = true;
	vm_say(vi, "using the cached %s", path);
	return 0;
}

/* Keep the verified .deb in the cache for the next install; a failure is only said. */
static void to_cache(struct vm_install *vi)
{
	char path[PATH_MAX + 80], tmp[PATH_MAX + 100], hex[65];
	struct berth_error err = {0};
	cleanup_close int fd = -1;
	size_t size = 0;

	if (vi->cache[0] == '\0')
		return;
	snprintf(path, sizeof path, "%s/%s.deb", vi->cache, BERTH_VM_DEB_SHA256);
	snprintf(tmp, sizeof tmp, "%s/.%s.deb.%ld.tmp", vi->cache, BERTH_VM_DEB_SHA256, (long)getpid());
	fd = open(vi->deb, O_RDONLY | O_CLOEXEC | O_NOFOLLOW); /* ours, in the private work directory */
	/* Made when missing, never chmod'ed (a shared cache may be sticky and world-writable). */
	if (berth_mkdir_parents(path, 0755, &err) < 0 || fd < 0 ||
	    copy_hashing(fd, tmp, (size_t)BERTH_VM_DEB_SIZE, hex, &size, &err) < 0 ||
	    check_pin("the copy", hex, size, &err) < 0 || rename(tmp, path) < 0) {
		unlink(tmp);
		vm_say(vi, "warning: cannot keep the .deb in the cache `%s`: %s", vi->cache,
		       err.msg[0] ? err.msg : strerror(errno));
		return;
	}
	vm_say(vi, "kept the .deb in the cache: %s", path);
}

/* Read one sources file into @uris; the file's name is added to @read. */
static int read_sources(const char *path, enum berth_apt_format fmt, char ***uris, size_t *n,
			struct berth_buf *read, struct berth_error *err)
{
	cleanup_free char *text = NULL;
	size_t len = 0;

	if (vm_read_file(path, 1 << 20, &text, &len, err) < 0)
		return errno == ENOENT || err->errnum == ENOENT ? 0 : -1;
	berth_buf_putf(read, "%s%s", read->len > 0 ? ", " : "", path);
	return berth_apt_debian_uris(text, fmt, uris, n, err) < 0 ? -1 : 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The URIs of the Debian mirrors in APT_DIR/sources.list and sources.list.d. */
static int debian_mirrors(const struct vm_install *vi, char ***uris, size_t *n, struct berth_error *err)
{
	char path[PATH_MAX + 300];
	struct berth_buf read = {0};
	char **names = NULL;
	size_t nn = 0;
	cleanup_closedir DIR *d = NULL;
	struct dirent *de;
	int r = -1;

	snprintf(path, sizeof path, "%s/sources.list", vi->apt_dir);
	if (read_sources(path, BERTH_APT_ONE_LINE, uris, n, &read, err) < 0)
		goto out;
	snprintf(path, sizeof path, "%s/sources.list.d", vi->apt_dir);
	d = opendir(path);
	while (d != NULL && (de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name);
		if (de->d_name[0] != '.' && ((l > 5 && strcmp(de->d_name + l - 5, ".list") == 0) ||
					     (l > 8 && strcmp(de->d_name + l - 8, ".sources") == 0)))
			if (berth_strv_push(&names, &nn, de->d_name) < 0)
				goto oom;
	}
	if (nn > 0)
		qsort(names, nn, sizeof *names, name_cmp);
	for (size_t i = 0; i < nn; i++) {
		size_t l = strlen(names[i]);
		snprintf(path, sizeof path, "%s/sources.list.d/%s", vi->apt_dir, names[i]);
		if (read_sources(path,
				 strcmp(names[i] + l - 8, ".sources") == 0 ? BERTH_APT_DEB822
									   : BERTH_APT_ONE_LINE,
				 uris, n, &read, err) < 0)
			goto out;
	}
	if (read.oom)
		goto oom;
	if (*n == 0) {
		berth_err(err, 0, "no Debian mirror in the apt sources (read: %s)",
			  read.len > 0 ? read.p
				       : "nothing: no sources.list nor sources.list.d/*.list, *.sources");
		berth_err_hint(
		    err,
		    "add a Debian mirror to the apt sources (`deb URI bookworm main` in %s/sources.list)",
		    vi->apt_dir);
		goto out;
	}
	r = 0;
	goto out;
oom:
	berth_err(err, ENOMEM, "cannot read the apt sources");
out:
	berth_strv_free(names);
	berth_buf_free(&read);
	return r;
}

/* WORK/apt: the private configuration apt-get runs with. */
static int write_apt_config(const struct vm_install *vi, char **uris, size_t n, struct berth_error *err)
{
	static const char *const dirs[] = {
	    "apt",
	    "apt/etc",
	    "apt/etc/apt",
	    "apt/etc/apt/apt.conf.d",
	    "apt/etc/apt/preferences.d",
	    "apt/etc/apt/trusted.gpg.d",
	    "apt/var",
	    "apt/var/lib",
	    "apt/var/lib/dpkg",
	    "apt/var/lib/apt",
	    "apt/var/lib/apt/lists",
	    "apt/var/lib/apt/lists/partial",
	    "apt/var/cache",
	    "apt/var/cache/apt",
	    "apt/var/cache/apt/archives",
	    "apt/var/cache/apt/archives/partial",
	    "dl",
	};
	char path[PATH_MAX + 100];
	struct berth_buf list = {0};
	int r;

	for (size_t i = 0; i < BERTH_ARRAY_SIZE(dirs); i++) {
		snprintf(path, sizeof path, "%s/%s", vi->work, dirs[i]);
		if (mkdir(path, 0700) < 0)
			return berth_err(err, errno, "cannot create `%s`", path);
	}
	snprintf(path, sizeof path, "%s/apt/var/lib/dpkg/status", vi->work);
	if (berth_write_atomic(path, "", 0, 0600, 0, err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		berth_buf_putf(&list, "deb [signed-by=%s] %s %s %s\n", BERTH_VM_KEYRING, uris[i],
			       BERTH_VM_SUITE, BERTH_VM_COMPONENT);
	if (list.oom) {
		berth_buf_free(&list);
		return berth_err(err, ENOMEM, "cannot write the apt configuration");
	}
	snprintf(path, sizeof path, "%s/apt/etc/apt/sources.list", vi->work);
	r = berth_write_atomic(path, list.p, list.len, 0600, 0, err);
	berth_buf_free(&list);
	return r;
}

/* Run apt-get @verb ARGS with the private configuration; its stderr's last line in the error. */
static int apt_get(const struct vm_install *vi, const char *verb, const char *arg, const char *cwd,
		   int timeout_ms, struct berth_error *err)
{
	char o[12][PATH_MAX + 64], a[PATH_MAX + 20], log[PATH_MAX + 40], last[512], st[64];
	const char *argv[40];
	static const char *const env[] = {"LC_ALL=C", "DEBIAN_FRONTEND=noninteractive", NULL};
	cleanup_close int lfd = -1, ofd = -1;
	int k = 0, ws = 0, r;

	snprintf(a, sizeof a, "%s/apt", vi->work);
	snprintf(o[0], sizeof o[0], "Dir=%s", a);
	snprintf(o[1], sizeof o[1], "Dir::State::status=%s/var/lib/dpkg/status", a);
	snprintf(o[2], sizeof o[2], "Dir::Etc::sourcelist=%s/etc/apt/sources.list", a);
	snprintf(o[3], sizeof o[3], "Dir::Etc::sourceparts=-");
	snprintf(o[4], sizeof o[4], "Dir::Etc::preferences=%s/etc/apt/preferences", a);
	snprintf(o[5], sizeof o[5], "Dir::Etc::preferencesparts=%s/etc/apt/preferences.d", a);
	snprintf(o[6], sizeof o[6], "Dir::Etc::parts=%s/etc/apt/apt.conf.d", a);
	snprintf(o[7], sizeof o[7], "Dir::Etc::trustedparts=%s/etc/apt/trusted.gpg.d", a);
	snprintf(o[8], sizeof o[8], "Debug::NoLocking=1");
	snprintf(o[9], sizeof o[9], "APT::Architecture=" BERTH_VM_ARCH);
	/* The work directory is the caller's alone (0700): as root, apt's
	 * download user _apt could not write it; the files it fetches are
	 * checked against the pin, not trusted for being apt's. */
	snprintf(o[10], sizeof o[10], "APT::Sandbox::User=root");
	snprintf(o[11], sizeof o[11], "Acquire::Languages=none");
	argv[k++] = "apt-get";
	argv[k++] = "-q";
	for (int i = 0; i < 12; i++) {
		argv[k++] = "-o";
		argv[k++] = o[i];
	}
	argv[k++] = verb;
	if (arg != NULL)
		argv[k++] = arg;
	argv[k] = NULL;
	snprintf(log, sizeof log, "%s/apt-%s.log", vi->work, verb);
	lfd = open(log, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (lfd < 0)
		return berth_err(err, errno, "cannot write `%s`", log);
	/* update's stdout too, apart: its Err: lines are all that tells of a mirror it could not read
	 * (apt-get update exits 0 then) */
	snprintf(log, sizeof log, "%s/apt-%s.out", vi->work, verb);
	ofd = strcmp(verb, "update") == 0
		  ? open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600)
		  : -1;
	struct berth_vm_cmd c = {
	    .argv = argv, .cwd = cwd, .env = env, .out_fd = ofd, .err_fd = lfd, .timeout_ms = timeout_ms};
	r = berth_vm_exec(&c, &ws, NULL, err);
	if (r < 0)
		return -1;
	berth_vm_log_line(lfd, false, last, sizeof last);
	if (r == 1)
		return berth_err(err, ETIMEDOUT, "`apt-get %s` did not finish in %d s%s%s", verb,
				 timeout_ms / 1000, last[0] ? ": " : "", last);
	if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
		return berth_err(err, 0, "`apt-get %s` failed (%s)%s%s", verb,
				 berth_vm_status_text(ws, st, sizeof st), last[0] ? ": " : "", last);
	return 0;
}

/*
 * The first problem `apt-get update` reported though it exited 0: a W: or
 * E: line of its stderr, else an Err: line of its stdout with the reason
 * on the next; "" when none.
 */
static void update_problem(const struct vm_install *vi, char *buf, size_t len)
{
	static const char *const files[] = {"apt-update.log", "apt-update.out"};

	buf[0] = '\0';
	for (size_t f = 0; f < BERTH_ARRAY_SIZE(files) && buf[0] == '\0'; f++) {
		char path[PATH_MAX + 32];
		cleanup_free char *text = NULL;
		struct berth_error ignored = {0};
		size_t n = 0;
		snprintf(path, sizeof path, "%s/%s", vi->work, files[f]);
		if (vm_read_file(path, 1 << 20, &text, &n, &ignored) < 0)
			continue;
		for (char *l = text, *e; *l != '\0' && buf[0] == '\0'; l = *e ? e + 1 : e) {
			e = strchrnul(l, '\n');
			if (strncmp(l, "W:", 2) == 0 || strncmp(l, "E:", 2) == 0)
				snprintf(buf, len, "%.*s", (int)(e - l), l);
			else if (strncmp(l, "Err:", 4) == 0) {
				char *r = *e ? e + 1 : e, *re = strchrnul(r, '\n');
				snprintf(buf, len, "%.*s: %.*s", (int)(e - l), l, (int)(re - r),
					 r + strspn(r, " "));
			}
		}
	}
	for (char *c = buf; *c != '\0'; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
}

/* The one .deb apt-get download left in WORK/dl, checked, moved to WORK/kernel.deb. */
static int take_download(struct vm_install *vi, struct berth_error *err)
{
	char dl[PATH_MAX + 8], path[PATH_MAX * 2], hex[65];
	cleanup_closedir DIR *d = NULL;
	cleanup_close int fd = -1;
	struct dirent *de;
	size_t size = 0;
	struct stat st;

	snprintf(dl, sizeof dl, "%s/dl", vi->work);
	d = opendir(dl);
	path[0] = '\0';
	while (d != NULL && (de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name);
		if (l > 4 && strcmp(de->d_name + l - 4, ".deb") == 0)
			snprintf(path, sizeof path, "%s/%s", dl, de->d_name);
	}
	if (path[0] == '\0')
		return berth_err(err, ENOENT, "`apt-get download` left no .deb in `%s`", dl);
	/* The type and size first: a wrong file is refused without reading it. */
	fd = berth_vm_open_file(path, UINT64_MAX, &st, err);
	if (fd < 0 || check_size("the downloaded .deb", (uint64_t)st.st_size, err) < 0)
		return -1;
	if (copy_hashing(fd, vi->deb, (size_t)BERTH_VM_DEB_SIZE, hex, &size, err) < 0)
		return -1;
	unlink(path);
	if (check_pin("the downloaded .deb", hex, size, err) < 0) {
		unlink(vi->deb);
		return berth_err_hint(
		    err, "the mirror serves another file under the pinned name: try another mirror");
	}
	return 0;
}

int vm_fetch_deb(struct vm_install *vi, struct berth_error *err)
{
	char **uris = NULL, dl[PATH_MAX + 8], first[1024];
	const char *pkgver = BERTH_VM_KERNEL_PACKAGE "=" BERTH_VM_KERNEL_VERSION;
	size_t n = 0;
	int r;

	snprintf(vi->deb, sizeof vi->deb, "%s/kernel.deb", vi->work);
	r = from_cache(vi, err);
	if (r <= 0)
		return r;
	if (debian_mirrors(vi, &uris, &n, err) < 0) {
		berth_strv_free(uris);
		return -1;
	}
	vm_say(vi, "downloading %s %s from %s%s", BERTH_VM_KERNEL_PACKAGE, BERTH_VM_KERNEL_VERSION, uris[0],
	       n > 1 ? " (and other mirrors)" : "");
	r = write_apt_config(vi, uris, n, err);
	snprintf(first, sizeof first, "%s%s", uris[0], n > 1 ? "` (and the others" : "");
	berth_strv_free(uris);
	snprintf(dl, sizeof dl, "%s/dl", vi->work);
	if (r < 0 || apt_get(vi, "update", NULL, NULL, APT_UPDATE_TIMEOUT_MS, err) < 0)
		return -1;
	if (apt_get(vi, "download", pkgver, dl, APT_DOWNLOAD_TIMEOUT_MS, err) < 0) {
		char problem[512];
		update_problem(vi, problem, sizeof problem);
		if (problem[0] == '\0')
			return -1;
		berth_err(err, err->errnum, "the mirror `%s%s could not be read: %s", first,
			  n > 1 ? ")" : "`", problem);
		return berth_err_hint(err, "check the network and the mirror in the apt sources, or give "
					   "--deb-cache DIR holding the pinned .deb as SHA256.deb");
	}
	if (take_download(vi, err) < 0)
		return -1;
	to_cache(vi);
	return 0;
}
