/* SPDX-License-Identifier: MIT */
/*
 * denial.c - audit records to denials, and denials to their rule and fix
 * (denial.h, docs/denials.md).  Record formats: the kernel's
 * security/landlock/audit.c and Documentation/admin-guide/LSM/landlock.rst
 * ("Record types"); values that audit_log_untrustedstring() hex-encoded
 * (a space, a quote or a control byte in them) are decoded.
 */
#include "denial.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../policy/policy.h"
#include "../policy/sysdirs.h"
#include "../policy/trust.h"

/* ---------------------------------------------------------- fields */

/* The value of field @key in @t (@n bytes after the header) into @out
 * (@len), decoding a bare hex string when @untrusted.  Returns true when
 * the field is there. */
static bool field(const char *t, size_t n, const char *key, bool untrusted, char *out, size_t len)
{
	size_t kl = strlen(key), i = 0;

	while (i < n) {
		while (i < n && t[i] == ' ')
			i++;
		size_t k = i;
		while (i < n && t[i] != '=' && t[i] != ' ')
			i++;
		if (i >= n || t[i] != '=') {
			continue;
		}
		bool match = i - k == kl && memcmp(t + k, key, kl) == 0;
		i++; /* '=' */
		size_t v = i, ve;
		bool quoted = i < n && t[i] == '"';
		if (quoted) {
			v = ++i;
			while (i < n && t[i] != '"')
				i++;
			ve = i;
			if (i < n)
				i++;
		} else {
			while (i < n && t[i] != ' ')
				i++;
			ve = i;
		}
		if (!match)
			continue;
		size_t vl = ve - v, o = 0;
		bool hex = !quoted && untrusted && vl > 0 && vl % 2 == 0;
		/* within the value only: @t is not NUL-terminated (fuzz_denial) */
		for (size_t j = 0; hex && j < vl; j++)
			hex = (t[v + j] >= '0' && t[v + j] <= '9') || (t[v + j] >= 'A' && t[v + j] <= 'F');
		if (!quoted && ((vl == 6 && memcmp(t + v, "(null)", 6) == 0) ||
				(vl == 6 && memcmp(t + v, "(none)", 6) == 0)))
			vl = 0;
		if (len == 0)
			return true;
		if (hex) {
			for (size_t j = 0; j + 1 < vl && o + 1 < len; j += 2) {
				char b[3] = {t[v + j], t[v + j + 1], 0};
				char c = (char)strtoul(b, NULL, 16);
				if (c == '\0')
					break;
				out[o++] = c;
			}
		} else {
			for (size_t j = 0; j < vl && o + 1 < len; j++)
				out[o++] = t[v + j];
		}
		out[o] = '\0';
		return true;
	}
	return false;
}

static bool field_num(const char *t, size_t n, const char *key, int base, long long *out)
{
	char b[32], *end;

	if (!field(t, n, key, false, b, sizeof b) || b[0] == '\0')
		return false;
	*out = strtoll(b, &end, base);
	return *end == '\0';
}

static bool field_unum(const char *t, size_t n, const char *key, int base, unsigned long long *out)
{
	char b[32], *end;

	if (!field(t, n, key, false, b, sizeof b) || b[0] == '\0' || b[0] == '-')
		return false;
	*out = strtoull(b, &end, base);
	return *end == '\0';
}

/* "audit(1729738800.268:30): " -> serial 30; the offset of what follows. */
static bool header(const char *t, size_t n, unsigned long long *serial, size_t *off)
{
	size_t i = 0;
	unsigned long long s = 0;
	int digits = 0;

	if (n < 6 || memcmp(t, "audit(", 6) != 0)
		return false;
	i = 6;
	while (i < n && t[i] != ':' && t[i] != ')')
		i++;
	if (i >= n || t[i] != ':')
		return false;
	for (i++; i < n && t[i] >= '0' && t[i] <= '9' && digits < 19; i++, digits++)
		s = s * 10 + (unsigned long long)(t[i] - '0');
	if (digits == 0 || i + 1 >= n || t[i] != ')' || t[i + 1] != ':')
		return false;
	i += 2;
	while (i < n && t[i] == ' ')
		i++;
	*serial = s;
	*off = i;
	return true;
}

