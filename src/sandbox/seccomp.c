/* SPDX-License-Identifier: MIT */
/*
 * seccomp.c - the berth seccomp filter.
 *
 * The parent builds the filter with libseccomp (default action: allow) from
 * one table, deny_table[], exports the classic BPF program through a memfd
 * and hashes it; the child only hands the finished program to seccomp(2).
 * docs/seccomp-list.md is the human copy of deny_table[]: keep them in step.
 *
 * Argument filters compare what the kernel will use: `int` and `unsigned
 * int` arguments are compared on their low 32 bits only (SCMP_CMP_MASKED_EQ
 * with 0xffffffff), so setting the high bits of the 64-bit register cannot
 * slip a denied value past the filter.  Where a rule has to say "not equal",
 * the comparison is on all 64 bits, which can only deny more.
 *
 * Only the native ABI is in the filter.  Calls through another ABI (i386
 * via int 0x80, x32 on x86_64) hit SCMP_FLTATR_ACT_BADARCH: kill the process.
 */

#include "seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <jansson.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/sha256.h"

#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif
#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#ifndef SOCK_PACKET
#define SOCK_PACKET 10
#endif

/* clone(2) takes its flags in the second argument on s390 and cris. */
#if defined(__s390__) || defined(__CRIS__)
#define CLONE_FLAGS_ARG 1
#else
#define CLONE_FLAGS_ARG 0
#endif

#define LOW32 0xffffffffULL

/* Which calls of a syscall a deny_table[] entry denies. */
enum deny_when {
	DENY_ALWAYS,       /* every call */
	DENY_CLONE_NS,     /* flags carry a CLONE_NEW* namespace flag */
	DENY_PERSONALITY,  /* any persona but PER_LINUX and the 0xffffffff query */
	DENY_TTY_IOCTL,    /* cmd TIOCSTI or TIOCLINUX */
	DENY_RAW_SOCKET,   /* AF_PACKET, SOCK_RAW (but AF_NETLINK), SOCK_PACKET */
	DENY_SOCKET_PROTO, /* AF_INET/6: a transport Landlock's TCP rules do not cover
			    * (stream/datagram protocol above IPPROTO_ICMPV6, SOCK_DCCP,
			    * SOCK_SEQPACKET) */
	DENY_IF_AFFINITY,  /* every call, only with opts->block_affinity */
	DENY_FASTOPEN,     /* the flags argument (arg) carries MSG_FASTOPEN */
	DENY_TFO_SOCKOPT,  /* setsockopt(IPPROTO_TCP, TCP_FASTOPEN_CONNECT) */
	DENY_SETID_MODE,   /* the mode argument (arg) sets S_ISUID or S_ISGID;
			    * with flags_arg >= 0, only when those flags create a file */
};

struct deny_entry {
	const char *name; /* syscall name, as libseccomp spells it */
	int errnum;       /* errno returned instead of running the call */
	enum deny_when when;
	const char *why; /* reason, copied into docs/seccomp-list.md */
	int arg;         /* DENY_SETID_MODE: index of the mode argument */
	int flags_arg;   /* DENY_SETID_MODE: index of the open flags, or -1 */
};

/* One row a line, as docs/seccomp-list.md reads them. */
/* clang-format off */
#define TFO_WHY "TCP Fast Open connects without the connect hook Landlock checks (tcp_sendmsg_fastopen): the one-port TCP rule of the egress broker would not apply; EOPNOTSUPP makes callers fall back to connect(2)"
#define PROTO_WHY "Landlock's TCP rules cover IPPROTO_TCP sockets only (since Linux 6.14 and in stable kernels, commit 854277e2cc8c): an MPTCP, SCTP, L2TP, UDP-Lite or SMC socket binds and connects to any port, past the egress broker's one-port rule; EPROTONOSUPPORT is what a kernel without them answers, so callers (Go's MPTCP listeners) fall back to TCP"
#define SETID_WHY "a set-user-ID or set-group-ID file made inside lands in the host directory with its owner: run later by anyone on the host, it runs as that owner (root, when root owns the workspace); nosuid on berth's mounts does not stop the bit being stored"

