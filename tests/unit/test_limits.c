/* SPDX-License-Identifier: MIT */
/*
 * test_limits.c - unit tests of src/sandbox/limits.c against the real
 * kernel: cgroups are created, filled with processes, made to OOM and to hit
 * the pids limit, and destroyed.
 *
 * As root the cgroup tests must run (the mode must be cgroup v1 or v2).
 * Unprivileged, the mode must be rlimits or a delegated cgroup (v2, or v1
 * directories made for the user); with rlimits the cgroup-only tests are
 * skipped with the reason printed, and the fixture's explicit --memory must
 * be refused (that is asserted, not skipped).  The rlimit-mode tests force
 * that mode and run everywhere.
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
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/limits.h"

#define MIB (1024ULL * 1024ULL)
#define TEST_MEMORY (64 * MIB)
#define TEST_PIDS 32U
#define TEST_MILLICPUS 500U
#define TEST_NOFILE 256U
#define HOG_BYTES (256 * MIB)
#define WAIT_MS 10000 /* longest a child may take to end */

struct fixture {
	struct berth_policy p;
	struct berth_limits lim;
	bool prepared;
	pid_t child;
	char run_id[64];
};

/* ---- fixture -------------------------------------------------------- */

static int setup(void **state)
{
	static int counter;
	struct fixture *fx = calloc(1, sizeof *fx);

	if (fx == NULL)
		return -1;
	fx->p.memory = TEST_MEMORY;
	fx->p.pids = TEST_PIDS;
	fx->p.millicpus = TEST_MILLICPUS;
	fx->p.nofile = TEST_NOFILE;
	fx->p.memory_set = fx->p.pids_set = fx->p.cpus_set = true;
	snprintf(fx->run_id, sizeof fx->run_id, "ut-%d-%d", (int)getpid(), ++counter);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	int left = 0;

	if (fx->child > 0) {
		kill(fx->child, SIGKILL);
		waitpid(fx->child, NULL, 0);
	}
	if (fx->prepared)
		left = berth_limits_destroy(&fx->lim);
	free(fx);
	return left == 0 ? 0 : -1;
}

/* ---- helpers -------------------------------------------------------- */

/* prepare - berth_limits_prepare with the fixture's policy; must succeed. */
static void prepare(struct fixture *fx, bool force_rlimits)
{
	struct berth_error err = {0};
	int r = berth_limits_prepare(&fx->p, fx->run_id, force_rlimits, &fx->lim, &err);

	if (r != 0)
		print_error("prepare: %s\n", err.msg);
	assert_int_equal(r, 0);
	fx->prepared = true;
}

/*
 * prepare_cgroup - prepare and check the mode: cgroup v1 or v2 as root;
 * rlimits or delegated cgroup v2 otherwise.  Returns false (after printing
 * why) when the test needs a cgroup and there is none.
 */
static bool prepare_cgroup(struct fixture *fx)
{
	struct berth_error err = {0};
	int r = berth_limits_prepare(&fx->p, fx->run_id, false, &fx->lim, &err);

	if (r != 0 && geteuid() != 0) {
		/* no cgroup for this user: the explicit --memory is refused */
		assert_int_equal(err.status, BERTH_EXIT_USAGE);
		assert_non_null(strstr(err.msg, "--memory `64M` cannot be enforced"));
		assert_int_equal(fx->lim.n_dirs, 0);
		print_message("[   SKIP   ] needs root or a delegated cgroup; uid %d: %s\n", (int)geteuid(),
			      err.msg);
		return false;
	}
	if (r != 0)
		print_error("prepare: %s\n", err.msg);
	assert_int_equal(r, 0);
	fx->prepared = true;
	assert_true(fx->lim.mode == BERTH_LIMITS_CGROUP1 || fx->lim.mode == BERTH_LIMITS_CGROUP2);
	assert_true(fx->lim.n_dirs >= 1);
	assert_true(fx->lim.memory_enforced);
	return true;
}

