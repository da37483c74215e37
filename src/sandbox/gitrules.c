/* SPDX-License-Identifier: MIT */
/*
 * gitrules.c - git's repository and config rules (see gitrules.h for the
 * sources of each rule).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "gitrules.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../util/cleanup.h"

/* ---- fd-relative opening, never through a symbolic link ---- */

/* One component through no link: O_PATH opens are checked with fstat
 * (O_PATH|O_NOFOLLOW would hand back the link itself). */
static int open_component(int base, const char *comp, int flags)
{
	if (!(flags & O_PATH))
		return openat(base, comp, flags | O_NOFOLLOW);
	int fd = openat(base, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	int e = S_ISLNK(st.st_mode) ? ELOOP : ((flags & O_DIRECTORY) && !S_ISDIR(st.st_mode)) ? ENOTDIR : 0;
	if (e != 0) {
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* Walk @path from @dirfd one component at a time (where openat2(2) is
 * missing).  @beneath: refuse absolute paths and "..". */
static int walk_open(int dirfd, const char *path, int flags, bool beneath)
{
	char buf[PATH_MAX];
	cleanup_close int cur = -1;
	int base = dirfd;

	if (strlen(path) >= sizeof buf) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(buf, path);
	char *p = buf;
	if (*p == '/') {
		if (beneath) {
			errno = EXDEV;
			return -1;
		}
		cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (cur < 0)
			return -1;
		base = cur;
		while (*p == '/')
			p++;
	}
	for (;;) {
		char *next = strchr(p, '/');
		if (next != NULL) {
			*next++ = '\0';
			while (*next == '/')
				next++;
		}
		if (beneath && strcmp(p, "..") == 0) {
			errno = EXDEV;
			return -1;
		}
		const char *comp = *p == '\0' ? "." : p;
		if (next == NULL || *next == '\0')
			return open_component(base, comp, flags);
		int fd = open_component(base, comp, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			return -1;
		cleanup_closep(&cur);
		cur = fd;
		base = cur;
		p = next;
	}
}

/* Open @path below @dirfd through no symbolic link (ELOOP for one): a
 * single name with O_NOFOLLOW, several with openat2 RESOLVE_NO_SYMLINKS
 * (and RESOLVE_BENEATH when @beneath: EXDEV for absolute or ".."). */
static int open_nofollow(int dirfd, const char *path, int flags, bool beneath)
{
	bool single = strchr(path, '/') == NULL && strcmp(path, "..") != 0;

	if (single && !(flags & O_PATH))
		return openat(dirfd, path, flags | O_NOFOLLOW);
	if (beneath && strcmp(path, "..") == 0) {
		errno = EXDEV;
		return -1;
	}
	struct open_how how = {
	    /* with O_PATH, O_NOFOLLOW would return the link itself */
	    .flags = (uint64_t)(flags | ((flags & O_PATH) ? 0 : O_NOFOLLOW)),
	    .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | (beneath ? RESOLVE_BENEATH : 0),
	};
	int fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof how);
	if (fd < 0 && (errno == ENOSYS || errno == E2BIG))
		return walk_open(dirfd, path, flags, beneath);
	return fd;
}

/* Read at most @max bytes of the regular file @name in @dirfd into a
 * malloc'd buffer (NUL-terminated; *@len bytes).  Returns 0, or -1 with
 * errno: as open_nofollow, EINVAL (not a regular file), E2BIG (too big). */
static int read_bounded(int dirfd, const char *name, size_t max, char **out, size_t *len)
{
	cleanup_close int fd = open_nofollow(dirfd, name, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, true);
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0)
		return -1;
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		return -1;
	}
	if ((uintmax_t)st.st_size > max) {
		errno = E2BIG;
		return -1;
	}
	size_t cap = (size_t)st.st_size + 1, n = 0;
	cleanup_free char *buf = malloc(cap + 1);
	if (buf == NULL)
		return -1;
	for (;;) {
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max) { /* grew while read */
			errno = E2BIG;
			return -1;
		}
		if (n == cap) {
			size_t ncap = cap * 2 > max + 1 ? max + 1 : cap * 2;
			char *nb = realloc(buf, ncap + 1);
			if (nb == NULL)
				return -1;
			buf = nb;
			cap = ncap;
		}
	}
	buf[n] = '\0';
	*len = n;
	*out = steal_pointer(&buf);
	return 0;
}

