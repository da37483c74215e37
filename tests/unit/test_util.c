/* SPDX-License-Identifier: MIT */
/*
 * test_util.c - the helpers of src/util written once for the whole tree: the
 * YAML tree builder (every problem kind handed to the caller with its
 * position, what a caller may accept, the limits, a tree freed without
 * recursion), the hex digits, the UTF-8 decoder, the growing buffers, the
 * state and configuration paths, mkdir -p, the atomic write and
 * close-all-but.
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
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/hex.h"
#include "util/rundir.h"
#include "util/sys.h"
#include "util/text.h"
#include "util/ynode.h"

/* ---- the YAML builder ---- */

struct seen {
	struct berth_yproblem p[8];
	char text[8][64];
	size_t n;
	int answer; /* what the callback returns */
};

static int record(void *opaque, const struct berth_yproblem *p)
{
	struct seen *s = opaque;

	if (s->n < 8) {
		s->p[s->n] = *p;
		snprintf(s->text[s->n], sizeof s->text[0], "%s", p->text ? p->text : "");
		s->n++;
	}
	return s->answer;
}

static int build(const char *yaml, unsigned depth, size_t nodes, unsigned flags, struct seen *s,
		 struct berth_ynode **root)
{
	struct berth_yopts o = {
	    .max_depth = depth, .max_nodes = nodes, .flags = flags, .problem = record, .opaque = s};

	return berth_ynode_build(yaml, strlen(yaml), &o, root);
}

static void test_ynode_tree(void **state)
{
	struct seen s = {0};
	struct berth_ynode *root;

	(void)state;
	assert_int_equal(build("a: 1\nb: [x, 'y']\n", 0, 0, 0, &s, &root), 0);
	assert_int_equal(s.n, 0);
	assert_non_null(root);
	assert_int_equal(root->kind, BERTH_YN_MAP);
	assert_int_equal(berth_ymap_size(root), 2);
	assert_string_equal(berth_ymap_key(root, 1)->s, "b");
	const struct berth_ynode *b = berth_ymap_val(root, 1);
	assert_int_equal(b->kind, BERTH_YN_SEQ);
	assert_int_equal(b->n, 2);
	assert_int_equal(b->line, 2);
	assert_int_equal(b->col, 4);
	assert_true(b->kids[0]->plain);
	assert_false(b->kids[1]->plain); /* quoted */
	assert_int_equal(b->kids[1]->col, 8);
	berth_ynode_free(root);

	/* an empty stream has no document */
	assert_int_equal(build("# nothing\n", 0, 0, 0, &s, &root), 0);
	assert_null(root);
}

