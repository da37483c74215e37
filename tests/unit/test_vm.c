/* SPDX-License-Identifier: MIT */
/*
 * test_vm.c - the microVM runtime's pinned guest (src/vm): the newc writer
 * (sorted, owned 0:0, mtime 0, inodes from 1, padded; read back by our own
 * strict reader and by GNU cpio; byte-identical for the same inputs and
 * different for one changed byte; its refusals), the apt sources filter,
 * the static-executable check, the VM directory, berth_vm_verify's
 * refusals, the tool runner's deadline, and berth_vm_install's refusals
 * that need no network (nothing left behind by any of them).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/rmtree.h"
#include "util/sys.h"
#include "vm/aptsrc.h"
#include "vm/cpio.h"
#include "vm/exec.h"
#include "vm/install.h"
#include "vm/pins.h"

/* ---- helpers ---- */

static char *tmpdir(void)
{
	char *d = strdup("/tmp/berth-test-vm.XXXXXX");
	assert_non_null(mkdtemp(d));
	return d;
}

static void rm_tree(char *d)
{
	struct berth_error err = {0};
	assert_int_equal(berth_rmtree(d, NULL, &err), 0);
	free(d);
}

static void write_file(const char *path, const void *data, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

/* The names in @dir, sorted and joined by spaces (dot files too, not . and ..). */
static void listing(const char *dir, char *out, size_t len)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort);
	size_t used = 0;

	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (strcmp(names[i]->d_name, ".") != 0 && strcmp(names[i]->d_name, "..") != 0)
			used += (size_t)snprintf(out + used, len - used, "%s%s", used ? " " : "",
						 names[i]->d_name);
		free(names[i]);
	}
	free(names);
}

/* ---- the newc writer ---- */

static const char init_bytes[] = "\177ELF pretend init";
static const char mod_bytes[] = "a module, xz-compressed they say";

/* The entries of a small initramfs, deliberately out of order. */
static size_t sample(struct berth_cpio_entry *e, const char *init, size_t init_len)
{
	size_t n = 0;
	e[n++] = (struct berth_cpio_entry){.path = "tmp", .mode = S_IFDIR | 0755};
	e[n++] = (struct berth_cpio_entry){.path = "lib/modules/x/vsock.ko.xz",
					   .mode = S_IFREG | 0644,
					   .data = mod_bytes,
					   .len = sizeof mod_bytes - 1};
	e[n++] =
	    (struct berth_cpio_entry){.path = "init", .mode = S_IFREG | 0755, .data = init, .len = init_len};
	e[n++] = (struct berth_cpio_entry){.path = "lib/modules/x", .mode = S_IFDIR | 0755};
	e[n++] = (struct berth_cpio_entry){.path = "dev", .mode = S_IFDIR | 0755};
	e[n++] = (struct berth_cpio_entry){.path = "lib", .mode = S_IFDIR | 0755};
	e[n++] = (struct berth_cpio_entry){.path = "lib/modules", .mode = S_IFDIR | 0755};
	e[n++] = (struct berth_cpio_entry){.path = "empty", .mode = S_IFREG | 0600};
	return n;
}

struct seen {
	char paths[16][64];
	struct berth_cpio_seen e[16];
	char data[16][64];
	size_t n;
};

static int collect(void *ctx, const struct berth_cpio_seen *e)
{
	struct seen *s = ctx;
	assert_true(s->n < 16);
	snprintf(s->paths[s->n], sizeof s->paths[0], "%s", e->path);
	s->e[s->n] = *e;
	assert_true(e->len < sizeof s->data[0]);
	memcpy(s->data[s->n], e->data, e->len);
	s->n++;
	return 0;
}