/* The deny list.  docs/seccomp-list.md mirrors it row by row. */
static const struct deny_entry deny_table[] = {
	/* Namespaces */
	{ "clone", EPERM, DENY_CLONE_NS, "new namespaces expose kernel code meant for root (user namespaces) and could undo the sandbox's own", 0, -1 },
	{ "clone3", ENOSYS, DENY_ALWAYS, "its flags are in memory seccomp cannot read; ENOSYS makes libc fall back to clone(2), where the flags are checked", 0, -1 },
	{ "unshare", EPERM, DENY_ALWAYS, "creates namespaces, as clone(2) with CLONE_NEW* flags", 0, -1 },
	{ "setns", EPERM, DENY_ALWAYS, "joins another namespace", 0, -1 },
	/* Mounts and the root directory */
	{ "mount", EPERM, DENY_ALWAYS, "changes the mount tree berth built (read-only binds, hidden paths)", 0, -1 },
	{ "umount2", EPERM, DENY_ALWAYS, "unmounting could reveal what a sandbox mount hides", 0, -1 },
	{ "pivot_root", EPERM, DENY_ALWAYS, "changes the root of the mount namespace", 0, -1 },
	{ "chroot", EPERM, DENY_ALWAYS, "changes the root directory; a classic step of escapes", 0, -1 },
	{ "open_tree", EPERM, DENY_ALWAYS, "new mount API: same power as mount(2)", 0, -1 },
	{ "move_mount", EPERM, DENY_ALWAYS, "new mount API: same power as mount(2)", 0, -1 },
	{ "fsopen", EPERM, DENY_ALWAYS, "new mount API: same power as mount(2)", 0, -1 },
	{ "fsconfig", EPERM, DENY_ALWAYS, "new mount API: same power as mount(2)", 0, -1 },
	{ "fsmount", EPERM, DENY_ALWAYS, "new mount API: same power as mount(2)", 0, -1 },
	{ "fspick", EPERM, DENY_ALWAYS, "new mount API: reconfigures existing mounts", 0, -1 },
	{ "mount_setattr", EPERM, DENY_ALWAYS, "new mount API: could clear read-only, nosuid, nodev", 0, -1 },
	/* Other processes */
	{ "ptrace", EPERM, DENY_ALWAYS, "reads and rewrites other processes; bypasses seccomp on kernels before 4.8", 0, -1 },
	{ "process_vm_readv", EPERM, DENY_ALWAYS, "reads another process's memory", 0, -1 },
	{ "process_vm_writev", EPERM, DENY_ALWAYS, "writes another process's memory", 0, -1 },
	/* Kernel attack surface */
	{ "bpf", EPERM, DENY_ALWAYS, "loads programs into the kernel; large attack surface", 0, -1 },
	{ "perf_event_open", EPERM, DENY_ALWAYS, "large attack surface; side channels on other processes", 0, -1 },
	{ "userfaultfd", EPERM, DENY_ALWAYS, "makes kernel race conditions reliably exploitable", 0, -1 },
	{ "keyctl", EPERM, DENY_ALWAYS, "kernel keyrings are not namespaced: host keys could be read or changed", 0, -1 },
	{ "add_key", EPERM, DENY_ALWAYS, "kernel keyrings are not namespaced", 0, -1 },
	{ "request_key", EPERM, DENY_ALWAYS, "kernel keyrings are not namespaced", 0, -1 },
	{ "io_uring_setup", EPERM, DENY_ALWAYS, "large attack surface; its operations are not seen by seccomp", 0, -1 },
	{ "io_uring_enter", EPERM, DENY_ALWAYS, "large attack surface; its operations are not seen by seccomp", 0, -1 },
	{ "io_uring_register", EPERM, DENY_ALWAYS, "large attack surface; its operations are not seen by seccomp", 0, -1 },
	{ "open_by_handle_at", EPERM, DENY_ALWAYS, "opens files by handle, past the mount tree (the \"shocker\" escape)", 0, -1 },
	{ "name_to_handle_at", EPERM, DENY_ALWAYS, "makes the file handles open_by_handle_at(2) uses", 0, -1 },
	/* The host system */
	{ "kexec_load", EPERM, DENY_ALWAYS, "loads a new kernel", 0, -1 },
	{ "kexec_file_load", EPERM, DENY_ALWAYS, "loads a new kernel", 0, -1 },
	{ "init_module", EPERM, DENY_ALWAYS, "loads kernel code", 0, -1 },
	{ "finit_module", EPERM, DENY_ALWAYS, "loads kernel code", 0, -1 },
	{ "delete_module", EPERM, DENY_ALWAYS, "unloads kernel code", 0, -1 },
	{ "reboot", EPERM, DENY_ALWAYS, "reboots the host (or ends the PID namespace)", 0, -1 },
	{ "swapon", EPERM, DENY_ALWAYS, "changes the host's swap", 0, -1 },
	{ "swapoff", EPERM, DENY_ALWAYS, "changes the host's swap", 0, -1 },
	{ "settimeofday", EPERM, DENY_ALWAYS, "the system clock is not namespaced", 0, -1 },
	{ "clock_settime", EPERM, DENY_ALWAYS, "the system clock is not namespaced", 0, -1 },
	{ "clock_adjtime", EPERM, DENY_ALWAYS, "the system clock is not namespaced", 0, -1 },
	{ "adjtimex", EPERM, DENY_ALWAYS, "the system clock is not namespaced", 0, -1 },
	{ "acct", EPERM, DENY_ALWAYS, "switches host-wide process accounting", 0, -1 },
	{ "quotactl", EPERM, DENY_ALWAYS, "changes filesystem quotas of the host", 0, -1 },
	{ "quotactl_fd", EPERM, DENY_ALWAYS, "changes filesystem quotas of the host", 0, -1 },
	{ "iopl", EPERM, DENY_ALWAYS, "raw access to I/O ports", 0, -1 },
	{ "ioperm", EPERM, DENY_ALWAYS, "raw access to I/O ports", 0, -1 },
	{ "modify_ldt", EPERM, DENY_ALWAYS, "x86 local descriptor tables (16-bit segments, Wine): a history of kernel bugs (CVE-2015-5157, CVE-2017-17053) and nothing an agent runs needs", 0, -1 },
	{ "syslog", EPERM, DENY_ALWAYS, "the kernel log leaks kernel addresses and host activity", 0, -1 },
	/* Obsolete */
	{ "lookup_dcookie", EPERM, DENY_ALWAYS, "obsolete profiling interface; leaks paths", 0, -1 },
	{ "vhangup", EPERM, DENY_ALWAYS, "hangs up the terminal", 0, -1 },
	{ "uselib", EPERM, DENY_ALWAYS, "obsolete a.out library loader; old attack surface", 0, -1 },
	{ "ustat", EPERM, DENY_ALWAYS, "obsolete; leaks filesystem information", 0, -1 },
	{ "sysfs", EPERM, DENY_ALWAYS, "obsolete", 0, -1 },
	{ "_sysctl", EPERM, DENY_ALWAYS, "obsolete (removed in Linux 5.5)", 0, -1 },
	{ "nfsservctl", EPERM, DENY_ALWAYS, "obsolete (removed in Linux 3.1)", 0, -1 },
	/* Argument filters */
	{ "personality", EPERM, DENY_PERSONALITY, "flags such as READ_IMPLIES_EXEC and ADDR_NO_RANDOMIZE turn off NX and ASLR", 0, -1 },
	{ "ioctl", EPERM, DENY_TTY_IOCTL, "TIOCSTI pushes input into the terminal: commands typed into the caller's shell; TIOCLINUX reads and writes the console", 0, -1 },
	{ "socket", EPROTONOSUPPORT, DENY_SOCKET_PROTO, PROTO_WHY, 0, -1 },
	{ "socket", EPERM, DENY_RAW_SOCKET, "only AF_UNIX, AF_INET, AF_INET6 and AF_NETLINK; raw and packet sockets sniff and spoof traffic, AF_VSOCK reaches the hypervisor", 0, -1 },
	{ "sched_setaffinity", EPERM, DENY_IF_AFFINITY, "the CPU limit is enforced by affinity (no cgroup): the command could lift it", 0, -1 },
	/* Set-ID files on the host */
	{ "chmod", EPERM, DENY_SETID_MODE, SETID_WHY, 1, -1 },
	{ "fchmod", EPERM, DENY_SETID_MODE, SETID_WHY, 1, -1 },
	{ "fchmodat", EPERM, DENY_SETID_MODE, SETID_WHY, 2, -1 },
	{ "fchmodat2", EPERM, DENY_SETID_MODE, SETID_WHY, 2, -1 },
	{ "creat", EPERM, DENY_SETID_MODE, SETID_WHY, 1, -1 },
	{ "open", EPERM, DENY_SETID_MODE, SETID_WHY " (only when O_CREAT or O_TMPFILE makes a file)", 2, 1 },
	{ "openat", EPERM, DENY_SETID_MODE, SETID_WHY " (only when O_CREAT or O_TMPFILE makes a file)", 3, 2 },
	{ "mkdir", EPERM, DENY_SETID_MODE, SETID_WHY, 1, -1 },
	{ "mkdirat", EPERM, DENY_SETID_MODE, SETID_WHY, 2, -1 },
	{ "mknod", EPERM, DENY_SETID_MODE, SETID_WHY, 1, -1 },
	{ "mknodat", EPERM, DENY_SETID_MODE, SETID_WHY, 2, -1 },
	/* TCP Fast Open: its implicit connect skips the LSM connect hook */
	{ "sendto", EOPNOTSUPP, DENY_FASTOPEN, TFO_WHY, 3, -1 },
	{ "sendmsg", EOPNOTSUPP, DENY_FASTOPEN, TFO_WHY, 2, -1 },
	{ "sendmmsg", EOPNOTSUPP, DENY_FASTOPEN, TFO_WHY, 3, -1 },
	{ "setsockopt", EOPNOTSUPP, DENY_TFO_SOCKOPT, TFO_WHY " (TCP_FASTOPEN_CONNECT)", 0, -1 },
	{ "openat2", ENOSYS, DENY_ALWAYS, "its mode is in memory seccomp cannot read (a set-ID file could be created); ENOSYS makes callers fall back to openat(2), where the mode is checked", 0, -1 },
};
/* clang-format on */

