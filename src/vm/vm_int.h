/* SPDX-License-Identifier: MIT */
/*
 * vm_int.h - the microVM runtime's own state and the steps of its start
 * (docs/vm.md): its files share this header; nothing outside src/vm (and
 * its unit test) includes it.  The runtime itself is berth_runtime_vm
 * (src/runtime/runtime.h, runtime_vm.c).
 *
 * The order of start() (runtime_vm.c, vm_start), each step a file:
 *   1. guest_check.c the installed guest (vmlinuz, initramfs.cpio) verified
 *   2. runtime_vm.c the run directory (0700), the janitor (janitor.c)
 *   3. virtiofsd.c  the staging tree (staging.c) served by virtiofsd
 *   4. qemu.c       qemu, the channel a socketpair end
 *   5. channel.c    HELLO, POLICY, START; READY -> before_release -> GO 2;
 *                   MEASURE -> on_measured -> GO 3 (sync 2 and 3)
 *   6. relay.c      stdio, the RPC channel (stream.c), signals, the
 *                   terminal, EXIT
 */
#ifndef BERTH_VM_INT_H
#define BERTH_VM_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <termios.h>

#include "../runtime/runtime.h"
#include "../sandbox/measure.h"
#include "../util/error.h"
#include "../util/termfilter.h"
#include "proto.h"
#include "mux.h"
#include "stream.h"

/* Root's qemu runs as BERTH_VM_QEMU_UID_BASE + the run id's first 20 bits
 * (uid and gid; runtime_vm.c): below the sandbox's BERTH_ROOT_HOST_UID
 * range (src/sandbox/userns.h), never root. */
#define BERTH_VM_QEMU_UID_BASE 0x5F000000U

/* The guest's files, once verified (guest_check.c). */
struct vm_guest {
	char dir[PATH_MAX];
	char kernel[PATH_MAX + 16]; /* DIR/vmlinuz */
	char initrd[PATH_MAX + 16]; /* DIR/initramfs.cpio */
	char kernel_sha256[65];     /* as verified (the pin's) */
	char initramfs_sha256[65];  /* as verified (guest.json's) */
	/* berth_vm_guest_open: sealed memfds of exactly the verified bytes of
	 * @kernel and @initrd, what qemu boots; -1 none */
	int kernel_fd, initrd_fd;
};

/* How the command's stdio crosses the channel (relay.c). */
struct vm_io {
	int in;       /* read: bytes to send as DATA STDIN; -1 none (closed: EOF sent) */
	int out, err; /* written: DATA STDOUT / STDERR; -1 dropped */
	bool tty;     /* the guest gives the command a pty (START "tty") */
	/* @out / @err is a terminal (berth's own, or one the caller's stdio
	 * names; not a session's pty, whose supervisor filters): what the guest
	 * writes there goes through the terminal filter, one state each */
	bool filter_out, filter_err;
	bool raw; /* berth's stdin was put in raw mode (restored at the end) */
	struct termios saved;
	int pty_slave; /* want_pty: the host pty's slave the relay reads and writes */
	struct berth_termfilter tf_out, tf_err;
};