static void test_ynode_problems(void **state)
{
	struct seen s = {.answer = 0};
	struct berth_ynode *root;

	(void)state;
	/* going on after an anchor and an alias: both reported, the alias stands as an empty scalar */
	assert_int_equal(build("a: &x 1\nb: *x\n", 0, 0, 0, &s, &root), 1);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.p[0].kind, BERTH_YP_ANCHOR);
	assert_string_equal(s.text[0], "x");
	assert_int_equal(s.p[0].line, 1);
	assert_int_equal(s.p[0].col, 4);
	assert_int_equal(s.p[1].kind, BERTH_YP_ALIAS);
	assert_int_equal(s.p[1].line, 2);
	assert_int_equal(berth_ymap_size(root), 2);
	assert_string_equal(berth_ymap_val(root, 1)->s, "");
	berth_ynode_free(root);

	/* accepted (1): not a problem at all */
	memset(&s, 0, sizeof s);
	s.answer = 1;
	assert_int_equal(build("a: &x 1\n", 0, 0, 0, &s, &root), 0);
	assert_int_equal(s.n, 1);
	berth_ynode_free(root);

	/* stopping (-1) at the first: nothing after it is looked at */
	memset(&s, 0, sizeof s);
	s.answer = -1;
	assert_int_equal(build("a: !foo &x 1\n", 0, 0, 0, &s, &root), 1);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.p[0].kind, BERTH_YP_ANCHOR);
	berth_ynode_free(root);

	/* tags: core ones accepted with BERTH_YB_TAGS_CORE, `!!str` makes a string; any other reported */
	memset(&s, 0, sizeof s);
	assert_int_equal(build("a: !!str 5\nb: !!seq []\nc: !!map {}\n", 0, 0, BERTH_YB_TAGS_CORE, &s, &root),
			 0);
	assert_false(berth_ymap_val(root, 0)->plain);
	berth_ynode_free(root);
	memset(&s, 0, sizeof s);
	assert_int_equal(build("a: !!seq 5\n", 0, 0, BERTH_YB_TAGS_CORE, &s, &root), 1);
	assert_int_equal(s.p[0].kind, BERTH_YP_TAG);
	assert_string_equal(s.text[0], "tag:yaml.org,2002:seq");
	berth_ynode_free(root);
	memset(&s, 0, sizeof s);
	assert_int_equal(build("a: !foo 5\n", 0, 0, BERTH_YB_TAGS_ANY, &s, &root), 0);
	assert_true(berth_ymap_val(root, 0)->plain);
	berth_ynode_free(root);

	/* NUL bytes: refused unless BERTH_YB_NUL, kept with their length */
	memset(&s, 0, sizeof s);
	assert_int_equal(build("a: \"x\\0y\"\n", 0, 0, 0, &s, &root), 1);
	assert_int_equal(s.p[0].kind, BERTH_YP_NUL);
	berth_ynode_free(root);
	memset(&s, 0, sizeof s);
	assert_int_equal(build("a: \"x\\0y\"\n", 0, 0, BERTH_YB_NUL, &s, &root), 0);
	assert_int_equal(berth_ymap_val(root, 0)->len, 3);
	assert_memory_equal(berth_ymap_val(root, 0)->s, "x\0y", 4);
	berth_ynode_free(root);

	/* a second document, a syntax error (with its context), bytes not UTF-8 (at their character) */
	memset(&s, 0, sizeof s);
	assert_int_equal(build("a: 1\n---\nb: 2\n", 0, 0, 0, &s, &root), 1);
	assert_int_equal(s.p[0].kind, BERTH_YP_DOCUMENT);
	assert_int_equal(s.p[0].line, 2);
	berth_ynode_free(root);
	memset(&s, 0, sizeof s);
	assert_int_equal(build("a: [1, 2\n", 0, 0, 0, &s, &root), 1);
	assert_int_equal(s.p[0].kind, BERTH_YP_SYNTAX);
	assert_non_null(s.p[0].context);
	assert_int_equal(s.p[0].context_line, 1);
	assert_int_equal(s.p[0].context_col, 4);
	berth_ynode_free(root);
	memset(&s, 0, sizeof s);
	assert_int_equal(build("a: \xc3\xa9\xff\n", 0, 0, 0, &s, &root), 1);
	assert_int_equal(s.p[0].kind, BERTH_YP_READER);
	assert_int_equal(s.p[0].offset, 5);
	assert_int_equal(s.p[0].value, 0xff);
	assert_int_equal(s.p[0].line, 1);
	assert_int_equal(s.p[0].col, 5); /* é is one column */
	berth_ynode_free(root);
}

/* Build and free a tree of 20000 nested sequences with no depth limit;
 * returns the depth found. */
static void *deep_tree(void *arg)
{
	struct seen s = {0};
	struct berth_ynode *root = NULL;
	size_t levels = 20000, d = 1;
	char *big = malloc(2 * levels + 1);

	(void)arg;
	if (big == NULL)
		return NULL;
	memset(big, '[', levels);
	memset(big + levels, ']', levels);
	big[2 * levels] = '\0';
	if (build(big, 0, 0, 0, &s, &root) != 0 || root == NULL) {
		free(big);
		return NULL;
	}
	for (const struct berth_ynode *x = root; x->n == 1; x = x->kids[0])
		d++;
	berth_ynode_free(root);
	free(big);
	return (void *)(intptr_t)d;
}