/* Namespace flags denied in clone(2). */
static const unsigned long clone_ns_flags[] = {
    CLONE_NEWNS,  CLONE_NEWUSER, CLONE_NEWPID,    CLONE_NEWNET,
    CLONE_NEWIPC, CLONE_NEWUTS,  CLONE_NEWCGROUP, CLONE_NEWTIME,
};

/* Terminal ioctl commands denied. */
static const unsigned long tty_ioctls[] = {TIOCSTI, TIOCLINUX};

static void release_ctxp(scmp_filter_ctx *ctx)
{
	if (*ctx != NULL)
		seccomp_release(*ctx);
}

#define cleanup_seccomp __attribute__((cleanup(release_ctxp)))

/* add_rule - deny @e (syscall @nr) when all @n comparisons hold. */
static int add_rule(scmp_filter_ctx ctx, const struct deny_entry *e, int nr, unsigned int n,
		    const struct scmp_arg_cmp *cmp, struct berth_error *err)
{
	int rc = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO((uint32_t)e->errnum), nr, n, cmp);

	if (rc < 0)
		return berth_err(err, -rc, "seccomp_rule_add `%s`", e->name);
	return 0;
}

/* add_clone_rules - one rule per namespace flag: (flags & F) == F. */
static int add_clone_rules(scmp_filter_ctx ctx, const struct deny_entry *e, int nr, struct berth_error *err)
{
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(clone_ns_flags); i++) {
		unsigned long f = clone_ns_flags[i];
		struct scmp_arg_cmp cmp = SCMP_CMP(CLONE_FLAGS_ARG, SCMP_CMP_MASKED_EQ, f, f);

		if (add_rule(ctx, e, nr, 1, &cmp, err) < 0)
			return -1;
	}
	return 0;
}