struct vm_rt {
	struct berth_rt base; /* first: berth_rt_*() reach the ops through it */
	const struct berth_policy *p;
	const struct berth_runtime_opts *o;
	char run_id[17];
	char dir[PATH_MAX];          /* the run directory, 0700; "" none */
	char fs_sock[PATH_MAX];      /* DIR/fs.sock, virtiofsd's listening socket */
	char console[PATH_MAX];      /* DIR/console.log, the guest kernel's console */
	char staging[PATH_MAX];      /* DIR/root: the staging tree's mount point */
	uint32_t uid, gid;           /* U and G: the guest's ids of the command */
	uint32_t host_uid, host_gid; /* U and G on the host: the caller's; root's BERTH_ROOT_HOST_UID */
	pid_t virtiofsd, qemu;       /* -1: none */
	int fs_child_fd;             /* pidfd of virtiofsd's sandbox child (killed, waited for); -1 none */
	uint32_t qemu_uid;           /* root's qemu runs as this uid and gid (qemu.c); else the caller */
	int qemu_pidfd;              /* the supervisor polls it; -1 none */
	int janitor_fd;              /* write end of the janitor's pipe; -1 none */
	pid_t janitor;
	int chan; /* the host end of the channel; -1 closed */
	int sfd;  /* run(): berth's signalfd, polled while it starts; -1 none */
	struct berth_vm_reader *rd;
	const char *accel;      /* "tcg" or "kvm": what qemu runs with (berth_vm_accel_choose) */
	char accel_why[256];    /* why that one */
	uint64_t mem_bytes;     /* the guest's RAM */
	char smp[16];           /* its vCPUs: the policy's CPUs, at most the host's */
	int hello_landlock_abi; /* the guest kernel's, from HELLO */
	char hello_kernel[65];  /* the guest's uname -r, from HELLO */
	/* the guest as verified before the boot (guest_check.c) */
	char kernel_sha256[65], initramfs_sha256[65];
	struct berth_measure meas;
	bool measured;
	bool exited; /* EXIT arrived: @wst holds it */
	int wst;
	bool timed_out;
	bool failed; /* the relay saw a broken channel */
	struct berth_error relay_err;
	struct vm_io io;
	/* opts.has_rpc: a copy of opts.rpc_fd relayed as chan BERTH_VM_RPC
	 * (relay.c); closed when the VM ends, so its peer sees the app gone */
	struct berth_vm_stream rpc;
	unsigned short rows, cols; /* START's: the terminal's size */
	int pty_master;            /* want_pty: the caller's end; -1 none */
	pthread_t relay;           /* start(): the relay thread */
	bool relay_running;
	bool waited;
	int boot_timeout_ms; /* no HELLO by then: killed (status 125) */
	/* stdin's flow control (proto.h): what the guest still takes */
	struct berth_vm_credit stdin_cr;
	/* the relay's frames not written yet: it never blocks on the channel,
	 * so the guest's frames are always read (the credit bounds this) */
	unsigned char *outq;
	size_t outq_len, outq_off;
	/* --network proxy: the guest's connections (relay.c); our ends of
	 * the sockets the supervisor's broker was given at sync 2 */
	struct berth_vm_mux *streams;
	int handoff; /* SOCK_SEQPACKET: a stream's other end to the broker; -1 none */
	int dns;     /* SOCK_DGRAM: tagged queries and answers; -1 none */
};

/* guest_check.c: the installed guest in berth_vm_dir(), verified by
 * berth_vm_verify() (src/vm/install.h: guest.json names this berth's pin,
 * vmlinuz's and initramfs.cpio's sha256 match).  Returns 0 with @g filled,
 * or -1 with berth_vm_verify()'s error (status 125, hint `berth vm
 * install`). */
int berth_vm_guest_find(struct vm_guest *g, struct berth_error *err);

/* guest_check.c: @g's vmlinuz and initramfs.cpio copied into sealed memfds
 * (@g->kernel_fd, @g->initrd_fd, close-on-exec), the sha256 of the bytes
 * copied compared with the verified one.  Returns 0, or -1 with @err
 * (status 125: a file that changed since berth_vm_guest_find, named with
 * both digests; hint `berth vm install`) and no descriptor left open. */
int berth_vm_guest_open(struct vm_guest *g, struct berth_error *err);
/* guest_check.c: close what berth_vm_guest_open opened. */
void berth_vm_guest_close(struct vm_guest *g);

/* staging.c / virtiofsd.c: the staging tree of @vm->p at @vm->staging,
 * served by virtiofsd on @vm->fs_sock (made listening here).  Sets
 * @vm->virtiofsd.  Returns 0, or -1 with @err. */
int berth_vm_start_virtiofsd(struct vm_rt *vm, struct berth_error *err);

/* staging.c: in virtiofsd's mount namespace (the child), build the tree at
 * @staging; @idmap (root only, else NULL): the writable shares idmapped,
 * their owner's files @idmap->host_uid's.  Returns 0, or -1 with @err. */
struct berth_ids;
int berth_vm_build_staging(const struct berth_policy *p, const char *staging, const struct berth_ids *idmap,
			   struct berth_error *err);

/* qemu.c: start qemu on @g with @chan_fd as the channel's guest end.  Sets
 * @vm->qemu and @vm->qemu_pidfd.  Returns 0, or -1 with @err. */
int berth_vm_start_qemu(struct vm_rt *vm, const struct vm_guest *g, int chan_fd, struct berth_error *err);

/* qemu.c: the descriptors qemu is given, at these numbers, and nothing by
 * a path in the guest or run directory (root's qemu is not root, and may
 * pass neither). */
enum {
	VM_QEMU_FD_CHAN = 3,    /* the channel, a socketpair end */
	VM_QEMU_FD_KERNEL = 4,  /* the sealed vmlinuz (guest_check.c) */
	VM_QEMU_FD_INITRD = 5,  /* the sealed initramfs */
	VM_QEMU_FD_FS = 6,      /* connected to virtiofsd's socket */
	VM_QEMU_FD_CONSOLE = 7, /* RUNDIR/console.log, write-only (-add-fd set 1) */
};

