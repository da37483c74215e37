/* SPDX-License-Identifier: MIT */
/*
 * test_denial.c - the kernel's audit records to denials and their
 * explanation (src/supervisor/denial.c).  The records are the ones this
 * machine's kernel (6.18, Landlock ABI 7) wrote for real programs in a
 * sandbox (docs/denials.md); policies come from the real `berth run` option
 * parser.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy/flags.h"
#include "supervisor/denial.h"

static char workdir[PATH_MAX];

static char *no_env(const char *name)
{
	(void)name;
	return NULL;
}

static void opts(struct berth_run_opts *o, const char *args)
{
	char *argv[64], buf[2048];
	int argc = 0;
	struct berth_error err = {0};

	memset(o, 0, sizeof *o);
	argv[argc++] = (char *)"run";
	argv[argc++] = (char *)"--workspace";
	argv[argc++] = workdir;
	snprintf(buf, sizeof buf, "%s", args);
	for (char *t = strtok(buf, " "); t != NULL && argc < 60; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc++] = (char *)"--";
	argv[argc++] = (char *)"true";
	argv[argc] = NULL;
	if (berth_run_parse(argc, argv, no_env, o, &err) < 0)
		fail_msg("berth run %s: %s", args, err.msg);
}

static int feed(struct berth_denial_asm *a, int type, const char *text, struct berth_denial_event *ev)
{
	return berth_denial_feed(a, type, text, strlen(text), ev);
}

/* python3's connect under --network none, as the kernel logged it. */
static void test_connect_event(void **state)
{
	struct berth_denial_asm a = {0};
	struct berth_denial_event ev;
	struct berth_run_opts o;
	struct berth_denial_fix f;
	(void)state;

	assert_int_equal(
	    feed(&a, 1423,
		 "audit(1796321915.794:24): domain=1b968451f blockers=net.connect_tcp daddr=1.1.1.1 "
		 "dest=80",
		 &ev),
	    0);
	assert_int_equal(
	    feed(
		&a, 1300,
		"audit(1796321915.794:24): arch=c000003e syscall=42 success=no exit=-13 a0=3 a1=7ffce8a51b70 "
		"a2=10 a3=7f6299c91a08 items=0 ppid=7318 pid=7319 auid=4294967295 uid=1610612736 "
		"gid=1610612736 tty=(none) ses=4294967295 comm=\"python3\" exe=\"/usr/bin/python3.11\" "
		"key=(null)",
		&ev),
	    0);
	assert_int_equal(feed(&a, 1327, "audit(1796321915.794:24): proctitle=707974686F6E33", &ev), 0);
	assert_int_equal(feed(&a, 1320, "audit(1796321915.794:24): ", &ev), 1);
	assert_true(ev.has_access);
	assert_false(ev.has_domain);
	assert_int_equal(ev.serial, 24);
	assert_true(ev.d.domain == 0x1b968451fULL);
	assert_string_equal(ev.d.blockers, "net.connect_tcp");
	assert_string_equal(ev.d.addr, "1.1.1.1");
	assert_int_equal(ev.d.port, 80);
	assert_true(ev.d.has_syscall);
	assert_int_equal(ev.d.syscall, 42);
	assert_int_equal(ev.d.errnum, 13);
	assert_int_equal(ev.d.pid, 7319);
	assert_string_equal(ev.d.exe, "/usr/bin/python3.11");
	assert_string_equal(ev.d.comm, "python3");

	opts(&o, "");
	berth_denial_explain(&ev.d, &o.policy, &f);
	assert_string_equal(f.kind, "net.connect");
	assert_string_equal(f.blocker, "landlock net.connect_tcp");
	assert_string_equal(f.fix, "--network proxy --allow-host 1.1.1.1:80");
	assert_non_null(strstr(f.rule, "--network none"));
	berth_run_opts_free(&o);

	opts(&o, "--allow-host example.org");
	berth_denial_explain(&ev.d, &o.policy, &f);
	assert_non_null(strstr(f.rule, "--network proxy"));
	assert_true(strncmp(f.fix, "--allow-host 1.1.1.1:80", 23) == 0);
	berth_run_opts_free(&o);
}