static void test_cpio_format(void **state)
{
	(void)state;
	struct berth_cpio_entry e[16];
	struct berth_buf b = {0};
	struct berth_error err = {0};
	struct seen s = {0};
	size_t n = sample(e, init_bytes, sizeof init_bytes - 1);
	static const char *const order[] = {
	    "dev", "empty", "init", "lib", "lib/modules", "lib/modules/x", "lib/modules/x/vsock.ko.xz",
	    "tmp"};

	assert_int_equal(berth_cpio_build(e, n, &b, &err), 0);
	assert_int_equal(b.len % 4, 0);
	assert_memory_equal(b.p, "070701", 6);
	assert_int_equal(berth_cpio_read(b.p, b.len, collect, &s, &err), (long)n);
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(s.paths[i], order[i]);
		assert_int_equal(s.e[i].ino, i + 1);
		assert_int_equal(s.e[i].uid, 0);
		assert_int_equal(s.e[i].gid, 0);
		assert_int_equal(s.e[i].mtime, 0);
		assert_int_equal(s.e[i].nlink, S_ISDIR(s.e[i].mode) ? 2 : 1);
	}
	assert_int_equal(s.e[2].mode, S_IFREG | 0755);
	assert_int_equal(s.e[2].len, sizeof init_bytes - 1);
	assert_memory_equal(s.data[2], init_bytes, sizeof init_bytes - 1);
	assert_int_equal(s.e[0].mode, S_IFDIR | 0755);
	assert_int_equal(s.e[1].len, 0);
	assert_int_equal(s.e[6].mode, S_IFREG | 0644);
	assert_memory_equal(s.data[6], mod_bytes, sizeof mod_bytes - 1);
	/* The trailer is last: its header, then the name and padding to 4. */
	assert_non_null(memmem(b.p + b.len - 128, 128, "TRAILER!!!", 10));
	berth_buf_free(&b);
}

static void test_cpio_reproducible(void **state)
{
	(void)state;
	struct berth_cpio_entry e[16], r[16];
	struct berth_buf a = {0}, b = {0}, c = {0};
	struct berth_error err = {0};
	char changed[sizeof init_bytes];
	size_t n = sample(e, init_bytes, sizeof init_bytes - 1);

	/* The same entries in the reverse order: the same bytes. */
	for (size_t i = 0; i < n; i++)
		r[i] = e[n - 1 - i];
	assert_int_equal(berth_cpio_build(e, n, &a, &err), 0);
	assert_int_equal(berth_cpio_build(r, n, &b, &err), 0);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.p, b.p, a.len);
	/* One byte of one input changed: other bytes, at that place. */
	memcpy(changed, init_bytes, sizeof changed);
	changed[5] ^= 1;
	n = sample(e, changed, sizeof init_bytes - 1);
	assert_int_equal(berth_cpio_build(e, n, &c, &err), 0);
	assert_int_equal(a.len, c.len);
	assert_true(memcmp(a.p, c.p, a.len) != 0);
	size_t diff = 0;
	for (size_t i = 0; i < a.len; i++)
		diff += a.p[i] != c.p[i];
	assert_int_equal(diff, 1);
	/* Appended to what the buffer held. */
	berth_buf_free(&c);
	berth_buf_puts(&c, "xy");
	n = sample(e, init_bytes, sizeof init_bytes - 1);
	assert_int_equal(berth_cpio_build(e, n, &c, &err), 0);
	assert_int_equal(c.len, a.len + 2);
	assert_memory_equal(c.p + 2, a.p, a.len);
	berth_buf_free(&a);
	berth_buf_free(&b);
	berth_buf_free(&c);
}