static void test_ynode_limits(void **state)
{
	struct seen s = {.answer = 0};
	struct berth_ynode *root;
	char deep[1024];
	size_t n = 0;

	(void)state;
	for (int i = 0; i < 17; i++)
		deep[n++] = '[';
	for (int i = 0; i < 17; i++)
		deep[n++] = ']';
	deep[n] = '\0';
	assert_int_equal(build(deep, 16, 0, 0, &s, &root), 1);
	assert_int_equal(s.p[0].kind, BERTH_YP_DEPTH);
	assert_int_equal(s.p[0].col, 17);
	berth_ynode_free(root);
	memset(&s, 0, sizeof s);
	assert_int_equal(build(deep, 17, 0, 0, &s, &root), 0);
	berth_ynode_free(root);

	memset(&s, 0, sizeof s);
	assert_int_equal(build("[1, 2, 3]", 0, 3, 0, &s, &root), 1);
	assert_int_equal(s.p[0].kind, BERTH_YP_NODES);
	assert_int_equal(s.p[0].col, 8); /* the fourth node */
	assert_int_equal(root->n, 2);
	berth_ynode_free(root);

	/* no depth limit: 20000 levels are built and freed without recursion, on a thread whose
	 * stack (256 KiB) a recursive walk would overflow (not more levels: libyaml's scanner is
	 * quadratic in flow nesting, 100000 levels take 30 s) */
	pthread_attr_t at;
	pthread_t th;
	void *ret = NULL;
	assert_int_equal(pthread_attr_init(&at), 0);
	assert_int_equal(pthread_attr_setstacksize(&at, 256 * 1024), 0);
	assert_int_equal(pthread_create(&th, &at, deep_tree, NULL), 0);
	assert_int_equal(pthread_join(th, &ret), 0);
	pthread_attr_destroy(&at);
	assert_int_equal((intptr_t)ret, 20000);
}

/* berth_ynode_parse: the strict wording, the first problem only */
static void test_ynode_parse(void **state)
{
	struct berth_error err = {0};
	struct berth_ynode *root = (void *)1;

	(void)state;
	assert_int_equal(berth_ynode_parse("a: *b\n", 6, "f.yml", &root, &err), -1);
	assert_null(root);
	assert_string_equal(err.msg, "f.yml:1:4: aliases are not allowed; write the value out in full");
	assert_int_equal(err.status, BERTH_EXIT_USAGE);
	assert_int_equal(berth_ynode_parse("a: [1\n", 6, "f.yml", &root, &err), -1);
	assert_string_equal(err.msg, "f.yml:2:1: invalid YAML: did not find expected ',' or ']'");
	assert_int_equal(berth_ynode_parse("a: 1\n", 5, "f.yml", &root, &err), 0);
	assert_non_null(root);
	berth_ynode_free(root);
}

/* ---- hex, UTF-8 ---- */

static void test_hex(void **state)
{
	unsigned char in[4] = {0x00, 0x7f, 0xab, 0xff}, out[4];
	char h[9];

	(void)state;
	berth_hex(in, 4, h);
	assert_string_equal(h, "007fabff");
	assert_int_equal(berth_unhex("007FabfF", out, 4), 0);
	assert_memory_equal(in, out, 4);
	assert_int_equal(berth_unhex("007fab", out, 4), -1);   /* short */
	assert_int_equal(berth_unhex("007fabfg", out, 4), -1); /* not hex */
	assert_int_equal(berth_hex_digit('F'), 15);
	assert_int_equal(berth_hex_digit('g'), -1);
	assert_int_equal(berth_hex_digit(0xe9), -1);
}

static void test_utf8(void **state)
{
	uint32_t cp = 0;

	(void)state;
	assert_int_equal(berth_utf8_decode((const unsigned char *)"\xe2\x82\xac", 3, &cp), 3);
	assert_int_equal(cp, 0x20ac);
	assert_int_equal(berth_utf8_decode((const unsigned char *)"\xf0\x9f\x98\x80", 4, &cp), 4);
	assert_int_equal(cp, 0x1f600);
	assert_int_equal(berth_utf8_decode((const unsigned char *)"\xe2\x82\xac", 2, &cp), 0); /* cut short */
	assert_int_equal(berth_utf8_decode((const unsigned char *)"\xc0\x80", 2, &cp), 0);     /* overlong */
	assert_int_equal(berth_utf8_decode((const unsigned char *)"\xe0\x80\x80", 3, &cp), 0); /* overlong */
	assert_int_equal(berth_utf8_decode((const unsigned char *)"\xed\xa0\x80", 3, &cp), 0); /* surrogate */
	assert_int_equal(berth_utf8_decode((const unsigned char *)"\xf4\x90\x80\x80", 4, &cp),
			 0); /* > U+10FFFF */
	assert_int_equal(berth_utf8_decode((const unsigned char *)"\xc3", SIZE_MAX, &cp),
			 0); /* NUL ends it */
	assert_int_equal(berth_utf8_decode((const unsigned char *)"a", 0, &cp), 0);
}