/* read_in - read @name from whichever run directory has it, newline cut. */
static void read_in(const struct berth_limits *lim, const char *name, char *buf, size_t size)
{
	char path[4096];

	for (int i = 0; i < lim->n_dirs; i++) {
		snprintf(path, sizeof path, "%s/%s", lim->dirs[i], name);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		ssize_t n = read(fd, buf, size - 1);
		close(fd);
		assert_true(n >= 0);
		buf[n] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		return;
	}
	fail_msg("no run directory has `%s`", name);
}

/*
 * spawn_gated - fork a child that waits on a pipe, then runs @fn (which
 * must _exit).  *@gate receives the write end: open_gate() releases it.
 */
static pid_t spawn_gated(void (*fn)(void), int *gate)
{
	int fds[2];
	pid_t pid;
	char c;

	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[1]);
		if (read(fds[0], &c, 1) != 1)
			_exit(99);
		fn();
		_exit(0);
	}
	close(fds[0]);
	*gate = fds[1];
	return pid;
}

static void open_gate(int gate)
{
	assert_int_equal(write(gate, "x", 1), 1);
	close(gate);
}

/* attach_gated - spawn @fn, move it into the run's cgroups, release it. */
static void attach_gated(struct fixture *fx, void (*fn)(void))
{
	struct berth_error err = {0};
	int gate = -1;

	fx->child = spawn_gated(fn, &gate);
	if (berth_limits_attach(&fx->lim, fx->child, &err) != 0)
		fail_msg("attach: %s", err.msg);
	open_gate(gate);
}

/*
 * wait_bounded - wait for @pid for at most WAIT_MS; fails the test (the
 * teardown then kills it) rather than hanging when it does not end.
 */
static int wait_bounded(pid_t pid)
{
	struct timespec tick = {0, 10 * 1000 * 1000};
	int status = 0;

	for (int waited = 0; waited < WAIT_MS; waited += 10) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		assert_true(r >= 0);
		if (r == pid)
			return status;
		nanosleep(&tick, NULL);
	}
	fail_msg("process `%d` still running after %d ms", (int)pid, WAIT_MS);
	return -1;
}

/* reap - wait for the fixture's child and return its wait status. */
static int reap(struct fixture *fx)
{
	int status = wait_bounded(fx->child);

	fx->child = 0;
	return status;
}

static void child_sleep(void)
{
	for (;;)
		pause();
}

/* child_hog - allocate and touch HOG_BYTES; exits 0 if it survived. */
static void child_hog(void)
{
	char *m = malloc(HOG_BYTES);

	if (m == NULL)
		_exit(2);
	for (size_t i = 0; i < HOG_BYTES; i += 4096)
		m[i] = 1;
	_exit(0);
}

/*
 * child_forkloop - fork sleepers until fork fails; exits with the number
 * forked when the failure was EAGAIN, 200 otherwise.
 */
static void child_forkloop(void)
{
	pid_t kids[128];
	int n = 0, e = 0;

	while (n < (int)(sizeof kids / sizeof kids[0])) {
		pid_t pid = fork();
		if (pid == 0)
			child_sleep();
		if (pid < 0) {
			e = errno;
			break;
		}
		kids[n++] = pid;
	}
	for (int i = 0; i < n; i++) {
		kill(kids[i], SIGKILL);
		waitpid(kids[i], NULL, 0);
	}
	_exit(e == EAGAIN ? n : 200);
}

/* ---- tests: any user ------------------------------------------------ */

static void test_bad_run_id_rejected(void **state)
{
	struct fixture *fx = *state;
	struct berth_error err = {0};

	assert_int_equal(berth_limits_prepare(&fx->p, "../escape", false, &fx->lim, &err), -1);
	assert_non_null(strstr(err.msg, "invalid run id `../escape`"));
	assert_int_equal(fx->lim.n_dirs, 0);
	assert_int_equal(berth_limits_prepare(&fx->p, "", false, &fx->lim, &err), -1);
}