/* ---- HEAD, git directories, commondir ---- */

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* git's isspace(): space, tab, LF and CR only. */
static bool git_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

bool berth_git_head_valid(int dirfd)
{
	char buf[BERTH_GIT_HEAD_MAX + 1];
	struct stat st;

	if (fstatat(dirfd, "HEAD", &st, AT_SYMLINK_NOFOLLOW) < 0)
		return false;
	if (S_ISLNK(st.st_mode)) {
		ssize_t n = readlinkat(dirfd, "HEAD", buf, sizeof buf - 1);
		return n >= 5 && memcmp(buf, "refs/", 5) == 0;
	}
	cleanup_close int fd =
	    openat(dirfd, "HEAD", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return false;
	size_t n = 0;
	while (n < sizeof buf - 1) {
		ssize_t r = read(fd, buf + n, sizeof buf - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return false;
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	if (strncmp(buf, "ref:", 4) == 0) {
		const char *p = buf + 4;
		while (git_space(*p))
			p++;
		if (strncmp(p, "refs/", 5) == 0)
			return true;
	}
	for (size_t i = 0; i < 40; i++)
		if (!is_hex(buf[i]))
			return false;
	return true;
}

/* git's access(X_OK) on @name, without following a link (a link counts). */
static bool git_x_ok(int dirfd, const char *name)
{
	struct stat st;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return false;
	return S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode) || (st.st_mode & 0111) != 0;
}

/* Read `commondir` in @dirfd, trailing LF/CR stripped.  Returns 1 (read
 * into @out), 0 (absent), -1 (present but unusable: link, not regular,
 * too big, unreadable), -2 (empty: git dies on it). */
static int read_commondir(int dirfd, char **out)
{
	size_t len = 0;
	char *buf = NULL;

	if (read_bounded(dirfd, "commondir", BERTH_GIT_COMMONDIR_MAX, &buf, &len) < 0)
		return errno == ENOENT ? 0 : -1;
	if (len == 0) {
		free(buf);
		return -2;
	}
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
		buf[--len] = '\0';
	if (memchr(buf, '\0', len) != NULL) { /* git would read a shorter name: unusable */
		free(buf);
		return -1;
	}
	if (len == 0) { /* "\n" alone: git joins "<gitdir>/" and "", the gitdir itself */
		free(buf);
		*out = strdup(".");
		return *out != NULL ? 1 : -1;
	}
	*out = buf;
	return 1;
}

/* Open the directory @path names, relative to @dirfd, through no link. */
static int open_dir_nolinks(int dirfd, const char *path)
{
	return open_nofollow(dirfd, path, O_PATH | O_DIRECTORY | O_CLOEXEC, false);
}

bool berth_git_is_gitdir(int dirfd)
{
	cleanup_free char *common = NULL;
	cleanup_close int cfd = -1;

	if (!berth_git_head_valid(dirfd))
		return false;
	int rc = read_commondir(dirfd, &common);
	if (rc == -1)
		return true; /* berth cannot see what git would: fail closed */
	if (rc == -2)
		return false;
	if (rc == 1) {
		cfd = open_dir_nolinks(dirfd, common);
		if (cfd < 0)
			return errno == ELOOP || errno == EXDEV;
	}
	int base = cfd >= 0 ? cfd : dirfd;
	return git_x_ok(base, "objects") && git_x_ok(base, "refs");
}

static bool same_inode(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* The directory @dirfd's commondir should name: stat into @want. */
static int expected_common(int dirfd, struct stat *want)
{
	cleanup_close int parent = openat(dirfd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
	cleanup_close int grand = -1;
	struct stat pst, wst;

	if (parent < 0)
		return -1;
	grand = openat(parent, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (grand < 0)
		return -1;
	if (fstat(parent, &pst) == 0 && fstatat(grand, "worktrees", &wst, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISDIR(wst.st_mode) && same_inode(&pst, &wst))
		return fstat(grand, want);
	return fstat(dirfd, want);
}

bool berth_git_commondir_ok(int dirfd)
{
	cleanup_free char *common = NULL;
	struct stat want, got;

	int rc = read_commondir(dirfd, &common);
	if (rc == 0)
		return true;
	if (rc < 0)
		return false;
	cleanup_close int cfd = open_dir_nolinks(dirfd, common);
	if (cfd < 0 || fstat(cfd, &got) < 0)
		return false;
	if (expected_common(dirfd, &want) < 0)
		return false;
	return same_inode(&want, &got);
}

int berth_git_read_gitfile(int dirfd, const char *name, char *out, size_t outlen, struct berth_error *err)
{
	cleanup_free char *buf = NULL;
	struct stat st;
	size_t len = 0;

	cleanup_close int pfd = open_nofollow(dirfd, name, O_PATH | O_CLOEXEC, true);
	if (pfd >= 0 && fstat(pfd, &st) == 0 && S_ISDIR(st.st_mode))
		return 0; /* a .git directory, not a file */
	if (read_bounded(dirfd, name, BERTH_GIT_GITFILE_MAX, &buf, &len) < 0) {
		if (errno == ENOENT)
			return 0;
		return berth_err(err, errno, "cannot read the git file `%s`", name);
	}
	if (len < 8 || memcmp(buf, "gitdir: ", 8) != 0)
		return berth_err(err, EINVAL, "`%s` does not start with `gitdir: `", name);
	while (len > 8 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
		len--;
	if (len == 8)
		return berth_err(err, EINVAL, "`%s` names no git directory", name);
	if (memchr(buf + 8, '\0', len - 8) != NULL)
		return berth_err(err, EINVAL, "`%s` holds a NUL byte", name);
	if (len - 8 >= outlen)
		return berth_err(err, E2BIG, "the path in `%s` is longer than %zu bytes", name, outlen);
	memcpy(out, buf + 8, len - 8);
	out[len - 8] = '\0';
	return 1;
}

/* ---- the config parser (git-config(1) "CONFIGURATION FILE") ---- */

struct cfg_src {
	const char *buf;
	size_t len, pos;
	unsigned line;      /* line of the byte next() returned last */
	unsigned next_line; /* line of the byte after it */
	bool eof;
};

/* The next byte, CRLF read as LF; the end of the text reads as LF with
 * ->eof set (as git's get_next_char() does). */
static int next(struct cfg_src *s)
{
	s->line = s->next_line;
	if (s->pos >= s->len) {
		s->eof = true;
		return '\n';
	}
	int c = (unsigned char)s->buf[s->pos++];
	if (c == '\r' && s->pos < s->len && s->buf[s->pos] == '\n') {
		s->pos++;
		c = '\n';
	}
	if (c == '\n')
		s->next_line++;
	return c;
}

static bool is_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_keychar(int c)
{
	return is_alpha(c) || (c >= '0' && c <= '9') || c == '-';
}

static int lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

struct cfg_bufs {
	char *section, *sub, *key, *value;
	bool has_sub;
};

/* `[section "sub"]` after the white space that ended the name. */
static int parse_subsection(struct cfg_src *s, int c, struct cfg_bufs *b)
{
	size_t n = 0;

	for (;;) {
		if (c == '\n')
			return -1;
		c = next(s);
		if (!git_space(c))
			break;
	}
	if (c != '"')
		return -1;
	for (;;) {
		c = next(s);
		if (c == '\n')
			return -1;
		if (c == '"')
			break;
		if (c == '\\') {
			c = next(s);
			if (c == '\n')
				return -1;
		}
		/* git keeps a NUL here, then uses the name as a C string: it sees
		 * `[alias "co\0"] x = !cmd` as alias.co.  Refused (fail closed). */
		if (c == '\0')
			return -1;
		b->sub[n++] = (char)c;
	}
	b->sub[n] = '\0';
	b->has_sub = true;
	return next(s) == ']' ? 0 : -1;
}

/* A header, after its `[`: fills b->section (and b->sub). */
static int parse_header(struct cfg_src *s, struct cfg_bufs *b)
{
	size_t n = 0;

	b->has_sub = false;
	for (;;) {
		int c = next(s);
		if (s->eof)
			return -1;
		if (c == ']')
			break;
		if (git_space(c)) {
			b->section[n] = '\0';
			return parse_subsection(s, c, b);
		}
		if (!is_keychar(c) && c != '.')
			return -1;
		b->section[n++] = (char)lower(c);
	}
	b->section[n] = '\0';
	if (n == 0)
		return -1;
	char *dot = strchr(b->section, '.'); /* deprecated [section.sub] */
	if (dot != NULL) {
		*dot = '\0';
		strcpy(b->sub, dot + 1);
		b->has_sub = true;
	}
	return 0;
}

static int parse_escape(struct cfg_src *s, char *out)
{
	int c = next(s);

	switch (c) {
	case '\n':
		return 1; /* continuation */
	case 't':
		*out = '\t';
		return 0;
	case 'b':
		*out = '\b';
		return 0;
	case 'n':
		*out = '\n';
		return 0;
	case '\\':
	case '"':
		*out = (char)c;
		return 0;
	default:
		return -1;
	}
}

/* A value after `=`, into b->value. */
static int parse_value(struct cfg_src *s, struct cfg_bufs *b)
{
	size_t n = 0, space = 0;
	bool quote = false, comment = false;

	for (;;) {
		int c = next(s);
		if (c == '\n') {
			if (quote)
				return -1;
			b->value[n] = '\0';
			return 0;
		}
		if (comment)
			continue;
		if (git_space(c) && !quote) {
			if (n > 0)
				space++;
			continue;
		}
		if (!quote && (c == ';' || c == '#')) {
			comment = true;
			continue;
		}
		for (; space > 0; space--)
			b->value[n++] = ' ';
		if (c == '\\') {
			char e;
			int r = parse_escape(s, &e);
			if (r < 0)
				return -1;
			if (r == 0)
				b->value[n++] = e;
			continue;
		}
		if (c == '"') {
			quote = !quote;
			continue;
		}
		b->value[n++] = (char)c;
	}
}

/* A key starting with @c, its value, and the callback.  Returns 0, -1 (a
 * syntax error) or 1 (the callback returned non-zero, stored in *@stop). */
static int parse_key(struct cfg_src *s, int c, struct cfg_bufs *b, berth_git_config_fn fn, void *arg,
		     int *stop)
{
	unsigned line = s->line;
	size_t n = 0;

	b->key[n++] = (char)lower(c);
	for (;;) {
		c = next(s);
		if (s->eof || !is_keychar(c))
			break;
		b->key[n++] = (char)lower(c);
	}
	b->key[n] = '\0';
	while (c == ' ' || c == '\t')
		c = next(s);
	const char *value = NULL;
	if (c != '\n') {
		if (c != '=' || parse_value(s, b) < 0)
			return -1;
		value = b->value;
	}
	*stop = fn(b->section, b->has_sub ? b->sub : NULL, b->key, value, line, arg);
	return *stop != 0 ? 1 : 0;
}

/* Returns 0 (end of text), -1 (syntax error at s->line), 1 (stopped). */
static int cfg_loop(struct cfg_src *s, struct cfg_bufs *b, berth_git_config_fn fn, void *arg, int *stop)
{
	bool comment = false;

	if (s->len >= 3 && memcmp(s->buf, "\xef\xbb\xbf", 3) == 0)
		s->pos = 3;
	for (;;) {
		int c = next(s);
		if (c == '\n') {
			if (s->eof)
				return 0;
			comment = false;
			continue;
		}
		if (comment || git_space(c))
			continue;
		if (c == '#' || c == ';') {
			comment = true;
			continue;
		}
		if (c == '[') {
			if (parse_header(s, b) < 0)
				return -1;
			continue;
		}
		if (!is_alpha(c))
			return -1;
		int r = parse_key(s, c, b, fn, arg, stop);
		if (r != 0)
			return r;
	}
}

/* @name: the file, for the message, or NULL. */
static int parse_named(const char *buf, size_t len, berth_git_config_fn fn, void *arg, const char *name,
		       struct berth_error *err)
{
	struct cfg_src s = {.buf = buf, .len = len, .line = 1, .next_line = 1};
	cleanup_free char *mem = NULL;
	struct cfg_bufs b;
	int stop = 0;

	if (len > SIZE_MAX / 4 - 1 || (mem = malloc(4 * (len + 1))) == NULL)
		return berth_err(err, ENOMEM, "cannot parse a git config of %zu bytes", len);
	b = (struct cfg_bufs){mem, mem + len + 1, mem + 2 * (len + 1), mem + 3 * (len + 1), false};
	b.section[0] = '\0';
	int r = cfg_loop(&s, &b, fn, arg, &stop);
	if (r == 0)
		return 0;
	if (r == 1)
		return stop;
	if (name != NULL)
		return berth_err(err, EINVAL, "bad git config line %u in `%s`", s.line, name);
	return berth_err(err, EINVAL, "bad git config line %u", s.line);
}

int berth_git_config_parse(const char *buf, size_t len, berth_git_config_fn fn, void *arg,
			   struct berth_error *err)
{
	return parse_named(buf, len, fn, arg, NULL, err);
}

int berth_git_config_read(int dirfd, const char *name, berth_git_config_fn fn, void *arg,
			  struct berth_error *err)
{
	cleanup_free char *buf = NULL;
	size_t len = 0;

	if (read_bounded(dirfd, name, BERTH_GIT_CONFIG_MAX, &buf, &len) < 0) {
		int e = errno;
		if (e == E2BIG)
			return berth_err(err, e, "git config `%s` is larger than %d bytes", name,
					 BERTH_GIT_CONFIG_MAX);
		if (e == EINVAL)
			return berth_err(err, e, "git config `%s` is not a regular file", name);
		return berth_err(err, e, "cannot read git config `%s`", name);
	}
	return parse_named(buf, len, fn, arg, name, err);
}

/* ---- which keys are inert ---- */

struct inert_rule {
	const char *section;
	bool sub;             /* the key needs a subsection (remote.<name>.url) */
	const char *keys[32]; /* "*": any key */
};

/* git-config(1): none of these runs a program or names a file to read. */
static const struct inert_rule inert_rules[] = {
    {"core",
     false,
     {"repositoryformatversion",
      "filemode",
      "bare",
      "logallrefupdates",
      "ignorecase",
      "precomposeunicode",
      "symlinks",
      "autocrlf",
      "eol",
      "safecrlf",
      "checkstat",
      "trustctime",
      "quotepath",
      "abbrev",
      "compression",
      "loosecompression",
      "whitespace",
      "warnambiguousrefs",
      "preloadindex",
      "untrackedcache",
      "splitindex",
      "commitgraph",
      "multipackindex",
      "checkroundtripencoding",
      "sparsecheckoutcone"}},
    {"extensions", false, {"objectformat", "refstorage", "worktreeconfig", "noop"}},
    {"remote",
     true,
     {"url", "pushurl", "fetch", "push", "tagopt", "prune", "mirror", "promisor", "partialclonefilter"}},
    {"branch", true, {"remote", "merge", "rebase", "pushremote", "description"}},
    /* not submodule.<name>.update: "!command" runs it */
    {"submodule", true, {"url", "active", "branch", "fetchrecursesubmodules", "ignore", "shallow"}},
    {"user", false, {"name", "email"}},
    {"init", false, {"defaultbranch"}},
    {"gc", false, {"auto"}},
    {"index", false, {"*"}},
    {"pull", false, {"rebase", "ff"}},
    {"push", false, {"default", "autosetupremote"}},
    {"fetch", false, {"prune"}},
    {"merge", false, {"ff", "conflictstyle"}},
    {"rebase", false, {"autosquash", "autostash"}},
    {"color", false, {"ui"}},
    {"status", false, {"showuntrackedfiles"}},
    {"advice", false, {"*"}},
    {"maintenance", false, {"auto", "strategy"}},
    {"lfs", false, {"repositoryformatversion"}},
};

bool berth_git_key_inert(const char *section, const char *subsection, const char *key)
{
	if (section == NULL || key == NULL)
		return false;
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(inert_rules); i++) {
		const struct inert_rule *r = &inert_rules[i];
		if (strcasecmp(r->section, section) != 0 || r->sub != (subsection != NULL))
			continue;
		for (size_t k = 0; k < BERTH_ARRAY_SIZE(r->keys) && r->keys[k] != NULL; k++)
			if (strcmp(r->keys[k], "*") == 0 || strcasecmp(r->keys[k], key) == 0)
				return true;
	}
	return false;
}

struct first_active {
	char *out;
	size_t outlen;
};

static int first_active_cb(const char *section, const char *subsection, const char *key, const char *value,
			   unsigned line, void *arg)
{
	struct first_active *fa = arg;

	(void)value;
	(void)line;
	if (berth_git_key_inert(section, subsection, key))
		return 0;
	if (fa->outlen > 0) {
		if (subsection != NULL)
			snprintf(fa->out, fa->outlen, "%s.%s.%s", section, subsection, key);
		else if (*section != '\0')
			snprintf(fa->out, fa->outlen, "%s.%s", section, key);
		else
			snprintf(fa->out, fa->outlen, "%s", key);
	}
	return 1;
}

int berth_git_config_first_active(int dirfd, const char *name, char *out, size_t outlen,
				  struct berth_error *err)
{
	struct first_active fa = {out, outlen};

	if (outlen > 0)
		out[0] = '\0';
	int r = berth_git_config_read(dirfd, name, first_active_cb, &fa, err);
	if (r < 0 && err->errnum == ENOENT)
		return 0;
	return r;
}

/* ---- what a config file points at ---- */

/* git-config(1) "Values", boolean.  Returns 0/1, or -1 when not a boolean. */
static int parse_bool(const char *v)
{
	static const char *const yes[] = {"true", "yes", "on"}, *const no[] = {"false", "no", "off"};

	if (v == NULL)
		return 1;
	if (*v == '\0')
		return 0;
	for (size_t i = 0; i < 3; i++) {
		if (strcasecmp(v, yes[i]) == 0)
			return 1;
		if (strcasecmp(v, no[i]) == 0)
			return 0;
	}
	char *end;
	errno = 0;
	long long n = strtoll(v, &end, 0);
	if (end == v || errno != 0)
		return -1;
	if (*end != '\0' && strchr("kKmMgG", *end) != NULL)
		end++;
	return *end == '\0' ? n != 0 : -1;
}

struct refs_ctx {
	struct berth_git_refs *out;
	const char *config_dir, *home;
	struct berth_error *err;
};

/* git's interpolate_path(): "~", "~/x", "~user/x"; else @p kept.  When
 * @base is not NULL, a relative result is joined to it (includes). */
static int expand_path(const char *p, const char *home, const char *base, char **res, struct berth_error *err)
{
	char joined[PATH_MAX], pwbuf[4096];
	int n;

	if (p[0] == '~') {
		const char *rest = strchr(p, '/');
		size_t ulen = rest != NULL ? (size_t)(rest - p - 1) : strlen(p + 1);
		const char *dir = home;
		struct passwd pw, *pwp = NULL;
		if (ulen > 0) {
			char user[256];
			if (ulen >= sizeof user)
				return berth_err(err, ENOENT, "cannot expand `%s`: no such user", p);
			memcpy(user, p + 1, ulen);
			user[ulen] = '\0';
			if (getpwnam_r(user, &pw, pwbuf, sizeof pwbuf, &pwp) != 0 || pwp == NULL)
				return berth_err(err, ENOENT, "cannot expand `%s`: no such user", p);
			dir = pw.pw_dir;
		} else if (home == NULL) {
			return berth_err(err, EINVAL, "cannot expand `%s`: no home directory", p);
		}
		n = snprintf(joined, sizeof joined, "%s%s", dir, rest != NULL ? rest : "");
	} else if (base != NULL && p[0] != '/' && strncmp(p, "%(prefix)/", 10) != 0) {
		if (base[0] != '/')
			return berth_err(
			    err, EINVAL,
			    "cannot resolve the relative include `%s`: config directory `%s` is not absolute",
			    p, base);
		n = snprintf(joined, sizeof joined, "%s/%s", base, p);
	} else {
		n = snprintf(joined, sizeof joined, "%s", p);
	}
	if (n < 0 || (size_t)n >= sizeof joined)
		return berth_err(err, E2BIG, "path `%s` is too long", p);
	*res = strdup(joined);
	return *res != NULL ? 0 : berth_err(err, ENOMEM, "cannot keep `%s`", p);
}

static int refs_add_include(struct refs_ctx *c, const char *value, unsigned line)
{
	struct berth_git_refs *o = c->out;
	char *path = NULL;

	if (value == NULL)
		return berth_err(c->err, EINVAL, "include path without a value on line %u", line);
	if (expand_path(value, c->home, c->config_dir, &path, c->err) < 0)
		return -1;
	char **n = realloc(o->includes, (o->n_includes + 1) * sizeof *n);
	if (n == NULL) {
		free(path);
		return berth_err(c->err, ENOMEM, "cannot keep include `%s`", value);
	}
	o->includes = n;
	o->includes[o->n_includes++] = path;
	return 0;
}

/* @expand: "~" expansion (core.hooksPath is a pathname, core.worktree raw). */
static int refs_set(char **slot, const char *var, const char *value, bool expand, const char *home,
		    unsigned line, struct berth_error *err)
{
	char *v = NULL;

	if (value == NULL)
		return berth_err(err, EINVAL, "`%s` without a value on line %u", var, line);
	if (expand) {
		if (expand_path(value, home, NULL, &v, err) < 0)
			return -1;
	} else if ((v = strdup(value)) == NULL) {
		return berth_err(err, ENOMEM, "cannot keep `%s`", var);
	}
	free(*slot);
	*slot = v;
	return 0;
}

static int refs_bool(bool *slot, const char *var, const char *value, unsigned line, struct berth_error *err)
{
	int b = parse_bool(value);

	if (b < 0)
		return berth_err(err, EINVAL, "bad boolean `%s` for `%s` on line %u", value, var, line);
	*slot = b == 1;
	return 0;
}

/* Callback errors are returned as 2 (the error is in c->err). */
static int refs_cb(const char *section, const char *subsection, const char *key, const char *value,
		   unsigned line, void *arg)
{
	struct refs_ctx *c = arg;
	int r = 0;

	if (strcmp(key, "path") == 0 && ((strcmp(section, "include") == 0 && subsection == NULL) ||
					 (strcmp(section, "includeif") == 0 && subsection != NULL)))
		r = refs_add_include(c, value, line);
	else if (strcmp(section, "core") == 0 && subsection == NULL && strcmp(key, "hookspath") == 0)
		r = refs_set(&c->out->hooks_path, "core.hooksPath", value, true, c->home, line, c->err);
	else if (strcmp(section, "core") == 0 && subsection == NULL && strcmp(key, "worktree") == 0)
		r = refs_set(&c->out->worktree, "core.worktree", value, false, NULL, line, c->err);
	else if (strcmp(section, "core") == 0 && subsection == NULL && strcmp(key, "bare") == 0)
		r = refs_bool(&c->out->bare, "core.bare", value, line, c->err);
	else if (strcmp(section, "extensions") == 0 && subsection == NULL &&
		 strcmp(key, "worktreeconfig") == 0)
		r = refs_bool(&c->out->worktree_config, "extensions.worktreeConfig", value, line, c->err);
	return r < 0 ? 2 : 0;
}

int berth_git_config_refs(int dirfd, const char *name, const char *config_dir, const char *home,
			  struct berth_git_refs *out, struct berth_error *err)
{
	struct refs_ctx c = {out, config_dir, home, err};

	memset(out, 0, sizeof *out);
	int r = berth_git_config_read(dirfd, name, refs_cb, &c, err);
	if (r == 2)
		return berth_err_wrap(err, "git config `%s`", name);
	if (r < 0 && err->errnum == ENOENT)
		return 0;
	return r < 0 ? -1 : 0;
}

void berth_git_refs_free(struct berth_git_refs *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < r->n_includes; i++)
		free(r->includes[i]);
	free(r->includes);
	free(r->hooks_path);
	free(r->worktree);
	memset(r, 0, sizeof *r);
}
