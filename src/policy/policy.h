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
#define BERTH_DEFAULT_TMP_SIZE (1ULL << 30)   /* bytes, 1 GiB */
#define BERTH_DEFAULT_MEMORY (8ULL << 30)     /* bytes, 8 GiB */
#define BERTH_DEFAULT_MILLICPUS 4000U         /* 4 CPUs */
#define BERTH_DEFAULT_PIDS 512U
#define BERTH_DEFAULT_NOFILE 8192U
#define BERTH_MIN_MEMORY (16ULL << 20)       /* bytes: the least --memory a sandbox starts with */
#define BERTH_MOUNT_TARGET_MAX 1024           /* bytes of a --ro/--rw target (each name NAME_MAX) */
#define BERTH_SYSTEM_PATH "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"

enum berth_network {
	BERTH_NET_NONE = 0, /* new network namespace with only loopback */
	BERTH_NET_HOST,     /* share the host network (a widening) */
	BERTH_NET_PROXY,    /* only loopback, plus berth's egress broker for the allowed hosts */
};

/* An extra bind mount (--ro / --rw). */
struct berth_mount {
	char *src;  /* physical host path, symlinks resolved (realpath) */
	char *dst;  /* absolute path inside the sandbox */
	bool rw;    /* true: read-write (a widening), false: read-only */
	char *given; /* the source as given on the command line, or NULL (not part of the policy) */
};

/* A filesystem grant in the sandbox's view (a resident app's
 * filesystem:read/write capability, docs/manifest.md). */
struct berth_grant {
	char *path;  /* absolute, canonical, under /workspace, /context, /tmp or /app */
	bool write;  /* read-write (write implies read); false: read-only */
};

/* An environment variable passed in explicitly (--env). */
struct berth_env {
	char *name;
	char *value;       /* value given to the sandbox */
	bool from_host;    /* --env NAME: value read from berth's environment */
	bool from_file;    /* --env-file: value read from a file (never on a command line) */
};

struct berth_policy {
	/* Filesystem */
	char *workspace;            /* physical host path of the workspace */
	struct berth_mount *mounts; /* extra mounts, in order given */
	size_t n_mounts;
	char **unprotect;           /* --unprotect: trust names, classes or git paths opted out (trust.h) */
	size_t n_unprotect;
	char **guard_ro;            /* rules files' guard.read-only: more names or classes read-only */
	size_t n_guard_ro;
	char **guard_named;         /* rules files' guard.named: more names or classes named at exit */
	size_t n_guard_named;

	/* Limits (0 = unlimited is never used for defaults) */
	uint64_t tmp_size;     /* bytes, size of the /tmp and home tmpfs */
	uint64_t memory;       /* bytes, memory limit, swap off */
	uint32_t millicpus;    /* CPU bandwidth in 1/1000 CPU */
	uint32_t pids;         /* max tasks */
	uint32_t nofile;       /* RLIMIT_NOFILE */
	uint64_t timeout_ms;   /* wall-clock timeout, 0 = none */
	bool memory_set, cpus_set, pids_set; /* given explicitly on the command line */

	/* Network */
	enum berth_network network;
	char **allow_hosts;    /* BERTH_NET_PROXY: canonical allow-host patterns (docs/egress.md) */
	size_t n_allow_hosts;
	char *dns;             /* BERTH_NET_PROXY: the broker's DNS server ("ip[:port]"), or NULL: the host's */

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

	/* Widening consent */
	bool allow_degraded;

	/* Resident app (berth.yml; src/supervisor/app_policy.c).  When @app is
	 * set, Landlock allows the system directories, /app (read, execute) and
	 * @grants only: /workspace, /tmp and $HOME are reachable only when a
	 * grant names them; there is no workspace guard (the workspace is the
	 * app's own state directory). */
	bool app;
	char *app_name;              /* berth.yml `name` */
	char *app_version;           /* berth.yml `version` */
	char *app_digest;            /* "sha256:<hex>" over the app directory (berth_app_digest) */
	struct berth_grant *grants;
	size_t n_grants;

	/* The command */
	char **argv;           /* NULL-terminated */
	size_t argc;
};


/*
 * berth_policy_init - fill @p with the default posture (no workspace, no
 * command).  Never fails.
 */
void berth_policy_init(struct berth_policy *p);

/* berth_policy_free - release everything @p owns; @p may be reused after. */
void berth_policy_free(struct berth_policy *p);

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
 * berth_parse_size - parse a byte size: a decimal integer with an optional
 * suffix K, M, G, T (powers of 1024, optional trailing "iB" or "B").
 * Returns 0 and stores the value in @out, or -1 with @err naming @what.
 */
int berth_parse_size(const char *s, const char *what, uint64_t *out, struct berth_error *err);

/*
 * berth_parse_duration_ms - parse a duration: integer or decimal with an
 * optional suffix ms, s (default), m, h.  Returns 0 or -1 with @err filled.
 */
int berth_parse_duration_ms(const char *s, const char *what, uint64_t *out, struct berth_error *err);

/*
 * berth_parse_millicpus - parse a CPU count ("2", "0.5") into thousandths.
 * Returns 0 or -1 with @err filled.  Accepts 0.01 .. 1024.
 */
int berth_parse_millicpus(const char *s, uint32_t *out, struct berth_error *err);

#endif
