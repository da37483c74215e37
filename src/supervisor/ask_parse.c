/* SPDX-License-Identifier: MIT */
/*
 * ask_parse.c - the pure half of --ask (ask.h): a notification's call,
 * its path against the policy's view, a control request, the denial block.
 * Every input is the sandbox's or a local client's; nothing allocates.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>

#include "../policy/policy.h"
#include "../policy/sysdirs.h"
#include "../util/text.h"
#include "ask.h"
#include "denial.h"

int berth_ask_decode(int nr, const uint64_t args[6], struct berth_ask_call *c)
{
	memset(c, 0, sizeof *c);
	c->dirfd = AT_FDCWD;
#ifdef SYS_open
	if (nr == SYS_open) {
		c->syscall = "open";
		c->path_addr = args[0];
		c->flags = (int)args[1];
		c->mode = (unsigned)args[2];
		return 0;
	}
#endif
#ifdef SYS_creat
	if (nr == SYS_creat) {
		c->syscall = "creat";
		c->path_addr = args[0];
		c->flags = O_CREAT | O_WRONLY | O_TRUNC;
		c->mode = (unsigned)args[1];
		return 0;
	}
#endif
	if (nr == SYS_openat) {
		c->syscall = "openat";
		c->dirfd = (int)args[0];
		c->path_addr = args[1];
		c->flags = (int)args[2];
		c->mode = (unsigned)args[3];
		return 0;
	}
#ifdef SYS_openat2
	if (nr == SYS_openat2) {
		c->syscall = "openat2";
		c->dirfd = (int)args[0];
		c->path_addr = args[1];
		c->how_addr = args[2];
		c->how_size = args[3];
		return 0;
	}
#endif
	return -1;
}

int berth_ask_decode_how(struct berth_ask_call *c, const void *how, size_t len)
{
	struct open_how h;

	if (c->how_size < sizeof h || len < sizeof h)
		return -1;
	memcpy(&h, how, sizeof h);
	c->flags = (int)h.flags;
	c->mode = (unsigned)h.mode;
	c->resolve = h.resolve;
	/* Flags beyond an int's are the kernel's to refuse (EINVAL): such a
	 * call is not held. */
	if ((h.flags >> 32) != 0)
		c->resolve |= 1;
	return 0;
}

/* @path is @dir or below it. */
static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 0 || strncmp(path, dir, n) != 0)
		return false;
	if (n == 1 && dir[0] == '/')
		return true;
	return path[n] == '\0' || path[n] == '/';
}

/* No `.` or `..` component (the sandbox's view and the host's would resolve
 * them differently), and not the root itself. */
