/* SPDX-License-Identifier: MIT */
/*
 * policy.h - the berth policy: plain data, independent of how it is enforced.
 *
 * A policy says which paths a sandbox may read, write and execute, which
 * network it has, its limits and its environment.  Inputs (command-line
 * flags today, berth.yml and rules files later) produce a policy; runtimes
 * (the namespace runtime in src/sandbox/) consume it.  The policy has one
 * canonical JSON form (berth_policy_to_json) and a SHA-256 digest over that
 * form (berth_policy_digest).
 */
#ifndef BERTH_POLICY_H
#define BERTH_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../util/error.h"

#define BERTH_POLICY_SCHEMA 1

/* Defaults of the default posture (issue #2). */
#define BERTH_DEFAULT_TMP_SIZE (1ULL << 30)    /* bytes, 1 GiB */
#define BERTH_DEFAULT_MEMORY (8ULL << 30)      /* bytes, 8 GiB */
#define BERTH_DEFAULT_REVIEW_SIZE (1ULL << 30) /* bytes, 1 GiB: --review's upper layer */
#define BERTH_DEFAULT_MILLICPUS 4000U          /* 4 CPUs */
#define BERTH_DEFAULT_PIDS 512U
#define BERTH_DEFAULT_NOFILE 8192U
#define BERTH_MIN_MEMORY (16ULL << 20) /* bytes: the least --memory a sandbox starts with */
#define BERTH_MOUNT_TARGET_MAX 1024    /* bytes of a --ro/--rw target (each name NAME_MAX) */

/*
 * Limits of a policy, each defined here once and checked by
 * berth_policy_validate (unless said otherwise) before anything of a run is
 * created, whatever made the policy (flags, berth.yml, a session) and
 * whichever runtime runs it.  The namespace runtime's fixed arrays are sized
 * by them.
 */
#define BERTH_POLICY_MOUNTS_MAX 64      /* --ro/--rw mounts (an app's /app, /context, SDK count too) */
#define BERTH_POLICY_ALLOW_HOSTS_MAX 64 /* allow-host patterns, after duplicates are merged */
#define BERTH_POLICY_PORTS_MAX                                                                               \
	32                                 /* distinct ports the allow-host patterns declare (80 and 443
					  * for a pattern without one; `:*` declares none) */
#define BERTH_POLICY_GRANTS_MAX 64         /* an app's filesystem grants, after merging */
#define BERTH_POLICY_ENV_MAX 255           /* entries of the command's environment (envp, NULL excluded) */
#define BERTH_POLICY_ENV_OWN 4             /* of them always berth's: PATH HOME USER LOGNAME */
#define BERTH_POLICY_ENV_PROXY 8           /* of them berth's under the egress broker: *_PROXY, *_proxy */
#define BERTH_POLICY_ENV_ENTRY_MAX 131072  /* bytes of one NAME=VALUE with its NUL: MAX_ARG_STRLEN */
#define BERTH_POLICY_LANDLOCK_RULES_MAX 96 /* Landlock path rules of one sandbox */
#define BERTH_POLICY_WIDENINGS_MAX                                                                           \
	31 /* widenings named and confirmed (flags.h; checked by the parser,
					  * the policy does not hold them) */
#define BERTH_SYSTEM_PATH "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"

enum berth_network {
	BERTH_NET_NONE = 0, /* new network namespace with only loopback */
	BERTH_NET_HOST,     /* share the host network (a widening) */
	BERTH_NET_PROXY,    /* only loopback, plus berth's egress broker for the allowed hosts */
};

/* An extra bind mount (--ro / --rw). */
struct berth_mount {
	char *src;   /* physical host path, symlinks resolved (realpath) */
	char *dst;   /* absolute path inside the sandbox */
	bool rw;     /* true: read-write (a widening), false: read-only */
	char *given; /* the source as given on the command line, or NULL (not part of the policy) */
	/* A container's tmpfs mount (OCI `type: tmpfs`): @src is NULL, @rw
	 * true, @tmpfs_size its size in bytes (BERTH_DEFAULT_TMP_SIZE when the
	 * bundle gives none); never from flags. */
	bool tmpfs;
	uint64_t tmpfs_size;
	uint32_t tmpfs_mode;   /* its root's mode (mode=, at most 07777); 0: 01777 */
	uint64_t tmpfs_inodes; /* nr_inodes=; 0: the kernel's default */
	bool noexec;           /* a container's mount asked noexec (OCI option) */
};