/* The probe's event: the access, the domain's allocation, the syscall. */
static void test_domain_event(void **state)
{
	struct berth_denial_asm a = {0};
	struct berth_denial_event ev;
	(void)state;

	feed(&a, 1423,
	     "audit(1796321915.726:23): domain=1b968451f blockers=fs.make_char path=\"/tmp\" dev=\"tmpfs\" "
	     "ino=1",
	     &ev);
	feed(&a, 1424,
	     "audit(1796321915.726:23): domain=1b968451f status=allocated mode=enforcing pid=7318 "
	     "uid=1610612736 exe=\"/work/build/berth\" comm=\"berth\"",
	     &ev);
	/* No EOE: the next event's first record ends it. */
	assert_int_equal(
	    feed(&a, 1424, "audit(1796321915.878:27): domain=1b968451f status=deallocated denials=4", &ev),
	    1);
	assert_true(ev.has_access && ev.has_domain && ev.dom.allocated);
	assert_int_equal(ev.dom.pid, 7318);
	assert_string_equal(ev.dom.exe, "/work/build/berth");
	assert_string_equal(ev.d.path, "/tmp");
	assert_int_equal(berth_denial_flush(&a, &ev), 1);
	assert_false(ev.has_access);
	assert_false(ev.dom.allocated);
	assert_int_equal(ev.dom.denials, 4);
	assert_int_equal(berth_denial_flush(&a, &ev), 0);
}

/* A hex-encoded untrusted path (a space in it) with name=, a quoted one. */
static void test_hex_and_name(void **state)
{
	struct berth_denial_event ev = {0};
	unsigned long long serial = 0;
	(void)state;

	/* "/workspace/a b" */
	static const char rec[] =
	    "audit(1.2:7): domain=a blockers=fs.make_reg path=2F776F726B73706163652F612062 "
	    "dev=\"vda\" ino=3 name=\"hook\"";
	assert_int_equal(berth_denial_parse_record(1423, rec, sizeof rec - 1, &ev, &serial), 1);
	assert_int_equal(serial, 7);
	assert_string_equal(ev.d.path, "/workspace/a b/hook");
	assert_true(ev.d.domain == 0xa);
	/* malformed: no header, no blockers, a huge serial */
	ev = (struct berth_denial_event){0};
	assert_int_equal(berth_denial_parse_record(1423, "domain=a blockers=x", 19, &ev, &serial), -1);
	assert_int_equal(berth_denial_parse_record(1423, "audit(1.2:7): domain=a", 22, &ev, &serial), -1);
	assert_int_equal(berth_denial_parse_record(1423, "audit(1.2:7): domain=zz blockers=fs.read_file", 45,
						   &ev, &serial),
			 -1);
	assert_int_equal(berth_denial_parse_record(1400, "audit(1.2:7): x=y", 17, &ev, &serial), 0);
	assert_false(ev.has_access);
	/* the length is honoured: the text is not NUL-terminated */
	assert_int_equal(berth_denial_parse_record(1423, "audit(1.2:7): domain=a blockers=fs.read_fileXXXX",
						   44, &ev, &serial),
			 1);
	assert_string_equal(ev.d.blockers, "fs.read_file");
}

static void explain_path(const char *args, const char *blockers, const char *path, struct berth_denial_fix *f)
{
	struct berth_run_opts o;
	struct berth_denial d = {.port = -1};

	snprintf(d.blockers, sizeof d.blockers, "%s", blockers);
	snprintf(d.path, sizeof d.path, "%s", path);
	opts(&o, args);
	berth_denial_explain(&d, &o.policy, f);
	berth_run_opts_free(&o);
}

