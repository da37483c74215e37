/* SPDX-License-Identifier: MIT */
/*
 * test_ask.c - the pure half of `berth run --ask` (src/supervisor/ask.h):
 * which calls are held and with which errno, the control socket's requests,
 * the denial block.  Policies come from the real `berth run` option parser.
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
#include <sys/syscall.h>
#include <unistd.h>

#include "policy/flags.h"
#include "supervisor/ask.h"

static char *no_env(const char *name)
{
	(void)name;
	return NULL;
}

static struct berth_run_opts o;
static char ws[PATH_MAX];

static int setup(void **state)
{
	char *argv[] = {"run", "--workspace", ws, "--ro", "/usr/share/doc:/docs", "--", "true", NULL};
	struct berth_error err = {0};

	(void)state;
	snprintf(ws, sizeof ws, "/tmp/test_ask.XXXXXX");
	if (mkdtemp(ws) == NULL)
		return -1;
	return berth_run_parse(7, argv, no_env, &o, &err);
}

static int teardown(void **state)
{
	(void)state;
	berth_run_opts_free(&o);
	rmdir(ws);
	return 0;
}

/* openat(AT_FDCWD, @path, @flags, 0644) */
static enum berth_ask_verdict classify(const char *path, int flags, struct berth_ask_req *r)
{
	uint64_t args[6] = {(uint64_t)(int64_t)AT_FDCWD, 0x1000, (uint64_t)flags, 0644, 0, 0};
	struct berth_ask_call c;

	assert_int_equal(berth_ask_decode(SYS_openat, args, &c), 0);
	assert_string_equal(c.syscall, "openat");
	return berth_ask_classify(&o.policy, &c, path, strlen(path) + 1, r);
}

static void held(const char *path, int flags, int errnum, bool write)
{
	struct berth_ask_req r;

	assert_int_equal(classify(path, flags, &r), BERTH_ASK_HOLD);
	assert_string_equal(r.path, path);
	assert_int_equal(r.errnum, errnum);
	assert_int_equal(r.write, write);
}

static void passed(const char *path, int flags)
{
	struct berth_ask_req r;

	assert_int_equal(classify(path, flags, &r), BERTH_ASK_PASS);
}

static void test_held(void **state)
{
	(void)state;
	held("/var/tmp/x", O_RDONLY, ENOENT, false);
	held("/opt/a/b", O_WRONLY | O_APPEND, ENOENT, true);
	held("/root/.ssh/id_ed25519", O_RDONLY | O_CLOEXEC, ENOENT, false);
	held("/etc/passwd", O_RDWR, EROFS, true); /* a write under a read-only system dir */
	held("/usr/lib/x.so", O_WRONLY | O_TRUNC, EROFS, true);
	held("/newfile", O_CREAT | O_WRONLY, EROFS, true); /* right under the read-only root */
	held("/opt/newfile", O_CREAT | O_WRONLY, ENOENT, true);
	held("/home2/x", O_RDONLY, ENOENT, false); /* /home's name, not under it */

	/* repeated slashes: decided, asked and granted as the kernel reads them */
	struct berth_ask_req r;
	assert_int_equal(classify("//var//tmp///x", O_RDONLY, &r), BERTH_ASK_HOLD);
	assert_string_equal(r.path, "/var/tmp/x");
	assert_int_equal(classify("//newfile", O_CREAT | O_WRONLY, &r), BERTH_ASK_HOLD);
	assert_string_equal(r.path, "/newfile");
	assert_int_equal(r.errnum, EROFS);
}

static void test_passed(void **state)
{
	char in_ws[PATH_MAX + 8];

	(void)state;
	passed("relative/x", O_RDONLY);
	passed("/etc/passwd", O_RDONLY); /* readable in the view */
	passed("/usr/lib/os-release", O_RDONLY);
	passed("/workspace/x", O_RDWR | O_CREAT);
	snprintf(in_ws, sizeof in_ws, "%s/x", o.policy.workspace);
	passed(in_ws, O_RDWR); /* the workspace's host path (degraded: no mount namespace) */
	passed("/tmp/x", O_RDWR | O_CREAT);
	passed("//tmp/x", O_RDWR | O_CREAT); /* the sandbox's /tmp, however spelled */
	passed("//workspace//x", O_RDONLY);
	passed("///etc/passwd", O_RDONLY);
	passed("//usr//lib/os-release", O_RDONLY);
	passed("//proc/self/status", O_RDONLY);
	passed("/home/u/.bashrc", O_RDONLY);
	passed("/proc/self/status", O_RDONLY);
	passed("/dev/null", O_WRONLY);
	passed("/sys/kernel/x", O_RDONLY);
	passed("/run/docker.sock", O_RDWR);
	passed("/docs/README", O_WRONLY); /* an --ro bind's target: the bind answers */
	passed("/opt/../etc/shadow", O_RDONLY);
	passed("/opt/./x", O_RDONLY);
	passed("/", O_RDONLY);
	passed("/opt", O_RDONLY | O_DIRECTORY);
	passed("/opt/x", O_PATH);
	passed("/opt", O_TMPFILE | O_RDWR);
}