/* A filesystem grant in the sandbox's view (a resident app's
 * filesystem:read/write capability, docs/manifest.md). */
struct berth_grant {
	char *path; /* absolute, canonical, under /workspace, /context, /tmp or /app */
	bool write; /* read-write (write implies read); false: read-only */
};

/* An environment variable passed in explicitly (--env). */
struct berth_env {
	char *name;
	char *value;    /* value given to the sandbox */
	bool from_host; /* --env NAME: value read from berth's environment */
	bool from_file; /* --env-file: value read from a file (never on a command line) */
};

/* One process rlimit of a container (OCI config.md, process.rlimits). */
struct berth_rlimit {
	int resource;  /* RLIMIT_* (sys/resource.h) */
	uint64_t soft; /* in the resource's unit; RLIM_INFINITY: none */
	uint64_t hard;
};

#define BERTH_CONTAINER_RLIMITS_MAX 16 /* RLIMIT_NLIMITS */

/* A range of ids a container's user namespace maps (OCI linux.uidMappings,
 * one entry): container ids [inside, inside + size) are host ids
 * [host, host + size).  size 0: none. */
struct berth_idrange {
	uint32_t inside, host, size;
};
#define BERTH_CONTAINER_PATHS_MAX 64 /* maskedPaths, readonlyPaths: each */

/*
 * A container (`berth oci`, docs/oci.md): the sandbox's root is an OCI
 * bundle's root filesystem instead of the host's system directories, and
 * the command is the bundle's process.  Made by src/oci from config.json;
 * NULL in every other policy (which keeps its canonical form and digest).
 * What a container asks that berth cannot honour is refused by the
 * converter; what it asks berth enforces here, with berth's own posture on
 * top (no capabilities, NO_NEW_PRIVS, Landlock, berth's seccomp filter).
 */
struct berth_container {
	char *id;     /* the container's id (the engine's name for it) */
	char *root;   /* physical host path of root.path */
	bool root_rw; /* root.readonly is false: the root is writable */
	/* Where the workspace (berth_policy.workspace, the mount annotated
	 * berth.dev/workspace) is mounted in the container; NULL: no workspace
	 * (berth_policy.workspace is NULL too). */
	char *workspace_at;
	char *cwd;         /* process.cwd: absolute, in the container */
	uint32_t uid, gid; /* process.user: the command's ids in the container */
	bool has_umask;
	uint32_t umask; /* process.user.umask */
	char *hostname; /* hostname, or NULL: the runtime's own */
	/* The engine's id ranges (podman --userns=auto, Kubernetes hostUsers:
	 * false: the image's files are owned by host ids in them), invoked by
	 * root only, never covering host id 0, @uid and @gid inside them; size
	 * 0: berth's own single id (BERTH_ROOT_HOST_UID + identity). */
	struct berth_idrange uid_range, gid_range;
	/* process.rlimits, set by the supervisor before the sandbox is made */
	struct berth_rlimit rlimits[BERTH_CONTAINER_RLIMITS_MAX];
	size_t n_rlimits;
	/* linux.maskedPaths: made unreadable (an empty read-only file or
	 * directory over each that exists) */
	char **masked;
	size_t n_masked;
	/* linux.readonlyPaths: bound read-only over themselves */
	char **readonly;
	size_t n_readonly;
	/* linux.seccomp as given (compact JSON), loaded as a second filter
	 * before berth's: a call passes only when both allow it; NULL: none */
	char *seccomp;
	/* linux.namespaces network, ipc and uts path=: the namespaces the
	 * supervisor joins before it makes the sandbox, which then shares them
	 * (a pod's, src/oci/supervisor.c); NULL: the sandbox's own (netns:
	 * network none or proxy).  Never the host's own. */
	char *netns;
	char *ipcns;
	char *utsns;
};

struct berth_credential;

struct berth_policy {
	/* Filesystem */
	char *workspace;            /* physical host path of the workspace */
	struct berth_mount *mounts; /* extra mounts, in order given */
	size_t n_mounts;
	char **unprotect; /* --unprotect: trust names, classes or git paths opted out (trust.h) */
	size_t n_unprotect;
	char **guard_ro; /* rules files' guard.read-only: more names or classes read-only */
	size_t n_guard_ro;
	char **guard_named; /* rules files' guard.named: more names or classes named at exit */
	size_t n_guard_named;