/* The mode this machine gives: cgroups as root, rlimits/delegated otherwise
 * (asked with the default limits: an explicit --memory may be refused). */
static void test_prepare_mode(void **state)
{
	struct fixture *fx = *state;

	fx->p.memory_set = fx->p.pids_set = fx->p.cpus_set = false;
	prepare(fx, false);
	print_message("uid %d: mode %d, how `%s`, unenforced `%s`\n", (int)geteuid(), (int)fx->lim.mode,
		      fx->lim.how, fx->lim.unenforced);
	assert_true(fx->lim.how[0] != '\0');
	if (geteuid() == 0)
		assert_true(fx->lim.mode == BERTH_LIMITS_CGROUP1 || fx->lim.mode == BERTH_LIMITS_CGROUP2);
	else
		assert_true(fx->lim.mode != BERTH_LIMITS_NONE);
	if (fx->lim.mode == BERTH_LIMITS_RLIMITS) {
		assert_int_equal(fx->lim.n_dirs, 0);
		assert_false(fx->lim.memory_enforced);
		assert_non_null(
		    strstr(fx->lim.how, "memory: not enforced, the default 64M limit not applied"));
		assert_null(strstr(fx->lim.unenforced, "memory"));
	} else {
		assert_true(fx->lim.memory_enforced);
	}
	if (!fx->lim.cpus_enforced)
		assert_non_null(strstr(fx->lim.unenforced, "cpus"));
	if (!fx->lim.pids_enforced)
		assert_non_null(strstr(fx->lim.unenforced, "pids"));
}

/* Forced rlimit mode, explicit --memory: refused, usage error, nothing made. */
static void test_rlimits_refuse_explicit_memory(void **state)
{
	struct fixture *fx = *state;
	struct berth_error err = {0};

	fx->p.pids_set = fx->p.cpus_set = false; /* root: RLIMIT_NPROC is not for it (below) */
	fx->p.memory = 2048 * MIB;
	assert_int_equal(berth_limits_prepare(&fx->p, fx->run_id, true, &fx->lim, &err), -1);
	assert_int_equal(err.status, BERTH_EXIT_USAGE);
	assert_non_null(strstr(err.msg, "--memory `2G` cannot be enforced"));
	assert_non_null(strstr(err.msg, "RLIMIT_AS"));
	assert_non_null(strstr(err.msg, "Bun/JavaScriptCore"));
	assert_non_null(strstr(err.hint, "systemd-run --user --scope -p Delegate=yes berth run"));
	assert_non_null(strstr(err.hint, "`--allow-degraded` to run without a memory limit"));
	assert_int_equal(fx->lim.n_dirs, 0);
	assert_int_equal(fx->lim.mode, BERTH_LIMITS_NONE);
	/* the value is named exactly, in the largest unit that divides it */
	fx->p.memory = 1536 * MIB;
	assert_int_equal(berth_limits_prepare(&fx->p, fx->run_id, true, &fx->lim, &err), -1);
	assert_non_null(strstr(err.msg, "--memory `1536M`"));
	fx->p.memory = 16 * MIB + 1;
	assert_int_equal(berth_limits_prepare(&fx->p, fx->run_id, true, &fx->lim, &err), -1);
	assert_non_null(strstr(err.msg, "--memory `16777217`"));
	/* berth_limits_check decides the same, before anything is recorded */
	assert_int_equal(berth_limits_check(&fx->p, true, NULL, &err), -1);
	assert_int_equal(err.status, BERTH_EXIT_USAGE);
	fx->p.allow_degraded = true;
	assert_int_equal(berth_limits_check(&fx->p, true, NULL, &err), 0);
	fx->p.allow_degraded = false;
	fx->p.memory_set = false;
	assert_int_equal(berth_limits_check(&fx->p, true, NULL, &err), 0);
	/* an app's declared memory is not the caller's --memory */
	fx->p.memory_set = fx->p.app = true;
	assert_int_equal(berth_limits_check(&fx->p, true, NULL, &err), 0);
	assert_false(berth_limits_memory_explicit(&fx->p));
}