/*
 * add_personality_rules - deny every persona but 0 (PER_LINUX) and
 * 0xffffffff (the query), on the low 32 bits (the kernel takes an unsigned
 * int).  libseccomp allows one comparison per argument in a rule, so "not 0
 * and not 0xffffffff" is written as a union: a 32-bit word that is neither
 * all zeros nor all ones has, read cyclically, a set bit i followed by a
 * clear bit i+1.  One rule per i: (persona & (bit i | bit i+1)) == bit i.
 */
static int add_personality_rules(scmp_filter_ctx ctx, const struct deny_entry *e, int nr,
				 struct berth_error *err)
{
	for (unsigned int i = 0; i < 32; i++) {
		scmp_datum_t set = 1ULL << i;
		scmp_datum_t next = 1ULL << ((i + 1) % 32);
		struct scmp_arg_cmp cmp = SCMP_A0(SCMP_CMP_MASKED_EQ, set | next, set);

		if (add_rule(ctx, e, nr, 1, &cmp, err) < 0)
			return -1;
	}
	return 0;
}

/* add_ioctl_rules - deny the terminal commands, cmd compared on 32 bits. */
static int add_ioctl_rules(scmp_filter_ctx ctx, const struct deny_entry *e, int nr, struct berth_error *err)
{
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(tty_ioctls); i++) {
		struct scmp_arg_cmp cmp = SCMP_A1(SCMP_CMP_MASKED_EQ, LOW32, tty_ioctls[i]);

		if (add_rule(ctx, e, nr, 1, &cmp, err) < 0)
			return -1;
	}
	return 0;
}

/*
 * add_socket_rules - deny every address family but AF_UNIX, AF_INET,
 * AF_INET6 and AF_NETLINK; deny socket(AF_PACKET, ...), socket(F, SOCK_RAW, ...)
 * for every F but AF_NETLINK, and the obsolete SOCK_PACKET type (which the
 * kernel turns into AF_PACKET).  The type is masked with 0xf to strip
 * SOCK_NONBLOCK and SOCK_CLOEXEC, as the kernel does.
 */
static int add_socket_rules(scmp_filter_ctx ctx, const struct deny_entry *e, int nr, struct berth_error *err)
{
	struct scmp_arg_cmp packet = SCMP_A0(SCMP_CMP_MASKED_EQ, LOW32, AF_PACKET);
	/* "family != AF_NETLINK" written as "family < AF_NETLINK": libseccomp
	 * 2.5 builds a wrong tree from an SCMP_CMP_NE next to the other socket
	 * rules (the family rules below stopped matching, and AF_UNIX
	 * SOCK_SEQPACKET was denied); families above AF_NETLINK are denied
	 * whatever the type. */
	struct scmp_arg_cmp raw[] = {
	    SCMP_A0(SCMP_CMP_LT, AF_NETLINK, 0),
	    SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, SOCK_RAW),
	};
	struct scmp_arg_cmp pkt_type = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, SOCK_PACKET);

	/* Only AF_UNIX, AF_INET, AF_INET6 and AF_NETLINK: every other family
	 * (AF_VSOCK reaches the hypervisor, AF_BLUETOOTH, AF_CAN, AF_ALG, ...) is
	 * attack surface an agent never needs.  Values >= 2^32 fall in the last
	 * rule too, so high bits cannot smuggle a family past it. */
	static const int other_families[] = {0, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15};
	struct scmp_arg_cmp high = SCMP_A0(SCMP_CMP_GE, AF_NETLINK + 1, 0);

	for (size_t i = 0; i < BERTH_ARRAY_SIZE(other_families); i++) {
		struct scmp_arg_cmp fam = SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)other_families[i], 0);
		if (add_rule(ctx, e, nr, 1, &fam, err) < 0)
			return -1;
	}
	if (add_rule(ctx, e, nr, 1, &high, err) < 0)
		return -1;
	if (add_rule(ctx, e, nr, 1, &packet, err) < 0)
		return -1;
	if (add_rule(ctx, e, nr, BERTH_ARRAY_SIZE(raw), raw, err) < 0)
		return -1;
	return add_rule(ctx, e, nr, 1, &pkt_type, err);
}

/*
 * add_setid_rules - deny a mode with S_ISUID, and one with S_ISGID (one rule
 * each: rules are alternatives, comparisons within a rule all hold).  For
 * open(2)/openat(2) the mode counts only when the flags create a file:
 * O_CREAT, or O_TMPFILE (whose __O_TMPFILE bit is its own).
 */
static int add_setid_rules(scmp_filter_ctx ctx, const struct deny_entry *e, int nr, struct berth_error *err)
{
	static const scmp_datum_t bits[] = {S_ISUID, S_ISGID};
	static const scmp_datum_t creating[] = {O_CREAT, __O_TMPFILE};

	for (size_t b = 0; b < BERTH_ARRAY_SIZE(bits); b++) {
		struct scmp_arg_cmp mode = SCMP_CMP((unsigned)e->arg, SCMP_CMP_MASKED_EQ, bits[b], bits[b]);
		if (e->flags_arg < 0) {
			if (add_rule(ctx, e, nr, 1, &mode, err) < 0)
				return -1;
			continue;
		}
		for (size_t c = 0; c < BERTH_ARRAY_SIZE(creating); c++) {
			struct scmp_arg_cmp cmp[] = {
			    SCMP_CMP((unsigned)e->flags_arg, SCMP_CMP_MASKED_EQ, creating[c], creating[c]),
			    mode,
			};
			if (add_rule(ctx, e, nr, BERTH_ARRAY_SIZE(cmp), cmp, err) < 0)
				return -1;
		}
	}
	return 0;
}