/* ---- growing buffers ---- */

static void test_buf(void **state)
{
	struct berth_buf b = {0};
	char **v = NULL;
	size_t n = 0;
	char big[1000];

	(void)state;
	berth_buf_puts(&b, "ab");
	berth_buf_put(&b, "c\0d", 3);
	assert_int_equal(b.len, 5);
	assert_memory_equal(b.p, "abc\0d", 6); /* kept NUL-terminated */
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	berth_buf_putf(&b, "[%s|%d]", big, 42); /* longer than putf's own room */
	assert_int_equal(b.len, 5 + 1 + 999 + 4);
	assert_memory_equal(b.p + 5 + 1 + 999, "|42]", 5);
	assert_false(b.oom);
	berth_buf_free(&b);
	assert_null(b.p);
	assert_int_equal(b.len, 0);

	assert_int_equal(berth_strv_push(&v, &n, "one"), 0);
	assert_int_equal(berth_strv_push(&v, &n, "two"), 0);
	assert_int_equal(n, 2);
	assert_string_equal(v[1], "two");
	assert_null(v[2]);
	berth_strv_free(v);
}

/* ---- paths and files ---- */

static char *tmpdir(void)
{
	char *t = strdup("/tmp/berth-test-util.XXXXXX");

	assert_non_null(t);
	assert_non_null(mkdtemp(t));
	return t;
}

static void rm_rf(const char *d)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", d);
	assert_int_equal(system(cmd), 0);
}

static void test_state_path(void **state)
{
	char buf[64], want[PATH_MAX];
	char *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL, *xdg = NULL;

	(void)state;
	if (getenv("XDG_STATE_HOME") != NULL)
		xdg = strdup(getenv("XDG_STATE_HOME"));
	setenv("XDG_STATE_HOME", "/s", 1);
	assert_int_equal(berth_state_path("runs", buf, sizeof buf), 0);
	assert_string_equal(buf, "/s/berth/runs");
	assert_int_equal(berth_state_path("", buf, sizeof buf), 0);
	assert_string_equal(buf, "/s/berth");
	setenv("XDG_STATE_HOME", "relative", 1); /* not absolute: ignored */
	setenv("HOME", "/h", 1);
	assert_int_equal(berth_state_path("apps", buf, sizeof buf), 0);
	assert_string_equal(buf, "/h/.local/state/berth/apps");
	setenv("XDG_CONFIG_HOME", "/c", 1);
	assert_int_equal(berth_config_path("keys", buf, sizeof buf), 0);
	assert_string_equal(buf, "/c/berth/keys");
	unsetenv("XDG_CONFIG_HOME");
	assert_int_equal(berth_config_path("keys", buf, sizeof buf), 0);
	assert_string_equal(buf, "/h/.config/berth/keys");
	assert_int_equal(berth_trust_state_path(buf, sizeof buf), 0);
	assert_string_equal(buf, "/h/.local/state/berth/trust/known");
	errno = 0;
	assert_int_equal(berth_state_path("apps", buf, 10), -1);
	assert_int_equal(errno, ENAMETOOLONG);
	/* without HOME: the passwd entry's home, as for the audit log */
	unsetenv("HOME");
	if (berth_home_dir() != NULL) {
		snprintf(want, sizeof want, "%s/.local/state/berth/runs", berth_home_dir());
		char big[PATH_MAX];
		assert_int_equal(berth_state_path("runs", big, sizeof big), 0);
		assert_string_equal(big, want);
	}
	if (home != NULL)
		setenv("HOME", home, 1);
	if (xdg != NULL)
		setenv("XDG_STATE_HOME", xdg, 1);
	else
		unsetenv("XDG_STATE_HOME");
	free(home);
	free(xdg);
}