static void test_no_nul_and_resolve(void **state)
{
	uint64_t args[6] = {(uint64_t)(int64_t)AT_FDCWD, 0x1000, 0x2000, 24, 0, 0};
	struct berth_ask_call c;
	struct berth_ask_req r;
	uint64_t how[3] = {O_RDONLY, 0, 0x08 /* RESOLVE_BENEATH */};

	(void)state;
	assert_int_equal(berth_ask_decode(SYS_openat, args, &c), 0);
	assert_int_equal(berth_ask_classify(&o.policy, &c, "/var/tmp/x", 10, &r),
			 BERTH_ASK_PASS); /* no NUL */
	assert_int_equal(berth_ask_decode(SYS_openat2, args, &c), 0);
	assert_int_equal(berth_ask_decode_how(&c, how, 16), -1); /* shorter than open_how */
	assert_int_equal(berth_ask_decode_how(&c, how, sizeof how), 0);
	assert_int_equal(berth_ask_classify(&o.policy, &c, "/var/tmp/x", 11, &r), BERTH_ASK_PASS);
	how[2] = 0;
	assert_int_equal(berth_ask_decode_how(&c, how, sizeof how), 0);
	assert_int_equal(berth_ask_classify(&o.policy, &c, "/var/tmp/x", 11, &r), BERTH_ASK_HOLD);
	assert_string_equal(r.syscall, "openat2");
	assert_int_equal(berth_ask_decode(SYS_read, args, &c), -1);
#ifdef SYS_creat
	assert_int_equal(berth_ask_decode(SYS_creat, args, &c), 0);
	assert_int_equal(c.flags, O_CREAT | O_WRONLY | O_TRUNC);
#endif
}

static void test_commands(void **state)
{
	struct berth_ask_cmd c;
	static const char *const bad[] = {"",
					  "\n",
					  "approve",
					  "approve \n",
					  "approve 0",
					  "approve 01",
					  "approve 1000000000",
					  "approve -1",
					  "approve 1 never",
					  "approve 1 always x",
					  "approve  1",
					  "deny 1\nlist\n",
					  "lists",
					  "list 1",
					  "APPROVE 1",
					  "approve 1 "};

	(void)state;
	assert_int_equal(berth_ask_parse_command("list\n", 5, &c), 0);
	assert_int_equal(c.op, BERTH_ASK_OP_LIST);
	assert_int_equal(berth_ask_parse_command("approve 12\n", 11, &c), 0);
	assert_int_equal(c.op, BERTH_ASK_OP_APPROVE);
	assert_int_equal(c.id, 12);
	assert_false(c.always);
	assert_int_equal(berth_ask_parse_command("deny 999999999 always", 21, &c), 0);
	assert_int_equal(c.op, BERTH_ASK_OP_DENY);
	assert_int_equal(c.id, 999999999);
	assert_true(c.always);
	assert_int_equal(berth_ask_parse_command("approve 1\0x", 11, &c), -1);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_int_equal(berth_ask_parse_command(bad[i], strlen(bad[i]), &c), -1);
}

static void test_block(void **state)
{
	struct berth_ask_req r;
	char buf[8192], small[40];

	(void)state;
	held("/var/tmp/a\x1b[2J", O_RDONLY, ENOENT, false);
	assert_int_equal(classify("/var/tmp/a\x1b[2J", O_RDONLY, &r), BERTH_ASK_HOLD);
	size_t n = berth_ask_block(buf, sizeof buf, "0123456789abcdef", 3, &r, r.errnum,
				   "a human (berth deny)", &o.policy);
	assert_int_equal(n, strlen(buf));
	assert_non_null(
	    strstr(buf, "BERTH CAPABILITY DENIAL\nrun: 0123456789abcdef   ask: 3 (berth run --ask)\n"));
	assert_non_null(strstr(buf,
			       "denied: openat(2) on /var/tmp/a\\x1b[2J for reading (ENOENT: no such file or "
			       "directory)\n"));
	assert_non_null(strstr(buf, "denied-by: a human (berth deny)\n"));
	assert_non_null(strstr(buf, "fix: --ro /var/tmp/a"));
	assert_null(strchr(buf, '\x1b')); /* cleaned for a terminal */
	n = berth_ask_block(small, sizeof small, "0123456789abcdef", 3, &r, r.errnum, "x", &o.policy);
	assert_int_equal(n, sizeof small - 1);
	assert_int_equal(small[n], '\0');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_held),
	    cmocka_unit_test(test_passed),
	    cmocka_unit_test(test_no_nul_and_resolve),
	    cmocka_unit_test(test_commands),
	    cmocka_unit_test(test_block),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
