/* SPDX-License-Identifier: MIT */
/*
 * test_gitrules.c - git's rules (src/sandbox/gitrules.c) on real files in a
 * mktemp -d directory: HEAD, git directories and commondir are checked
 * against what the real git decides (`git rev-parse --git-dir` with the
 * directory as the only candidate), the config parser against `git config
 * -z --file F --list` on every fixture (same keys, values, and the same
 * fixtures refused), plus the inert list, first active key, include
 * resolution and the refusal of links.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/gitrules.h"

static char tmp[PATH_MAX]; /* the mktemp -d directory */
static int tmpfd = -1;

static void write_file(const char *rel, const char *data, size_t len)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/%s", tmp, rel);
	FILE *f = fopen(p, "wb");
	if (f == NULL)
		fail_msg("cannot write %s: %s", p, strerror(errno));
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void put(const char *rel, const char *text)
{
	write_file(rel, text, strlen(text));
}

static void mkd(const char *rel)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/%s", tmp, rel);
	if (mkdir(p, 0755) < 0 && errno != EEXIST)
		fail_msg("mkdir %s: %s", p, strerror(errno));
}

static void sh(const char *fmt, ...)
{
	char cmd[4 * PATH_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	if (system(cmd) != 0)
		fail_msg("command failed: %s", cmd);
}

static int opendir_rel(const char *rel)
{
	int fd = openat(tmpfd, rel, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		fail_msg("open %s/%s: %s", tmp, rel, strerror(errno));
	return fd;
}

/* What the real git decides: is @rel taken as a (bare) git directory when
 * git starts in it and may look nowhere above? */
static bool git_takes(const char *rel)
{
	char cmd[4 * PATH_MAX];
	snprintf(cmd, sizeof cmd,
		 "cd '%s/%s' && env -u GIT_DIR -u GIT_WORK_TREE -u GIT_COMMON_DIR "
		 "GIT_CEILING_DIRECTORIES='%s/%s/..' "
		 "HOME=/nonexistent GIT_CONFIG_NOSYSTEM=1 git -c safe.directory='*' rev-parse --git-dir "
		 ">/dev/null 2>&1",
		 tmp, rel, tmp, rel);
	int st = system(cmd);
	return st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* A fresh directory @rel with HEAD holding @head (or a link to @link) and,
 * when @dirs, objects/ and refs/. */
static void gitdir_fixture(const char *rel, const char *head, const char *link, bool dirs)
{
	char p[PATH_MAX];
	sh("rm -rf '%s/%s' && mkdir -p '%s/%s'", tmp, rel, tmp, rel);
	snprintf(p, sizeof p, "%s/HEAD", rel);
	if (head != NULL)
		put(p, head);
	if (link != NULL) {
		char abs[PATH_MAX];
		snprintf(abs, sizeof abs, "%s/%s", tmp, p);
		assert_int_equal(symlink(link, abs), 0);
	}
	if (dirs) {
		snprintf(p, sizeof p, "%s/objects", rel);
		mkd(p);
		snprintf(p, sizeof p, "%s/refs", rel);
		mkd(p);
	}
}

#define HEX40 "0123456789abcdef0123456789abcdef01234567"
#define HEX64 HEX40 "89abcdef0123456789abcdef"

static void check_head(const char *head, const char *link, bool want)
{
	gitdir_fixture("h", head, link, true);
	int fd = opendir_rel("h");
	if (berth_git_head_valid(fd) != want)
		fail_msg("HEAD %s%s: want %s", head ? head : "-> ", link ? link : "",
			 want ? "valid" : "invalid");
	assert_int_equal(berth_git_is_gitdir(fd), want);
	close(fd);
	/* the real git agrees, with objects/ and refs/ there */
	if (git_takes("h") != want)
		fail_msg("git disagrees on HEAD %s%s", head ? head : "-> ", link ? link : "");
}

static void test_head(void **state)
{
	(void)state;
	check_head("ref: refs/heads/main\n", NULL, true);
	check_head("ref:refs/heads/main", NULL, true);
	check_head("ref: \t\n refs/x\n", NULL, true);
	check_head(HEX40 "\n", NULL, true);
	check_head(HEX40, NULL, true);
	check_head(HEX64 "\n", NULL, true);
	check_head("0123456789ABCDEF0123456789ABCDEF01234567\n", NULL, true);
	check_head(HEX40 "junk", NULL, true); /* git reads 40 digits and no further */
	check_head("0123456789abcdef0123456789abcdef0123456\n", NULL, false); /* 39 */
	check_head("garbage\n", NULL, false);
	check_head("", NULL, false);
	check_head("ref: heads/main\n", NULL, false);
	check_head(" ref: refs/heads/main\n", NULL, false);
	check_head("REF: refs/heads/main\n", NULL, false);
	check_head(NULL, "refs/heads/main", true);
	check_head(NULL, "refs/heads/does-not-exist", true); /* git looks at the text only */
	check_head(NULL, "../../etc/passwd", false);
	check_head(NULL, "/tmp/refs/heads/main", false);
	check_head(NULL, "ref", false);

	/* a directory, a FIFO (must not block), no HEAD at all */
	gitdir_fixture("h", NULL, NULL, true);
	mkd("h/HEAD");
	int fd = opendir_rel("h");
	assert_false(berth_git_head_valid(fd));
	close(fd);
	gitdir_fixture("h", NULL, NULL, true);
	sh("mkfifo '%s/h/HEAD'", tmp);
	fd = opendir_rel("h");
	assert_false(berth_git_head_valid(fd));
	close(fd);
	gitdir_fixture("h", NULL, NULL, true);
	fd = opendir_rel("h");
	assert_false(berth_git_head_valid(fd));
	assert_false(berth_git_is_gitdir(fd));
	close(fd);
}

static void check_gitdir(const char *rel, bool want)
{
	int fd = opendir_rel(rel);
	if (berth_git_is_gitdir(fd) != want)
		fail_msg("%s: is_gitdir want %d", rel, want);
	close(fd);
	if (git_takes(rel) != want)
		fail_msg("%s: the real git disagrees (git says %d)", rel, !want);
}

static void test_gitdir(void **state)
{
	(void)state;
	gitdir_fixture("g", "ref: refs/heads/main\n", NULL, true);
	check_gitdir("g", true);
	sh("rmdir '%s/g/objects'", tmp);
	check_gitdir("g", false); /* missing objects/ */
	gitdir_fixture("g", "ref: refs/heads/main\n", NULL, true);
	sh("rmdir '%s/g/refs'", tmp);
	check_gitdir("g", false);
	put("g/refs", "a file, no x bit\n");
	check_gitdir("g", false);
	sh("chmod 755 '%s/g/refs'", tmp); /* access(X_OK) passes: git takes it */
	check_gitdir("g", true);

	/* commondir redirect: objects/ and refs/ are looked up there only */
	gitdir_fixture("common", "ref: refs/heads/main\n", NULL, true);
	gitdir_fixture("g", "ref: refs/heads/main\n", NULL, false);
	put("g/commondir", "../common\n");
	check_gitdir("g", true);
	gitdir_fixture("g", "ref: refs/heads/main\n", NULL, true);
	put("g/commondir", "../nowhere\n");
	check_gitdir("g", false); /* its own objects/ do not count */
	char abs[PATH_MAX + 32];
	snprintf(abs, sizeof abs, "%s/common\r\n", tmp);
	gitdir_fixture("g", "ref: refs/heads/main\n", NULL, false);
	put("g/commondir", abs);
	check_gitdir("g", true);
	put("g/commondir", "");
	check_gitdir("g", false); /* git dies on an empty commondir */
	gitdir_fixture("g", "ref: refs/heads/main\n", NULL, true);
	put("g/commondir", "\n"); /* git joins "g/" and "": g itself */
	check_gitdir("g", true);

	/* berth cannot follow what git would: fail closed (a git directory) */
	sh("ln -sfn common '%s/commonlink'", tmp);
	put("g/commondir", "../commonlink\n");
	int fd = opendir_rel("g");
	assert_true(berth_git_is_gitdir(fd));
	sh("rm '%s/g/commondir' && ln -s ../common/HEAD '%s/g/commondir'", tmp, tmp);
	assert_true(berth_git_is_gitdir(fd));
	close(fd);
}

static void test_commondir(void **state)
{
	(void)state;
	sh("rm -rf '%s/r' && mkdir -p '%s/r/.git/worktrees/wt' '%s/r/.git/modules/m' '%s/r/other/.git'", tmp,
	   tmp, tmp, tmp);
	int git = opendir_rel("r/.git"), wt = opendir_rel("r/.git/worktrees/wt"),
	    mod = opendir_rel("r/.git/modules/m");

	assert_true(berth_git_commondir_ok(git)); /* absent */
	assert_true(berth_git_commondir_ok(wt));
	put("r/.git/commondir", ".\n");
	assert_true(berth_git_commondir_ok(git));
	put("r/.git/commondir", "../other/.git\n");
	assert_false(berth_git_commondir_ok(git)); /* a redirect */
	put("r/.git/commondir", "../..\n");
	assert_false(berth_git_commondir_ok(git));
	put("r/.git/commondir", "");
	assert_false(berth_git_commondir_ok(git));
	put("r/.git/commondir", "\n");
	assert_true(berth_git_commondir_ok(git));
	write_file("r/.git/commondir", ".\0/x\n", 5);
	assert_false(berth_git_commondir_ok(git)); /* git would read "." only: not what berth can vouch for */
	put("r/.git/worktrees/wt/commondir", "../..\n");
	assert_true(berth_git_commondir_ok(wt));
	put("r/.git/worktrees/wt/commondir", "../..");
	assert_true(berth_git_commondir_ok(wt));
	char abs[PATH_MAX + 32];
	snprintf(abs, sizeof abs, "%s/r/.git\n", tmp);
	put("r/.git/worktrees/wt/commondir", abs);
	assert_true(berth_git_commondir_ok(wt));
	put("r/.git/worktrees/wt/commondir", ".\n");
	assert_false(berth_git_commondir_ok(wt)); /* a worktree's own dir is not the repository */
	put("r/.git/worktrees/wt/commondir", "../../../other/.git\n");
	assert_false(berth_git_commondir_ok(wt));
	put("r/.git/modules/m/commondir", "../..\n");
	assert_false(berth_git_commondir_ok(mod)); /* modules/ is not worktrees/ */
	put("r/.git/modules/m/commondir", ".\n");
	assert_true(berth_git_commondir_ok(mod));
	/* through a link: not followed, so not harmless */
	sh("ln -s .git '%s/r/gitlink'", tmp);
	put("r/.git/worktrees/wt/commondir", "../../../gitlink\n");
	assert_false(berth_git_commondir_ok(wt));
	sh("rm '%s/r/.git/worktrees/wt/commondir' && printf '../..\\n' > '%s/r/cd' && ln -s ../../../cd "
	   "'%s/r/.git/worktrees/wt/commondir'",
	   tmp, tmp, tmp);
	assert_false(berth_git_commondir_ok(wt));
	/* a worktrees/ that is a link to the real one is not `worktrees` */
	sh("rm -rf '%s/r2' && mkdir -p '%s/r2/.git/wt-real/x' && ln -s wt-real '%s/r2/.git/worktrees' && "
	   "printf '../..\\n' > '%s/r2/.git/wt-real/x/commondir'",
	   tmp, tmp, tmp, tmp);
	int x = opendir_rel("r2/.git/wt-real/x");
	assert_false(berth_git_commondir_ok(x));
	close(x);
	close(git);
	close(wt);
	close(mod);
}

/* Does the real git started in @rel (a worktree top) find a repository? */
static bool git_finds(const char *rel)
{
	char cmd[4 * PATH_MAX];
	snprintf(cmd, sizeof cmd,
		 "cd '%s/%s' && env -u GIT_DIR -u GIT_WORK_TREE GIT_CEILING_DIRECTORIES='%s/%s/..' "
		 "HOME=/nonexistent "
		 "GIT_CONFIG_NOSYSTEM=1 git -c safe.directory='*' rev-parse --git-dir >/dev/null 2>&1",
		 tmp, rel, tmp, rel);
	int st = system(cmd);
	return st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* @git_too: the real git takes the file exactly when berth does. */
static void check_gitfile(const char *text, size_t len, int want, const char *want_path, bool git_too)
{
	struct berth_error err = {0};
	char out[PATH_MAX];

	sh("rm -rf '%s/w' && mkdir -p '%s/w'", tmp, tmp);
	write_file("w/.git", text, len);
	int fd = opendir_rel("w");
	int rc = berth_git_read_gitfile(fd, ".git", out, sizeof out, &err);
	close(fd);
	if (rc != want)
		fail_msg("gitfile `%.*s`: %d, want %d (%s)", (int)len, text, rc, want, err.msg);
	if (rc == 1)
		assert_string_equal(out, want_path);
	/* the real git agrees: the named directory (a repository) is taken */
	if (git_too && git_finds("w") != (rc == 1))
		fail_msg("gitfile `%.*s`: the real git disagrees", (int)len, text);
}

#define GITFILE(lit, want, path) check_gitfile(lit, sizeof(lit) - 1, want, path, true)

static void test_gitfile(void **state)
{
	struct berth_error err = {0};
	char out[8], abs[PATH_MAX + 32];
	(void)state;

	gitdir_fixture("repo.git", "ref: refs/heads/main\n", NULL, true);
	GITFILE("gitdir: ../repo.git\n", 1, "../repo.git");
	GITFILE("gitdir: ../repo.git\r\n\n", 1, "../repo.git");
	GITFILE("gitdir: ../repo.git", 1, "../repo.git");
	char want[PATH_MAX + 16];
	snprintf(abs, sizeof abs, "gitdir: %s/repo.git\n", tmp);
	snprintf(want, sizeof want, "%s/repo.git", tmp);
	check_gitfile(abs, strlen(abs), 1, want, true);
	GITFILE("gitdir:../repo.git\n", -1, NULL);
	GITFILE("Gitdir: ../repo.git\n", -1, NULL);
	GITFILE(" gitdir: ../repo.git\n", -1, NULL);
	GITFILE("gitdir: \n", -1, NULL);
	GITFILE("", -1, NULL);
	/* git reads "../repo.git" and ignores the rest; berth refuses (fail closed) */
	static const char nul[] = "gitdir: ../repo.git\0junk\n";
	check_gitfile(nul, sizeof nul - 1, -1, NULL, false);
	assert_true(git_finds("w"));

	/* absent, a directory, a link, and a path too long for @out */
	sh("rm -rf '%s/w' && mkdir -p '%s/w/.git'", tmp, tmp);
	int fd = opendir_rel("w");
	assert_int_equal(berth_git_read_gitfile(fd, ".git", out, sizeof out, &err), 0);
	assert_int_equal(berth_git_read_gitfile(fd, "absent", out, sizeof out, &err), 0);
	sh("rmdir '%s/w/.git' && printf 'gitdir: ../repo.git\n' > '%s/w/real' && ln -s real '%s/w/.git'", tmp,
	   tmp, tmp);
	assert_int_equal(berth_git_read_gitfile(fd, ".git", out, sizeof out, &err), -1);
	assert_int_equal(err.errnum, ELOOP);
	assert_int_equal(berth_git_read_gitfile(fd, "real", out, sizeof out, &err), -1);
	assert_int_equal(err.errnum, E2BIG); /* "../repo.git" does not fit in 8 bytes */
	char fits[12];                       /* "../repo.git" and its NUL exactly */
	assert_int_equal(berth_git_read_gitfile(fd, "real", fits, sizeof fits, &err), 1);
	assert_string_equal(fits, "../repo.git");
	close(fd);
}

/* ---- the parser ---- */

struct collect {
	char out[65536];
	size_t n;
	unsigned lines[64];
	size_t nlines;
};

/* Print as `git config -z --list` does: name LF value NUL, or name NUL. */
static int collect_cb(const char *section, const char *sub, const char *key, const char *value, unsigned line,
		      void *arg)
{
	struct collect *c = arg;
	char name[4096];

	if (sub != NULL)
		snprintf(name, sizeof name, "%s.%s.%s", section, sub, key);
	else if (*section != '\0')
		snprintf(name, sizeof name, "%s.%s", section, key);
	else
		snprintf(name, sizeof name, "%s", key);
	int n = value != NULL ? snprintf(c->out + c->n, sizeof c->out - c->n, "%s\n%s", name, value)
			      : snprintf(c->out + c->n, sizeof c->out - c->n, "%s", name);
	assert_true(n >= 0 && (size_t)n + 1 < sizeof c->out - c->n);
	c->n += (size_t)n + 1; /* the NUL */
	if (c->nlines < 64)
		c->lines[c->nlines++] = line;
	return 0;
}

/* Parse @text (length @len) with berth and with `git config`: same result. */
static void against_git(const char *text, size_t len)
{
	struct collect c = {0};
	struct berth_error err = {0};
	char path[PATH_MAX], cmd[PATH_MAX + 128], gout[65536];

	write_file("fixture.cfg", text, len);
	snprintf(path, sizeof path, "%s/fixture.cfg", tmp);
	int rc = berth_git_config_parse(text, len, collect_cb, &c, &err);
	snprintf(cmd, sizeof cmd, "git config -z --file '%s' --list 2>/dev/null", path);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	size_t gn = fread(gout, 1, sizeof gout, p);
	int st = pclose(p);
	bool git_ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
	if (git_ok != (rc == 0))
		fail_msg("fixture %.*s: git %s it, berth returned %d (%s)", (int)len, text,
			 git_ok ? "accepts" : "refuses", rc, err.msg);
	if (rc == 0 && (gn != c.n || memcmp(gout, c.out, gn) != 0))
		fail_msg("fixture %.*s: git listed %zu bytes `%.*s`, berth %zu `%.*s`", (int)len, text, gn,
			 (int)gn, gout, c.n, (int)c.n, c.out);
	if (rc < 0)
		assert_int_equal(err.errnum, EINVAL);
}

#define AGAINST_GIT(lit) against_git(lit, sizeof(lit) - 1)

static void test_parse_vs_git(void **state)
{
	(void)state;
	if (system("git --version >/dev/null 2>&1") != 0)
		fail_msg("git is not installed: the parser cannot be compared with it");
	AGAINST_GIT("[core]\n\trepositoryformatversion = 0\n\tbare = false\n[remote \"origin\"]\n\turl = "
		    "https://example.com/r.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n");
	AGAINST_GIT("[a]\n\tk = \"x # not a comment ; nor this\" # but this\n");
	AGAINST_GIT("[a]\n\tk = one \\\n  two \\\n\tthree\n");
	AGAINST_GIT("[a]\n\tk = \"in \\\nquotes\"\n");
	AGAINST_GIT("[a \"b\\\"c\"]\n\tk = 1\n[a \"b\\\\c\"]\n\tk = 2\n[a \"b\\xc\"]\n\tk = 3\n");
	AGAINST_GIT("[Core]\n\tBare = true\n[CORE \"Sub\"]\n\tK = v\n[Sec.Sub]\n\tK = v\n");
	AGAINST_GIT("[a]\n\tk = v ; c\n\tj = v#c\n\tl = \"\" ; only quotes\n");
	AGAINST_GIT("[a]\r\n\tk = v\r\n\tj = \"x\"\r\n\tbare\r\n");
	AGAINST_GIT("[a]\n\tk = a\tb  c\r d\n\tj =   lead and trail   \n\tq = \"  kept  \"  x  \n");
	AGAINST_GIT("[a]\n\tk = \\t\\n\\b\\\"\\\\\n");
	AGAINST_GIT("[a]\n\tbare\n\tempty =\n\tsp =   \n");
	AGAINST_GIT("[a] k = 1\n[b]j=2 ; x\n[c \"d\"]l=3\n");
	AGAINST_GIT("\xef\xbb\xbf[bom]\n\tk = 1\n");
	AGAINST_GIT("k = before any section\n[a]\n\tk = 1\n");
	AGAINST_GIT(
	    "[.b]\n\tk = 1\n[a.]\n\tk = 2\n[a.b \"c\"]\n\tk = 3\n[ \"q\"]\n\tk = 4\n[a.b.c]\n\tk = 5\n");
	AGAINST_GIT("[a]\n\tk-1 = x\n\tK2-Z = y\n");
	AGAINST_GIT("[a]\n\tk = x\\");
	AGAINST_GIT("[a]\n\tk = x\\\n");
	AGAINST_GIT("[a]\n\tk = last line without newline");
	AGAINST_GIT("# only a comment\n; and another\n\n   \n");
	AGAINST_GIT("");
	AGAINST_GIT("[a]\n\tk = a\0b\n\tj = 1\n"); /* NUL ends the value as git sees it */
	AGAINST_GIT("[a]\n# c \0 still comment\n\tj = 1\n");
	AGAINST_GIT("[include]\n\tpath = ~/x\n[includeIf \"gitdir:~/w/\"]\n\tpath = rel.cfg\n");
	/* what git refuses */
	AGAINST_GIT("[a]\n\tk = 1\n[b\n\tk = 2\n");
	AGAINST_GIT("[a]\n\tk = 1\n[b");
	AGAINST_GIT("[]\n\tk = v\n");
	AGAINST_GIT("[a \"b\" ]\n\tk = v\n");
	AGAINST_GIT("[a b]\n\tk = v\n");
	AGAINST_GIT("[a\n\"b\"]\n\tk = v\n");
	AGAINST_GIT("[a \"b\nc\"]\n\tk = v\n");
	AGAINST_GIT("[a \"b\\\nc\"]\n\tk = v\n");
	AGAINST_GIT("[a_b]\n\tk = v\n");
	AGAINST_GIT("[a]\n\t1k = v\n");
	AGAINST_GIT("[a]\n\tk_1 = v\n");
	AGAINST_GIT("[a]\n\tk # comment\n");
	AGAINST_GIT("[a]\n\tk = \\x\n");
	AGAINST_GIT("[a]\n\tk = \"open\n");
	AGAINST_GIT("[a]\n\tk = \"open");
	AGAINST_GIT("[a]\n\tk\0 = 1\n");
	AGAINST_GIT("[a]\r\n\tk\r\n= 1\r\n");
	AGAINST_GIT("[a]\n\t-k = 1\n");
	AGAINST_GIT("[a]\n\xef\xbb\xbfk = 1\n");
}

struct one {
	char section[64], sub[64], key[64], value[256];
	bool has_sub, has_value;
	unsigned line;
	int calls;
};

static int one_cb(const char *section, const char *sub, const char *key, const char *value, unsigned line,
		  void *arg)
{
	struct one *o = arg;
	o->calls++;
	snprintf(o->section, sizeof o->section, "%s", section);
	o->has_sub = sub != NULL;
	snprintf(o->sub, sizeof o->sub, "%s", sub ? sub : "");
	snprintf(o->key, sizeof o->key, "%s", key);
	o->has_value = value != NULL;
	snprintf(o->value, sizeof o->value, "%s", value ? value : "");
	o->line = line;
	return 0;
}

static void parse_one(const char *text, struct one *o)
{
	struct berth_error err = {0};
	memset(o, 0, sizeof *o);
	if (berth_git_config_parse(text, strlen(text), one_cb, o, &err) != 0)
		fail_msg("parse `%s`: %s", text, err.msg);
}

static int stop_cb(const char *section, const char *sub, const char *key, const char *value, unsigned line,
		   void *arg)
{
	(void)section, (void)sub, (void)value;
	int *n = arg;
	(*n)++;
	return strcmp(key, "stop") == 0 ? 42 + (int)line : 0;
}

static void test_parse_fields(void **state)
{
	struct one o;
	struct berth_error err = {0};
	(void)state;

	parse_one("[a \"b\\\"c\"]\nk = v", &o);
	assert_string_equal(o.section, "a");
	assert_true(o.has_sub);
	assert_string_equal(o.sub, "b\"c");
	parse_one("[Core \"MiXed\"]\n  KeY = \"x # y\" # z\n", &o);
	assert_string_equal(o.section, "core");
	assert_string_equal(o.sub, "MiXed");
	assert_string_equal(o.key, "key");
	assert_string_equal(o.value, "x # y");
	assert_int_equal(o.line, 2);
	parse_one("[Remote.Origin]\n\tURL = u\n", &o);
	assert_string_equal(o.section, "remote");
	assert_string_equal(o.sub, "origin"); /* deprecated form: lower-cased */
	parse_one("[core]\n\tbare\n", &o);
	assert_false(o.has_sub);
	assert_false(o.has_value); /* bare key: NULL value */
	assert_string_equal(o.key, "bare");
	parse_one("[a]\n\tk = one \\\n two\r\n", &o);
	assert_string_equal(o.value, "one  two"); /* each white-space byte is one space, as in git */
	assert_int_equal(o.line, 2);
	parse_one("[a]\n\n\n\tk = \"x\\\ny\"\n\tj = 1\n", &o);
	assert_int_equal(o.calls, 2);
	assert_int_equal(o.line, 6); /* a continuation moves the next key's line */

	/* errors name the line */
	int n = 0;
	const char *cut = "[a]\n\tk = 1\n[b\n\tk = 2\n";
	assert_int_equal(berth_git_config_parse(cut, strlen(cut), stop_cb, &n, &err), -1);
	assert_int_equal(err.errnum, EINVAL);
	assert_non_null(strstr(err.msg, "line 3"));
	assert_int_equal(n, 1);
	const char *q = "[a]\n\n\tk = \"open\n";
	assert_int_equal(berth_git_config_parse(q, strlen(q), stop_cb, &n, &err), -1);
	assert_non_null(strstr(err.msg, "line 3"));
	const char *nul = "[a]\n\tk\0 = 1\n";
	assert_int_equal(berth_git_config_parse(nul, 12, stop_cb, &n, &err), -1);
	assert_non_null(strstr(err.msg, "line 2"));

	/* a NUL in a subsection: git would see `alias.co`; refused */
	static const char alias[] = "[alias \"co\0\"]\n\tx = !sh\n";
	assert_int_equal(berth_git_config_parse(alias, sizeof alias - 1, stop_cb, &n, &err), -1);
	assert_int_equal(err.errnum, EINVAL);
	assert_non_null(strstr(err.msg, "line 1"));

	/* the callback stops the parse with its value */
	n = 0;
	const char *s = "[a]\n\tx = 1\n\tstop\n\ty = 2\n";
	assert_int_equal(berth_git_config_parse(s, strlen(s), stop_cb, &n, &err), 42 + 3);
	assert_int_equal(n, 2);
	/* not NUL-terminated: only @len bytes are read */
	char buf[16];
	memcpy(buf, "[a]\nk = abcXXXX", 16);
	parse_one("", &o);
	assert_int_equal(berth_git_config_parse(buf, 11, one_cb, &o, &err), 0);
	assert_string_equal(o.value, "abc");
}

/* ---- files ---- */

static void test_read_files(void **state)
{
	struct one o;
	struct berth_error err = {0};
	(void)state;

	mkd("f");
	put("f/config", "[core]\n\tbare = false\n");
	int fd = opendir_rel("f");
	memset(&o, 0, sizeof o);
	assert_int_equal(berth_git_config_read(fd, "config", one_cb, &o, &err), 0);
	assert_string_equal(o.key, "bare");
	assert_int_equal(berth_git_config_read(fd, "absent", one_cb, &o, &err), -1);
	assert_int_equal(err.errnum, ENOENT);
	/* a symlinked config file is refused, so is a symlinked directory on the way */
	sh("ln -sfn config '%s/f/linked' && mkdir -p '%s/f/d' && cp '%s/f/config' '%s/f/d/config' && ln -sfn "
	   "d '%s/f/dl'",
	   tmp, tmp, tmp, tmp, tmp);
	assert_int_equal(berth_git_config_read(fd, "linked", one_cb, &o, &err), -1);
	assert_int_equal(err.errnum, ELOOP);
	assert_int_equal(berth_git_config_read(fd, "d/config", one_cb, &o, &err), 0);
	assert_int_equal(berth_git_config_read(fd, "dl/config", one_cb, &o, &err), -1);
	assert_int_equal(err.errnum, ELOOP);
	assert_int_equal(berth_git_config_read(fd, "../f/config", one_cb, &o, &err), -1);
	assert_int_equal(err.errnum, EXDEV);
	assert_int_equal(berth_git_config_read(fd, "d", one_cb, &o, &err), -1);
	assert_int_equal(err.errnum, EINVAL);
	sh("mkfifo '%s/f/fifo'", tmp);
	assert_int_equal(berth_git_config_read(fd, "fifo", one_cb, &o, &err), -1);
	assert_int_equal(err.errnum, EINVAL);
	/* the size bound, exactly */
	sh("head -c %d /dev/zero | tr '\\0' '#' > '%s/f/max' && head -c %d /dev/zero | tr '\\0' '#' > "
	   "'%s/f/big'",
	   BERTH_GIT_CONFIG_MAX, tmp, BERTH_GIT_CONFIG_MAX + 1, tmp);
	assert_int_equal(berth_git_config_read(fd, "max", one_cb, &o, &err), 0);
	assert_int_equal(berth_git_config_read(fd, "big", one_cb, &o, &err), -1);
	assert_int_equal(err.errnum, E2BIG);
	put("f/bad", "[core\n");
	assert_int_equal(berth_git_config_read(fd, "bad", one_cb, &o, &err), -1);
	assert_int_equal(err.errnum, EINVAL);
	assert_non_null(strstr(err.msg, "line 1"));
	assert_non_null(strstr(err.msg, "`bad`"));
	close(fd);
}

struct inert_case {
	const char *section, *sub, *key;
	bool inert;
};

static const struct inert_case inert_cases[] = {
    {"core", NULL, "repositoryformatversion", true},
    {"core", NULL, "filemode", true},
    {"core", NULL, "bare", true},
    {"core", NULL, "logallrefupdates", true},
    {"core", NULL, "ignorecase", true},
    {"core", NULL, "precomposeunicode", true},
    {"core", NULL, "symlinks", true},
    {"core", NULL, "autocrlf", true},
    {"core", NULL, "eol", true},
    {"CORE", NULL, "FileMode", true},
    {"extensions", NULL, "objectformat", true},
    {"extensions", NULL, "refstorage", true},
    {"extensions", NULL, "worktreeconfig", true},
    {"extensions", NULL, "noop", true},
    {"remote", "origin", "url", true},
    {"remote", "origin", "pushurl", true},
    {"remote", "o", "fetch", true},
    {"remote", "o", "push", true},
    {"remote", "o", "tagopt", true},
    {"remote", "o", "prune", true},
    {"remote", "o", "mirror", true},
    {"remote", "o", "promisor", true},
    {"remote", "o", "partialclonefilter", true},
    {"Remote", "Origin", "URL", true},
    {"branch", "main", "remote", true},
    {"branch", "main", "merge", true},
    {"branch", "main", "rebase", true},
    {"branch", "main", "pushremote", true},
    {"branch", "main", "description", true},
    {"submodule", "s", "url", true},
    {"submodule", "s", "active", true},
    {"submodule", "s", "branch", true},
    {"submodule", "s", "fetchrecursesubmodules", true},
    {"submodule", "s", "ignore", true},
    {"submodule", "s", "shallow", true},
    {"user", NULL, "name", true},
    {"user", NULL, "email", true},
    {"init", NULL, "defaultbranch", true},
    {"gc", NULL, "auto", true},
    {"index", NULL, "version", true},
    {"index", NULL, "threads", true},
    {"pull", NULL, "rebase", true},
    {"pull", NULL, "ff", true},
    {"push", NULL, "default", true},
    {"push", NULL, "autosetupremote", true},
    {"fetch", NULL, "prune", true},
    {"merge", NULL, "ff", true},
    {"merge", NULL, "conflictstyle", true},
    {"rebase", NULL, "autosquash", true},
    {"rebase", NULL, "autostash", true},
    {"color", NULL, "ui", true},
    {"status", NULL, "showuntrackedfiles", true},
    {"advice", NULL, "detachedhead", true},
    {"maintenance", NULL, "auto", true},
    {"maintenance", NULL, "strategy", true},
    {"lfs", NULL, "repositoryformatversion", true},
    /* active */
    {"core", NULL, "fsmonitor", false},
    {"core", NULL, "pager", false},
    {"core", NULL, "editor", false},
    {"core", NULL, "sshcommand", false},
    {"core", NULL, "hookspath", false},
    {"core", NULL, "worktree", false},
    {"core", NULL, "askpass", false},
    {"core", NULL, "gitproxy", false},
    {"core", NULL, "excludesfile", false},
    {"core", NULL, "attributesfile", false},
    {"core", NULL, "alternaterefscommand", false},
    {"core", NULL, "sharedrepository", false},
    {"core", NULL, "protectntfs", false},
    {"core", NULL, "protecthfs", false},
    {"extensions", NULL, "partialclone", false},
    {"Core", NULL, "FSMonitor", false},
    {"alias", NULL, "co", false},
    {"filter", "lfs", "process", false},
    {"filter", "x", "clean", false},
    {"diff", NULL, "external", false},
    {"diff", "x", "command", false},
    {"diff", "x", "textconv", false},
    {"merge", "x", "driver", false},
    {"credential", NULL, "helper", false},
    {"credential", "https://h", "helper", false},
    {"gpg", NULL, "program", false},
    {"pager", NULL, "log", false},
    {"include", NULL, "path", false},
    {"includeif", "gitdir:/x", "path", false},
    {"url", "ext::sh -c x", "insteadof", false},
    {"protocol", NULL, "allow", false},
    {"protocol", "ext", "allow", false},
    {"http", NULL, "proxy", false},
    {"safe", NULL, "directory", false},
    {"sequence", NULL, "editor", false},
    {"uploadpack", NULL, "packobjectshook", false},
    {"receive", NULL, "denycurrentbranch", false},
    {"remote", "o", "uploadpack", false},
    {"remote", "o", "receivepack", false},
    {"remote", "o", "vcs", false},
    {"remote", "o", "proxy", false},
    {"submodule", "s", "update", false},
    {"submodule", NULL, "recurse", false},
    {"core", "x", "bare", false},   /* a subsection where git has none */
    {"remote", NULL, "url", false}, /* no remote name */
    {"index", "x", "version", false},
    {"advice", "x", "y", false},
    {"merge", NULL, "tool", false},
    {"", NULL, "bare", false},
    {"unknown", NULL, "key", false},
    {"lfs", NULL, "url", false},
};

static void test_inert(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof inert_cases / sizeof inert_cases[0]; i++) {
		const struct inert_case *c = &inert_cases[i];
		if (berth_git_key_inert(c->section, c->sub, c->key) != c->inert)
			fail_msg("%s.%s.%s: want %s", c->section, c->sub ? c->sub : "-", c->key,
				 c->inert ? "inert" : "active");
	}
	assert_false(berth_git_key_inert(NULL, NULL, "bare"));
	assert_false(berth_git_key_inert("core", NULL, NULL));
}

static void test_first_active(void **state)
{
	struct berth_error err = {0};
	char out[64];
	(void)state;

	mkd("a");
	int fd = opendir_rel("a");
	put("a/config",
	    "[core]\n\trepositoryformatversion = 0\n\tbare = false\n[remote \"origin\"]\n\turl = x\n"
	    "[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n");
	assert_int_equal(berth_git_config_first_active(fd, "config", out, sizeof out, &err), 0);
	put("a/config", "[core]\n\tbare = false\n\tFSMonitor = /tmp/x\n\tpager = less\n");
	assert_int_equal(berth_git_config_first_active(fd, "config", out, sizeof out, &err), 1);
	assert_string_equal(out, "core.fsmonitor");
	put("a/config", "[remote \"Origin\"]\n\turl = x\n\tuploadpack = sh -c evil\n");
	assert_int_equal(berth_git_config_first_active(fd, "config", out, sizeof out, &err), 1);
	assert_string_equal(out, "remote.Origin.uploadpack");
	put("a/config", "[submodule \"s\"]\n\turl = x\n\tupdate = !sh\n");
	assert_int_equal(berth_git_config_first_active(fd, "config", out, 8, &err), 1);
	assert_string_equal(out, "submodu"); /* truncated to @outlen */
	put("a/config", "[core]\n\tbare = false\n[core \"x\"]\n\tbare = true\n");
	assert_int_equal(berth_git_config_first_active(fd, "config", out, sizeof out, &err), 1);
	assert_string_equal(out, "core.x.bare");
	put("a/config", "hooksPath = before any section\n");
	assert_int_equal(berth_git_config_first_active(fd, "config", out, sizeof out, &err), 1);
	assert_string_equal(out, "hookspath");
	assert_int_equal(berth_git_config_first_active(fd, "absent", out, sizeof out, &err), 0);
	put("a/config", "[core]\n\tbare = false\n[broken\n");
	assert_int_equal(berth_git_config_first_active(fd, "config", out, sizeof out, &err), -1);
	assert_int_equal(err.errnum, EINVAL);
	sh("ln -sfn /etc/passwd '%s/a/config.worktree'", tmp);
	assert_int_equal(berth_git_config_first_active(fd, "config.worktree", out, sizeof out, &err), -1);
	assert_int_equal(err.errnum, ELOOP);
	close(fd);
}

static void test_refs(void **state)
{
	struct berth_error err = {0};
	struct berth_git_refs r;
	char dir[PATH_MAX], want[PATH_MAX + 64];
	(void)state;

	mkd("c");
	snprintf(dir, sizeof dir, "%s/c", tmp);
	int fd = opendir_rel("c");
	put("c/config",
	    "[include]\n\tpath = ~/.gitconfig.inc\n\tpath = ~\n\tpath = rel/x.inc\n\tpath = /abs/y.inc\n"
	    "[includeIf \"gitdir:/w/\"]\n\tpath = ../up.inc\n[includeIf \"onbranch:main\"]\n\tpath = ~/b\n"
	    "[include \"x\"]\n\tpath = not-an-include\n[Include]\n\tPath = \"quoted name\"\n"
	    "[core]\n\thooksPath = ~/first\n\thooksPath = ~/hooks\n\tworktree = ../wt\n\tbare = yes\n"
	    "[extensions]\n\tworktreeConfig = 1\n");
	assert_int_equal(berth_git_config_refs(fd, "config", dir, "/home/u", &r, &err), 0);
	assert_int_equal(r.n_includes, 7);
	assert_string_equal(r.includes[0], "/home/u/.gitconfig.inc");
	assert_string_equal(r.includes[1], "/home/u");
	snprintf(want, sizeof want, "%s/rel/x.inc", dir);
	assert_string_equal(r.includes[2], want);
	assert_string_equal(r.includes[3], "/abs/y.inc");
	snprintf(want, sizeof want, "%s/../up.inc", dir);
	assert_string_equal(r.includes[4], want);
	assert_string_equal(r.includes[5], "/home/u/b");
	snprintf(want, sizeof want, "%s/quoted name", dir);
	assert_string_equal(r.includes[6], want);
	assert_string_equal(r.hooks_path, "/home/u/hooks"); /* last wins */
	assert_string_equal(r.worktree, "../wt");
	assert_true(r.bare);
	assert_true(r.worktree_config);
	berth_git_refs_free(&r);
	assert_null(r.includes);
	assert_int_equal(r.n_includes, 0);

	put("c/config",
	    "[core]\n\thooksPath = .githooks\n\tbare = off\n[extensions]\n\tworktreeconfig = false\n"
	    "[include]\n\tpath = ~root/inc\n");
	assert_int_equal(berth_git_config_refs(fd, "config", dir, NULL, &r, &err), 0);
	assert_string_equal(r.hooks_path, ".githooks"); /* relative stays relative */
	assert_null(r.worktree);
	assert_false(r.bare);
	assert_false(r.worktree_config);
	assert_int_equal(r.n_includes, 1);
	assert_string_equal(r.includes[0], "/root/inc");
	berth_git_refs_free(&r);

	put("c/config", "[extensions]\n\tworktreeConfig\n[core]\n\tbare =\n");
	assert_int_equal(berth_git_config_refs(fd, "config", dir, NULL, &r, &err), 0);
	assert_true(r.worktree_config); /* bare key: true */
	assert_false(r.bare);           /* empty: false */
	berth_git_refs_free(&r);

	/* where git itself fails */
	static const char *const bad[] = {
	    "[include]\n\tpath\n",
	    "[core]\n\thooksPath\n",
	    "[core]\n\tworktree\n",
	    "[core]\n\tbare = maybe\n",
	    "[extensions]\n\tworktreeconfig = 2x\n",
	    "[include]\n\tpath = ~/x\n", /* no home */
	    "[include]\n\tpath = ~no-such-user-berth/x\n",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		put("c/config", bad[i]);
		if (berth_git_config_refs(fd, "config", dir, NULL, &r, &err) != -1)
			fail_msg("`%s` accepted", bad[i]);
		assert_true(err.errnum == EINVAL || err.errnum == ENOENT);
		berth_git_refs_free(&r);
	}
	put("c/config", "[include]\n\tpath = rel\n");
	assert_int_equal(berth_git_config_refs(fd, "config", "relative/dir", NULL, &r, &err), -1);
	assert_int_equal(err.errnum, EINVAL);
	berth_git_refs_free(&r);

	/* absent: empty; a link: refused */
	assert_int_equal(berth_git_config_refs(fd, "absent", dir, NULL, &r, &err), 0);
	assert_int_equal(r.n_includes, 0);
	assert_null(r.hooks_path);
	sh("ln -sfn config '%s/c/cl'", tmp);
	assert_int_equal(berth_git_config_refs(fd, "cl", dir, NULL, &r, &err), -1);
	assert_int_equal(err.errnum, ELOOP);
	berth_git_refs_free(&r);
	berth_git_refs_free(NULL);
	close(fd);
}

static int setup(void **state)
{
	(void)state;
	const char *t = getenv("TMPDIR");
	snprintf(tmp, sizeof tmp, "%s/test_gitrules.XXXXXX", t != NULL && *t != '\0' ? t : "/tmp");
	if (mkdtemp(tmp) == NULL)
		return -1;
	tmpfd = open(tmp, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return tmpfd < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	close(tmpfd);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_head),         cmocka_unit_test(test_gitdir),
	    cmocka_unit_test(test_commondir),    cmocka_unit_test(test_parse_vs_git),
	    cmocka_unit_test(test_parse_fields), cmocka_unit_test(test_read_files),
	    cmocka_unit_test(test_inert),        cmocka_unit_test(test_first_active),
	    cmocka_unit_test(test_refs),         cmocka_unit_test(test_gitfile),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