/* add_entry - add the rules of one deny_table[] entry; skip unknown names. */
static int add_entry(scmp_filter_ctx ctx, const struct deny_entry *e, const struct berth_seccomp_opts *opts,
		     struct berth_error *err)
{
	int nr = seccomp_syscall_resolve_name(e->name);

	if (nr < 0) /* __NR_SCMP_ERROR or a pseudo number: not on this arch */
		return 0;
	switch (e->when) {
	case DENY_ALWAYS:
		return add_rule(ctx, e, nr, 0, NULL, err);
	case DENY_IF_AFFINITY:
		if (opts == NULL || !opts->block_affinity)
			return 0;
		return add_rule(ctx, e, nr, 0, NULL, err);
	case DENY_CLONE_NS:
		return add_clone_rules(ctx, e, nr, err);
	case DENY_PERSONALITY:
		return add_personality_rules(ctx, e, nr, err);
	case DENY_TTY_IOCTL:
		return add_ioctl_rules(ctx, e, nr, err);
	case DENY_RAW_SOCKET:
		return add_socket_rules(ctx, e, nr, err);
	case DENY_SETID_MODE:
		return add_setid_rules(ctx, e, nr, err);
	case DENY_SOCKET_PROTO: {
		/* In AF_INET and AF_INET6 every protocol of a stream or datagram
		 * socket berth lets through (0, ICMP, TCP, UDP, ICMPv6) is at most
		 * IPPROTO_ICMPV6; above it are IPPROTO_L2TP, IPPROTO_SCTP,
		 * IPPROTO_UDPLITE, IPPROTO_SMC, IPPROTO_MPTCP.  The protocol is
		 * compared on all 64 bits: high bits only make it larger, so they
		 * cannot slip one past.  SOCK_SEQPACKET (SCTP; protocol 0 picks it,
		 * and its module loads on demand) and SOCK_DCCP are denied whatever
		 * the protocol.  SOCK_RAW is left to the raw-socket rules (EPERM).
		 * AF_INET (2) and AF_INET6 (10) are one comparison (bit 3 masked
		 * out): no other family below AF_NETLINK + 1 matches, and a family
		 * with high bits set is denied by the family rules. */
		struct scmp_arg_cmp inet = SCMP_A0(SCMP_CMP_MASKED_EQ, 0xfffffff7, AF_INET);
		struct scmp_arg_cmp above = SCMP_A2(SCMP_CMP_GT, IPPROTO_ICMPV6, 0);
		struct scmp_arg_cmp rules[][3] = {
		    {inet, SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, SOCK_STREAM), above},
		    {inet, SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, SOCK_DGRAM), above},
		};
		struct scmp_arg_cmp types[][2] = {
		    {inet, SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, SOCK_SEQPACKET)},
		    {inet, SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, SOCK_DCCP)},
		};
		for (size_t i = 0; i < BERTH_ARRAY_SIZE(rules); i++)
			if (add_rule(ctx, e, nr, 3, rules[i], err) < 0)
				return -1;
		for (size_t i = 0; i < BERTH_ARRAY_SIZE(types); i++)
			if (add_rule(ctx, e, nr, 2, types[i], err) < 0)
				return -1;
		return 0;
	}
	case DENY_FASTOPEN: {
		struct scmp_arg_cmp cmp =
		    SCMP_CMP((unsigned)e->arg, SCMP_CMP_MASKED_EQ, MSG_FASTOPEN, MSG_FASTOPEN);
		return add_rule(ctx, e, nr, 1, &cmp, err);
	}
	case DENY_TFO_SOCKOPT: {
		struct scmp_arg_cmp cmp[] = {
		    SCMP_A1(SCMP_CMP_MASKED_EQ, LOW32, IPPROTO_TCP),
		    SCMP_A2(SCMP_CMP_MASKED_EQ, LOW32, TCP_FASTOPEN_CONNECT),
		};
		return add_rule(ctx, e, nr, BERTH_ARRAY_SIZE(cmp), cmp, err);
	}
	default:
		break;
	}
	return berth_err(err, EINVAL, "seccomp: bad rule kind for `%s`", e->name);
}

/* set_attrs - kill on a foreign ABI; leave NO_NEW_PRIVS to berth. */
static int set_attrs(scmp_filter_ctx ctx, struct berth_error *err)
{
	int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);

	if (rc < 0)
		return berth_err(err, -rc, "seccomp_attr_set `SCMP_FLTATR_ACT_BADARCH`");
	rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	if (rc < 0)
		return berth_err(err, -rc, "seccomp_attr_set `SCMP_FLTATR_CTL_NNP`");
	return 0;
}

/* read_all - read exactly @len bytes at offset 0 of @fd into @buf. */
static int read_all(int fd, void *buf, size_t len, struct berth_error *err)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return berth_err(err, errno, "read seccomp program");
		if (n == 0)
			return berth_err(err, EIO, "read seccomp program: short read");
		done += (size_t)n;
	}
	return 0;
}