/* Run /usr/bin/cpio ARGS in @dir with @in as stdin, its stdout into @out. */
static int run_cpio(const char *dir, const char *in, const char *out, const char *a1, const char *a2,
		    const char *a3)
{
	pid_t pid = fork();
	int ws = 0;

	assert_true(pid >= 0);
	if (pid == 0) {
		int i = open(in, O_RDONLY), o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (i < 0 || o < 0 || dup2(i, 0) < 0 || dup2(o, 1) < 0 || chdir(dir) < 0)
			_exit(126);
		execl("/usr/bin/cpio", "cpio", a1, a2, a3, (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128;
}

static void test_cpio_gnu_reads_it(void **state)
{
	(void)state;
	struct berth_cpio_entry e[16];
	struct berth_buf b = {0};
	struct berth_error err = {0};
	char *d = tmpdir(), arch[PATH_MAX], out[PATH_MAX], x[PATH_MAX], path[PATH_MAX], text[512];
	size_t n = sample(e, init_bytes, sizeof init_bytes - 1);
	struct stat st;
	FILE *f;

	if (access("/usr/bin/cpio", X_OK) != 0)
		fail_msg("/usr/bin/cpio is missing: apt-get install cpio (scripts/deps.sh)");
	assert_int_equal(berth_cpio_build(e, n, &b, &err), 0);
	snprintf(arch, sizeof arch, "%s/a.cpio", d);
	snprintf(out, sizeof out, "%s/list", d);
	snprintf(x, sizeof x, "%s/x", d);
	write_file(arch, b.p, b.len, 0600);
	assert_int_equal(mkdir(x, 0700), 0);
	/* `cpio -t`: the names in the archive's order. */
	assert_int_equal(run_cpio(d, arch, out, "-t", "--quiet", NULL), 0);
	f = fopen(out, "r");
	assert_non_null(f);
	size_t got = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	text[got] = '\0';
	assert_string_equal(
	    text, "dev\nempty\ninit\nlib\nlib/modules\nlib/modules/x\nlib/modules/x/vsock.ko.xz\ntmp\n");
	/* `cpio -i`: the files, their bytes and modes. */
	assert_int_equal(run_cpio(x, arch, out, "-id", "--quiet", "--no-absolute-filenames"), 0);
	snprintf(path, sizeof path, "%s/init", x);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	assert_int_equal(st.st_size, sizeof init_bytes - 1);
	snprintf(path, sizeof path, "%s/lib/modules/x/vsock.ko.xz", x);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	f = fopen(path, "r");
	assert_non_null(f);
	got = fread(text, 1, sizeof text, f);
	fclose(f);
	assert_int_equal(got, sizeof mod_bytes - 1);
	assert_memory_equal(text, mod_bytes, got);
	snprintf(path, sizeof path, "%s/tmp", x);
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	berth_buf_free(&b);
	rm_tree(d);
}

static void expect_refused(struct berth_cpio_entry *e, size_t n, int errnum, const char *needle)
{
	struct berth_buf b = {0};
	struct berth_error err = {0};

	berth_buf_puts(&b, "kept");
	assert_int_equal(berth_cpio_build(e, n, &b, &err), -1);
	assert_int_equal(err.errnum, errnum);
	if (strstr(err.msg, needle) == NULL)
		fail_msg("`%s` not in `%s`", needle, err.msg);
	assert_int_equal(b.len, 4); /* nothing appended */
	berth_buf_free(&b);
}

static void test_cpio_refusals(void **state)
{
	(void)state;
	static const char *const bad[] = {"",   "/init", "a/../b",     "a//b", "a/",   ".",
					  "..", "./x",   "TRAILER!!!", "a\nb", "a\x7f"};
	struct berth_cpio_entry e[2];

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_false(berth_cpio_path_ok(bad[i]));
		e[0] = (struct berth_cpio_entry){.path = bad[i], .mode = S_IFDIR | 0755};
		expect_refused(e, 1, EINVAL, "bad cpio entry path");
	}
	assert_true(berth_cpio_path_ok("lib/modules/6.12/vsock.ko.xz"));
	assert_true(berth_cpio_path_ok("..a/b.."));
	e[0] = (struct berth_cpio_entry){.path = "dev", .mode = S_IFDIR | 0755};
	e[1] = (struct berth_cpio_entry){.path = "dev", .mode = S_IFDIR | 0700};
	expect_refused(e, 2, EEXIST, "cpio entry `dev` appears twice");
	e[0] = (struct berth_cpio_entry){.path = "lib/x", .mode = S_IFREG | 0644};
	expect_refused(e, 1, ENOENT, "the parent directory of cpio entry `lib/x` is not in the archive");
	e[0] = (struct berth_cpio_entry){.path = "lib", .mode = S_IFREG | 0644};
	e[1] = (struct berth_cpio_entry){.path = "lib/x", .mode = S_IFREG | 0644};
	expect_refused(e, 2, ENOENT, "`lib/x`");
	e[0] = (struct berth_cpio_entry){.path = "link", .mode = S_IFLNK | 0777};
	expect_refused(e, 1, EINVAL, "cpio entry `link` is neither a file nor a directory (mode 0120777)");
	e[0] = (struct berth_cpio_entry){
	    .path = "big", .mode = S_IFREG | 0644, .data = "", .len = (size_t)1 << 32};
	expect_refused(e, 1, EFBIG, "cpio entry `big` is too large");
}

static void test_cpio_reader_strict(void **state)
{
	(void)state;
	struct berth_cpio_entry e[16];
	struct berth_buf b = {0};
	struct berth_error err = {0};
	size_t n = sample(e, init_bytes, sizeof init_bytes - 1);
	char *copy;

	assert_int_equal(berth_cpio_build(e, n, &b, &err), 0);
	copy = malloc(b.len + 8);
	assert_non_null(copy);
	/* Trailing NULs (a block-padded archive) are fine; anything else after the trailer is not. */
	memcpy(copy, b.p, b.len);
	memset(copy + b.len, 0, 8);
	assert_int_equal(berth_cpio_read(copy, b.len + 8, NULL, NULL, &err), (long)n);
	copy[b.len + 3] = 'x';
	assert_int_equal(berth_cpio_read(copy, b.len + 8, NULL, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "bytes after the trailer"));
	/* Every truncation is refused. */
	for (size_t cut = 0; cut < b.len; cut += 7)
		assert_int_equal(berth_cpio_read(b.p, cut, NULL, NULL, &err), -1);
	/* The magic, a hex field, the padding. */
	memcpy(copy, b.p, b.len);
	copy[5] = '2';
	assert_int_equal(berth_cpio_read(copy, b.len, NULL, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "at byte 0: not the newc magic"));
	memcpy(copy, b.p, b.len);
	copy[10] = 'g';
	assert_int_equal(berth_cpio_read(copy, b.len, NULL, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "not 8 hex digits"));
	memcpy(copy, b.p, b.len);
	copy[110 + 4] = 'x'; /* "dev\0" then 0 padding bytes: 110 + 4 = 114, a multiple of 2 not 4 */
	assert_int_equal(berth_cpio_read(copy, b.len, NULL, NULL, &err), -1);
	free(copy);
	berth_buf_free(&b);
}

/* ---- apt sources ---- */

static char *uris_of(const char *text, enum berth_apt_format fmt)
{
	struct berth_error err = {0};
	char **u = NULL, *joined = calloc(1, 4096);
	size_t n = 0;

	assert_true(berth_apt_debian_uris(text, fmt, &u, &n, &err) >= 0);
	for (size_t i = 0; i < n; i++)
		snprintf(joined + strlen(joined), 4096 - strlen(joined), "%s%s", i ? " " : "", u[i]);
	berth_strv_free(u);
	return joined;
}

static void expect_uris(const char *text, enum berth_apt_format fmt, const char *want)
{
	char *got = uris_of(text, fmt);
	if (strcmp(got, want) != 0)
		fail_msg("want `%s`, got `%s` from:\n%s", want, got, text);
	free(got);
}

static void test_apt_sources(void **state)
{
	(void)state;
	/* This machine's debian.sources, its shape: the main archive is taken, security is not. */
	expect_uris(
	    "Types: deb\n# a comment\nURIs: http://mirror.example/debian\nSuites: bookworm bookworm-updates\n"
	    "Components: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n"
	    "Types: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\n"
	    "Components: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n",
	    BERTH_APT_DEB822, "http://mirror.example/debian");
	/* A third party's suite and keyring, deb-src only, Enabled: no, another architecture. */
	expect_uris(
	    "Types: deb\nURIs: https://third.example/node_20.x\nSuites: nodistro\nComponents: main\n"
	    "Signed-By: /usr/share/keyrings/nodesource.gpg\n\n"
	    "Types: deb\nURIs: https://other.example/debian\nSuites: bookworm\nComponents: main\n"
	    "Signed-By: /usr/share/keyrings/other.gpg\n\n"
	    "Types: deb-src\nURIs: http://src.example/debian\nSuites: trixie\nComponents: main\n\n"
	    "Types: deb\nEnabled: no\nURIs: http://off.example/debian\nSuites: trixie\nComponents: main\n\n"
	    "Types: deb\nURIs: http://arm.example/debian\nSuites: trixie\nArchitectures: arm64\nComponents: "
	    "main\n\n"
	    "types: deb deb-src\nuris: http://a.example/debian http://b.example/debian/\n  "
	    "http://c.example/d\n"
	    "suites: trixie\ncomponents: main\nenabled: yes\narchitectures: amd64 i386\n",
	    BERTH_APT_DEB822, "http://a.example/debian http://b.example/debian/ http://c.example/d");
	/* An inline key block is not Debian's keyring file. */
	expect_uris("Types: deb\nURIs: http://k.example/debian\nSuites: trixie\nSigned-By:\n -----BEGIN PGP "
		    "PUBLIC KEY "
		    "BLOCK-----\n .\n xyz\n",
		    BERTH_APT_DEB822, "");
	/* One-line format. */
	expect_uris(
	    "# deb http://commented.example/debian bookworm main\n"
	    "deb http://one.example/debian bookworm main contrib\n"
	    "deb [arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] "
	    "http://two.example/debian/ "
	    "trixie main\n"
	    "deb [ signed-by=/usr/share/keyrings/google.gpg ] http://three.example/debian trixie main\n"
	    "deb https://packages.example/apt cloud-sdk-bookworm main\n"
	    "deb http://security.example/debian-security bookworm-security main\n"
	    "deb-src http://src.example/debian bookworm main\n"
	    "deb [arch=arm64] http://arm.example/debian bookworm main\n"
	    "deb http://one.example/debian/ bookworm-updates main\n"
	    "deb http://one.example/debian/ sid main\n"
	    "deb ftp://old.example/debian bookworm main\n"
	    "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg\n",
	    BERTH_APT_ONE_LINE, "http://one.example/debian http://two.example/debian/");
	expect_uris("", BERTH_APT_ONE_LINE, "");
	expect_uris("", BERTH_APT_DEB822, "");
	expect_uris("\n\n#\n", BERTH_APT_DEB822, "");
	assert_true(berth_apt_debian_suite("trixie"));
	assert_true(berth_apt_debian_suite("stable"));
	assert_false(berth_apt_debian_suite("trixie-security"));
	assert_false(berth_apt_debian_suite("jammy"));
	assert_false(berth_apt_debian_suite(""));
}

/* ---- the static-executable check ---- */

static void test_elf_static(void **state)
{
	(void)state;
	unsigned char elf[64 + 56 * 2] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
	uint64_t phoff = 64;
	uint16_t phentsize = 56, phnum = 2, type = 2, machine = 62;
	uint32_t interp = 3, load = 1;

	memcpy(elf + 16, &type, 2);
	memcpy(elf + 18, &machine, 2);
	memcpy(elf + 32, &phoff, 8);
	memcpy(elf + 54, &phentsize, 2);
	memcpy(elf + 56, &phnum, 2);
	memcpy(elf + 64, &load, 4);
	memcpy(elf + 64 + 56, &load, 4);
	assert_true(berth_vm_elf_static(elf, sizeof elf));
	memcpy(elf + 64 + 56, &interp, 4);
	assert_false(berth_vm_elf_static(elf, sizeof elf));
	memcpy(elf + 64 + 56, &load, 4);
	assert_false(berth_vm_elf_static(elf, sizeof elf - 1)); /* the program headers run past the end */
	elf[4] = 1;
	assert_false(berth_vm_elf_static(elf, sizeof elf)); /* ELF32 */
	assert_false(berth_vm_elf_static("#!/bin/sh\n", 10));
	/* This test is linked dynamically: it has an interpreter. */
	char *self = NULL;
	size_t len = 0;
	FILE *f = fopen("/proc/self/exe", "r");
	assert_non_null(f);
	self = malloc(1 << 20);
	assert_non_null(self);
	len = fread(self, 1, 1 << 20, f);
	fclose(f);
	assert_true(len > 64);
	assert_false(berth_vm_elf_static(self, len));
	free(self);
}

/* ---- the VM directory and the init ---- */

static void test_vm_dir(void **state)
{
	(void)state;
	char buf[PATH_MAX];
	struct berth_error err = {0};

	setenv("BERTH_VM_DIR", "/somewhere/vm", 1);
	assert_int_equal(berth_vm_dir(buf, sizeof buf, &err), 0);
	assert_string_equal(buf, "/somewhere/vm");
	setenv("BERTH_VM_DIR", "relative/vm", 1);
	assert_int_equal(berth_vm_dir(buf, sizeof buf, &err), -1);
	assert_int_equal(err.status, BERTH_EXIT_USAGE);
	assert_non_null(strstr(err.msg, "BERTH_VM_DIR `relative/vm` is not an absolute path"));
	unsetenv("BERTH_VM_DIR");
	setenv("XDG_STATE_HOME", "/state", 1);
	assert_int_equal(berth_vm_dir(buf, sizeof buf, &err), 0);
	assert_string_equal(buf, "/state/berth/vm");
	unsetenv("XDG_STATE_HOME");
	setenv("BERTH_VMINIT", "/x/berth-vminit", 1);
	assert_int_equal(berth_vm_init_path(buf, sizeof buf, &err), 0);
	assert_string_equal(buf, "/x/berth-vminit");
	unsetenv("BERTH_VMINIT");
	assert_int_equal(berth_vm_init_path(buf, sizeof buf, &err), 0);
	assert_non_null(strstr(buf, "/berth-vminit"));
	assert_int_equal(buf[0], '/');
}

/* ---- berth_vm_verify's refusals ---- */

static void write_guest_json(const char *dir, const char *package, const char *ir_sha)
{
	char path[PATH_MAX], text[2048];
	int n =
	    snprintf(text, sizeof text,
		     "{\"format\":1,\"kernel\":{\"package\":\"%s\",\"version\":\"%s\",\"deb_sha256\":\"%s\","
		     "\"sha256\":\"%s\"},\"initramfs\":{\"sha256\":\"%s\"},\"init\":{\"sha256\":\"x\"},"
		     "\"modules\":[]}",
		     package, BERTH_VM_KERNEL_VERSION, BERTH_VM_DEB_SHA256, BERTH_VM_VMLINUZ_SHA256, ir_sha);
	snprintf(path, sizeof path, "%s/guest.json", dir);
	write_file(path, text, (size_t)n, 0644);
}

static void expect_verify(const char *dir, int errnum, const char *needle)
{
	struct berth_error err = {0};
	struct berth_vm_guest g;

	assert_int_equal(berth_vm_verify(dir, &g, &err), -1);
	assert_int_equal(err.status, BERTH_EXIT_INTERNAL);
	assert_int_equal(err.errnum, errnum);
	if (strstr(err.msg, needle) == NULL)
		fail_msg("`%s` not in `%s`", needle, err.msg);
	assert_string_equal(err.hint, "run `berth vm install`");
}

static void test_verify_refusals(void **state)
{
	(void)state;
	char *d = tmpdir(), path[PATH_MAX], want[PATH_MAX + 64];
	/* sha256("initramfs") would be needed for success: the success path is the integration test's. */
	const char *ir = "0000000000000000000000000000000000000000000000000000000000000000";

	expect_verify(d, ENOENT, "no guest installed in `");
	snprintf(path, sizeof path, "%s/guest.json", d);
	write_file(path, "{not json", 9, 0644);
	expect_verify(d, EINVAL, "guest.json` is not a guest description");
	write_guest_json(d, "linux-image-6.1.0-other", ir);
	expect_verify(d, EINVAL,
		      "is not the pinned one: kernel.package is `linux-image-6.1.0-other`, berth pins "
		      "`" BERTH_VM_KERNEL_PACKAGE "`");
	write_guest_json(d, BERTH_VM_KERNEL_PACKAGE, ir);
	snprintf(want, sizeof want, "cannot read `%s/vmlinuz`", d);
	expect_verify(d, ENOENT, want);
	snprintf(path, sizeof path, "%s/vmlinuz", d);
	write_file(path, "not the kernel", 14, 0644);
	snprintf(want, sizeof want, "`%s/vmlinuz` is damaged: sha256 ", d);
	expect_verify(d, EBADMSG, want);
	expect_verify(d, EBADMSG, ", want " BERTH_VM_VMLINUZ_SHA256);
	rm_tree(d);
}

/* ---- the tool runner ---- */

static void test_exec(void **state)
{
	(void)state;
	struct berth_error err = {0};
	int ws = -1;
	long ms = 0;
	char text[64];
	const char *t[] = {"true", NULL}, *f[] = {"false", NULL}, *s[] = {"sleep", "30", NULL},
		   *none[] = {"berth-no-such-tool", NULL};
	struct berth_vm_cmd c = {.argv = t, .out_fd = -1, .err_fd = -1};

	assert_int_equal(berth_vm_exec(&c, &ws, &ms, &err), 0);
	assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
	c.argv = f;
	assert_int_equal(berth_vm_exec(&c, &ws, &ms, &err), 0);
	assert_string_equal(berth_vm_status_text(ws, text, sizeof text), "exit status 1");
	/* The deadline: killed and reaped in time. */
	c.argv = s;
	c.timeout_ms = 300;
	int64_t t0 = berth_now_ms();
	assert_int_equal(berth_vm_exec(&c, &ws, &ms, &err), 1);
	assert_true(berth_now_ms() - t0 < 3000);
	assert_true(ms >= 300);
	assert_string_equal(berth_vm_status_text(ws, text, sizeof text), "killed by signal SIGKILL");
	c.argv = none;
	assert_int_equal(berth_vm_exec(&c, &ws, &ms, &err), -1);
	assert_int_equal(err.errnum, ENOENT);
	assert_non_null(strstr(err.msg, "`berth-no-such-tool` not found"));
}

/* ---- berth_vm_install's refusals (no network) ---- */

struct inst {
	char *top;
	char vm[PATH_MAX], apt[PATH_MAX], cache[PATH_MAX], init[PATH_MAX];
};

static void inst_setup(struct inst *s)
{
	char path[PATH_MAX + 32];
	/* A file the ELF check takes for a static executable (the install never runs it). */
	unsigned char elf[64 + 56] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
	uint64_t phoff = 64;
	uint16_t phentsize = 56, phnum = 1, type = 2, machine = 62;
	uint32_t load = 1;

	memcpy(elf + 16, &type, 2);
	memcpy(elf + 18, &machine, 2);
	memcpy(elf + 32, &phoff, 8);
	memcpy(elf + 54, &phentsize, 2);
	memcpy(elf + 56, &phnum, 2);
	memcpy(elf + 64, &load, 4);
	s->top = tmpdir();
	snprintf(s->vm, sizeof s->vm, "%s/state/vm", s->top);
	snprintf(s->apt, sizeof s->apt, "%s/apt", s->top);
	snprintf(s->cache, sizeof s->cache, "%s/cache", s->top);
	snprintf(s->init, sizeof s->init, "%s/init", s->top);
	assert_int_equal(mkdir(s->apt, 0700), 0);
	assert_int_equal(mkdir(s->cache, 0700), 0);
	snprintf(path, sizeof path, "%s/sources.list.d", s->apt);
	assert_int_equal(mkdir(path, 0700), 0);
	write_file(s->init, elf, sizeof elf, 0755);
}

static void expect_install(struct inst *s, int errnum, const char *needle)
{
	struct berth_vm_install_opts o = {
	    .dir = s->vm, .init = s->init, .deb_cache = s->cache, .apt_dir = s->apt};
	struct berth_error err = {0};
	char path[PATH_MAX + 16], list[1024];

	assert_int_equal(berth_vm_install(&o, NULL, &err), -1);
	if (err.errnum != errnum || strstr(err.msg, needle) == NULL)
		fail_msg("want errno %d and `%s`, got %d and `%s`", errnum, needle, err.errnum, err.msg);
	/* Nothing left behind: no work directory, no VM directory. */
	snprintf(path, sizeof path, "%s/state", s->top);
	listing(path, list, sizeof list);
	snprintf(path, sizeof path, ".vm-install.%ld.lock", (long)geteuid());
	assert_true(strcmp(list, "") == 0 || strcmp(list, path) == 0);
}

static void test_install_refusals(void **state)
{
	(void)state;
	struct inst s;
	char path[PATH_MAX + 128], want[PATH_MAX + 128];
	int fd;

	inst_setup(&s);
	/* No mirror: the files read are named. */
	snprintf(path, sizeof path, "%s/sources.list.d/third.sources", s.apt);
	write_file(path,
		   "Types: deb\nURIs: https://third.example/node\nSuites: nodistro\nComponents: main\n"
		   "Signed-By: /usr/share/keyrings/nodesource.gpg\n",
		   105, 0644);
	snprintf(path, sizeof path, "%s/sources.list.d/off.list.disabled", s.apt);
	write_file(path, "deb http://x.example/debian bookworm main\n", 42, 0644);
	snprintf(want, sizeof want,
		 "no Debian mirror in the apt sources (read: %s/sources.list.d/third.sources)", s.apt);
	expect_install(&s, 0, want);
	/* A cached .deb of the pinned size but other bytes: refused, nothing installed, the cache named. */
	snprintf(path, sizeof path, "%s/%s.deb", s.cache, BERTH_VM_DEB_SHA256);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, BERTH_VM_DEB_SIZE), 0);
	close(fd);
	snprintf(want, sizeof want, "the cached .deb `%s` is not the pinned one: sha256 ", path);
	expect_install(&s, EBADMSG, want);
	/* ...and of another size. */
	fd = open(path, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "!<arch>\n", 8), 8);
	close(fd);
	expect_install(&s, EBADMSG, "is not the pinned one: 8 bytes, want 34671208");
	assert_int_equal(unlink(path), 0);
	/* A dynamic init, then none. */
	snprintf(s.init, sizeof s.init, "/proc/self/exe");
	expect_install(&s, 0, "is not a static x86-64 executable");
	snprintf(s.init, sizeof s.init, "%s/no-init", s.top);
	snprintf(want, sizeof want, "no guest init `%s`", s.init);
	expect_install(&s, ENOENT, want);
	/* A VM directory that holds something else is never swapped away. */
	snprintf(s.init, sizeof s.init, "%s/init", s.top);
	snprintf(path, sizeof path, "%s/state", s.top);
	mkdir(path, 0700);
	assert_int_equal(mkdir(s.vm, 0700), 0);
	snprintf(path, sizeof path, "%s/precious", s.vm);
	write_file(path, "x", 1, 0600);
	struct berth_vm_install_opts o = {
	    .dir = s.vm, .init = s.init, .deb_cache = s.cache, .apt_dir = s.apt};
	struct berth_error err = {0};
	assert_int_equal(berth_vm_install(&o, NULL, &err), -1);
	assert_int_equal(err.status, BERTH_EXIT_USAGE);
	assert_non_null(strstr(err.msg, "is not a VM directory (it holds `precious`, not a file berth "
					"installs): refusing to replace it"));
	assert_int_equal(access(path, F_OK), 0);
	/* A shared parent (BERTH_VM_DIR=/tmp/vm): its mode is left alone, another user's work directory too. */
	struct stat st;
	snprintf(path, sizeof path, "%s/shared", s.top);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(chmod(path, 01777), 0);
	snprintf(want, sizeof want, "%s/shared/.vm-install.other", s.top);
	assert_int_equal(mkdir(want, 0700), 0);
	if (geteuid() == 0)
		assert_int_equal(chown(want, 65534, 65534), 0);
	snprintf(s.vm, sizeof s.vm, "%s/shared/vm", s.top); /* o.dir points at it */
	assert_int_equal(berth_vm_install(&o, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "no Debian mirror"));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 01777);
	assert_int_equal(access(want, F_OK), geteuid() == 0 ? 0 : -1);
	rm_tree(s.top);
}

