/* SPDX-License-Identifier: MIT */
/*
 * ask.h - on-demand grants, `berth run --ask` (docs/ask.md).
 *
 * The command's open(2), openat(2), openat2(2) and creat(2) stop at a
 * seccomp user notification listener (src/sandbox/seccomp.h,
 * berth_seccomp_compile_notify) that the supervisor serves here.  For each
 * call the path is read once from the caller's memory (process_vm_readv),
 * the notification is checked to be still valid (SECCOMP_IOCTL_NOTIF_ID_VALID)
 * and the decision is made on that copy only:
 *   - a path the policy's view answers (relative, under /workspace, /tmp,
 *     $HOME, /dev, /proc, /sys, a bind, a read of a system directory, ...)
 *     goes on to the kernel unchanged (SECCOMP_USER_NOTIF_FLAG_CONTINUE):
 *     the kernel enforces the policy as in a run without --ask, so what
 *     the sandbox changes in its memory afterwards changes nothing;
 *   - an absolute path outside that view (or a write under a read-only
 *     system directory) that exists on the host is *held* and put to a
 *     human (the terminal, `berth approve|deny RUN ID` on the control
 *     socket, or a decider attached with berth_ask_set_decider()), with a
 *     deadline.  A grant opens that copy of the path outside the sandbox,
 *     with berth's credentials and no link followed (openat2
 *     RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_BENEATH from
 *     the host's /), a regular file only, and hands the descriptor in
 *     (SECCOMP_IOCTL_NOTIF_ADDFD, SECCOMP_ADDFD_FLAG_SEND); the call is
 *     never continued.  A denial writes the BERTH CAPABILITY DENIAL block
 *     on the caller's stderr (pidfd_getfd(2), the pid checked to be in the
 *     run's pid namespace) and returns the errno the policy gives.
 *
 * The pure parts (decoding a notification, classifying its path, parsing a
 * control request, the block's text) take untrusted input, allocate
 * nothing and are fuzzed by fuzz/fuzz_ask.c.
 */
#ifndef BERTH_SUPERVISOR_ASK_H
#define BERTH_SUPERVISOR_ASK_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../util/error.h"

struct berth_policy;
struct berth_audit_queue;

#define BERTH_ASK_PATH_MAX 4096
/* Default deadline of an ask (--ask-timeout), and its range. */
#define BERTH_ASK_TIMEOUT_MS 60000u
#define BERTH_ASK_TIMEOUT_MIN_MS 100u
#define BERTH_ASK_TIMEOUT_MAX_MS 3600000u
/* At most this many prompts a minute; asks beyond are denied at once. */
#define BERTH_ASK_PER_MINUTE 20
/* At most this many asks wait at once; more are denied at once. */
#define BERTH_ASK_PENDING_MAX 8
/* Records of a run: the first this many asks (and their decisions). */
#define BERTH_ASK_RECORDED 100
/* The control socket's name in the run directory. */
#define BERTH_ASK_SOCKET "ask.sock"

/* ---- pure */

/* One held call, decoded from its notification (native ABI). */
struct berth_ask_call {
	const char *syscall; /* "open", "openat", "openat2", "creat" */
	int dirfd;           /* AT_FDCWD for open and creat */
	uint64_t path_addr;  /* in the caller's memory */
	uint64_t how_addr;   /* openat2: its struct open_how */
	uint64_t how_size;
	int flags;
	unsigned mode;
	uint64_t resolve; /* openat2 only */
};

/*
 * berth_ask_decode - the call @nr with arguments @args, as the filter of
 * berth_seccomp_compile_notify holds it.  Returns 0, or -1 for a call that
 * is not one of those (answered by the kernel as it is).
 */
int berth_ask_decode(int nr, const uint64_t args[6], struct berth_ask_call *c);

/*
 * berth_ask_decode_how - openat2: the struct open_how as read from the
 * caller (@len bytes of @how, which the call said are @c->how_size).
 * Returns 0, or -1 when it is shorter than the kernel's first version (the
 * kernel refuses that call itself).
 */
int berth_ask_decode_how(struct berth_ask_call *c, const void *how, size_t len);

/* What a held call asks for. */
struct berth_ask_req {
	const char *syscall;
	char path[BERTH_ASK_PATH_MAX]; /* absolute, in the host's and the sandbox's naming */
	bool write;                    /* O_WRONLY, O_RDWR, O_CREAT or O_TRUNC */
	bool create;                   /* O_CREAT */
	int flags;
	unsigned mode;
	int errnum; /* what the policy answers it: ENOENT outside the view, EROFS for a write */
	bool net;   /* an egress request of the broker's: @path is HOST:PORT, @syscall "connect" */
};

enum berth_ask_verdict {
	BERTH_ASK_PASS = 0, /* the kernel answers it under the policy (continue) */
	BERTH_ASK_HOLD = 1, /* out of the policy's view: a human decides */
};

/*
 * berth_ask_classify - whether call @c, whose path is the first @len bytes
 * of @path as read from the caller (need not hold a NUL), is held under
 * policy @p.  Held: an absolute path, with no `.` or `..` component and no
 * link resolution asked of openat2, for a regular file (no O_PATH,
 * O_DIRECTORY, O_TMPFILE), outside the sandbox's own trees (/workspace,
 * the workspace's host path, /tmp, /home, /dev, /proc, /sys, /evidence,
 * /app, /context, every bind's target) and either outside the system
 * directories or a write under one.  @out is filled for a held call.
 * Never fails.
 */
enum berth_ask_verdict berth_ask_classify(const struct berth_policy *p, const struct berth_ask_call *c,
					  const char *path, size_t len, struct berth_ask_req *out);