	/* Limits (0 = unlimited is never used for defaults) */
	uint64_t tmp_size;                   /* bytes, size of the /tmp and home tmpfs */
	uint64_t memory;                     /* bytes, memory limit, swap off */
	uint32_t millicpus;                  /* CPU bandwidth in 1/1000 CPU */
	uint32_t pids;                       /* max tasks */
	uint32_t nofile;                     /* RLIMIT_NOFILE */
	uint64_t timeout_ms;                 /* wall-clock timeout, 0 = none */
	bool memory_set, cpus_set, pids_set; /* given explicitly on the command line */

	/* Network */
	enum berth_network network;
	char **allow_hosts; /* BERTH_NET_PROXY: canonical allow-host patterns (docs/egress.md) */
	size_t n_allow_hosts;
	char *dns; /* BERTH_NET_PROXY: the broker's DNS server ("ip[:port]"), or NULL: the host's */
	/* BERTH_NET_PROXY: injected credentials (--credential, credential.h;
	 * docs/credentials.md): bindings only, never a secret's value */
	struct berth_credential *credentials;
	size_t n_credentials;
	/* BERTH_NET_PROXY: --ssh (docs/credentials.md, "--ssh"): the keys the
	 * sandbox's agent lists and signs with (SHA256 fingerprints, sshkey.h),
	 * and the known_hosts lines pinned for the --ssh-host hosts
	 * (`HOST TYPE BASE64`, `[HOST]:PORT TYPE BASE64`) */
	char **ssh_keys;
	size_t n_ssh_keys;
	char **ssh_known_hosts;
	size_t n_ssh_known_hosts;

	/* Environment */
	struct berth_env *env;
	size_t n_env;

	/* A persistent home: this physical host directory is bound read-write
	 * at $HOME instead of a fresh tmpfs (agent sessions' --persist-home,
	 * docs/sessions.md); NULL: the tmpfs.  Idmapped like the workspace when
	 * root runs berth. */
	char *home_dir;
	/* Evidence (--evidence, src/supervisor/evidence.h): the host directory
	 * holding this run's copy, mounted at /evidence read-only, noexec,
	 * nosuid, nodev; NULL: none.  Set by the run, not by the flags: the
	 * canonical JSON records only whether there is evidence. */
	char *evidence_dir;
	bool forensic; /* --forensic (docs/security.md) */
	/* --review (docs/review.md): /workspace is an overlay whose upper
	 * layer is a tmpfs of @review_size bytes; the host's tree is never
	 * written by the run, its changes are kept as a change set in the
	 * run's directory for `berth diff`, `apply` and `discard`. */
	bool review;
	uint64_t review_size; /* bytes; BERTH_DEFAULT_REVIEW_SIZE unless --review-size */

	/* Widening consent */
	bool allow_degraded;

	/* Resident app (berth.yml; src/supervisor/app_policy.c).  When @app is
	 * set, Landlock allows the system directories, /app (read, execute) and
	 * @grants only: /workspace, /tmp and $HOME are reachable only when a
	 * grant names them; there is no workspace guard (the workspace is the
	 * app's own state directory). */
	bool app;
	char *app_name;    /* berth.yml `name` */
	char *app_version; /* berth.yml `version` */
	char *app_digest;  /* "sha256:<hex>" over the app directory (berth_app_digest) */
	struct berth_grant *grants;
	size_t n_grants;

	/* A container's root and process (`berth oci`); NULL otherwise.  With
	 * it the command's environment is @env only (no PATH, HOME, USER,
	 * LOGNAME, TERM, LANG or LC_* of berth's), there is no $HOME tmpfs, and
	 * berth's /tmp tmpfs is made only when the bundle mounts none. */
	struct berth_container *container;

	/* The command */
	char **argv; /* NULL-terminated */
	size_t argc;
};

/*
 * berth_policy_init - fill @p with the default posture (no workspace, no
 * command).  Never fails.
 */
void berth_policy_init(struct berth_policy *p);

/* berth_container_free - release @c and everything it owns.  Safe on NULL. */
void berth_container_free(struct berth_container *c);

/* berth_policy_free - release everything @p owns (its container too); @p
 * may be reused after. */
void berth_policy_free(struct berth_policy *p);

/*
 * berth_network_name - the policy JSON's name of @n: "none", "host" or
 * "proxy" ("none" for a value outside the enum).  Never fails.
 */
const char *berth_network_name(enum berth_network n);

/*
 * berth_policy_to_json - canonical JSON of @p: keys sorted, no whitespace,
 * integers only, values of environment variables replaced by their SHA-256.
 * @pretty: indent for humans (not canonical).
 * Returns a malloc'd NUL-terminated string, or NULL with @err filled (ENOMEM).
 */