/* The default memory limit and an app's are named as not enforced. */
static void test_rlimits_default_memory_named(void **state)
{
	struct fixture *fx = *state;

	fx->p.memory_set = fx->p.pids_set = false;
	prepare(fx, true);
	assert_false(fx->lim.memory_enforced);
	assert_non_null(strstr(fx->lim.how, "memory: not enforced, the default 64M limit not applied"));
	assert_null(strstr(fx->lim.unenforced, "memory"));
	berth_limits_destroy(&fx->lim);
	fx->p.memory_set = fx->p.app = true;
	prepare(fx, true);
	assert_false(fx->lim.memory_enforced);
	assert_non_null(strstr(fx->lim.how, "the app's 64M limit not applied"));
	assert_null(strstr(fx->lim.unenforced, "memory"));
	berth_limits_destroy(&fx->lim);
	fx->p.memory = 0;
	prepare(fx, true);
	assert_non_null(strstr(fx->lim.how, "memory: no limit asked"));
}

/* An explicit --pids rlimit mode cannot enforce (root: RLIMIT_NPROC does
 * not apply) is refused (125) by prepare and check alike; not for a user. */
static void test_rlimits_explicit_pids(void **state)
{
	struct fixture *fx = *state;
	struct berth_error err = {0};
	int want = geteuid() == 0 && getuid() == 0 ? -1 : 0;

	fx->p.memory_set = false;
	assert_int_equal(berth_limits_prepare(&fx->p, fx->run_id, true, &fx->lim, &err), want);
	assert_int_equal(berth_limits_check(&fx->p, true, NULL, &err), want);
	if (want == 0) {
		fx->prepared = true;
		assert_true(fx->lim.pids_enforced);
		return;
	}
	assert_int_equal(err.status, BERTH_EXIT_INTERNAL);
	assert_non_null(strstr(
	    err.msg, "cannot enforce the requested limits: pids (RLIMIT_NPROC does not apply to root)"));
	assert_non_null(strstr(err.hint, "`--allow-degraded`"));
	assert_int_equal(fx->lim.n_dirs, 0);
	fx->p.allow_degraded = true;
	assert_int_equal(berth_limits_check(&fx->p, true, NULL, &err), 0);
	prepare(fx, true);
	assert_non_null(strstr(fx->lim.unenforced, "pids"));
}

/* Not refused where a cgroup is available, and the probe leaves nothing
 * beside the run's cgroups. */
static void test_check_cgroup(void **state)
{
	struct fixture *fx = *state;
	struct berth_error err = {0};
	char prefix[64], parent[4096];

	if (!prepare_cgroup(fx)) {
		assert_int_equal(berth_limits_check(&fx->p, false, NULL, &err), -1);
		assert_int_equal(err.status, BERTH_EXIT_USAGE);
		skip();
	}
	assert_int_equal(berth_limits_check(&fx->p, false, NULL, &err), 0);
	snprintf(prefix, sizeof prefix, "berth-check-%ld-", (long)getpid());
	for (int i = 0; i < fx->lim.n_dirs; i++) {
		DIR *d;
		struct dirent *e;

		snprintf(parent, sizeof parent, "%s", fx->lim.dirs[i]);
		*strrchr(parent, '/') = '\0';
		d = opendir(parent);
		assert_non_null(d);
		while ((e = readdir(d)) != NULL)
			assert_false(strncmp(e->d_name, prefix, strlen(prefix)) == 0);
		closedir(d);
	}
}

/* ---- the delegated cgroup v2 walk, on a tree of plain files ----------- */

/* put - write @text to @dir/@name (created 0644). */
static void put(const char *dir, const char *name, const char *text)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* fake_cg - a directory with the three files the walk reads. */
static void fake_cg(const char *dir, const char *controllers, const char *subtree, const char *procs)
{
	assert_true(mkdir(dir, 0755) == 0 || errno == EEXIST);
	put(dir, "cgroup.controllers", controllers);
	put(dir, "cgroup.subtree_control", subtree);
	put(dir, "cgroup.procs", procs);
}