/* ---------------------------------------------------------- records */

static int parse_access(const char *t, size_t n, struct berth_denial *d)
{
	char dom[32], name[BERTH_DENIAL_TEXT];
	unsigned long long id;
	long long v;

	if (!field(t, n, "domain", false, dom, sizeof dom) || !field_unum(t, n, "domain", 16, &id) ||
	    !field(t, n, "blockers", false, d->blockers, sizeof d->blockers) || d->blockers[0] == '\0')
		return -1;
	d->domain = id;
	d->port = -1;
	if (field(t, n, "path", true, d->path, sizeof d->path) &&
	    field(t, n, "name", true, name, sizeof name) && name[0] != '\0') {
		size_t l = strlen(d->path);
		snprintf(d->path + l, sizeof d->path - l, "%s%s", l > 0 && d->path[l - 1] == '/' ? "" : "/",
			 name);
	} else if (d->path[0] == '\0' && field(t, n, "name", true, name, sizeof name)) {
		snprintf(d->path, sizeof d->path, "%s", name);
	}
	if (!field(t, n, "daddr", false, d->addr, sizeof d->addr))
		field(t, n, "saddr", false, d->addr, sizeof d->addr);
	if (field_num(t, n, "dest", 10, &v) || field_num(t, n, "src", 10, &v))
		d->port = v >= 0 && v <= 65535 ? (int)v : -1;
	if (field_num(t, n, "opid", 10, &v))
		d->opid = (long)v;
	field(t, n, "ocomm", true, d->ocomm, sizeof d->ocomm);
	return 1;
}

static int parse_domain(const char *t, size_t n, struct berth_denial_domain *m)
{
	char st[16];
	unsigned long long id;
	long long v;

	if (!field_unum(t, n, "domain", 16, &id) || !field(t, n, "status", false, st, sizeof st))
		return -1;
	*m = (struct berth_denial_domain){.domain = id, .allocated = strcmp(st, "allocated") == 0};
	if (m->allocated) {
		if (!field_num(t, n, "pid", 10, &v))
			return -1;
		m->pid = (long)v;
		field(t, n, "exe", true, m->exe, sizeof m->exe);
	} else {
		field_unum(t, n, "denials", 10, &m->denials);
	}
	return 1;
}

static void parse_syscall(const char *t, size_t n, struct berth_denial *d)
{
	long long v;

	d->has_syscall = true;
	if (field_num(t, n, "syscall", 10, &v))
		d->syscall = (int)v;
	if (field_num(t, n, "exit", 10, &v) && v < 0 && v > -4096)
		d->errnum = (int)-v;
	if (field_num(t, n, "pid", 10, &v))
		d->pid = (long)v;
	field(t, n, "exe", true, d->exe, sizeof d->exe);
	field(t, n, "comm", true, d->comm, sizeof d->comm);
}