char *berth_policy_to_json(const struct berth_policy *p, bool pretty, struct berth_error *err);

/*
 * berth_policy_digest - SHA-256 over the canonical JSON of @p.
 * @hex: receives 64 lowercase hex digits and a NUL.
 * Returns 0, or -1 with @err filled.
 */
int berth_policy_digest(const struct berth_policy *p, char hex[65], struct berth_error *err);

/*
 * berth_policy_from_json - the policy whose canonical JSON is the @len bytes
 * at @json: the inverse of berth_policy_to_json(), for the microVM guest,
 * which must run the very policy the host compiled (docs/vm.md).  Every key
 * berth_policy_to_json() writes is read back, each number through the
 * inverse of its encoder's cast; what it derives from this build's tables
 * (filesystem.system_ro, filesystem.private_tmpfs, the guard's git paths and
 * trust names) must match them.  For every policy P whose out-of-band parts
 * below are then set as in P, berth_policy_to_json() of the result is
 * to_json(P) byte for byte; the caller that must be sure compares the two.
 * The canonical form does not hold, so the result leaves to the caller:
 *   - each env[i].value (NULL; from_host/from_file say where it came from),
 *   - evidence_dir (NULL even when filesystem.evidence is present: the host
 *     directory of the copy),
 *   - container->seccomp (NULL even when container.seccomp_sha256 is set:
 *     the profile's text, whose SHA-256 that is),
 *   - mounts[i].given (NULL), and memory_set, cpus_set, pids_set (false:
 *     whether a limit was given explicitly, which the runtime uses to refuse
 *     rather than degrade when it cannot enforce it).
 * @p is initialised here (berth_policy_init) and owned by the caller
 * (berth_policy_free) on success; on failure it is released again.
 * Returns 0, or -1 with @err filled (status 125, BERTH_EXIT_INTERNAL; ENOMEM
 * when memory runs out), the message naming the JSON path:
 *   "policy JSON: not JSON at line L, column C: WHY" (duplicate keys too)
 *   "policy JSON: `PATH` is not a key of the policy"
 *   "policy JSON: `PATH` is missing"
 *   "policy JSON: `PATH` is not a string|an integer|a boolean|an array|an object"
 *   "policy JSON: `PATH` is out of range", "... is neither `ro` nor `rw`",
 *   "... is none of `none`, `host`, `proxy`", "... is written only as true",
 *   "... differs from this build's", "... is only in proxy mode", ...
 *   "policy JSON: `schema` is not this build's (1)"
 *   "policy JSON: `filesystem.guard` does not list this build's trust names
 *    as the policy treats them"
 */
int berth_policy_from_json(const char *json, size_t len, struct berth_policy *p, struct berth_error *err);

/*
 * berth_policy_validate - check @p against every limit above, so that a
 * policy `--dry-run` prints is one the runtime runs.  Called by
 * berth_run_parse (flags), the dry run, berth_rules_check, berth_app_policy
 * (berth.yml) and the runtime before it creates anything.  Pure: reads @p
 * only.  Returns 0, or -1 with @err filled, exit status 2
 * (BERTH_EXIT_USAGE), the message naming the bad value and the limit:
 *   - "too many --ro/--rw mounts (N, at most 64)"
 *   - "mount target `DST...` is too long (N bytes)"  (more than BERTH_MOUNT_TARGET_MAX)
 *   - "too many --allow-host patterns (N, at most 64)", or for an app
 *     "the app `NAME` declares N `network:host` capabilities, at most 64"
 *   - "invalid allow-host `PATTERN`: REASON"  (the allow-host grammar, hostpat.h)
 *   - "the allow-host patterns declare more than 32 distinct ports", or for
 *     an app "the app's `network:host` capabilities declare more than 32 distinct ports"
 *   - "environment variable `NAME` is N bytes long (NAME=VALUE); the kernel
 *     passes at most 131071 to a command"
 *   - "too many environment variables for the command: N given, and berth
 *     passes at most 255 (4 of them its own[, 8 the egress broker's])"
 *     (the runtime still refuses one more than fits with the host's TERM,
 *     LANG and LC_* it passes on, which the policy does not hold)
 *   - "the app `NAME` declares N filesystem grants, at most 64"
 *   - "the sandbox needs N Landlock rules, at most 96"
 *   - a container's (check_container in validate.c): "a container's root and
 *     working directory must be absolute paths", "a container's workspace
 *     needs both its source and an absolute target", "the container's
 *     hostname `H` is not 1 to 64 bytes", "too many rlimits for a container",
 *     "the container's rlimit N has soft S above hard H, or is unknown", "too
 *     many masked or read-only paths (at most 64 each)", "the masked or
 *     read-only path `P` is not absolute"; and for any other policy "a tmpfs
 *     mount (`DST`) belongs to a container's policy"
 * Each has a hint saying how to fix it (the container's: the bundle's
 * converter, src/oci, refuses them first with the bundle's field names).
 */