/* berth_vm_open_file judges type and size before a byte is read; berth_vm_check_path refuses before anything is made. */
static void test_open_and_paths(void **state)
{
	(void)state;
	char *top = tmpdir(), path[PATH_MAX], lnk[PATH_MAX], longp[PATH_MAX + 64];
	struct berth_error err = {0};
	struct stat st;
	int fd;

	snprintf(path, sizeof path, "%s/fifo", top);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(berth_vm_open_file(path, 100, &st, &err),
			 -1); /* no writer: would block without O_NONBLOCK */
	assert_int_equal(err.errnum, EINVAL);
	assert_non_null(strstr(err.msg, "is not a regular file"));
	snprintf(path, sizeof path, "%s/big", top);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)40 << 30), 0); /* sparse */
	close(fd);
	assert_int_equal(berth_vm_open_file(path, 1 << 20, &st, &err), -1);
	assert_int_equal(err.errnum, EFBIG);
	assert_non_null(strstr(err.msg, "is too large: 42949672960 bytes, at most 1048576"));
	snprintf(lnk, sizeof lnk, "%s/link", top);
	assert_int_equal(symlink(path, lnk), 0);
	assert_int_equal(berth_vm_open_file(lnk, UINT64_MAX, &st, &err), -1);
	assert_int_equal(err.errnum, ELOOP);
	fd = berth_vm_open_file(path, UINT64_MAX, &st, &err);
	assert_true(fd >= 0);
	assert_int_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	close(fd);
	rm_tree(top);

	memset(longp, 'a', sizeof longp - 1);
	longp[0] = '/';
	longp[sizeof longp - 1] = '\0';
	assert_int_equal(berth_vm_check_path("--dir", longp, true, &err), -1);
	assert_int_equal(err.errnum, ENAMETOOLONG);
	assert_int_equal(err.status, BERTH_EXIT_USAGE);
	assert_non_null(strstr(err.msg, "--dir `/aaa"));
	static const char *const bad[] = {"/a/..", "/a/../b", "/a/./b", "/a//b", "/.", "a/b"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_int_equal(berth_vm_check_path("--dir", bad[i], true, &err), -1);
		assert_int_equal(err.status, BERTH_EXIT_USAGE);
	}
	static const char *const good[] = {"/a/b", "/a/b/", "/a/.b", "/a/..b", "/"};
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
		assert_int_equal(berth_vm_check_path("--dir", good[i], true, &err), 0);
	assert_int_equal(berth_vm_check_path("--init", "rel/init", false, &err), 0);
}

/* Commas in a qemu option value are doubled; what does not fit is refused, never cut. */
static void test_qemu_opt(void **state)
{
	(void)state;
	char buf[64];

	assert_int_equal(berth_vm_qemu_opt(buf, sizeof buf, "file,id=c0,path=", "/tmp/a,path=/x,,y"), 0);
	assert_string_equal(buf, "file,id=c0,path=/tmp/a,,path=/x,,,,y");
	assert_int_equal(berth_vm_qemu_opt(buf, 20, "file,id=c0,path=", "/tmp/a,b"), -1);
	assert_string_equal(buf, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cpio_format),        cmocka_unit_test(test_cpio_reproducible),
	    cmocka_unit_test(test_cpio_gnu_reads_it),  cmocka_unit_test(test_cpio_refusals),
	    cmocka_unit_test(test_cpio_reader_strict), cmocka_unit_test(test_apt_sources),
	    cmocka_unit_test(test_elf_static),         cmocka_unit_test(test_vm_dir),
	    cmocka_unit_test(test_verify_refusals),    cmocka_unit_test(test_exec),
	    cmocka_unit_test(test_install_refusals),   cmocka_unit_test(test_open_and_paths),
	    cmocka_unit_test(test_qemu_opt),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