int berth_denial_parse_record(int type, const char *text, size_t len, struct berth_denial_event *ev,
			      unsigned long long *serial)
{
	size_t off;

	if (type != BERTH_AUDIT_SYSCALL && type != BERTH_AUDIT_EOE && type != BERTH_AUDIT_LANDLOCK_ACCESS &&
	    type != BERTH_AUDIT_LANDLOCK_DOMAIN)
		return 0;
	if (text == NULL || !header(text, len, serial, &off))
		return -1;
	const char *t = text + off;
	size_t n = len - off;
	if (type == BERTH_AUDIT_LANDLOCK_ACCESS) {
		struct berth_denial d = {0};
		if (parse_access(t, n, &d) < 0)
			return -1;
		if (!ev->has_access) {
			/* A SYSCALL record before it (none in today's order) is kept. */
			d.has_syscall = ev->d.has_syscall;
			d.syscall = ev->d.syscall;
			d.errnum = ev->d.errnum;
			d.pid = ev->d.pid;
			memcpy(d.exe, ev->d.exe, sizeof d.exe);
			memcpy(d.comm, ev->d.comm, sizeof d.comm);
			d.serial = *serial;
			ev->d = d;
			ev->has_access = true;
		}
	} else if (type == BERTH_AUDIT_LANDLOCK_DOMAIN) {
		struct berth_denial_domain m;
		if (parse_domain(t, n, &m) < 0)
			return -1;
		ev->dom = m;
		ev->has_domain = true;
	} else if (type == BERTH_AUDIT_SYSCALL) {
		parse_syscall(t, n, &ev->d);
	}
	ev->serial = *serial;
	return 1;
}

int berth_denial_flush(struct berth_denial_asm *a, struct berth_denial_event *out)
{
	if (!a->pending)
		return 0;
	*out = a->ev;
	a->pending = false;
	return out->has_access || out->has_domain;
}

int berth_denial_feed(struct berth_denial_asm *a, int type, const char *text, size_t len,
		      struct berth_denial_event *out)
{
	struct berth_denial_event tmp = {0};
	unsigned long long serial = 0;
	size_t off;
	int got = 0;

	if (type != BERTH_AUDIT_SYSCALL && type != BERTH_AUDIT_EOE && type != BERTH_AUDIT_LANDLOCK_ACCESS &&
	    type != BERTH_AUDIT_LANDLOCK_DOMAIN)
		return 0;
	if (text == NULL || !header(text, len, &serial, &off))
		return 0;
	if (a->pending && a->ev.serial != serial)
		got = berth_denial_flush(a, out);
	if (!a->pending) {
		a->ev = tmp;
		a->ev.serial = serial;
		a->pending = true;
	}
	if (berth_denial_parse_record(type, text, len, &a->ev, &serial) < 0)
		return got;
	/* A domain's deallocation is an event of its own (from a work queue:
	 * no syscall, no EOE). */
	if (type == BERTH_AUDIT_EOE || (type == BERTH_AUDIT_LANDLOCK_DOMAIN && a->ev.has_domain &&
					!a->ev.dom.allocated && !a->ev.has_access)) {
		/* Only one event can be returned at a time: a pending event of
		 * another serial was returned above, this one waits. */
		if (got)
			return got;
		return berth_denial_flush(a, out);
	}
	return got;
}

/* ---------------------------------------------------------- explanation */

static bool has_blocker(const char *list, const char *b)
{
	size_t n = strlen(b);

	for (const char *p = list; p != NULL && *p != '\0';) {
		if (strncmp(p, b, n) == 0 && (p[n] == ',' || p[n] == '\0'))
			return true;
		p = strchr(p, ',');
		if (p != NULL)
			p++;
	}
	return false;
}

static bool any_blocker(const char *list, const char *const *names)
{
	for (; *names != NULL; names++)
		if (has_blocker(list, *names))
			return true;
	return false;
}

/* Is @path @dir or under it? Sets *@rest to what follows ("" or "a/b"). */
static bool under(const char *path, const char *dir, const char **rest)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (n == 1 && dir[0] == '/') {
		*rest = path[0] == '/' ? path + 1 : path;
		return path[0] == '/';
	}
	if (strncmp(path, dir, n) != 0 || (path[n] != '\0' && path[n] != '/'))
		return false;
	*rest = path[n] == '/' ? path + n + 1 : path + n;
	return true;
}