int berth_policy_validate(const struct berth_policy *p, struct berth_error *err);

/* The distinct ports a policy's allow-host patterns declare. */
struct berth_policy_ports {
	uint16_t port[BERTH_POLICY_PORTS_MAX]; /* in the order they first appear */
	int n;
	bool any_port; /* a pattern declares every port (`:*`): only the proxies serve it */
};

/*
 * berth_policy_ports - fill @out with the distinct ports @p's allow-host
 * patterns declare (80 and 443 for a pattern without a port): the ports the
 * runtime serves transparently, counted once here for the validator and the
 * runtime alike.  Returns 0, or -1 with @err filled: a usage error (exit 2)
 * for an invalid pattern, or more than BERTH_POLICY_PORTS_MAX distinct
 * ports (the message names the app's `network:host` capabilities when @p is
 * an app's; berth_policy_validate() above).
 */
int berth_policy_ports(const struct berth_policy *p, struct berth_policy_ports *out, struct berth_error *err);

/*
 * The numeric limits of a policy and their ranges (docs/cli-contract.md,
 * "Numeric ranges"; man berth, OPTIONS).  Each is defined once, here, and
 * checked by berth_limit_check (validate.c) for the parsers (flags,
 * berth.yml, rules files) and for berth_policy_validate alike.  Every
 * maximum is far below 2^63, so a value in range survives the canonical
 * JSON (a signed 64-bit integer), cgroup files and rlimits unchanged: no
 * value can wrap into "no limit".  Zero is refused everywhere: a tmpfs
 * takes size=0 as "no limit" (tmpfs(5)), berth writes 0 to a cgroup as
 * "max" (limits_cgroup.c), and RLIMIT_NOFILE 0 leaves no descriptor
 * (--timeout: omit it for none).
 */
#define BERTH_TMP_SIZE_MIN (1ULL << 20)     /* bytes: 1M */
#define BERTH_TMP_SIZE_MAX (1ULL << 50)     /* bytes: 1024T */
#define BERTH_MEMORY_MAX (1ULL << 50)       /* bytes: 1024T (BERTH_MIN_MEMORY is the least) */
#define BERTH_MILLICPUS_MIN 10U             /* 0.01 CPU */
#define BERTH_MILLICPUS_MAX 1024000U        /* 1024 CPUs */
#define BERTH_PIDS_MIN 2U                   /* the sandbox's init and the command */
#define BERTH_PIDS_MAX 4194304U             /* the kernel's PID_MAX_LIMIT */
#define BERTH_NOFILE_MIN 16U                /* the dynamic loader and stdio need a few */
#define BERTH_NOFILE_MAX 1048576U           /* the kernel's default fs.nr_open */
#define BERTH_TIMEOUT_MS_MIN 1ULL           /* 1ms */
#define BERTH_TIMEOUT_MS_MAX 31536000000ULL /* 8760h, a year of 365 days */

/* The numeric limits, in the order of struct berth_limit_defs. */
enum berth_limit {
	BERTH_LIMIT_TMP_SIZE = 0, /* --tmp-size: bytes */
	BERTH_LIMIT_MEMORY,       /* --memory, resources.memory, allow.memory: bytes */
	BERTH_LIMIT_CPUS,         /* --cpus, resources.cpus, allow.cpus: thousandths of a CPU */
	BERTH_LIMIT_PIDS,         /* --pids, resources.pids, allow.pids: tasks */
	BERTH_LIMIT_NOFILE,       /* --nofile: open files */
	BERTH_LIMIT_TIMEOUT,      /* --timeout: milliseconds */
	BERTH_LIMIT_REVIEW_SIZE,  /* --review-size: bytes */
	BERTH_LIMIT_COUNT,
};