/* export_program - export @ctx as BPF through a memfd into @out. */
static int export_program(scmp_filter_ctx ctx, struct berth_bpf *out, struct berth_error *err)
{
	cleanup_close int fd = memfd_create("berth-seccomp", MFD_CLOEXEC);
	cleanup_free struct sock_filter *insns = NULL;
	struct stat st;
	size_t count;
	int rc;

	if (fd < 0)
		return berth_err(err, errno, "memfd_create `berth-seccomp`");
	rc = seccomp_export_bpf(ctx, fd);
	if (rc < 0)
		return berth_err(err, -rc, "seccomp_export_bpf");
	if (fstat(fd, &st) < 0)
		return berth_err(err, errno, "fstat seccomp program");
	count = (size_t)st.st_size / sizeof(struct sock_filter);
	if (st.st_size <= 0 || (size_t)st.st_size % sizeof(struct sock_filter) != 0 || count > BPF_MAXINSNS)
		return berth_err(err, EINVAL, "seccomp program has a bad size `%lld`", (long long)st.st_size);
	insns = malloc((size_t)st.st_size);
	if (insns == NULL)
		return berth_err(err, ENOMEM, "allocate seccomp program");
	if (read_all(fd, insns, (size_t)st.st_size, err) < 0)
		return -1;
	out->insns = steal_pointer(&insns);
	out->len = (unsigned short)count;
	return 0;
}

int berth_seccomp_digest(struct berth_bpf *bpf, struct berth_error *err)
{
	if (bpf->insns == NULL)
		return berth_err(err, EINVAL, "no seccomp program to digest");
	return berth_sha256_hex(bpf->insns, (size_t)bpf->len * sizeof(struct sock_filter), bpf->digest, err);
}

int berth_seccomp_compile(const struct berth_policy *p, const struct berth_seccomp_opts *opts,
			  struct berth_bpf *out, struct berth_error *err)
{
	cleanup_seccomp scmp_filter_ctx ctx = NULL;

	(void)p; /* the filter does not depend on the policy yet */
	memset(out, 0, sizeof *out);
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (ctx == NULL)
		return berth_err(err, ENOMEM, "seccomp_init");
	if (set_attrs(ctx, err) < 0)
		return -1;
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(deny_table); i++)
		if (add_entry(ctx, &deny_table[i], opts, err) < 0)
			return -1;
	return export_program(ctx, out, err);
}

/* The calls --ask holds (docs/ask.md): each that opens a file by path. */
static const char *const notify_calls[] = {"open", "openat", "openat2", "creat"};

int berth_seccomp_compile_notify(struct berth_bpf *out, struct berth_error *err)
{
	cleanup_seccomp scmp_filter_ctx ctx = NULL;

	memset(out, 0, sizeof *out);
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (ctx == NULL)
		return berth_err(err, ENOMEM, "seccomp_init");
	if (set_attrs(ctx, err) < 0)
		return -1;
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(notify_calls); i++) {
		int nr = seccomp_syscall_resolve_name(notify_calls[i]);
		int rc;

		if (nr == __NR_SCMP_ERROR)
			continue; /* not a call of this ABI (open, creat on arm64) */
		rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 0);
		if (rc < 0)
			return berth_err(err, -rc, "seccomp_rule_add `%s` (SCMP_ACT_NOTIFY)",
					 notify_calls[i]);
	}
	return export_program(ctx, out, err);
}

/* errno_text - text of the errnos seccomp(2) returns, without strerror(). */
static const char *errno_text(int e)
{
	static const char *const text[] = {
	    [EACCES] = "Permission denied",        [EFAULT] = "Bad address",
	    [EINVAL] = "Invalid argument",         [ENOMEM] = "Cannot allocate memory",
	    [ENOSYS] = "Function not implemented", [EPERM] = "Operation not permitted",
	};

	return e >= 0 && (size_t)e < BERTH_ARRAY_SIZE(text) && text[e] != NULL ? text[e] : "error";
}

/* append - strcat into @buf of @size bytes, truncating. */
static void append(char *buf, size_t size, const char *s)
{
	size_t len = strlen(buf);
	size_t n = strlen(s);

	if (len + 1 >= size)
		return;
	if (n > size - len - 1)
		n = size - len - 1;
	memcpy(buf + len, s, n);
	buf[len + n] = '\0';
}

/* append_ulong - append @v in decimal. */
static void append_ulong(char *buf, size_t size, unsigned long v)
{
	char tmp[24];
	size_t i = sizeof tmp - 1;

	tmp[i] = '\0';
	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0 && i > 0);
	append(buf, size, tmp + i);
}

/*
 * load_failed - fill @err for berth_seccomp_load without allocating or
 * formatting (strerror() and printf() are not async-signal-safe).
 * @tid: thread that could not be synchronised (TSYNC), or 0.
 */
static int load_failed(struct berth_error *err, int errnum, long tid)
{
	memset(err, 0, sizeof *err);
	err->errnum = errnum;
	err->status = BERTH_EXIT_INTERNAL;
	append(err->msg, sizeof err->msg, "load seccomp filter: ");
	if (tid > 0) {
		append(err->msg, sizeof err->msg, "thread `");
		append_ulong(err->msg, sizeof err->msg, (unsigned long)tid);
		append(err->msg, sizeof err->msg, "` cannot be synchronized");
		return -1;
	}
	append(err->msg, sizeof err->msg, errno_text(errnum));
	if (errnum == EACCES)
		append(err->hint, sizeof err->hint, "set `PR_SET_NO_NEW_PRIVS` before loading");
	else if (errnum != EINVAL && errnum != EFAULT && errnum != ENOMEM && errnum != ENOSYS &&
		 errnum != EPERM) {
		append(err->msg, sizeof err->msg, " `");
		append_ulong(err->msg, sizeof err->msg, (unsigned long)errnum);
		append(err->msg, sizeof err->msg, "`");
	}
	return -1;
}