static void test_explain_paths(void **state)
{
	struct berth_denial_fix f;
	char arg[PATH_MAX + 32];
	(void)state;

	/* a guarded path: no fix, and why */
	explain_path("", "fs.write_file", "/workspace/.git/hooks/pre-commit", &f);
	assert_string_equal(f.kind, "fs.write");
	assert_string_equal(f.fix, "");
	assert_non_null(strstr(f.none_why, "is a guarded path"));
	assert_non_null(strstr(f.none_why, "--unprotect .git/hooks"));
	explain_path("", "fs.write_file", "/workspace/.git/config", &f);
	assert_non_null(strstr(f.none_why, "--unprotect .git/config"));
	/* a trust name at the top (an editor's settings) */
	explain_path("", "fs.make_reg", "/workspace/.vscode/tasks.json", &f);
	assert_non_null(strstr(f.none_why, "guarded path"));
	/* an ordinary workspace file: the workspace is read-write */
	explain_path("", "fs.write_file", "/workspace/src/a.c", &f);
	assert_non_null(strstr(f.rule, "--workspace"));
	assert_string_equal(f.fix, "");
	/* a read-only bind: --rw instead */
	snprintf(arg, sizeof arg, "--ro %s:/data", workdir);
	explain_path(arg, "fs.write_file", "/data/x", &f);
	assert_non_null(strstr(f.rule, "--ro"));
	assert_non_null(strstr(f.fix, "--rw"));
	assert_non_null(strstr(f.fix, ":/data"));
	/* a system directory: none available */
	explain_path("", "fs.write_file", "/etc/passwd", &f);
	assert_non_null(strstr(f.rule, "/etc"));
	assert_string_equal(f.fix, "");
	assert_non_null(strstr(f.none_why, "read-only in every run"));
	/* outside every rule: --ro PATH */
	explain_path("", "fs.read_file", "/srv/secret/id_rsa", &f);
	assert_string_equal(f.kind, "fs.read");
	assert_true(strncmp(f.fix, "--ro /srv/secret/id_rsa", 23) == 0);
	explain_path("", "fs.make_reg", "/srv/x", &f);
	assert_true(strncmp(f.fix, "--rw /srv/x", 11) == 0);
	/* devices, scopes, refer: none available */
	explain_path("", "fs.make_char", "/tmp", &f);
	assert_string_equal(f.kind, "fs.device");
	assert_string_equal(f.fix, "");
	explain_path("", "scope.signal", "", &f);
	assert_string_equal(f.kind, "scope.signal");
	assert_string_equal(f.fix, "");
	explain_path("", "fs.refer", "/workspace/a", &f);
	assert_string_equal(f.kind, "fs.refer");
	explain_path("", "fs.bogus", "/x", &f);
	assert_string_equal(f.kind, "other");
	/* the sandbox's own loopback: no fix but --network host */
	{
		struct berth_run_opts o;
		struct berth_denial d = {.port = 9, .blockers = "net.connect_tcp", .addr = "127.0.0.1"};
		opts(&o, "");
		berth_denial_explain(&d, &o.policy, &f);
		berth_run_opts_free(&o);
		assert_string_equal(f.kind, "net.connect");
		assert_string_equal(f.fix, "");
		assert_non_null(strstr(f.none_why, "loopback"));
	}
	/* bind: none available but --network host */
	explain_path("", "net.bind_tcp", "", &f);
	assert_string_equal(f.kind, "net.bind");
	assert_non_null(strstr(f.none_why, "--network host"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_connect_event), cmocka_unit_test(test_domain_event),
	    cmocka_unit_test(test_hex_and_name), cmocka_unit_test(test_explain_paths)};
	char tmpl[] = "/tmp/test_denial.XXXXXX";

	if (mkdtemp(tmpl) == NULL || realpath(tmpl, workdir) == NULL)
		return 1;
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(tmpl);
	return rc;
}