static void test_mkdirs(void **state)
{
	struct berth_error err = {0};
	char *t = tmpdir(), p[PATH_MAX];
	struct stat st;
	mode_t um = umask(0);

	(void)state;
	snprintf(p, sizeof p, "%s/a/b/c", t);
	assert_int_equal(berth_mkdirs(p, 0750, &err), 0);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0750);
	snprintf(p, sizeof p, "%s/a/b", t);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700); /* made on the way */
	/* an existing one with another mode is set to the one asked for */
	snprintf(p, sizeof p, "%s/a/b/c", t);
	assert_int_equal(berth_mkdirs(p, 0700, &err), 0);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	/* a file in the way */
	snprintf(p, sizeof p, "%s/f", t);
	close(open(p, O_WRONLY | O_CREAT, 0600));
	assert_int_equal(berth_mkdirs(p, 0700, &err), -1);
	assert_int_equal(err.status, BERTH_EXIT_USAGE);
	assert_non_null(strstr(err.msg, "is not a directory"));
	snprintf(p, sizeof p, "%s/f/x/y", t);
	assert_int_equal(berth_mkdir_parents(p, 0700, &err), -1);
	assert_int_equal(err.errnum, ENOTDIR);
	umask(um);
	rm_rf(t);
	free(t);
}

static size_t entries(const char *dir)
{
	char cmd[PATH_MAX + 32], line[64];
	FILE *f;

	snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", dir);
	f = popen(cmd, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof line, f));
	pclose(f);
	return (size_t)strtoul(line, NULL, 10);
}

static void test_write_atomic(void **state)
{
	struct berth_error err = {0};
	char *t = tmpdir(), p[PATH_MAX], got[32] = {0};
	struct stat st;
	int fd;
	mode_t um = umask(0);

	(void)state;
	snprintf(p, sizeof p, "%s/out.json", t);
	assert_int_equal(berth_write_atomic(p, "old\n", 4, 0644, 0, &err), 0);
	assert_int_equal(berth_write_atomic(p, "{\"a\":1}\n", 8, 0600, BERTH_WRITE_SYNC, &err), 0);
	fd = open(p, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, got, sizeof got), 8);
	close(fd);
	assert_string_equal(got, "{\"a\":1}\n");
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600); /* the new file's */
	assert_int_equal(entries(t), 1);            /* no temporary left */
	/* a rename that cannot happen (onto a directory): the error, the old content, no temporary */
	snprintf(p, sizeof p, "%s/d", t);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof p, "%s/d/x", t);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof p, "%s/d/x", t);
	assert_int_equal(berth_write_atomic(p, "x", 1, 0600, 0, &err), -1);
	assert_int_equal(err.errnum, EISDIR);
	snprintf(p, sizeof p, "%s/d", t);
	assert_int_equal(entries(p), 1);
	/* a directory that does not exist */
	snprintf(p, sizeof p, "%s/nope/x", t);
	assert_int_equal(berth_write_atomic(p, "x", 1, 0600, 0, &err), -1);
	assert_int_equal(err.errnum, ENOENT);
	char want[PATH_MAX + 64];
	snprintf(want, sizeof want, "cannot write `%s`: No such file or directory",
		 p); /* the file, not the temporary */
	assert_string_equal(err.msg, want);
	/* BERTH_WRITE_EXCL: made whole when absent; 1, untouched, when present */
	snprintf(p, sizeof p, "%s/origin", t);
	assert_int_equal(berth_write_atomic(p, "a\n", 2, 0600, BERTH_WRITE_DURABLE | BERTH_WRITE_EXCL, &err),
			 0);
	err = (struct berth_error){0};
	assert_int_equal(berth_write_atomic(p, "bb\n", 3, 0600, BERTH_WRITE_DURABLE | BERTH_WRITE_EXCL, &err),
			 1);
	assert_string_equal(err.msg, ""); /* not an error: the caller reads the winner's */
	fd = open(p, O_RDONLY);
	assert_true(fd >= 0);
	memset(got, 0, sizeof got);
	assert_int_equal(read(fd, got, sizeof got), 2);
	close(fd);
	assert_string_equal(got, "a\n");
	/* BERTH_WRITE_MODE: exactly the mode, whatever the umask */
	umask(077);
	snprintf(p, sizeof p, "%s/pub", t);
	assert_int_equal(berth_write_atomic(p, "k", 1, 0644, BERTH_WRITE_MODE, &err), 0);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	umask(0);
	assert_int_equal(entries(t), 4); /* out.json d origin pub: no temporary */