/*
 * As systemd delegates user@UID.service: `deleg` distributes memory and
 * pids to its children and holds no process; `shell` (the caller's
 * cgroup) holds processes.  The run's cgroup must go below `deleg`.
 */
static void test_v2_delegated_walk(void **state)
{
	char top[] = "/tmp/berth-ut-cg.XXXXXX", deleg[4096], shell[4096], out[4096] = "", rm[4200];
	size_t tl;

	(void)state;
	assert_non_null(mkdtemp(top));
	tl = strlen(top);
	snprintf(deleg, sizeof deleg, "%s/deleg", top);
	snprintf(shell, sizeof shell, "%s/shell", deleg);
	fake_cg(deleg, "cpu memory pids\n", "memory pids\n", "");
	fake_cg(shell, "memory pids\n", "\n", "4242\n");
	/* the caller's cgroup has members: the nearest ancestor it owns */
	assert_int_equal(berth_limits_v2_delegated(shell, tl, out, sizeof out), 0);
	assert_string_equal(out, deleg);
	/* a cgroup of its own without members is used itself */
	put(shell, "cgroup.procs", "\n");
	assert_int_equal(berth_limits_v2_delegated(shell, tl, out, sizeof out), 0);
	assert_string_equal(out, shell);
	/* with members but memory and pids already given to its children: itself */
	put(shell, "cgroup.procs", "4242\n");
	put(shell, "cgroup.subtree_control", "memory pids\n");
	assert_int_equal(berth_limits_v2_delegated(shell, tl, out, sizeof out), 0);
	assert_string_equal(out, shell);
	put(shell, "cgroup.subtree_control", "\n");
	/* no memory controller up there: nothing (top itself is no cgroup) */
	put(deleg, "cgroup.controllers", "cpu pids\n");
	assert_int_equal(berth_limits_v2_delegated(shell, tl, out, sizeof out), -1);
	put(deleg, "cgroup.controllers", "memory pids\n");
	/* ancestor has members and gives nothing: not usable either */
	put(deleg, "cgroup.procs", "1\n");
	put(deleg, "cgroup.subtree_control", "\n");
	assert_int_equal(berth_limits_v2_delegated(shell, tl, out, sizeof out), -1);
	put(deleg, "cgroup.procs", "");
	put(deleg, "cgroup.subtree_control", "memory pids\n");
	/* never above the mount point: start at the top itself */
	assert_int_equal(berth_limits_v2_delegated(top, tl, out, sizeof out), -1);
	if (geteuid() == 0) {
		/* not the caller's: the walk stops there, even with a good one above */
		assert_int_equal(chown(shell, 65534, 65534), 0);
		assert_int_equal(berth_limits_v2_delegated(shell, tl, out, sizeof out), -1);
		assert_int_equal(chown(shell, 0, 0), 0);
		snprintf(rm, sizeof rm, "%s/cgroup.procs", deleg);
		assert_int_equal(chown(rm, 65534, 65534), 0);
		assert_int_equal(berth_limits_v2_delegated(shell, tl, out, sizeof out), -1);
	} else {
		/* /tmp is root's: with no bound the walk still stops below it */
		assert_int_equal(berth_limits_v2_delegated(top, 0, out, sizeof out), -1);
	}
	snprintf(rm, sizeof rm, "rm -rf '%s'", top);
	assert_int_equal(system(rm), 0);
}

/* Forced rlimit mode with --allow-degraded: apply_child sets exactly the
 * policy's values, and no RLIMIT_AS: a 16 GiB MAP_NORESERVE reservation (a
 * JavaScript or Go runtime's) succeeds under --memory 64M. */