/* A guarded name on @rel (root-relative): its why, or NULL. */
static const char *guarded(const struct berth_policy *p, const char *rel, char *what, size_t len)
{
	char dir[BERTH_DENIAL_TEXT], name[BERTH_DENIAL_TEXT];
	const char *why = NULL, *cls = NULL;
	size_t dl = 0;

	if (strncmp(rel, ".git/", 5) == 0 || strcmp(rel, ".git") == 0) {
		static const char *const git[] = {".git/hooks",           ".git/config",    ".git/commondir",
						  ".git/config.worktree", ".git/worktrees", NULL};
		for (size_t i = 0; git[i] != NULL; i++) {
			const char *r;
			if (under(rel, git[i], &r) && !berth_trust_git_unprotected(p, git[i])) {
				snprintf(what, len, "%s", git[i]);
				return "git runs or trusts it on the host (the workspace guard)";
			}
		}
		if (strcmp(rel, ".git") == 0) {
			snprintf(what, len, ".git");
			return "the repository is pinned (the workspace guard)";
		}
		return NULL;
	}
	/* Each component, with the directory before it, as the guard walks. */
	dir[0] = '\0';
	for (const char *c = rel; *c != '\0';) {
		const char *e = strchr(c, '/');
		size_t cl = e != NULL ? (size_t)(e - c) : strlen(c);
		if (cl == 0 || cl >= sizeof name)
			break;
		memcpy(name, c, cl);
		name[cl] = '\0';
		if (berth_trust_lookup_path(p, dir, name, &why, &cls) == BERTH_TRUST_READONLY &&
		    why != NULL) {
			snprintf(what, len, "%s%s%s", dir, dir[0] != '\0' ? "/" : "", name);
			return why;
		}
		if (dl + cl + 2 >= sizeof dir)
			break;
		if (dl > 0)
			dir[dl++] = '/';
		memcpy(dir + dl, name, cl + 1);
		dl += cl;
		if (e == NULL)
			break;
		c = e + 1;
	}
	return NULL;
}

static void explain_workspace(const struct berth_policy *p, const char *path, const char *rel, bool write,
			      struct berth_denial_fix *f)
{
	char what[BERTH_DENIAL_TEXT];
	const char *why = guarded(p, rel, what, sizeof what);

	if (write && why != NULL) {
		snprintf(f->rule, sizeof f->rule, "the workspace guard: `%s` is read-only", what);
		snprintf(f->none_why, sizeof f->none_why,
			 "`%s` is a guarded path (%s); only `--unprotect %s`, a widening for the whole run, "
			 "lifts it",
			 path, why, what);
		return;
	}
	snprintf(f->rule, sizeof f->rule, "--workspace %s (read-write at /workspace)",
		 p->workspace != NULL ? p->workspace : ".");
	snprintf(f->none_why, sizeof f->none_why,
		 "the workspace is read-write: `%s` was refused by another rule (the Landlock right named)",
		 path);
}

void berth_denial_explain_path(const struct berth_policy *p, const char *path, bool write,
			       struct berth_denial_fix *f)
{
	const char *rest;