static bool plain_components(const char *path)
{
	const char *s = path;

	if (strcmp(path, "/") == 0)
		return false;
	while (*s != '\0') {
		while (*s == '/')
			s++;
		const char *e = strchrnul(s, '/');
		size_t n = (size_t)(e - s);
		if ((n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
			return false;
		s = e;
	}
	return true;
}

/* The sandbox's own trees: what is there is the sandbox's, never a host
 * file of the same name. */
static bool own_tree(const struct berth_policy *p, const char *path)
{
	static const char *const own[] = {"/workspace", "/tmp",      "/home", "/dev",     "/proc",
					  "/sys",       "/evidence", "/app",  "/context", "/run"};

	for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
		if (under(path, own[i]))
			return true;
	if (p->workspace != NULL && p->workspace[0] == '/' && strcmp(p->workspace, "/") != 0 &&
	    under(path, p->workspace))
		return true;
	for (size_t i = 0; i < p->n_mounts; i++)
		if (p->mounts[i].dst != NULL && under(path, p->mounts[i].dst))
			return true;
	return false;
}

static const struct berth_sysdir *system_dir(const char *path)
{
	for (size_t i = 0; i < berth_n_sysdirs; i++) {
		const struct berth_sysdir *s = &berth_sysdirs[i];
		if (s->mount == BERTH_SYSDIR_BIND && under(path, s->path))
			return s;
	}
	return NULL;
}

enum berth_ask_verdict berth_ask_classify(const struct berth_policy *p, const struct berth_ask_call *c,
					  const char *path, size_t len, struct berth_ask_req *out)
{
	const char *nul = memchr(path, '\0', len);
	size_t n;
	bool write;

	char norm[sizeof out->path];

	if (nul == NULL || (n = (size_t)(nul - path)) >= sizeof out->path)
		return BERTH_ASK_PASS; /* the kernel says ENAMETOOLONG or EFAULT */
	/* The kernel reads `//tmp/x` and `/etc//x` as `/tmp/x` and `/etc/x`:
	 * every test below, and the grant, is on that one spelling (else
	 * `//tmp/x` would be no tree of the sandbox's, and a grant would hand
	 * in the host's /tmp/x). */
	n = 0;
	for (const char *q = path; *q != '\0'; q++)
		if (!(q[0] == '/' && q[1] == '/'))
			norm[n++] = *q;
	norm[n] = '\0';
	path = norm;
	if (path[0] != '/' || c->resolve != 0)
		return BERTH_ASK_PASS;
	if (c->flags & (O_PATH | O_DIRECTORY | __O_TMPFILE))
		return BERTH_ASK_PASS;
	if (!plain_components(path) || own_tree(p, path))
		return BERTH_ASK_PASS;
	write = (c->flags & O_ACCMODE) != O_RDONLY || (c->flags & (O_CREAT | O_TRUNC)) != 0;
	const struct berth_sysdir *sd = system_dir(path);
	if (sd != NULL && !write)
		return BERTH_ASK_PASS;
	memset(out, 0, sizeof *out);
	memcpy(out->path, path, n + 1);
	out->syscall = c->syscall;
	out->write = write;
	out->create = (c->flags & O_CREAT) != 0;
	out->flags = c->flags;
	out->mode = c->mode & 07777;
	if (sd != NULL) {
		out->errnum = EROFS; /* a read-only bind */
	} else {
		/* Outside the view: the sandbox's root has no such entry
		 * (ENOENT), and a new one directly under it is refused by the
		 * root's read-only tmpfs (EROFS). */
		const char *slash = strchr(path + 1, '/');
		bool top = slash == NULL || slash[strspn(slash, "/")] == '\0';
		out->errnum = out->create && top ? EROFS : ENOENT;
	}
	return BERTH_ASK_HOLD;
}

/* A decimal id 1..999999999 at *@s, which moves past it. */
static int parse_id(const char **s, const char *end, unsigned *id)
{
	unsigned v = 0;
	int digits = 0;

	while (*s < end && **s >= '0' && **s <= '9') {
		if (digits == 0 && **s == '0')
			return -1;
		if (++digits > 9)
			return -1;
		v = v * 10 + (unsigned)(**s - '0');
		(*s)++;
	}
	if (digits == 0)
		return -1;
	*id = v;
	return 0;
}

static bool word(const char **s, const char *end, const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(end - *s) < n || memcmp(*s, w, n) != 0)
		return false;
	if (*s + n < end && (*s)[n] != ' ')
		return false;
	*s += n;
	return true;
}

int berth_ask_parse_command(const char *line, size_t len, struct berth_ask_cmd *c)
{
	const char *s = line, *end = line + len;

	memset(c, 0, sizeof *c);
	if (len == 0 || len > 64)
		return -1;
	if (end[-1] == '\n')
		end--;
	if (memchr(s, '\n', (size_t)(end - s)) != NULL || memchr(s, '\0', (size_t)(end - s)) != NULL)
		return -1;
	if (word(&s, end, "list"))
		c->op = BERTH_ASK_OP_LIST;
	else if (word(&s, end, "approve"))
		c->op = BERTH_ASK_OP_APPROVE;
	else if (word(&s, end, "deny"))
		c->op = BERTH_ASK_OP_DENY;
	else
		return -1;
	if (c->op == BERTH_ASK_OP_LIST)
		return s == end ? 0 : -1;
	if (s == end || *s != ' ')
		return -1;
	s++;
	if (parse_id(&s, end, &c->id) < 0)
		return -1;
	if (s == end)
		return 0;
	if (*s != ' ')
		return -1;
	s++;
	if (!word(&s, end, "always") || s != end)
		return -1;
	c->always = true;
	return 0;
}

size_t berth_ask_block(char *buf, size_t size, const char *run_id, unsigned id, const struct berth_ask_req *r,
		       int errnum, const char *by, const struct berth_policy *p)
{
	struct berth_denial_fix f;
	char path[BERTH_ASK_PATH_MAX], rule[2 * sizeof f.rule], fix[2 * sizeof f.fix],
	    why[2 * sizeof f.none_why];
	char msg[96];
	int n;

	if (size == 0)
		return 0;
	berth_denial_explain_path(p, r->path, r->write, &f);
	/* the path is the sandbox's: every line that names it is cleaned */
	berth_text_clean(path, sizeof path, r->path);
	berth_text_clean(rule, sizeof rule, f.rule);
	berth_text_clean(fix, sizeof fix, f.fix);
	berth_text_clean(why, sizeof why, f.none_why);
	snprintf(msg, sizeof msg, "%s", strerror(errnum));
	if (msg[0] >= 'A' && msg[0] <= 'Z')
		msg[0] = (char)(msg[0] - 'A' + 'a');
	n = snprintf(buf, size,
		     "BERTH CAPABILITY DENIAL\n"
		     "run: %s   ask: %u (berth run --ask)\n"
		     "denied: %s(2) on %s for %s (%s: %s)\n"
		     "denied-by: %s\n"
		     "rule: %s\n"
		     "fix: %s%s\n",
		     run_id != NULL ? run_id : "?", id, r->syscall != NULL ? r->syscall : "open", path,
		     r->write ? "writing" : "reading",
		     strerrorname_np(errnum) ? strerrorname_np(errnum) : "?", msg,
		     by != NULL ? by : "the policy", rule, fix[0] != '\0' ? fix : "none available — ",
		     fix[0] != '\0' ? "" : why);
	if (n < 0)
		return 0;
	return (size_t)n < size ? (size_t)n : size - 1;
}
