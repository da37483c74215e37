/* SPDX-License-Identifier: MIT */
/*
 * test_seccomp.c - unit tests of the berth seccomp filter (src/sandbox/seccomp.c).
 *
 * The filter is compiled once in the parent (as berth does); each probe runs
 * in a forked child that sets NO_NEW_PRIVS, loads the filter, makes one call
 * and exits with the errno it got (0: the call worked).  The parent asserts
 * the exact errno, or death by SIGSYS for calls through a foreign ABI.
 * Every probe uses arguments that are harmless should the filter let the
 * call through, so a broken filter fails the test rather than the host.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/if_ether.h>
#include <linux/keyctl.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <seccomp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "sandbox/seccomp.h"

#ifndef __NR_clone3
#define __NR_clone3 435
#endif
#ifndef SOCK_PACKET
#define SOCK_PACKET 10
#endif

/* Exit codes of a probe child beyond errno values. */
enum {
	RC_NNP = 250,    /* prctl(PR_SET_NO_NEW_PRIVS) failed */
	RC_LOAD = 251,   /* berth_seccomp_load failed */
	RC_ALLOWED = 252 /* a call that must be denied went through */
};

/* A probe makes one call and returns 0 or the errno it failed with. */
typedef int (*probe_fn)(void);

static struct berth_bpf bpf_plain;    /* block_affinity = false */
static struct berth_bpf bpf_affinity; /* block_affinity = true */

static int result(long r)
{
	return r < 0 ? errno : 0;
}

/* run_probe - fork, load @bpf (unless NULL) under NO_NEW_PRIVS, run @fn. */
static int run_probe(const struct berth_bpf *bpf, probe_fn fn)
{
	struct berth_error err;
	int status = 0;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			_exit(RC_NNP);
		if (bpf != NULL && berth_seccomp_load(bpf, &err) < 0)
			_exit(RC_LOAD);
		/* not _exit(): a sanitizer intercepts it for its leak check, which
		 * clones and traces, and a deny-by-default profile answers ENOSYS */
		syscall(SYS_exit_group, fn());
		_exit(RC_LOAD);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return status;
}

/* expect_errno - @fn under the filter exits with @expected (0: worked). */
static void expect_errno(const struct berth_bpf *bpf, probe_fn fn, const char *what, int expected)
{
	int status = run_probe(bpf, fn);

	if (!WIFEXITED(status) || WEXITSTATUS(status) != expected) {
		print_error("%s: expected exit `%d`, got status `0x%x` (exit %d, signal %d)\n", what,
			    expected, status, WIFEXITED(status) ? WEXITSTATUS(status) : -1,
			    WIFSIGNALED(status) ? WTERMSIG(status) : 0);
		fail();
	}
}

/* expect_sigsys - @fn under the filter kills the child with SIGSYS. */
static void expect_sigsys(const struct berth_bpf *bpf, probe_fn fn, const char *what)
{
	int status = run_probe(bpf, fn);

	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSYS) {
		print_error("%s: expected SIGSYS, got status `0x%x`\n", what, status);
		fail();
	}
}

#define EXPECT(fn, e) expect_errno(&bpf_plain, fn, #fn, e)

/* ---- probes ---- */

/* raw_clone - clone(2) with @flags; a child that appears exits at once. */
static int raw_clone(unsigned long flags)
{
	int status;
	long r = syscall(SYS_clone, flags, 0UL, 0UL, 0UL, 0UL);

	if (r == 0)
		_exit(0);
	if (r < 0)
		return errno;
	waitpid((pid_t)r, &status, 0);
	return RC_ALLOWED;
}

static int p_unshare_user(void)
{
	return result(unshare(CLONE_NEWUSER));
}
static int p_unshare_files(void)
{
	return result(unshare(CLONE_FILES));
}
static int p_setns(void)
{
	return result(setns(-1, CLONE_NEWNET));
}
static int p_clone3(void)
{
	return result(syscall(__NR_clone3, NULL, 0UL));
}
static int p_clone_newns(void)
{
	return raw_clone(CLONE_NEWNS | SIGCHLD);
}
static int p_clone_newuser_net(void)
{
	return raw_clone(CLONE_NEWUSER | CLONE_NEWNET | SIGCHLD);
}
static int p_clone_newpid_hi(void)
{
	return raw_clone((1UL << 32) | CLONE_NEWPID | SIGCHLD);
}