/* A request on the control socket: one line. */
enum berth_ask_op {
	BERTH_ASK_OP_LIST = 1, /* "list" */
	BERTH_ASK_OP_APPROVE,  /* "approve ID [always]" */
	BERTH_ASK_OP_DENY,     /* "deny ID [always]" */
};

struct berth_ask_cmd {
	enum berth_ask_op op;
	unsigned id; /* 1..999999999 */
	bool always; /* remembered for the rest of the run */
};

/*
 * berth_ask_parse_command - @len bytes of @line (one request, an optional
 * final newline, at most 64 bytes) into @c.  Returns 0, or -1 for anything
 * else (an unknown word, an id that is not 1..999999999 in decimal digits,
 * a second line, a NUL).
 */
int berth_ask_parse_command(const char *line, size_t len, struct berth_ask_cmd *c);

/*
 * berth_ask_block - the BERTH CAPABILITY DENIAL block (as resident apps
 * print it, app.h) for ask @id of run @run_id, refused @by (a phrase:
 * "a human, with `berth deny`", "no answer in 60 s (--ask-timeout)"), into
 * @buf (@size bytes, NUL-terminated, cut to fit).  The path is cleaned for
 * a terminal.  Returns the length written.
 */
size_t berth_ask_block(char *buf, size_t size, const char *run_id, unsigned id, const struct berth_ask_req *r,
		       int errnum, const char *by, const struct berth_policy *p);

/* ---- the engine: one thread a run */

struct berth_ask;

typedef void (*berth_ask_notice_fn)(void *arg, const char *line);

/* One ask as the engine shows it to whoever decides. */
struct berth_ask_prompt {
	unsigned id;
	const char *run_id;
	const char *syscall;
	const char *path; /* cleaned for a terminal */
	bool write, create;
	long pid;         /* host's numbering */
	const char *comm; /* cleaned */
	unsigned timeout_ms;
};

/*
 * A decider besides the terminal and the control socket: the hook for an
 * MCP client's elicitation (docs/ask.md, "Later").  @ask is called on the
 * engine's thread for each new ask (not for coalesced or remembered ones);
 * it must not block, and answers later with berth_ask_answer() from any
 * thread.
 */
struct berth_ask_decider {
	void (*ask)(void *arg, const struct berth_ask_prompt *q);
	void *arg;
};

struct berth_ask_opts {
	const struct berth_policy *policy; /* must outlive the engine */
	const char *run_id;
	unsigned timeout_ms; /* 0: BERTH_ASK_TIMEOUT_MS */
	/* the run's pid namespace (the command's measurement): a caller whose
	 * pid is not in it gets no block on its stderr */
	uint64_t pidns_dev, pidns_ino;
	/* where the control socket is made (a directory of the caller's
	 * only, the run directory); NULL: none */
	const char *ctl_dir;
	/* prompt on, and read answers from, berth's controlling terminal
	 * (/dev/tty), when it opens and berth's stdin is not it */
	bool terminal;
	struct berth_audit_queue *(*queue)(void *arg); /* the run's records; NULL: none */
	void *queue_arg;
	berth_ask_notice_fn notice; /* "berth: "-less lines for berth's stderr; NULL: dropped */
	void *notice_arg;
	struct berth_ask_decider decider; /* optional */
	/* --network proxy: where the answer to a held egress request goes
	 * (berth_broker_answer), on the engine's thread; NULL: none are held */
	int (*net_answer)(void *arg, uint64_t token, bool grant);
	void *net_arg;
};

/*
 * berth_ask_start - serve @listener (owned from here on, closed on any
 * failure) on a thread of its own.  Returns the engine, or NULL with @err
 * filled (the control socket cannot be made, ENOMEM, pthread_create).
 */
struct berth_ask *berth_ask_start(int listener, const struct berth_ask_opts *o, struct berth_error *err);

/*
 * berth_ask_hold_net - the broker offers a request for undeclared
 * @host:@port (token @token, answered through opts.net_answer).  Any
 * thread.  Returns 1 when it is taken (an answer will come, also when the
 * engine stops), 0 when not (no net_answer, stopping, 16 offers already
 * wait for the engine): the broker refuses it itself.
 */
int berth_ask_hold_net(struct berth_ask *a, const char *host, unsigned port, uint64_t token);

/*
 * berth_ask_answer - decide ask @id (approve: @grant), remembered for the
 * rest of the run when @always; @by names who ("mcp"...).  Any thread.
 * Returns 0, or -1 when the engine is gone.  An id that waits no more is
 * ignored.
 */
int berth_ask_answer(struct berth_ask *a, unsigned id, bool grant, bool always, const char *by);

/*
 * berth_ask_stop - deny what still waits ("the run ended"), join the
 * thread, remove the control socket.  Safe on NULL.  No ask after this.
 */
void berth_ask_stop(struct berth_ask *a);

/*
 * berth_ask_summary - the run's counts of asks and decisions, by kind:
 * run.stop's "ask" member (docs/ask.md).  After
 * berth_ask_stop().  Returns a new object, or NULL (ENOMEM, NULL @a).
 */
json_t *berth_ask_summary(const struct berth_ask *a);

/* berth_ask_free - release a stopped engine.  Safe on NULL. */
void berth_ask_free(struct berth_ask *a);

/*
 * berth_ask_request - the client of `berth approve|deny|asks`: send
 * @request (one line) to the control socket of run @run_id in @ctl_dir
 * (which must be the caller's own, and the socket too) and put the answer
 * (text, NUL-terminated) in @reply.  Returns 0, or -1 with @err filled
 * (no such run or no --ask in it: ENOENT, status 2; a socket of another
 * owner: EPERM; a timeout of 5 s).
 */
int berth_ask_request(const char *ctl_dir, const char *request, char *reply, size_t size,
		      struct berth_error *err);

#endif
