/* SPDX-License-Identifier: MIT */
/*
 * oci.h - `berth oci`: berth as an OCI runtime (the runc command line that
 * conmon and containerd's runc shim use; docs/oci.md).
 *
 * Three parts, one concern each:
 *   bundle*.c    an OCI bundle's config.json -> a berth policy (plain data:
 *                struct berth_policy with its struct berth_container), or a
 *                refusal naming the JSON path berth cannot honour
 *   state.c      the state directory (--root): one private directory per
 *                container with its state.json, start.fifo and the copy of
 *                its config.json; liveness
 *   supervisor.c the per-container supervisor process: the namespace
 *                runtime's start(), held at sync 2 until `berth oci start`,
 *                then signals forwarded and the exit status collected
 *   lifecycle.c  create, start, state, kill, delete, list, ps
 *   features.c   the `features` document, signal names
 *   log.c        the --log file (text or JSON lines, as runc's)
 *
 * Every function that can fail returns -1 with @err filled; the CLI
 * (src/cli/cmd_oci.c) prints the message on stderr and in the --log file
 * and exits 1, as runc does.
 */
#ifndef BERTH_OCI_H
#define BERTH_OCI_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "../policy/policy.h"
#include "../util/error.h"

#define BERTH_OCI_ROOT_DEFAULT "/run/berth-oci"
#define BERTH_OCI_ID_MAX 255           /* bytes of a container id: one file name */
#define BERTH_OCI_CONFIG_MAX (4 << 20) /* bytes of a config.json berth reads */
#define BERTH_OCI_VERSION "1.1.0"      /* the runtime-spec version berth reports */

/* ---- log.c: the --log file */

enum berth_oci_level {
	BERTH_OCI_ERROR = 0,
	BERTH_OCI_WARNING,
	BERTH_OCI_INFO,
	BERTH_OCI_DEBUG,
};

struct berth_oci_log {
	int fd;     /* -1: no --log (lines are dropped) */
	bool json;  /* --log-format json */
	bool debug; /* --debug: BERTH_OCI_DEBUG lines too */
};

/*
 * berth_oci_log_open - open @path (made 0600 when missing, appended to,
 * never through a symbolic link) as the log @l; @path NULL: no log.
 * Returns 0, or -1 with @err filled ("cannot open the log `PATH`: ...").
 */
int berth_oci_log_open(struct berth_oci_log *l, const char *path, bool json, bool debug,
		       struct berth_error *err);

/*
 * berth_oci_logf - append one line at @level to @l: with json
 * `{"level":"error","msg":"...","time":"RFC3339"}`, else logrus's text
 * `time="..." level=error msg="..."` (runc's two formats; the containerd
 * shim reads the last error line of the JSON one).  Nothing when @l has no
 * file or @level is debug without --debug.  Never fails.
 */