static void test_rlimits_apply_child(void **state)
{
	struct fixture *fx = *state;
	cpu_set_t set;
	struct rlimit as_before;
	int status, online, want_cpus;

	fx->p.allow_degraded = true;
	prepare(fx, true);
	assert_int_equal(fx->lim.mode, BERTH_LIMITS_RLIMITS);
	assert_int_equal(fx->lim.n_dirs, 0);
	assert_non_null(strstr(fx->lim.how, "memory: not enforced (--allow-degraded)"));
	assert_non_null(strstr(fx->lim.unenforced, "memory (only an address-space rlimit (RLIMIT_AS)"));
	assert_false(fx->lim.memory_enforced);
	assert_true(fx->lim.cpus_enforced);
	assert_false(fx->lim.swap_off);
	assert_int_equal(fx->lim.pids_enforced, getuid() != 0);
	assert_int_equal(sched_getaffinity(0, sizeof set, &set), 0);
	online = CPU_COUNT(&set);
	assert_int_equal(fx->lim.cpus_affinity, online > 1 ? 1 : 0);
	want_cpus = online > 1 ? 1 : online;
	assert_int_equal(getrlimit(RLIMIT_AS, &as_before), 0);

	fx->child = fork();
	assert_true(fx->child >= 0);
	if (fx->child == 0) {
		struct berth_error err = {0};
		struct rlimit rl;
		void *big;

		if (berth_limits_apply_child(&fx->p, &fx->lim, &err) != 0) {
			fprintf(stderr, "apply_child: %s\n", err.msg);
			_exit(1);
		}
		if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur != TEST_NOFILE || rl.rlim_max != TEST_NOFILE)
			_exit(2);
		if (getrlimit(RLIMIT_CORE, &rl) || rl.rlim_cur != 0 || rl.rlim_max != 0)
			_exit(3);
		if (getrlimit(RLIMIT_AS, &rl) || rl.rlim_cur != as_before.rlim_cur ||
		    rl.rlim_max != as_before.rlim_max)
			_exit(4);
		if (getrlimit(RLIMIT_NPROC, &rl) || rl.rlim_cur != TEST_PIDS || rl.rlim_max != TEST_PIDS)
			_exit(5);
		if (sched_getaffinity(0, sizeof set, &set) || CPU_COUNT(&set) != want_cpus)
			_exit(6);
		big = mmap(NULL, 16ULL << 30, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (big == MAP_FAILED)
			_exit(7);
		_exit(0);
	}
	status = reap(fx);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* apply_child never sets RLIMIT_AS: cgroup mode, and rlimit mode (which
 * sets no memory limit); only RLIMIT_NOFILE and RLIMIT_CORE here. */
static void test_apply_child_default_mode(void **state)
{
	struct fixture *fx = *state;
	struct rlimit as_before;
	int status;

	fx->p.memory_set = false;
	prepare(fx, false);
	assert_int_equal(getrlimit(RLIMIT_AS, &as_before), 0);
	fx->child = fork();
	assert_true(fx->child >= 0);
	if (fx->child == 0) {
		struct berth_error err = {0};
		struct rlimit rl;

		if (berth_limits_apply_child(&fx->p, &fx->lim, &err) != 0)
			_exit(1);
		if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur != TEST_NOFILE || rl.rlim_max != TEST_NOFILE)
			_exit(2);
		if (getrlimit(RLIMIT_CORE, &rl) || rl.rlim_cur != 0)
			_exit(3);
		if (getrlimit(RLIMIT_AS, &rl) || rl.rlim_cur != as_before.rlim_cur)
			_exit(4);
		_exit(0);
	}
	status = reap(fx);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* A --nofile above what the kernel allows fails, naming the value. */
static void test_nofile_too_high(void **state)
{
	struct fixture *fx = *state;
	char buf[64], msg[BERTH_ERR_MSG_MAX + 1] = "", want[64];
	int fds[2], fd, status;
	ssize_t n;

	fd = open("/proc/sys/fs/nr_open", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	assert_true(n > 0);
	buf[n] = '\0';
	fx->p.nofile = (uint32_t)strtoul(buf, NULL, 10) + 1;
	fx->p.allow_degraded = true; /* the fixture's --memory, in forced rlimit mode */
	prepare(fx, true);
	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	fx->child = fork();
	assert_true(fx->child >= 0);
	if (fx->child == 0) {
		struct berth_error err = {0};

		close(fds[0]);
		if (berth_limits_apply_child(&fx->p, &fx->lim, &err) == 0)
			_exit(1);
		if (write(fds[1], err.msg, strlen(err.msg)) < 0)
			_exit(2);
		_exit(0);
	}
	close(fds[1]);
	n = read(fds[0], msg, sizeof msg - 1);
	close(fds[0]);
	status = reap(fx);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_true(n > 0);
	msg[n] = '\0';
	snprintf(want, sizeof want, "cannot set `RLIMIT_NOFILE` to `%u`", fx->p.nofile);
	assert_non_null(strstr(msg, want));
}

/* ---- tests: cgroups (root, or a delegated v2 subtree) --------------- */

/* The limits written can be read back from the cgroup files. */
static void test_cgroup_values(void **state)
{
	struct fixture *fx = *state;
	char v[128];

	if (!prepare_cgroup(fx))
		skip();
	assert_true(fx->lim.memory_enforced && fx->lim.pids_enforced);
	if (fx->lim.mode == BERTH_LIMITS_CGROUP2) {
		assert_non_null(strstr(fx->lim.how, "cgroup v2 /"));
		read_in(&fx->lim, "memory.max", v, sizeof v);
		assert_string_equal(v, "67108864");
		read_in(&fx->lim, "pids.max", v, sizeof v);
		assert_string_equal(v, "32");
		if (fx->lim.swap_off) {
			read_in(&fx->lim, "memory.swap.max", v, sizeof v);
			assert_string_equal(v, "0");
		}
		if (fx->lim.cpus_enforced) {
			read_in(&fx->lim, "cpu.max", v, sizeof v);
			assert_string_equal(v, "50000 100000");
		}
	} else {
		assert_non_null(strstr(fx->lim.how, "cgroup v1 (memory, pids"));
		read_in(&fx->lim, "memory.limit_in_bytes", v, sizeof v);
		assert_string_equal(v, "67108864");
		read_in(&fx->lim, fx->lim.swap_off ? "memory.memsw.limit_in_bytes" : "memory.swappiness", v,
			sizeof v);
		assert_string_equal(v, fx->lim.swap_off ? "67108864" : "0");
		read_in(&fx->lim, "pids.max", v, sizeof v);
		assert_string_equal(v, "32");
		if (fx->lim.cpus_enforced) {
			read_in(&fx->lim, "cpu.cfs_period_us", v, sizeof v);
			assert_string_equal(v, "100000");
			read_in(&fx->lim, "cpu.cfs_quota_us", v, sizeof v);
			assert_string_equal(v, "50000");
		}
	}
	if (!fx->lim.cpus_enforced)
		assert_non_null(strstr(fx->lim.unenforced, "cpus"));
	else
		assert_string_equal(fx->lim.unenforced, "");
}

/* attach moves the process: /proc/<pid>/cgroup names the run's cgroup. */
static void test_attach(void **state)
{
	struct fixture *fx = *state;
	char path[64], line[4096], suffix[96];
	FILE *f;
	int hits = 0;

	if (!prepare_cgroup(fx))
		skip();
	attach_gated(fx, child_sleep);
	snprintf(path, sizeof path, "/proc/%d/cgroup", (int)fx->child);
	snprintf(suffix, sizeof suffix, "/berth-%s", fx->run_id);
	f = fopen(path, "re");
	assert_non_null(f);
	while (fgets(line, sizeof line, f) != NULL) {
		size_t n = strcspn(line, "\n"), s = strlen(suffix);
		line[n] = '\0';
		if (n >= s && strcmp(line + n - s, suffix) == 0)
			hits++;
	}
	fclose(f);
	assert_int_equal(hits, fx->lim.n_dirs);
}

/* A child touching 256 MiB under a 64 MiB limit is OOM-killed. */
static void test_oom_kill(void **state)
{
	struct fixture *fx = *state;
	int status;

	if (!prepare_cgroup(fx))
		skip();
	attach_gated(fx, child_hog);
	status = reap(fx);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);
}

/* A fork loop stops with EAGAIN at the pids limit (itself + 31). */
static void test_pids_limit(void **state)
{
	struct fixture *fx = *state;
	int status;

	if (!prepare_cgroup(fx))
		skip();
	attach_gated(fx, child_forkloop);
	status = reap(fx);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), TEST_PIDS - 1);
}