/* Each namespace flag alone: every one must be denied. */
static int p_clone_each_ns(void)
{
	static const unsigned long flags[] = {
	    CLONE_NEWNS,  CLONE_NEWUSER, CLONE_NEWPID,    CLONE_NEWNET,
	    CLONE_NEWIPC, CLONE_NEWUTS,  CLONE_NEWCGROUP, 0x80 /* CLONE_NEWTIME */,
	};

	for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
		int r = raw_clone(flags[i] | SIGCHLD);

		if (r != EPERM)
			return r == 0 ? RC_ALLOWED : r;
	}
	return EPERM;
}

static int p_clone_plain(void)
{
	return raw_clone(SIGCHLD) == RC_ALLOWED ? 0 : RC_ALLOWED + 1;
}

static int p_fork(void)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return errno;
	if (pid == 0)
		_exit(7);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 7)
		return RC_ALLOWED + 1;
	return 0;
}

static void *thread_main(void *arg)
{
	return arg;
}

/* glibc >= 2.34 creates threads with clone3 and falls back on ENOSYS. */
static int p_thread(void)
{
	int dummy = 1;
	void *ret = NULL;
	pthread_t t;
	int r = pthread_create(&t, NULL, thread_main, &dummy);

	if (r != 0)
		return r;
	pthread_join(t, &ret);
	return ret == &dummy ? 0 : RC_ALLOWED + 1;
}

static int p_exec(void)
{
	char *const argv[] = {"true", NULL};
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return errno;
	if (pid == 0) {
		execv("/bin/true", argv);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : RC_ALLOWED + 1;
}

static int p_mount(void)
{
	return result(mount("none", "/nonexistent-berth-test", "tmpfs", 0, NULL));
}

static int p_ptrace(void)
{
	return result(ptrace(PTRACE_TRACEME, 0, NULL, NULL));
}
static int p_bpf(void)
{
	return result(syscall(SYS_bpf, 5 /* BPF_PROG_LOAD */, NULL, 0U));
}
static int p_io_uring(void)
{
	return result(syscall(SYS_io_uring_setup, 1U, NULL));
}

static int p_keyctl(void)
{
	return result(syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0));
}

/* stdin_null - make fd 0 /dev/null, so a leaked TIOCSTI has no terminal. */
static int stdin_null(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (fd < 0 || dup2(fd, 0) < 0)
		return -1;
	close(fd);
	return 0;
}

static int p_tiocsti(void)
{
	char c = 'x';

	if (stdin_null() < 0)
		return RC_ALLOWED + 1;
	return result(ioctl(0, TIOCSTI, &c));
}

static int p_tiocsti_hi(void)
{
	char c = 'x';

	if (stdin_null() < 0)
		return RC_ALLOWED + 1;
	return result(syscall(SYS_ioctl, 0, (unsigned long)TIOCSTI | 0x100000000UL, &c));
}

static int p_tioclinux(void)
{
	char c = 6; /* TIOCL_GETSHIFTSTATE */

	if (stdin_null() < 0)
		return RC_ALLOWED + 1;
	return result(ioctl(0, TIOCLINUX, &c));
}

static int p_ioctl_fionread(void)
{
	int fds[2], n;

	if (pipe(fds) < 0)
		return RC_ALLOWED + 1;
	return result(ioctl(fds[0], FIONREAD, &n));
}

static int sock(long domain, long type, long proto)
{
	long fd = syscall(SYS_socket, domain, type, proto);

	if (fd < 0)
		return errno;
	close((int)fd);
	return 0;
}