void berth_oci_logf(const struct berth_oci_log *l, enum berth_oci_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* berth_oci_log_error - @err's message (and hint) as one error line. */
void berth_oci_log_error(const struct berth_oci_log *l, const struct berth_error *err);

/* ---- bundle*.c: config.json -> policy */

/*
 * A bundle converted: the policy berth enforces, and what the supervisor
 * applies around it.  Everything is owned (berth_oci_bundle_free).
 */
struct berth_oci_bundle {
	struct berth_policy policy; /* policy.container is set */
	char *dir;                  /* the bundle directory, physical path */
	bool terminal;              /* process.terminal: a pty, its master over --console-socket */
	unsigned short console_rows, console_cols; /* process.consoleSize (0: unset) */
	bool has_oom_score_adj;
	int oom_score_adj;   /* process.oomScoreAdj: written for the supervisor, which the sandbox inherits */
	char *audit_dir;     /* berth.dev/audit-dir (absolute), or NULL */
	char *cgroups_path;  /* linux.cgroupsPath (absolute, normal), or NULL: joined by the supervisor */
	bool writable_root;  /* berth.dev/writable-root "true": root.readonly false is honoured */
	json_t *annotations; /* config.json's annotations (a reference), or NULL */
	char *config;        /* config.json's bytes as read (berth_oci_bundle_load*), or NULL */
	size_t config_len;
	/* What was accepted but is not applied as asked (capabilities not
	 * granted, a sysctl not set...): one line each for the log. */
	char **notes;
	size_t n_notes;
};

/* berth_oci_bundle_free - release everything @b owns; safe twice. */
void berth_oci_bundle_free(struct berth_oci_bundle *b);

/*
 * berth_oci_bundle_convert - config.json @cfg (parsed) of the bundle
 * directory @dir (a physical path: root.path and relative mount sources are
 * read from it) into @b for container @id.  berth's posture stays on top of
 * what the bundle asks (no capabilities, NO_NEW_PRIVS, Landlock, berth's
 * seccomp filter); what berth cannot honour is refused, never dropped in
 * silence.  Resolves root.path and bind sources with realpath(3) (they must
 * exist); reads nothing else of the host.  Ends with
 * berth_policy_validate().
 * Returns 0, or -1 with @err filled (status 2, @b left to
 * berth_oci_bundle_free), the message naming the JSON path:
 *   "config.json: `PATH` is not supported by berth oci: WHY"
 *   "config.json: `PATH` must be ..., not `VALUE`"
 * and the refusals docs/oci.md lists, each with a hint.
 */
int berth_oci_bundle_convert(const json_t *cfg, const char *dir, const char *id, struct berth_oci_bundle *b,
			     struct berth_error *err);

/*
 * berth_oci_bundle_load - read @dir/config.json (a regular file of at most
 * BERTH_OCI_CONFIG_MAX bytes, not through a symbolic link) and convert it
 * (berth_oci_bundle_convert); @b keeps the bytes read (config, config_len).  Returns 0, or -1 with @err filled: the
 * bundle or its config.json cannot be read ("cannot read the bundle's
 * config.json `PATH`: ..."), is not JSON ("`PATH`: line L column C: ..."),
 * or is refused.
 */
int berth_oci_bundle_load(const char *dir, const char *id, struct berth_oci_bundle *b,
			  struct berth_error *err);

/* The copy of config.json `create` keeps in the container's state
 * directory: what `exec` confines its process by. */
#define BERTH_OCI_SAVED_CONFIG "config.json"

/*
 * berth_oci_bundle_load_saved - the container's config.json as `create`
 * read it (BERTH_OCI_SAVED_CONFIG under its state directory @dfd, written
 * there 0600 by `create`), converted for bundle directory @dir: the bundle
 * on disk may have changed since, or be gone, and a process `exec` adds is
 * confined as the container is, by what was checked at `create`.  Returns
 * 0, or -1 with @err filled as berth_oci_bundle_load's, or "container `ID`
 * has no config.json in its state" (a state directory of another berth).
 */
int berth_oci_bundle_load_saved(int dfd, const char *dir, const char *id, struct berth_oci_bundle *b,
				struct berth_error *err);

/* ---- features.c */

/* berth_oci_features - the `features` document (runc's format: ociVersionMin,
 * ociVersionMax, hooks, mountOptions, linux{namespaces, capabilities, cgroup,
 * seccomp, apparmor, selinux}, annotations).  Returns a new object, or NULL
 * (ENOMEM). */
json_t *berth_oci_features(void);

/*
 * berth_oci_signal_parse - a signal as `kill` takes it: a number (1-64),
 * `TERM` or `SIGTERM` (any case), `RTMIN+N`.  Returns 0 with *@sig set,
 * or -1 with @err filled ("invalid signal `S`").
 */
int berth_oci_signal_parse(const char *s, int *sig, struct berth_error *err);

/*
 * berth_oci_seccomp_arch_ok, _action_ok, _op_ok, _flag_ok - whether berth
 * accepts this linux.seccomp architecture (`SCMP_ARCH_X86_64`), action
 * (`SCMP_ACT_ERRNO`), argument operator (`SCMP_CMP_EQ`) or flag
 * (`SECCOMP_FILTER_FLAG_LOG`): the lists `features` reports.
 */
bool berth_oci_seccomp_arch_ok(const char *name);
bool berth_oci_seccomp_action_ok(const char *name);
bool berth_oci_seccomp_op_ok(const char *name);
bool berth_oci_seccomp_flag_ok(const char *name);

/* The mount options berth accepts (features' mountOptions), NULL-ended. */
extern const char *const berth_oci_mount_options[];

/* ---- state.c: the state directory */

enum berth_oci_status {
	BERTH_OCI_CREATING = 0, /* `create` runs: no state.json yet */
	BERTH_OCI_CREATED,      /* built, the command waits for `start` */
	BERTH_OCI_RUNNING,
	BERTH_OCI_STOPPED,
};

/* berth_oci_status_name - "creating", "created", "running", "stopped". */
const char *berth_oci_status_name(enum berth_oci_status s);

/*
 * berth_oci_id_check - runc's rule for a container id: one or more of
 * [A-Za-z0-9_+.-], not `.` or `..`, at most BERTH_OCI_ID_MAX bytes.
 * Returns 0, or -1 with @err filled ("invalid container id `ID`: ...").
 */
int berth_oci_id_check(const char *id, struct berth_error *err);

/*
 * berth_oci_default_root - the state directory when --root is not given:
 * BERTH_OCI_ROOT_DEFAULT for root; for another user
 * $XDG_RUNTIME_DIR/berth-oci when XDG_RUNTIME_DIR is an absolute path (as
 * runc's rootless default), else BERTH_OCI_ROOT_DEFAULT too (which such a
 * user cannot make: the error says to give --root).  Into @buf (@len
 * bytes); returns @buf.
 */
const char *berth_oci_default_root(char *buf, size_t len);

/*
 * berth_oci_root_open - the state directory @root (NULL:
 * BERTH_OCI_ROOT_DEFAULT) as a descriptor (O_DIRECTORY, O_CLOEXEC).  With
 * @create it and its missing parents are made 0700.  It must be a directory
 * (not a symbolic link) of the effective uid, writable by nobody else.
 * Returns the descriptor, or -1 with @err filled ("cannot use the state
 * directory `ROOT`: ...", with a hint to give --root).
 */
int berth_oci_root_open(const char *root, bool create, struct berth_error *err);

/* A container's state.json, read back (lifecycle.c keeps it current). */
struct berth_oci_state {
	char id[BERTH_OCI_ID_MAX + 1];
	enum berth_oci_status status;
	pid_t pid;                    /* the supervisor's; 0 once stopped */
	unsigned long long pid_start; /* its start time (/proc/PID/stat field 22) */
	pid_t sandbox_pid;            /* the sandbox's pid 1 (host pid), 0 before running */
	unsigned long long sandbox_start;
	bool egress;     /* berth.dev/allow-hosts: the sandbox's way out is the broker */
	int exit_status; /* stopped: the container's status, -1 unknown */
	json_t *doc;     /* the whole file (owned): bundle, rootfs, created, owner, annotations, error */
};

/* berth_oci_state_doc - the first state.json of a container (status
 * `created`, the supervisor's pid and start time).  NULL on ENOMEM. */
json_t *berth_oci_state_doc(const char *id, const struct berth_oci_bundle *b, const char *created_at,
			    pid_t pid, unsigned long long start);

/* berth_oci_state_free - release what @s owns. */
void berth_oci_state_free(struct berth_oci_state *s);

/*
 * berth_oci_proc_start - the start time of process @pid (field 22 of
 * /proc/PID/stat, clock ticks since boot).  Returns 0 with *@start set, or
 * -1 (errno ESRCH: no such process).
 */
int berth_oci_proc_start(pid_t pid, unsigned long long *start);

/*
 * berth_oci_alive - whether @pid is the process that started at @start (a
 * pid whose start time differs is another process: the one recorded died).
 */
bool berth_oci_alive(pid_t pid, unsigned long long start);

/*
 * berth_oci_state_write - write @doc as ROOTFD/ID/state.json, atomically
 * (a temporary file and rename(2), never through a link).  Returns 0, or -1
 * with @err filled.
 */
int berth_oci_state_write(int dfd, const json_t *doc, struct berth_error *err);

/*
 * berth_oci_state_read - container @id's state under @rootfd, its status
 * as it is now: a recorded supervisor that is gone (another start time) is
 * `stopped` with pid 0, and what it recorded last is read again (it may
 * have replaced state.json, with the error that ended it, after the file
 * was opened); a directory without state.json is `creating` while
 * a `create` holds its lock, `stopped` after.  Returns 0, or -1 with @err
 * filled: "container `ID` does not exist" (errnum ENOENT), or the read
 * error.
 */
int berth_oci_state_read(int rootfd, const char *id, struct berth_oci_state *s, struct berth_error *err);

/*
 * berth_oci_state_json - the OCI state document of @s (ociVersion, id,
 * status, pid, bundle, rootfs, created, owner, annotations; runc's form).
 * Returns a new object, or NULL (ENOMEM).
 */
json_t *berth_oci_state_json(const struct berth_oci_state *s);

/* ---- lifecycle.c */

struct berth_oci_ctx {
	const char *root; /* --root, or NULL: BERTH_OCI_ROOT_DEFAULT */
	struct berth_oci_log log;
	unsigned force_off; /* BERTH_TEST_FORCE_OFF bits (src/sandbox/sandbox.h) */
};

struct berth_oci_create_opts {
	const char *id;
	const char *bundle;         /* --bundle (default: the working directory) */
	const char *pid_file;       /* --pid-file, or NULL */
	const char *console_socket; /* --console-socket, or NULL */
	bool no_pivot, no_new_keyring;
};

/*
 * berth_oci_create - OCI `create`: claim ROOT/ID, convert the bundle, check
 * the policy with the namespace runtime, fork the container's supervisor
 * and return once the sandbox is built and its command waits for `start`
 * (state `created`); the pid file (when asked) holds the supervisor's pid.
 * Returns 0, or -1 with @err filled and nothing left behind (no state
 * directory, no process).
 */
int berth_oci_create(const struct berth_oci_ctx *c, const struct berth_oci_create_opts *o,
		     struct berth_error *err);

/*
 * berth_oci_start - OCI `start`: let a `created` container's command run and
 * return once it runs (or failed to).  Returns 0, or -1 with @err filled:
 * not created ("cannot start an already running container", "cannot start
 * a container that has stopped"), its supervisor is gone, or the command
 * could not be executed (the supervisor's message).
 */
int berth_oci_start(const struct berth_oci_ctx *c, const char *id, struct berth_error *err);

/* berth_oci_state - OCI `state`: *@out the state document (new reference).
 * Returns 0, or -1 with @err filled (as berth_oci_state_read). */
int berth_oci_state(const struct berth_oci_ctx *c, const char *id, json_t **out, struct berth_error *err);

/*
 * berth_oci_kill - OCI `kill`: send @sig to the container's supervisor,
 * which forwards it to the command (SIGKILL ends the supervisor, and with
 * it the sandbox; SIGSTOP, which cannot be forwarded, and SIGCONT go to
 * every process of the container).  @all: the same (the sandbox's pid 1 takes everything
 * down with it).  Returns 0, or -1 with @err filled: "container not
 * running: `ID` has stopped", or the kill error.
 */
int berth_oci_kill(const struct berth_oci_ctx *c, const char *id, int sig, bool all, struct berth_error *err);

/*
 * berth_oci_delete - OCI `delete`: remove a stopped (or created) container's
 * state; @force kills a running one first and waits until its supervisor
 * and sandbox are gone.  A missing container is an error unless @force.
 * Returns 0, or -1 with @err filled: "container `ID` does not exist",
 * "cannot delete container `ID` that is not stopped: running".
 */
int berth_oci_delete(const struct berth_oci_ctx *c, const char *id, bool force, struct berth_error *err);

/* berth_oci_list - every container's state document, as an array (new
 * reference, sorted by id).  Returns 0, or -1 with @err filled. */
int berth_oci_list(const struct berth_oci_ctx *c, json_t **out, struct berth_error *err);

/*
 * berth_oci_ps - the host pids of container @id's processes, as a JSON
 * array (new reference): its supervisor's first (state's pid, the one the
 * engine knows the task by), then, running, the sandbox's pid 1 and every
 * descendant, ascending.  A stopped container has none.  Returns 0, or -1 with @err.
 */
int berth_oci_ps(const struct berth_oci_ctx *c, const char *id, json_t **out, struct berth_error *err);

/* ---- exec.c */

struct berth_oci_exec_opts {
	const char *id;
	const char *process;        /* --process: a process.json (config.md's `process`), or NULL */
	char *const *args;          /* without --process: the command (NULL-ended) */
	const char *pid_file;       /* --pid-file, or NULL */
	const char *console_socket; /* --console-socket, or NULL */
	bool detach;                /* --detach */
	bool tty;                   /* --tty (without --process) */
};

/*
 * berth_oci_exec - OCI `exec`: run one more process in running container
 * @o->id, confined as the container's command is (berth_sandbox_enter,
 * src/sandbox/sandbox.h): no capabilities (process.capabilities are not
 * granted, and the log says so), NO_NEW_PRIVS, the container's Landlock
 * rules, cgroups, namespaces and both seccomp filters.  The process's
 * args, env (default: the container's), cwd, user.uid/gid (only the
 * container's own ids are mapped) and terminal are taken from the process
 * file.  With @o->detach the process gets a supervisor of its own that
 * exits with its status (its pid goes to --pid-file: conmon and the shim
 * reap it); without, *@status is the process's (128+N for signal N).
 * Returns 0, or -1 with @err filled: the container is not running, the
 * process file is unreadable or asks what berth does not do
 * (process.selinuxLabel, apparmorProfile, user.additionalGids, unknown
 * keys), a terminal without --console-socket, or berth_sandbox_enter's
 * errors (126/127 when the command cannot be run).
 */
int berth_oci_exec(const struct berth_oci_ctx *c, const struct berth_oci_exec_opts *o, int *status,
		   struct berth_error *err);

/* berth_oci_write_pid_file - @pid in decimal into @path, atomically.
 * Returns 0, or -1 with @err. */
int berth_oci_write_pid_file(const char *path, pid_t pid, struct berth_error *err);

/* ---- supervisor.c (for lifecycle.c and the tests) */

/*
 * berth_oci_send_fd - send @fd over the connected AF_UNIX socket @sock in
 * one message with SCM_RIGHTS (runc's --console-socket protocol: the payload
 * is a name, here "console").  Returns 0, or -1 with @err filled.
 */
int berth_oci_send_fd(int sock, int fd, struct berth_error *err);

/*
 * berth_oci_console_connect - connect to the AF_UNIX stream socket at @path
 * (--console-socket).  Returns the descriptor, or -1 with @err filled.
 */
int berth_oci_console_connect(const char *path, struct berth_error *err);

#endif