	snprintf(f->kind, sizeof f->kind, "%s", write ? "fs.write" : "fs.read");
	f->fix[0] = f->none_why[0] = f->rule[0] = '\0';
	if (path == NULL || path[0] != '/') {
		snprintf(f->rule, sizeof f->rule, "no path in the record");
		snprintf(f->none_why, sizeof f->none_why, "the kernel named no path");
		return;
	}
	if (under(path, "/workspace", &rest) ||
	    (p->workspace != NULL && p->workspace[0] == '/' && strcmp(p->workspace, "/") != 0 &&
	     under(path, p->workspace, &rest))) {
		explain_workspace(p, path, rest, write, f);
		return;
	}
	/* The last bind that covers it wins, as the mounts are made in order. */
	for (size_t i = p->n_mounts; i-- > 0;) {
		const struct berth_mount *m = &p->mounts[i];
		if (m->dst == NULL || m->tmpfs || !under(path, m->dst, &rest))
			continue;
		const char *src = m->given != NULL ? m->given : m->src != NULL ? m->src : "?";
		if (m->rw) {
			char what[BERTH_DENIAL_TEXT];
			const char *why = guarded(p, rest, what, sizeof what);
			snprintf(f->rule, sizeof f->rule, "--rw %s:%s", src, m->dst);
			if (write && why != NULL)
				snprintf(f->none_why, sizeof f->none_why,
					 "`%s` is a guarded path (%s); only `--unprotect %s` lifts it", path,
					 why, what);
			else
				snprintf(f->none_why, sizeof f->none_why,
					 "the bind is read-write: `%s` was refused by another rule", path);
		} else {
			snprintf(f->rule, sizeof f->rule, "--ro %s:%s (read-only)", src, m->dst);
			if (write)
				snprintf(f->fix, sizeof f->fix, "--rw %s:%s (a widening) instead of --ro",
					 src, m->dst);
			else
				snprintf(f->none_why, sizeof f->none_why,
					 "the bind is readable: `%s` was refused by another rule", path);
		}
		return;
	}
	for (size_t i = 0; i < berth_n_sysdirs; i++) {
		const struct berth_sysdir *s = &berth_sysdirs[i];
		if (strcmp(s->path, "/") == 0 || !under(path, s->path, &rest))
			continue;
		snprintf(f->rule, sizeof f->rule, "the system directory %s (%s)", s->path, s->why);
		if (s->mount == BERTH_SYSDIR_TMPFS)
			snprintf(f->none_why, sizeof f->none_why,
				 "%s is the sandbox's own, read-write: `%s` was refused by another rule",
				 s->path, path);
		else if (write)
			snprintf(
			    f->none_why, sizeof f->none_why,
			    "%s is read-only in every run; write a copy elsewhere (/tmp, the workspace), or "
			    "bind a host directory over it with --rw SRC:%s (a widening)",
			    s->path, path);
		else
			snprintf(f->none_why, sizeof f->none_why,
				 "%s is readable: `%s` was refused by another rule", s->path, path);
		return;
	}
	snprintf(f->rule, sizeof f->rule, "no rule: `%s` is outside the sandbox's view", path);
	snprintf(f->fix, sizeof f->fix, "%s %s (the host path, if that is what was meant)",
		 write ? "--rw" : "--ro", path);
}

static void explain_net(const struct berth_denial *d, const struct berth_policy *p,
			struct berth_denial_fix *f)
{
	char hp[96];

	if (d->port >= 0)
		snprintf(hp, sizeof hp, "%s:%d", d->addr[0] != '\0' ? d->addr : "HOST", d->port);
	else
		snprintf(hp, sizeof hp, "%s", d->addr[0] != '\0' ? d->addr : "HOST:PORT");
	if (has_blocker(d->blockers, "net.bind_tcp")) {
		snprintf(f->kind, sizeof f->kind, "net.bind");
		snprintf(f->rule, sizeof f->rule, "--network %s: no TCP port is bound in the sandbox",
			 berth_network_name(p->network));
		snprintf(f->none_why, sizeof f->none_why,
			 "a sandbox without the host's network binds no TCP port (Landlock); only `--network "
			 "host` (a widening) lifts it");
		return;
	}
	snprintf(f->kind, sizeof f->kind, "net.connect");
	if (strncmp(d->addr, "127.", 4) == 0 || strcmp(d->addr, "::1") == 0) {
		snprintf(f->rule, sizeof f->rule,
			 "--network %s: no TCP connect but to berth's own listeners, on the loopback too",
			 berth_network_name(p->network));
		snprintf(
		    f->none_why, sizeof f->none_why,
		    "TCP on the sandbox's loopback is refused (Landlock); a unix socket or UDP works, or "
		    "`--network host` (a widening)");
		return;
	}
	if (p->network == BERTH_NET_PROXY) {
		snprintf(f->rule, sizeof f->rule,
			 "--network proxy: TCP only to the egress broker's ports, never direct");
		snprintf(f->fix, sizeof f->fix,
			 "--allow-host %s, and connect through the broker (HTTP_PROXY, HTTPS_PROXY and "
			 "ALL_PROXY are set in the sandbox)",
			 hp);
	} else {
		snprintf(f->rule, sizeof f->rule, "--network %s: loopback only, TCP connect refused",
			 berth_network_name(p->network));
		snprintf(f->fix, sizeof f->fix, "--network proxy --allow-host %s", hp);
	}
}