/* qemu.c: qemu's argv for @vm into @a (its buffers too; pure: no I/O).
 * Returns 0, or -1 when a value does not fit. */
struct vm_qemu_argv {
	char mem[64], memobj[128], smp[16], accel[32], kernel[32], initrd[32], fs[48], console[64], addfd[48],
	    name[2 * PATH_MAX + 8];
	char *argv[64];
};
int berth_vm_qemu_argv(const struct vm_rt *vm, struct vm_qemu_argv *a);

/* qemu.c: the last non-empty line of the console log, for messages
 * (@buf "" when there is none). */
void berth_vm_console_tail(const struct vm_rt *vm, char *buf, size_t len);

/* qemu.c: the hint of a failed boot: where its logs are.  Returns -1. */
int berth_vm_logs_hint(const struct vm_rt *vm, struct berth_error *err);

/* janitor.c: a process that, when berth dies before berth_vm_janitor_done,
 * kills qemu and virtiofsd and removes the run directory and
 * o->remove_at_end.  Returns 0, or -1 with @err. */
int berth_vm_janitor_start(struct vm_rt *vm, struct berth_error *err);
/* janitor.c: tell the janitor pid @pid is the run's (before it can leak). */
void berth_vm_janitor_add(struct vm_rt *vm, pid_t pid);
/* janitor.c: berth cleaned up itself: the janitor ends. */
void berth_vm_janitor_done(struct vm_rt *vm);

/* channel.c: sync 1 to 3 on @vm->chan (HELLO ... GO 3), calling the hooks.
 * @tty, @rows, @cols for START.  Returns 0 once GO 3 is sent, or -1 with
 * @err: the guest's ERROR (its status, message, hint), a hook's error, a
 * broken or malformed channel, the boot deadline (125, naming the console
 * log's last line). */
int berth_vm_handshake(struct vm_rt *vm, struct berth_error *err);

/* channel.c: the START payload (JSON, malloc'd) for @vm with the digest
 * @digest of the POLICY bytes.  Returns NULL with @err (ENOMEM). */
char *berth_vm_start_json(const struct vm_rt *vm, const char *digest, struct berth_error *err);
/* One HOME frame's payload for @f (proto.h: its path, a NUL, its bytes)
 * into *@out (malloc'd, *@len bytes), or -1 with @err: status 2 when it is
 * over BERTH_VM_PAYLOAD_MAX (check() refuses such a seed before a boot). */
int berth_vm_home_frame(const struct berth_home_file *f, unsigned char **out, size_t *len,
			struct berth_error *err);

/* relay.c: relay until the guest ends: @sfd a signalfd (or -1) whose
 * signals go as SIGNAL frames (SIGWINCH: WINSZ), @tfd a timerfd (or -1)
 * whose expiry kills the VM (--timeout).  Returns 0 (the status in
 * @vm->wst / @vm->exited / @vm->timed_out), or -1 with @vm->relay_err. */
int berth_vm_relay(struct vm_rt *vm, int sfd, int tfd);

/* relay.c: DATA of the guest's @chan (stdout, stderr) to the command's
 * output (berth's terminal through the terminal filter). */
void berth_vm_data_out(struct vm_rt *vm, uint16_t chan, const unsigned char *p, size_t n);

/* relay.c: --network proxy, sync 2: the broker's sockets made and given
 * to the supervisor (hooks.on_egress), ours kept.  Returns 0, or -1 with
 * @err (the hook's, or the sockets'). */
int berth_vm_egress_start(struct vm_rt *vm, struct berth_error *err);

/* relay.c: the exit status berth returns for the ended @vm (as the
 * namespace runtime's: the command's, 128+N, 124 on --timeout), or -1 with
 * @err when the guest ended without EXIT. */
int berth_vm_status(const struct vm_rt *vm, int *status, struct berth_error *err);

/* runtime_vm.c: what the command of @p may use in the guest, in bytes
 * (docs/vm.md, "Memory"): an explicit --memory; the default one at most
 * max(1 GiB, --tmp-size + 512 MiB); never over 16 GiB nor half the host's
 * RAM.  The guest's RAM is that plus 256 MiB. */
uint64_t berth_vm_mem_budget(const struct berth_policy *p);

/* runtime_vm.c: kill qemu and virtiofsd (SIGKILL) and reap them. */
void berth_vm_kill_all(struct vm_rt *vm);

#endif
