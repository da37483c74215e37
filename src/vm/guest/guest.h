/* SPDX-License-Identifier: MIT */
/*
 * guest.h - berth-vminit, pid 1 of a microVM guest (docs/vm.md, "The
 * guest"): the pieces main.c's one setup function calls, in its order.
 *
 * Two processes: pid 1 (main.c) stays root, reaps every orphan and powers
 * the VM off when the worker is gone; the worker (worker.c), forked once
 * the root file system is in place, becomes the unprivileged uid U and runs
 * the namespace runtime on the host's policy, speaking the channel
 * (src/vm/proto.h) until the command's EXIT.
 */
#ifndef BERTH_VM_GUEST_H
#define BERTH_VM_GUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "../../policy/policy.h"
#include "../../util/error.h"
#include "../../runtime/runtime.h"
#include "../proto.h"
#include "../mux.h"
#include "../stream.h"

#define GUEST_PORT_NAME "berth.0"
#define GUEST_ROOT_TAG "root"
#define GUEST_NEWROOT "/newroot"
#define GUEST_CGROUP "/sys/fs/cgroup"
#define GUEST_CGROUP_SUB "berth"     /* delegated to uid U: the runtime's run cgroups go below it */
#define GUEST_CGROUP_WORKER "worker" /* below it: the worker's own (a member, so not where runs go) */
/* The guest's RAM that the command's cgroups may not take (bytes): the
 * kernel's slabs and page tables, pid 1, the relay, the sandbox's init and
 * the runtime's janitor.  The host sizes the guest's RAM as the command's
 * budget plus more than this (src/vm/runtime_vm.c, VM_MEM_OVERHEAD). */
#define GUEST_MEM_RESERVE (160ULL << 20)

/* START (docs/vm.md): who runs the command and how, and the parts of the
 * policy its canonical JSON does not hold. */
struct guest_start {
	char digest[65];   /* sha256 of the POLICY frame's bytes */
	char run_id[17];   /* 16 lowercase hex digits */
	uint32_t uid, gid; /* U and its group */
	char user[64];     /* the user's name (USER, LOGNAME) */
	char home[4096];   /* HOME */
	bool tty;          /* a pty instead of pipes */
	bool rpc;          /* the command gets an RPC channel, fd 3 (chan BERTH_VM_RPC) */
	unsigned short rows, cols;
	/* the policy's env values, by name (NULL-terminated pairs) */
	char **env_names, **env_values;
	size_t n_env;
	/* optional: what a policy may need beyond that (src/policy/policy.h,
	 * berth_policy_from_json) */
	char *evidence_dir, *seccomp, *term, *lang;
	bool memory_set, cpus_set, pids_set;
	/* the seeded home's files (HOME frames; the namespace runtime writes
	 * them into the sandbox's fresh $HOME), each path and data malloc'd */
	struct berth_home_file *home_files;
	size_t n_home_files;
};

/* The worker's state, shared by its hooks and its relay. */
struct guest {
	int chan;                   /* the virtio-serial port */
	struct berth_vm_reader *rd; /* its frame reader */
	struct guest_start start;
	struct berth_policy policy;
	int stdin_w;               /* write end of the command's stdin (pipes), or -1 */
	int pty;                   /* the pty master (tty), or -1 */
	int pending_sig;           /* a SIGNAL that came before the command ran, or 0 */
	unsigned short rows, cols; /* the last WINSZ before the pty was known */
	bool stdin_eof;
	/* the host's reader of stdout/stderr is gone (its EOF on that channel):
	 * the pipe's read end is closed, so the command gets SIGPIPE/EPIPE as
	 * under the namespace runtime */
	bool reader_gone[3];
	unsigned char *pend; /* stdin bytes the command has not taken yet (a window at most) */
	size_t pend_len, pend_off;
	struct berth_vm_credit stdin_cr; /* stdin's flow control (proto.h) */
	bool stdin_gone;                 /* the command closed its stdin: EOF sent, the rest dropped */
	/* --network proxy: the listeners of the sandbox's network (its
	 * on_egress), each connection a stream to the host's broker, each
	 * query a DNS frame; -1 none */
	struct berth_egress_listeners egress;
	bool has_egress;
	struct berth_vm_mux *streams;
	uint32_t dns_tag; /* the last query's tag */
	struct guest_dns_query {
		bool used;
		uint32_t tag;
		struct sockaddr_storage from; /* the client, for the answer */
		socklen_t from_len;
	} dnsq[64];
	/* START "rpc": our end of the socketpair whose other end is the
	 * command's fd 3, relayed as chan BERTH_VM_RPC (src/vm/stream.h) */
	struct berth_vm_stream rpc;
};

/* boot.c */
void guest_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int guest_early_mounts(struct berth_error *err);
bool guest_probe_mode(void);
int guest_landlock_abi(void);
__attribute__((noreturn)) void guest_poweroff(void);
void guest_probe(void);

/* channel.c */
int guest_open_port(struct berth_error *err);
int guest_hello(int fd, struct berth_error *err);
int guest_receive(int fd, struct berth_vm_reader *rd, unsigned char **policy, size_t *policy_len,
		  struct guest_start *st, struct berth_error *err);
int guest_policy(const unsigned char *bytes, size_t len, const struct guest_start *st, struct berth_policy *p,
		 struct berth_error *err);
void guest_send_error(int fd, const struct berth_error *e);
void guest_start_free(struct guest_start *st);

/* root.c */
int guest_switch_root(struct berth_error *err);
int guest_cgroup(uid_t uid, gid_t gid, struct berth_error *err);
/* pid 1 (and so the worker, the relay, forked from it) at oom_score_adj
 * -1000: the OOM killer never takes berth's own guest processes; the
 * sandbox goes back to 0 (src/sandbox/spawn_child.c).  Returns 0 or -1. */
int guest_oom_protect(struct berth_error *err);
/* What /berth may use (its memory.max): MemTotal less GUEST_MEM_RESERVE,
 * in bytes; 0 when /proc/meminfo cannot be read or leaves under 16 MiB. */
uint64_t guest_mem_budget(void);

/* egress.c: --network proxy (the hook takes the listeners; the relay
 * polls them and the streams, hands the host's frames over) */
struct pollfd;
int guest_egress_hook(void *arg, const struct berth_egress_listeners *l, struct berth_error *err);
size_t guest_egress_poll(struct guest *g, struct pollfd *p);
int guest_egress_ready(struct guest *g, const struct pollfd *p, size_t n, struct berth_error *err);
int guest_egress_frame(struct guest *g, const struct berth_vm_frame *f, struct berth_error *err);
void guest_egress_close(struct guest *g);

/* worker.c */
__attribute__((noreturn)) void guest_worker(struct guest *g);

#endif