int berth_seccomp_load(const struct berth_bpf *bpf, struct berth_error *err)
{
	struct sock_fprog prog = {
	    .len = bpf->len,
	    .filter = bpf->insns,
	};
	long rc;

	if (bpf->insns == NULL || bpf->len == 0)
		return load_failed(err, EINVAL, 0);
	rc = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
	if (rc < 0)
		return load_failed(err, errno, 0);
	if (rc > 0)
		return load_failed(err, 0, rc);
	return 0;
}

int berth_seccomp_load_listener(const struct berth_bpf *bpf, struct berth_error *err)
{
	struct sock_fprog prog = {
	    .len = bpf->len,
	    .filter = bpf->insns,
	};
	long rc;

	if (bpf->insns == NULL || bpf->len == 0)
		return load_failed(err, EINVAL, 0);
	/* No TSYNC: the kernel refuses it with NEW_LISTENER, and the command's
	 * process has one thread here. */
	rc = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	if (rc < 0)
		return load_failed(err, errno, 0);
	return (int)rc;
}

int berth_seccomp_load_stacked(const struct berth_bpf *bpf, const struct berth_bpf *cbpf,
			       struct berth_error *err)
{
	if (berth_seccomp_load(bpf, err) < 0)
		return -1;
	if (cbpf == NULL || cbpf->insns == NULL)
		return 0;
	if (berth_seccomp_load(cbpf, err) < 0)
		return berth_err_wrap(err, "the container's seccomp profile");
	if (berth_seccomp_load(bpf, err) < 0)
		return berth_err_hint(err, "the container's seccomp profile (linux.seccomp) must allow "
					   "seccomp(2): berth loads its own filter after it");
	return 0;
}

void berth_bpf_free(struct berth_bpf *bpf)
{
	free(bpf->insns);
	bpf->insns = NULL;
	bpf->len = 0;
	bpf->digest[0] = '\0';
}

/*
 * berth_seccomp_available - besides SECCOMP_RET_ERRNO (denied calls), the
 * filter needs SECCOMP_RET_KILL_PROCESS (foreign ABI), Linux 4.14.
 */
bool berth_seccomp_available(void)
{
	uint32_t actions[] = {SECCOMP_RET_ERRNO, SECCOMP_RET_KILL_PROCESS};

	if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0 && errno == EINVAL)
		return false;
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(actions); i++)
		if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &actions[i]) < 0)
			return false;
	return true;
}

/* ---- A container's own profile (OCI config.md, linux.seccomp) */

/* The action named @name (errno actions take @errno_ret), or -1 with @err
 * naming it.  SCMP_ACT_NOTIFY needs a listener berth does not run. */
static int oci_action(const char *name, int errno_ret, uint32_t *out, struct berth_error *err)
{
	if (name == NULL)
		return berth_usage_err(err, "linux.seccomp: an action is missing");
	if (strcmp(name, "SCMP_ACT_ALLOW") == 0)
		*out = SCMP_ACT_ALLOW;
	else if (strcmp(name, "SCMP_ACT_ERRNO") == 0)
		*out = SCMP_ACT_ERRNO((uint16_t)errno_ret);
	else if (strcmp(name, "SCMP_ACT_KILL") == 0 || strcmp(name, "SCMP_ACT_KILL_THREAD") == 0)
		*out = SCMP_ACT_KILL_THREAD;
	else if (strcmp(name, "SCMP_ACT_KILL_PROCESS") == 0)
		*out = SCMP_ACT_KILL_PROCESS;
	else if (strcmp(name, "SCMP_ACT_TRAP") == 0)
		*out = SCMP_ACT_TRAP;
	else if (strcmp(name, "SCMP_ACT_TRACE") == 0)
		*out = SCMP_ACT_TRACE((uint16_t)errno_ret);
	else if (strcmp(name, "SCMP_ACT_LOG") == 0)
		*out = SCMP_ACT_LOG;
	else {
		berth_usage_err(err, "linux.seccomp: the action `%s` is not supported by berth", name);
		return berth_err_hint(
		    err, "use SCMP_ACT_ALLOW, _ERRNO, _KILL, _KILL_PROCESS, _TRAP, _TRACE or _LOG "
			 "(SCMP_ACT_NOTIFY needs a listener berth does not run)");
	}
	return 0;
}