static int p_packet_raw(void)
{
	return sock(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
}
static int p_packet_dgram(void)
{
	return sock(AF_PACKET, SOCK_DGRAM, 0);
}
static int p_packet_hi(void)
{
	return sock((long)(AF_PACKET | (1UL << 32)), SOCK_DGRAM, 0);
}
static int p_inet_raw(void)
{
	return sock(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP);
}
static int p_inet6_raw(void)
{
	return sock(AF_INET6, SOCK_RAW | SOCK_NONBLOCK, IPPROTO_ICMPV6);
}
static int p_sock_packet(void)
{
	return sock(AF_INET, SOCK_PACKET, htons(ETH_P_ALL));
}
static int p_inet_stream(void)
{
	return sock(AF_INET, SOCK_STREAM, 0);
}
static int p_unix_dgram(void)
{
	return sock(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
}
static int p_netlink_raw(void)
{
	return sock(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
}

/* Every family below AF_NETLINK but AF_UNIX, AF_INET, AF_INET6, in every
 * type: EPERM (libseccomp 2.5 built these rules wrong next to an
 * SCMP_CMP_NE: the kernel answered EAFNOSUPPORT, or loaded a module). */
static int p_low_families(void)
{
	static const long fams[] = {0, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15};
	static const long types[] = {SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET, SOCK_RDM};

	for (size_t f = 0; f < sizeof fams / sizeof fams[0]; f++)
		for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
			int r = sock(fams[f], types[t], 0);
			if (r != EPERM)
				return r == 0 ? RC_ALLOWED : r;
		}
	return EPERM;
}
static int p_unix_seqpacket(void)
{
	return sock(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
}
static int p_unix_stream(void)
{
	return sock(AF_UNIX, SOCK_STREAM, 0);
}
static int p_inet6_stream(void)
{
	return sock(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK, IPPROTO_TCP);
}
static int p_inet_udp(void)
{
	return sock(AF_INET, SOCK_DGRAM, IPPROTO_UDP);
}
/* Transports Landlock's TCP rules do not cover: EPROTONOSUPPORT. */
static int p_mptcp(void)
{
	return sock(AF_INET, SOCK_STREAM, 262 /* IPPROTO_MPTCP */);
}
static int p_mptcp6(void)
{
	return sock(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 262);
}
static int p_mptcp_hi(void)
{
	return sock(AF_INET, SOCK_STREAM, (long)(262 | (1UL << 32)));
}
static int p_tcp_hi(void)
{
	return sock(AF_INET, SOCK_STREAM, (long)(IPPROTO_TCP | (1UL << 32)));
}
static int p_sctp(void)
{
	return sock(AF_INET, SOCK_STREAM, IPPROTO_SCTP);
}
static int p_sctp_seq(void)
{
	return sock(AF_INET, SOCK_SEQPACKET, 0);
}
static int p_sctp6_seq(void)
{
	return sock(AF_INET6, SOCK_SEQPACKET | SOCK_NONBLOCK, 0);
}
static int p_udplite(void)
{
	return sock(AF_INET6, SOCK_DGRAM, IPPROTO_UDPLITE);
}
static int p_l2tp(void)
{
	return sock(AF_INET, SOCK_DGRAM, 115 /* IPPROTO_L2TP */);
}
static int p_smc(void)
{
	return sock(AF_INET, SOCK_STREAM, 256 /* IPPROTO_SMC */);
}
static int p_dccp(void)
{
	return sock(AF_INET, SOCK_DCCP, IPPROTO_DCCP);
}
/* SOCK_RAW keeps its own refusal, whatever the protocol number */
static int p_inet6_raw_raw(void)
{
	return sock(AF_INET6, SOCK_RAW, IPPROTO_RAW);
}
static int p_inet_raw_mptcp(void)
{
	return sock(AF_INET, SOCK_RAW, 262);
}
static int p_dccp0(void)
{
	return sock(AF_INET6, SOCK_DCCP, 0);
}

static int p_pers_linux(void)
{
	return result(personality(PER_LINUX));
}
static int p_pers_query(void)
{
	return result(personality(0xffffffff));
}
static int p_pers_query64(void)
{
	return result(syscall(SYS_personality, ~0UL));
}
static int p_pers_rie(void)
{
	return result(personality(READ_IMPLIES_EXEC));
}
static int p_pers_norandom(void)
{
	return result(personality(ADDR_NO_RANDOMIZE));
}
static int p_pers_linux32(void)
{
	return result(personality(PER_LINUX32));
}
static int p_pers_hi(void)
{
	return result(syscall(SYS_personality, (1UL << 32) | READ_IMPLIES_EXEC));
}

/* Every single-bit persona and its complement: all denied. */
static int p_pers_bits(void)
{
	for (unsigned int i = 0; i < 32; i++) {
		unsigned long one = 1UL << i;

		if (personality(one) != -1 || errno != EPERM)
			return RC_ALLOWED;
		if (personality(~one & 0xffffffffUL) != -1 || errno != EPERM)
			return RC_ALLOWED + 1;
	}
	return EPERM;
}

static int p_setaffinity(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof set, &set) < 0)
		return RC_ALLOWED + 1;
	return result(sched_setaffinity(0, sizeof set, &set));
}

static int p_seccomp_mode(void)
{
	return prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == 2 ? 0 : RC_ALLOWED + 1;
}

#if defined(__x86_64__)
/* An x32 call: the x86_64 number with bit 30 set. */
static int p_x32_getpid(void)
{
	return result(syscall(0x40000000L | SYS_getpid));
}

/* An i386 call from 64-bit code: getpid is 20 in the i386 table. */
static int p_int80_getpid(void)
{
	long ret = 20;

	__asm__ volatile("int $0x80" : "+a"(ret) : : "memory", "r8", "r9", "r10", "r11");
	return ret < 0 ? (int)-ret : 0;
}
#endif

/* ---- tests ---- */

static void test_namespaces(void **state)
{
	(void)state;
	EXPECT(p_unshare_user, EPERM);
	EXPECT(p_unshare_files, EPERM);
	EXPECT(p_setns, EPERM);
	EXPECT(p_clone3, ENOSYS);
	EXPECT(p_clone_newns, EPERM);
	EXPECT(p_clone_newuser_net, EPERM);
	EXPECT(p_clone_newpid_hi, EPERM);
	EXPECT(p_clone_each_ns, EPERM);
}

static void test_processes_still_work(void **state)
{
	(void)state;
	EXPECT(p_clone_plain, 0);
	EXPECT(p_fork, 0);
	EXPECT(p_thread, 0);
	EXPECT(p_exec, 0);
	EXPECT(p_seccomp_mode, 0);
}

static void test_denied_calls(void **state)
{
	(void)state;
	EXPECT(p_mount, EPERM);
	EXPECT(p_ptrace, EPERM);
	EXPECT(p_bpf, EPERM);
	EXPECT(p_io_uring, EPERM);
	EXPECT(p_keyctl, EPERM);
}

static void test_tty_ioctls(void **state)
{
	(void)state;
	EXPECT(p_tiocsti, EPERM);
	EXPECT(p_tiocsti_hi, EPERM);
	EXPECT(p_tioclinux, EPERM);
	EXPECT(p_ioctl_fionread, 0);
}

static void test_sockets(void **state)
{
	(void)state;
	EXPECT(p_packet_raw, EPERM);
	EXPECT(p_packet_dgram, EPERM);
	EXPECT(p_packet_hi, EPERM);
	EXPECT(p_inet_raw, EPERM);
	EXPECT(p_inet6_raw, EPERM);
	EXPECT(p_sock_packet, EPERM);
	EXPECT(p_inet_stream, 0);
	EXPECT(p_unix_dgram, 0);
	EXPECT(p_netlink_raw, 0);
	EXPECT(p_low_families, EPERM);
	EXPECT(p_unix_seqpacket, 0);
	EXPECT(p_unix_stream, 0);
	EXPECT(p_inet6_stream, 0);
	EXPECT(p_inet_udp, 0);
	EXPECT(p_mptcp, EPROTONOSUPPORT);
	EXPECT(p_mptcp6, EPROTONOSUPPORT);
	EXPECT(p_mptcp_hi, EPROTONOSUPPORT);
	EXPECT(p_tcp_hi, EPROTONOSUPPORT);
	EXPECT(p_sctp, EPROTONOSUPPORT);
	EXPECT(p_sctp_seq, EPROTONOSUPPORT);
	EXPECT(p_sctp6_seq, EPROTONOSUPPORT);
	EXPECT(p_udplite, EPROTONOSUPPORT);
	EXPECT(p_l2tp, EPROTONOSUPPORT);
	EXPECT(p_smc, EPROTONOSUPPORT);
	EXPECT(p_dccp, EPROTONOSUPPORT);
	EXPECT(p_dccp0, EPROTONOSUPPORT);
	EXPECT(p_inet6_raw_raw, EPERM);
	EXPECT(p_inet_raw_mptcp, EPERM);
}

static void test_personality(void **state)
{
	(void)state;
	EXPECT(p_pers_linux, 0);
	EXPECT(p_pers_query, 0);
	EXPECT(p_pers_query64, 0);
	EXPECT(p_pers_rie, EPERM);
	EXPECT(p_pers_norandom, EPERM);
	EXPECT(p_pers_linux32, EPERM);
	EXPECT(p_pers_hi, EPERM);
	EXPECT(p_pers_bits, EPERM);
}

static void test_affinity(void **state)
{
	(void)state;
	expect_errno(&bpf_plain, p_setaffinity, "setaffinity (allowed)", 0);
	expect_errno(&bpf_affinity, p_setaffinity, "setaffinity (blocked)", EPERM);
}

static void test_foreign_abi(void **state)
{
	(void)state;
#if defined(__x86_64__)
	int control;

	expect_sigsys(&bpf_plain, p_x32_getpid, "x32 getpid");
	/* Without IA32 emulation int 0x80 faults before seccomp sees it. */
	control = run_probe(NULL, p_int80_getpid);
	if (!WIFEXITED(control) || WEXITSTATUS(control) != 0) {
		print_message("int 0x80 does not work here (status 0x%x), skipped\n", control);
		skip();
	}
	expect_sigsys(&bpf_plain, p_int80_getpid, "int 0x80 getpid");
#else
	skip();
#endif
}

/*
 * The unconditional entries of the deny table, each called with every
 * argument -1 (harmless if it went through: bad pointers, flags, ids).
 */
static const struct {
	const char *name;
	int errnum;
} always_denied[] = {
    {"clone3", ENOSYS},
    {"unshare", EPERM},
    {"setns", EPERM},
    {"mount", EPERM},
    {"umount2", EPERM},
    {"pivot_root", EPERM},
    {"chroot", EPERM},
    {"open_tree", EPERM},
    {"move_mount", EPERM},
    {"fsopen", EPERM},
    {"fsconfig", EPERM},
    {"fsmount", EPERM},
    {"fspick", EPERM},
    {"mount_setattr", EPERM},
    {"ptrace", EPERM},
    {"process_vm_readv", EPERM},
    {"process_vm_writev", EPERM},
    {"bpf", EPERM},
    {"perf_event_open", EPERM},
    {"userfaultfd", EPERM},
    {"keyctl", EPERM},
    {"add_key", EPERM},
    {"request_key", EPERM},
    {"io_uring_setup", EPERM},
    {"io_uring_enter", EPERM},
    {"io_uring_register", EPERM},
    {"open_by_handle_at", EPERM},
    {"name_to_handle_at", EPERM},
    {"kexec_load", EPERM},
    {"kexec_file_load", EPERM},
    {"init_module", EPERM},
    {"finit_module", EPERM},
    {"delete_module", EPERM},
    {"reboot", EPERM},
    {"swapon", EPERM},
    {"swapoff", EPERM},
    {"settimeofday", EPERM},
    {"clock_settime", EPERM},
    {"clock_adjtime", EPERM},
    {"adjtimex", EPERM},
    {"acct", EPERM},
    {"quotactl", EPERM},
    {"quotactl_fd", EPERM},
    {"iopl", EPERM},
    {"ioperm", EPERM},
    {"modify_ldt", EPERM},
    {"syslog", EPERM},
    {"lookup_dcookie", EPERM},
    {"vhangup", EPERM},
    {"uselib", EPERM},
    {"ustat", EPERM},
    {"sysfs", EPERM},
    {"_sysctl", EPERM},
    {"nfsservctl", EPERM},
};

static int table_pipe = -1;

/* p_table - run every always_denied call; report mismatches on table_pipe. */
static int p_table(void)
{
	if (setsid() < 0) /* no controlling terminal: vhangup() is then a no-op */
		return RC_ALLOWED + 1;
	for (int i = 0; i < (int)(sizeof always_denied / sizeof always_denied[0]); i++) {
		int nr = seccomp_syscall_resolve_name(always_denied[i].name);
		int report[2];

		if (nr < 0)
			continue;
		errno = 0;
		report[1] = syscall(nr, -1L, -1L, -1L, -1L, -1L, -1L) < 0 ? errno : 0;
		if (report[1] == always_denied[i].errnum)
			continue;
		report[0] = i;
		if (write(table_pipe, report, sizeof report) != (ssize_t)sizeof report)
			return RC_ALLOWED + 1;
	}
	return 0;
}

static void test_deny_table(void **state)
{
	int fds[2], report[2], bad = 0;

	(void)state;
	assert_int_equal(pipe(fds), 0);
	table_pipe = fds[1];
	expect_errno(&bpf_plain, p_table, "deny table", 0);
	close(fds[1]);
	while (read(fds[0], report, sizeof report) == (ssize_t)sizeof report) {
		print_error("`%s`: expected errno `%d`, got `%d`\n", always_denied[report[0]].name,
			    always_denied[report[0]].errnum, report[1]);
		bad++;
	}
	close(fds[0]);
	assert_int_equal(bad, 0);
}

static bool is_hex64(const char *s)
{
	if (strlen(s) != 64)
		return false;
	for (; *s != '\0'; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

static void test_digest(void **state)
{
	struct berth_seccomp_opts opts = {.block_affinity = false};
	struct berth_bpf again = {0}, nullopts = {0};
	struct berth_error err = {0};

	(void)state;
	assert_int_equal(berth_seccomp_compile(NULL, &opts, &again, &err), 0);
	assert_int_equal(berth_seccomp_compile(NULL, NULL, &nullopts, &err), 0);
	assert_string_equal(again.digest, "");
	assert_int_equal(berth_seccomp_digest(&bpf_plain, &err), 0);
	assert_int_equal(berth_seccomp_digest(&bpf_affinity, &err), 0);
	assert_int_equal(berth_seccomp_digest(&again, &err), 0);
	assert_int_equal(berth_seccomp_digest(&nullopts, &err), 0);
	assert_true(is_hex64(bpf_plain.digest));
	assert_true(is_hex64(bpf_affinity.digest));
	assert_string_equal(bpf_plain.digest, again.digest);
	assert_string_equal(bpf_plain.digest, nullopts.digest);
	assert_int_equal(bpf_plain.len, again.len);
	assert_memory_equal(bpf_plain.insns, again.insns, bpf_plain.len * sizeof *again.insns);
	assert_string_not_equal(bpf_plain.digest, bpf_affinity.digest);
	assert_true(bpf_affinity.len > bpf_plain.len);
	berth_bpf_free(&again);
	berth_bpf_free(&nullopts);
}

static void test_free_zeroed(void **state)
{
	struct berth_bpf bpf = {0};

	(void)state;
	berth_bpf_free(&bpf);
	berth_bpf_free(&bpf);
	assert_null(bpf.insns);
	assert_int_equal(bpf.len, 0);
}

static void test_load_empty(void **state)
{
	struct berth_bpf bpf = {0};
	struct berth_error err = {0};

	(void)state;
	assert_int_equal(berth_seccomp_load(&bpf, &err), -1);
	assert_int_equal(err.errnum, EINVAL);
	assert_non_null(strstr(err.msg, "load seccomp filter"));
}

/* Without NO_NEW_PRIVS and CAP_SYS_ADMIN, the kernel refuses: EACCES. */
static void test_load_without_nnp(void **state)
{
	int fds[2], status, got = -1;
	char msg[BERTH_ERR_MSG_MAX] = "";
	pid_t pid;

	(void)state;
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct berth_error err = {0};

		if (geteuid() == 0 && (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
				       setresuid(65534, 65534, 65534) < 0))
			_exit(RC_NNP);
		if (berth_seccomp_load(&bpf_plain, &err) == 0)
			_exit(RC_ALLOWED);
		if (write(fds[1], &err.errnum, sizeof err.errnum) < 0 ||
		    write(fds[1], err.msg, strlen(err.msg) + 1) < 0)
			_exit(RC_LOAD);
		_exit(0);
	}
	close(fds[1]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(read(fds[0], &got, sizeof got), (ssize_t)sizeof got);
	assert_true(read(fds[0], msg, sizeof msg - 1) > 0);
	close(fds[0]);
	assert_int_equal(got, EACCES);
	assert_string_equal(msg, "load seccomp filter: Permission denied");
}

static void test_available(void **state)
{
	(void)state;
	assert_true(berth_seccomp_available());
}

static int setup(void **state)
{
	struct berth_seccomp_opts plain = {.block_affinity = false};
	struct berth_seccomp_opts affinity = {.block_affinity = true};
	struct berth_error err = {0};

	(void)state;
	if (berth_seccomp_compile(NULL, &plain, &bpf_plain, &err) < 0 ||
	    berth_seccomp_compile(NULL, &affinity, &bpf_affinity, &err) < 0) {
		print_error("berth_seccomp_compile: %s\n", err.msg);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	berth_bpf_free(&bpf_plain);
	berth_bpf_free(&bpf_affinity);
	return 0;
}

/* ---- a container's own profile (berth_seccomp_compile_oci) ---- */

static int probe_getppid(void)
{
	return result(syscall(SYS_getppid));
}

static int probe_dup_big(void)
{
	/* dup3(0, 100, 0) is denied by args below only when fd 2 == 100 */
	long r = syscall(SYS_dup3, 0, 100, 0);
	if (r >= 0)
		close(100);
	return result(r);
}

static int probe_umask(void)
{
	return result(syscall(SYS_umask, 022));
}

static void compile_ok(const char *profile, struct berth_bpf *out)
{
	struct berth_error err = {0};

	if (berth_seccomp_compile_oci(profile, out, &err) < 0) {
		print_error("%s: %s\n", profile, err.msg);
		fail();
	}
	assert_non_null(out->insns);
}

static void test_oci_errno_rule(void **state)
{
	struct berth_bpf b = {0};

	(void)state;
	/* an allow-all profile that denies getppid with EACCES, and names a
	 * syscall this libseccomp does not know (skipped, as runc does) */
	compile_ok("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"architectures\":[\"SCMP_ARCH_X86_64\"],"
		   "\"syscalls\":[{\"names\":[\"getppid\",\"no_such_call_berth\"],"
		   "\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":13}]}",
		   &b);
	expect_errno(&b, probe_getppid, "getppid under the container's profile", EACCES);
	expect_errno(&b, probe_umask, "umask under the container's profile", 0);
	berth_bpf_free(&b);
}

static void test_oci_default_errno(void **state)
{
	struct berth_bpf b = {0};

	(void)state;
	/* a deny-by-default profile (podman's shape): only what it lists runs;
	 * the rest fails with defaultErrnoRet (38, ENOSYS) */
	compile_ok("{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"defaultErrnoRet\":38,\"syscalls\":[{"
		   "\"names\":[\"exit\",\"exit_group\",\"umask\",\"prctl\",\"seccomp\"],"
		   "\"action\":\"SCMP_ACT_ALLOW\"}]}",
		   &b);
	expect_errno(&b, probe_umask, "umask, allowed", 0);
	expect_errno(&b, probe_getppid, "getppid, by default", ENOSYS);
	berth_bpf_free(&b);
}

static void test_oci_args(void **state)
{
	struct berth_bpf b = {0};

	(void)state;
	/* dup3 denied only when its second argument is 100 */
	compile_ok("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"dup3\"],"
		   "\"action\":\"SCMP_ACT_ERRNO\",\"args\":[{\"index\":1,\"value\":100,"
		   "\"op\":\"SCMP_CMP_EQ\"}]}]}",
		   &b);
	expect_errno(&b, probe_dup_big, "dup3 to 100", EPERM);
	berth_bpf_free(&b);
	compile_ok("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"dup3\"],"
		   "\"action\":\"SCMP_ACT_ERRNO\",\"args\":[{\"index\":1,\"value\":99,"
		   "\"op\":\"SCMP_CMP_EQ\"}]}]}",
		   &b);
	expect_errno(&b, probe_dup_big, "dup3 to 100 under a rule for 99", 0);
	berth_bpf_free(&b);
}

static int probe_unshare_user(void)
{
	return result(syscall(SYS_unshare, CLONE_NEWUSER));
}

/* The number of seccomp filters in force (/proc/self/status), as the exit. */
static int probe_filters(void)
{
	char buf[4096];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
	const char *f;

	if (n <= 0)
		return 200;
	buf[n] = '\0';
	f = strstr(buf, "Seccomp_filters:");
	return f != NULL ? atoi(f + strlen("Seccomp_filters:")) : 201;
}

/* @fn's exit in a child with berth's filter @bpf and the profile @cbpf
 * stacked (berth_seccomp_load_stacked); @old: the profile first, berth's
 * filter after it, as berth loaded them before. */
static int run_stacked(const struct berth_bpf *bpf, const struct berth_bpf *cbpf, bool old, probe_fn fn)
{
	struct berth_error err;
	int status = 0;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			_exit(RC_NNP);
		if (old ? berth_seccomp_load(cbpf, &err) < 0 || berth_seccomp_load(bpf, &err) < 0
			: berth_seccomp_load_stacked(bpf, cbpf, &err) < 0)
			_exit(RC_LOAD);
		/* not _exit(): a sanitizer intercepts it for its leak check, which
		 * clones and traces, and a deny-by-default profile answers ENOSYS */
		syscall(SYS_exit_group, fn());
		_exit(RC_LOAD);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* A profile that answers seccomp(2) with errnoRet 0 (a success that loads
 * nothing) cannot take berth's filter away; where both deny a call,
 * berth's errno answers; the profile's own denials stand. */
static void test_oci_stacked(void **state)
{
	struct berth_seccomp_opts plain = {0};
	struct berth_error err = {0};
	struct berth_bpf bpf = {0}, fake = {0}, both = {0};

	(void)state;
	assert_int_equal(berth_seccomp_compile(NULL, &plain, &bpf, &err), 0);
	compile_ok("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"seccomp\"],"
		   "\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":0}]}",
		   &fake);
	compile_ok("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"unshare\","
		   "\"getppid\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":13}]}",
		   &both);
	/* loaded the old way, the fake profile leaves berth's filter out: one
	 * filter in force; stacked, berth's first copy and the profile */
	assert_int_equal(run_stacked(&bpf, &fake, true, probe_filters), 1);
	assert_int_equal(run_stacked(&bpf, &fake, false, probe_filters), 2);
	assert_int_equal(run_stacked(&bpf, &both, false, probe_filters), 3);
	assert_int_equal(run_stacked(&bpf, &fake, false, probe_unshare_user), EPERM);
	assert_int_equal(run_stacked(&bpf, &both, false, probe_unshare_user), EPERM);
	assert_int_equal(run_stacked(&bpf, &both, false, probe_getppid), EACCES);
	assert_int_equal(run_stacked(&bpf, NULL, false, probe_unshare_user), EPERM);
	berth_bpf_free(&bpf);
	berth_bpf_free(&fake);
	berth_bpf_free(&both);
}