/* save_dirs - copy the run's directory paths (destroy frees them). */
static int save_dirs(const struct berth_limits *lim, char saved[][4096])
{
	for (int i = 0; i < lim->n_dirs; i++)
		snprintf(saved[i], 4096, "%s", lim->dirs[i]);
	return lim->n_dirs;
}

static void assert_gone(char saved[][4096], int n)
{
	struct stat st;

	for (int i = 0; i < n; i++) {
		errno = 0;
		assert_int_equal(stat(saved[i], &st), -1);
		assert_int_equal(errno, ENOENT);
	}
}

/* destroy kills a sleeping member and removes every directory. */
static void test_destroy_with_process(void **state)
{
	struct fixture *fx = *state;
	static char saved[BERTH_CG_MAX_DIRS][4096];
	int n, status;

	if (!prepare_cgroup(fx))
		skip();
	attach_gated(fx, child_sleep);
	n = save_dirs(&fx->lim, saved);
	assert_int_equal(berth_limits_destroy(&fx->lim), 0);
	assert_int_equal(fx->lim.n_dirs, 0);
	assert_gone(saved, n);
	status = reap(fx);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);
	assert_int_equal(berth_limits_destroy(&fx->lim), 0); /* idempotent */
}

/* cleanup_dirs (the janitor's path) does the same by path. */
static void test_cleanup_dirs(void **state)
{
	struct fixture *fx = *state;
	static char saved[BERTH_CG_MAX_DIRS][4096];
	int n, status;

	if (!prepare_cgroup(fx))
		skip();
	attach_gated(fx, child_sleep);
	n = save_dirs(&fx->lim, saved);
	assert_int_equal(berth_limits_cleanup_dirs(fx->lim.dirs, fx->lim.n_dirs), 0);
	assert_gone(saved, n);
	status = reap(fx);
	assert_true(WIFSIGNALED(status));
	/* the directories are gone already: destroy has nothing left */
	assert_int_equal(berth_limits_destroy(&fx->lim), 0);
	assert_int_equal(fx->lim.n_dirs, 0);
}