/* How a limit is written. */
enum berth_limit_kind {
	BERTH_LIMIT_KIND_SIZE = 0, /* DIGITS[K|M|G|T[iB|B]], powers of 1024, case-insensitive */
	BERTH_LIMIT_KIND_COUNT,    /* DIGITS */
	BERTH_LIMIT_KIND_CPUS,     /* DIGITS[.DIGITS], at most 3 decimals */
	BERTH_LIMIT_KIND_DURATION, /* DIGITS[.DIGITS][ms|s|m|h], default s, a whole number of ms */
};

struct berth_limit_def {
	const char *option; /* "--memory" */
	enum berth_limit_kind kind;
	uint64_t min, max; /* in the stored unit */
	const char *range; /* "16M to 1024T", as the user writes it */
};

/* berth_limit_defs[id] - the definition of each limit (validate.c). */
extern const struct berth_limit_def berth_limit_defs[BERTH_LIMIT_COUNT];

/*
 * berth_limit_check - whether @v (in the stored unit) is in the range of
 * limit @id.  @what names the setting in the message (NULL: the option);
 * @given is the text as written, or NULL to print @v as one would write it
 * (bytes, `2.500` CPUs, `1500ms`).  Returns 0, or -1
 * with @err filled, exit status 2 (BERTH_EXIT_USAGE):
 *   "invalid WHAT `GIVEN`: zero, expected RANGE"
 *   "invalid WHAT `GIVEN`: too small, expected RANGE"  (--memory: "too
 *    small for a sandbox to start")
 *   "invalid WHAT `GIVEN`: too large, expected RANGE"
 * with a hint saying how the value is written.
 */
int berth_limit_check(enum berth_limit id, const char *what, uint64_t v, const char *given,
		      struct berth_error *err);

/*
 * berth_limit_refuse - fill @err with "invalid WHAT `GIVEN`: WHY, expected
 * RANGE" for limit @id (@what NULL: its option) and the hint of its kind.
 * Returns -1 (exit status 2).
 */
int berth_limit_refuse(const char *what, const char *given, const char *why, enum berth_limit id,
		       struct berth_error *err);

/*
 * berth_limit_parse - parse @s as limit @id is written (enum
 * berth_limit_kind: decimal digits only; no sign, whitespace, hex,
 * exponent or junk) and check its range (berth_limit_check).  A value
 * or a suffix product past 2^64 - 1 is "too large" like any other value
 * past the maximum: overflow is detected before it happens.  @what as for
 * berth_limit_check.  Returns 0 and stores the value in @out (the stored
 * unit), or -1 with @err filled (exit status 2): the messages of
 * berth_limit_check, or "invalid WHAT `S`: not a size|not a whole
 * number|not a number of CPUs|not a duration, expected RANGE", or
 * "...: finer than 0.001 CPU|finer than a millisecond, expected RANGE".
 */
int berth_limit_parse(enum berth_limit id, const char *what, const char *s, uint64_t *out,
		      struct berth_error *err);

/*
 * berth_parse_size - parse a byte size: decimal digits with an optional
 * suffix K, M, G, T (powers of 1024, optional trailing "iB" or "B"),
 * 1 to 2^64 - 1 bytes.  Returns 0 and stores the value in @out, or -1
 * with @err naming @what (exit status 2).
 */
int berth_parse_size(const char *s, const char *what, uint64_t *out, struct berth_error *err);

/*
 * berth_parse_duration_ms - parse a duration: decimal digits with an
 * optional fraction and suffix ms, s (default), m, h; a whole number of
 * milliseconds from 1ms to 8760h (BERTH_TIMEOUT_MS_MAX).  Returns 0 or -1
 * with @err naming @what (exit status 2).
 */
int berth_parse_duration_ms(const char *s, const char *what, uint64_t *out, struct berth_error *err);

/*
 * berth_parse_count - parse @s as decimal digits (no sign, blank, hex or
 * junk) from @min to @max, for the numbers of commands that are no policy
 * limit (`berth rpc --timeout`, `berth mcp --timeout`, `berth peek
 * --lines`, berth's environment knobs).  Returns 0 and stores the value in
 * @out, or -1 with @err filled (exit status 2): "invalid WHAT `S`: not a
 * whole number|zero|too small|too large, expected MIN to MAX".
 */
int berth_parse_count(const char *s, const char *what, uint64_t min, uint64_t max, uint64_t *out,
		      struct berth_error *err);

/*
 * berth_parse_millicpus - parse a CPU count ("2", "0.5") into thousandths.
 * Returns 0 or -1 with @err filled (exit status 2).  Accepts 0.01 .. 1024,
 * at most 3 decimals.
 */
int berth_parse_millicpus(const char *s, uint32_t *out, struct berth_error *err);

#endif