void berth_denial_explain(const struct berth_denial *d, const struct berth_policy *p,
			  struct berth_denial_fix *f)
{
	static const char *const writes[] = {
	    "fs.write_file", "fs.remove_dir", "fs.remove_file", "fs.make_dir", "fs.make_reg",
	    "fs.make_sock",  "fs.make_fifo",  "fs.make_sym",    "fs.truncate", NULL};
	static const char *const reads[] = {"fs.read_file", "fs.read_dir", NULL};
	static const char *const devices[] = {"fs.make_char", "fs.make_block", "fs.ioctl_dev", NULL};

	memset(f, 0, sizeof *f);
	snprintf(f->blocker, sizeof f->blocker, "landlock %s", d->blockers);
	if (strncmp(d->blockers, "net.", 4) == 0) {
		explain_net(d, p, f);
	} else if (any_blocker(d->blockers, devices)) {
		snprintf(f->kind, sizeof f->kind, "fs.device");
		snprintf(f->rule, sizeof f->rule, "no device node is made or driven in any sandbox");
		snprintf(f->none_why, sizeof f->none_why,
			 "device nodes are never made, and ioctl only on /dev's own (every run)");
	} else if (has_blocker(d->blockers, "fs.refer")) {
		snprintf(f->kind, sizeof f->kind, "fs.refer");
		snprintf(f->rule, sizeof f->rule, "a link or rename across two rules (`%s`)", d->path);
		snprintf(f->none_why, sizeof f->none_why,
			 "Landlock refuses a link or rename that would move a file between rules; copy it "
			 "instead");
	} else if (any_blocker(d->blockers, writes) || any_blocker(d->blockers, reads)) {
		berth_denial_explain_path(p, d->path, any_blocker(d->blockers, writes), f);
	} else if (has_blocker(d->blockers, "fs.execute")) {
		berth_denial_explain_path(p, d->path, false, f);
		snprintf(f->kind, sizeof f->kind, "fs.execute");
		if (f->fix[0] == '\0')
			snprintf(f->none_why, sizeof f->none_why, "`%s` is not executable in this policy",
				 d->path);
	} else if (has_blocker(d->blockers, "scope.signal")) {
		snprintf(f->kind, sizeof f->kind, "scope.signal");
		snprintf(f->rule, sizeof f->rule,
			 "signals reach only the sandbox's own processes (Landlock scope; pid %ld `%s` is "
			 "not one)",
			 d->opid, d->ocomm);
		snprintf(f->none_why, sizeof f->none_why,
			 "no flag lets a sandbox signal a process outside it (berth's pid 1 included)");
	} else if (has_blocker(d->blockers, "scope.abstract_unix_socket")) {
		snprintf(f->kind, sizeof f->kind, "scope.unix");
		snprintf(f->rule, sizeof f->rule, "abstract unix sockets reach only the sandbox's own");
		snprintf(f->none_why, sizeof f->none_why,
			 "no flag lets a sandbox connect to an abstract socket outside it");
	} else {
		snprintf(f->kind, sizeof f->kind, "other");
		snprintf(f->rule, sizeof f->rule, "the Landlock ruleset (%s)", d->blockers);
		snprintf(f->none_why, sizeof f->none_why, "berth knows no flag for `%s`", d->blockers);
	}
}