/* A second run with the same id fails and leaves the first one intact. */
static void test_duplicate_run_id(void **state)
{
	struct fixture *fx = *state;
	struct berth_limits other;
	struct berth_error err = {0};
	struct stat st;

	if (!prepare_cgroup(fx))
		skip();
	assert_int_equal(berth_limits_prepare(&fx->p, fx->run_id, false, &other, &err), -1);
	assert_non_null(strstr(err.msg, "already exists"));
	assert_int_equal(other.n_dirs, 0);
	for (int i = 0; i < fx->lim.n_dirs; i++)
		assert_int_equal(stat(fx->lim.dirs[i], &st), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_bad_run_id_rejected, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_prepare_mode, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_rlimits_refuse_explicit_memory, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_rlimits_default_memory_named, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_rlimits_explicit_pids, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_check_cgroup, setup, teardown),
	    cmocka_unit_test(test_v2_delegated_walk),
	    cmocka_unit_test_setup_teardown(test_rlimits_apply_child, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_apply_child_default_mode, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_nofile_too_high, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_cgroup_values, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_attach, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_oom_kill, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_pids_limit, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_destroy_with_process, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_cleanup_dirs, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_duplicate_run_id, setup, teardown),
	};

	return cmocka_run_group_tests_name("limits", tests, NULL, NULL);
}