static int oci_op(const char *name, enum scmp_compare *out, struct berth_error *err)
{
	static const struct {
		const char *name;
		enum scmp_compare op;
	} ops[] = {{"SCMP_CMP_NE", SCMP_CMP_NE},
		   {"SCMP_CMP_LT", SCMP_CMP_LT},
		   {"SCMP_CMP_LE", SCMP_CMP_LE},
		   {"SCMP_CMP_EQ", SCMP_CMP_EQ},
		   {"SCMP_CMP_GE", SCMP_CMP_GE},
		   {"SCMP_CMP_GT", SCMP_CMP_GT},
		   {"SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ}};

	for (size_t i = 0; name != NULL && i < BERTH_ARRAY_SIZE(ops); i++)
		if (strcmp(name, ops[i].name) == 0) {
			*out = ops[i].op;
			return 0;
		}
	return berth_usage_err(err, "linux.seccomp: the operator `%s` is not one of SCMP_CMP_*",
			       name != NULL ? name : "(none)");
}

/* One entry of linux.seccomp.syscalls: its conditions, then a rule per
 * name (a name this kernel's libseccomp does not know is skipped, as runc
 * does).  Conditions on one argument index AND together in one rule unless
 * an index repeats: then each condition is a rule of its own (libseccomp
 * takes one condition per index in a rule). */
static int oci_syscalls(scmp_filter_ctx ctx, json_t *e, uint32_t def, struct berth_error *err)
{
	json_t *names = json_object_get(e, "names"), *args = json_object_get(e, "args"), *v;
	json_t *er = json_object_get(e, "errnoRet");
	struct scmp_arg_cmp cmp[6];
	unsigned n_cmp = 0, seen = 0;
	bool split = false;
	uint32_t act;
	size_t i, k;

	if (oci_action(json_string_value(json_object_get(e, "action")),
		       json_is_integer(er) ? (int)json_integer_value(er) : EPERM, &act, err) < 0)
		return -1;
	if (json_is_integer(er) && (json_integer_value(er) < 0 || json_integer_value(er) > 4095))
		return berth_usage_err(err, "linux.seccomp: errnoRet `%lld` is not an errno",
				       (long long)json_integer_value(er));
	if (!json_is_array(names))
		return berth_usage_err(err, "linux.seccomp: a syscalls entry has no `names` list");
	if (args != NULL && !json_is_array(args))
		return berth_usage_err(err, "linux.seccomp: `args` is not a list");
	json_array_foreach(args, k, v) {
		json_t *idx = json_object_get(v, "index"), *val = json_object_get(v, "value"),
		       *two = json_object_get(v, "valueTwo");
		enum scmp_compare op = SCMP_CMP_EQ;
		if (n_cmp >= BERTH_ARRAY_SIZE(cmp) || !json_is_integer(idx) || json_integer_value(idx) < 0 ||
		    json_integer_value(idx) > 5 || (val != NULL && !json_is_integer(val)) ||
		    (two != NULL && !json_is_integer(two)))
			return berth_usage_err(err,
					       "linux.seccomp: a syscall argument condition is malformed");
		if (oci_op(json_string_value(json_object_get(v, "op")), &op, err) < 0)
			return -1;
		split |= (seen & (1u << json_integer_value(idx))) != 0;
		seen |= 1u << json_integer_value(idx);
		cmp[n_cmp++] = (struct scmp_arg_cmp){(unsigned)json_integer_value(idx), op,
						     (scmp_datum_t)json_integer_value(val),
						     (scmp_datum_t)json_integer_value(two)};
	}
	if (act == def)
		return 0; /* libseccomp refuses a rule that is the default */
	json_array_foreach(names, i, v) {
		int nr =
		    json_is_string(v) ? seccomp_syscall_resolve_name(json_string_value(v)) : __NR_SCMP_ERROR;
		int rc = 0;

		if (!json_is_string(v))
			return berth_usage_err(err, "linux.seccomp: a syscall name is not a string");
		if (nr == __NR_SCMP_ERROR)
			continue;
		if (!split)
			rc = seccomp_rule_add_array(ctx, act, nr, n_cmp, cmp);
		for (unsigned c = 0; split && rc == 0 && c < n_cmp; c++)
			rc = seccomp_rule_add_array(ctx, act, nr, 1, &cmp[c]);
		if (rc < 0)
			return berth_err(err, -rc, "linux.seccomp: cannot add the rule for `%s`",
					 json_string_value(v));
	}
	return 0;
}

int berth_seccomp_compile_oci(const char *profile, struct berth_bpf *out, struct berth_error *err)
{
	cleanup_seccomp scmp_filter_ctx ctx = NULL;
	json_error_t je;
	json_t *j = json_loads(profile, 0, &je), *flags, *e, *der;
	uint32_t def;
	size_t i;
	int rc = -1;

	memset(out, 0, sizeof *out);
	if (!json_is_object(j)) {
		json_decref(j);
		return berth_usage_err(err, "linux.seccomp is not a JSON object");
	}
	der = json_object_get(j, "defaultErrnoRet");
	if (oci_action(json_string_value(json_object_get(j, "defaultAction")),
		       json_is_integer(der) ? (int)json_integer_value(der) : EPERM, &def, err) < 0)
		goto out;
	flags = json_object_get(j, "flags");
	json_array_foreach(flags, i, e) {
		/* TSYNC berth always uses; LOG only logs.  SPEC_ALLOW would turn
		 * the speculation mitigation off: refused, as any other. */
		const char *f = json_string_value(e);
		if (f == NULL || (strcmp(f, "SECCOMP_FILTER_FLAG_TSYNC") != 0 &&
				  strcmp(f, "SECCOMP_FILTER_FLAG_LOG") != 0)) {
			berth_usage_err(err, "linux.seccomp: the flag `%s` is not supported by berth",
					f != NULL ? f : "(not a string)");
			goto out;
		}
	}
	e = json_object_get(j, "listenerPath");
	if (e != NULL && (!json_is_string(e) || json_string_length(e) > 0)) {
		berth_usage_err(err,
				"linux.seccomp: a listenerPath (SCMP_ACT_NOTIFY) is not supported by berth");
		goto out;
	}
	ctx = seccomp_init(def);
	if (ctx == NULL) {
		berth_err(err, ENOMEM, "seccomp_init");
		goto out;
	}
	/* Only the native ABI: berth's own filter kills every call made
	 * through another (architectures are accepted, not added). */
	if (set_attrs(ctx, err) < 0)
		goto out;
	json_array_foreach(json_object_get(j, "syscalls"), i, e) {
		if (oci_syscalls(ctx, e, def, err) < 0)
			goto out;
	}
	rc = export_program(ctx, out, err);
out:
	json_decref(j);
	return rc;
}