/* Each refusal names what berth does not take. */
static void test_oci_refusals(void **state)
{
	static const struct {
		const char *profile, *msg;
	} cases[] = {
	    {"[]", "linux.seccomp is not a JSON object"},
	    {"{\"defaultAction\":\"SCMP_ACT_NOTIFY\"}", "the action `SCMP_ACT_NOTIFY` is not supported"},
	    {"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"flags\":[\"SECCOMP_FILTER_FLAG_SPEC_ALLOW\"]}",
	     "the flag `SECCOMP_FILTER_FLAG_SPEC_ALLOW` is not supported"},
	    {"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"listenerPath\":\"/run/x.sock\"}",
	     "a listenerPath (SCMP_ACT_NOTIFY) is not supported"},
	    {"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"dup3\"],\"action\":"
	     "\"SCMP_ACT_ERRNO\",\"args\":[{\"index\":1,\"value\":1,\"op\":\"SCMP_CMP_XX\"}]}]}",
	     "the operator `SCMP_CMP_XX` is not one of SCMP_CMP_*"},
	    {"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"dup3\"],\"action\":"
	     "\"SCMP_ACT_ERRNO\",\"errnoRet\":99999}]}",
	     "errnoRet `99999` is not an errno"},
	    {"{\"syscalls\":[]}", "an action is missing"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct berth_error err = {0};
		struct berth_bpf b = {0};
		assert_int_equal(berth_seccomp_compile_oci(cases[i].profile, &b, &err), -1);
		assert_int_equal(err.status, 2);
		if (strstr(err.msg, cases[i].msg) == NULL) {
			print_error("%s: got `%s`\n", cases[i].profile, err.msg);
			fail();
		}
		assert_null(b.insns);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_available),
	    cmocka_unit_test(test_oci_errno_rule),
	    cmocka_unit_test(test_oci_default_errno),
	    cmocka_unit_test(test_oci_args),
	    cmocka_unit_test(test_oci_refusals),
	    cmocka_unit_test(test_oci_stacked),
	    cmocka_unit_test(test_digest),
	    cmocka_unit_test(test_free_zeroed),
	    cmocka_unit_test(test_load_empty),
	    cmocka_unit_test(test_load_without_nnp),
	    cmocka_unit_test(test_namespaces),
	    cmocka_unit_test(test_processes_still_work),
	    cmocka_unit_test(test_denied_calls),
	    cmocka_unit_test(test_deny_table),
	    cmocka_unit_test(test_tty_ioctls),
	    cmocka_unit_test(test_sockets),
	    cmocka_unit_test(test_personality),
	    cmocka_unit_test(test_affinity),
	    cmocka_unit_test(test_foreign_abi),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
