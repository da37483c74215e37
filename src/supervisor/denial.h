/* SPDX-License-Identifier: MIT */
/*
 * denial.h - the kernel's reports of what a sandbox was refused, as berth
 * reads them (docs/denials.md): the Landlock records of the audit subsystem
 * (AUDIT_LANDLOCK_ACCESS 1423, AUDIT_LANDLOCK_DOMAIN 1424) with the SYSCALL
 * record (1300) of the same event, assembled into one struct berth_denial;
 * and the explanation of a denial under the run's policy: the rule that
 * refuses it and the fix (a flag), or "none available" and why.
 * Pure: no I/O, no allocation; every input is untrusted (the paths and
 * names in a record are the sandbox's choice) and every output string is
 * NUL-terminated and cut to its buffer.  Fuzzed by fuzz/fuzz_denial.c.
 */
#ifndef BERTH_SUPERVISOR_DENIAL_H
#define BERTH_SUPERVISOR_DENIAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct berth_policy;

/* Record types (include/uapi/linux/audit.h). */
#define BERTH_AUDIT_SYSCALL 1300
#define BERTH_AUDIT_EOE 1320
#define BERTH_AUDIT_LANDLOCK_ACCESS 1423
#define BERTH_AUDIT_LANDLOCK_DOMAIN 1424

#define BERTH_DENIAL_TEXT 256

/* One refusal, from one audit event. */
struct berth_denial {
	unsigned long long serial; /* the event's serial: audit(SECONDS.MS:SERIAL) */
	uint64_t domain;           /* the Landlock domain that refused (hex in the record) */
	char blockers[128];        /* the kernel's names, comma-separated: "fs.write_file,fs.make_reg" */
	char path
	    [BERTH_DENIAL_TEXT]; /* path=, in the refused process's view (/workspace/...); with name= joined */
	char addr[64];           /* net.*: daddr= (or saddr=) */
	int port;                /* net.*: dest= (or src=); -1 none */
	long opid;               /* scope.signal: the target's pid (host's numbering); 0 none */
	char ocomm[32];          /* its comm */
	bool has_syscall;        /* a SYSCALL record was part of the event */
	int syscall;             /* its number (the record's arch) */
	int errnum;              /* the errno it returned (positive), 0 unknown */
	long pid;                /* the refused process (host's numbering) */
	char exe[BERTH_DENIAL_TEXT]; /* its executable, in the host's view */
	char comm[32];
};

/* A domain record (1424). */
struct berth_denial_domain {
	uint64_t domain;
	bool allocated;              /* status=allocated (else deallocated) */
	long pid;                    /* allocated: the process that called landlock_restrict_self() */
	char exe[BERTH_DENIAL_TEXT]; /* allocated: its executable */
	unsigned long long denials;  /* deallocated: what the domain refused in all, logged or not */
};

/* What one audit event held of interest. */
struct berth_denial_event {
	unsigned long long serial;
	bool has_access, has_domain;
	struct berth_denial d; /* has_access: the first LANDLOCK_ACCESS record, with SYSCALL's fields */
	struct berth_denial_domain dom; /* has_domain */
};

/* Records to events: one event is pending at a time. */
struct berth_denial_asm {
	bool pending;
	struct berth_denial_event ev;
};

/*
 * berth_denial_parse_record - parse the text of one record of @type
 * (@len bytes, not NUL-terminated: a netlink message's payload) into @ev,
 * adding to what @ev holds of the same serial.  Sets *@serial to the
 * record's serial.
 * Returns 1 when the record is one of the types above and well formed,
 * 0 when it is of another type (nothing changed), -1 when it is malformed
 * (no "audit(S.MS:SERIAL): " header, a LANDLOCK_ACCESS record without
 * domain= or blockers=; nothing changed).
 */
int berth_denial_parse_record(int type, const char *text, size_t len, struct berth_denial_event *ev,
			      unsigned long long *serial);

/*
 * berth_denial_feed - add one record to @a.  When it completes an event
 * (its EOE record, or a record of another serial while one is pending),
 * the event is copied into @out.
 * Returns 1 when @out was filled, 0 otherwise (a malformed record is
 * dropped: 0).
 */
int berth_denial_feed(struct berth_denial_asm *a, int type, const char *text, size_t len,
		      struct berth_denial_event *out);

/* berth_denial_flush - the pending event into @out: 1, or 0 when none. */
int berth_denial_flush(struct berth_denial_asm *a, struct berth_denial_event *out);

/* The explanation of one denial. */
struct berth_denial_fix {
	char kind[24];      /* a class for counts: "fs.write", "fs.read", "fs.execute", "fs.device",
			    * "fs.refer", "net.connect", "net.bind", "scope.signal", "scope.unix", "other" */
	char blocker[160];  /* what refused it: "landlock fs.write_file" */
	char rule[320];     /* the policy line it comes from */
	char fix[320];      /* the flag that would allow it; "" when none */
	char none_why[320]; /* with no fix: why none is available */
};

/*
 * berth_denial_explain - which rule of policy @p refuses @d and the fix.
 * Paths in @d are in the sandbox's view (the workspace at /workspace, or
 * at its host path without a mount namespace).  Never fails.
 */
void berth_denial_explain(const struct berth_denial *d, const struct berth_policy *p,
			  struct berth_denial_fix *f);

/*
 * berth_denial_explain_path - the explanation for an access to @path (in
 * the sandbox's view) that was refused, @write for a change (write, create,
 * remove, truncate), else a read: the rule of @p that covers @path (a
 * guarded workspace path, an --ro or --rw bind, a system directory, the
 * private /tmp, or none: outside the view) and the fix.  Also for refusals
 * the kernel does not report (EROFS of a read-only mount, ENOENT of a path
 * outside the view), given the path.  Never fails.
 */
void berth_denial_explain_path(const struct berth_policy *p, const char *path, bool write,
			       struct berth_denial_fix *f);

#endif