#ifdef BERTH_CRASH_POINTS
	/* the messages of the errors no tmpfs gives (the test build's injection,
	 * sys.h): the file named, the errno's own words, nothing left behind */
	static const struct {
		const char *v, *words;
		int e;
	} inj[] = {{"ENOSPC", "No space left on device", ENOSPC},
		   {"EDQUOT", "Disk quota exceeded", EDQUOT},
		   {"EIO", "Input/output error", EIO}};
	for (size_t i = 0; i < sizeof inj / sizeof inj[0]; i++) {
		char env[64];
		snprintf(env, sizeof env, "state.json:%s", inj[i].v);
		setenv("BERTH_TEST_WRITE_ERRNO", env, 1);
		snprintf(p, sizeof p, "%s/state.json", t);
		for (unsigned fl = 0; fl <= BERTH_WRITE_EXCL; fl += BERTH_WRITE_EXCL) {
			err = (struct berth_error){0};
			assert_int_equal(berth_write_atomic(p, "x", 1, 0600, BERTH_WRITE_DURABLE | fl, &err),
					 -1);
			assert_int_equal(err.errnum, inj[i].e);
			snprintf(want, sizeof want, "cannot write `%s`: %s", p, inj[i].words);
			assert_string_equal(err.msg, want);
			assert_int_equal(access(p, F_OK), -1);
			assert_int_equal(entries(t), 4);
		}
	}
	unsetenv("BERTH_TEST_WRITE_ERRNO");
	/* another file's name is not touched */
	setenv("BERTH_TEST_WRITE_ERRNO", "other:EIO", 1);
	assert_int_equal(berth_write_atomic(p, "x", 1, 0600, 0, &err), 0);
	unsetenv("BERTH_TEST_WRITE_ERRNO");
#endif
	umask(um);
	rm_rf(t);
	free(t);
}

static void test_close_all_but(void **state)
{
	int a = open("/dev/null", O_RDONLY), b = open("/dev/null", O_RDONLY), c = open("/dev/null", O_RDONLY);
	int p[2];
	pid_t pid;
	int st;

	(void)state;
	assert_true(a >= 3 && b > a && c > b);
	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		berth_close_all_but(a, p[1]);
		/* open: stdio, a and the pipe's write end; closed: b, c, the read end */
		int ok = fcntl(0, F_GETFD) >= 0 && fcntl(a, F_GETFD) >= 0 && fcntl(p[1], F_GETFD) >= 0 &&
			 fcntl(b, F_GETFD) < 0 && fcntl(c, F_GETFD) < 0 && fcntl(p[0], F_GETFD) < 0;
		char r = ok ? 'y' : 'n';
		_exit(write(p[1], &r, 1) == 1 ? 0 : 1);
	}
	close(p[1]);
	char r = 0;
	assert_int_equal(read(p[0], &r, 1), 1);
	assert_int_equal(r, 'y');
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(p[0]);
	close(a);
	close(b);
	close(c);
}

static void test_clock(void **state)
{
	int64_t ms = berth_now_ms(), us = berth_now_us();

	(void)state;
	assert_true(ms > 0);
	assert_true(us / 1000 - ms >= 0 && us / 1000 - ms < 1000);
	usleep(20000);
	assert_true(berth_now_ms() - ms >= 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ynode_tree),    cmocka_unit_test(test_ynode_problems),
	    cmocka_unit_test(test_ynode_limits),  cmocka_unit_test(test_ynode_parse),
	    cmocka_unit_test(test_hex),           cmocka_unit_test(test_utf8),
	    cmocka_unit_test(test_buf),           cmocka_unit_test(test_state_path),
	    cmocka_unit_test(test_mkdirs),        cmocka_unit_test(test_write_atomic),
	    cmocka_unit_test(test_close_all_but), cmocka_unit_test(test_clock),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
