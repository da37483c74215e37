/* SPDX-License-Identifier: MIT */
/*
 * flags.c - `berth run` options.  Pure parsing and path validation: nothing
 * here touches the kernel's namespaces.
 */
#include "flags.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hostpat.h"
#include "../util/text.h"
#include "../util/cleanup.h"
#include "envfile.h"
#include "trust.h"

enum {
	OPT_WORKSPACE = 256,
	OPT_TMP_SIZE,
	OPT_MEMORY,
	OPT_CPUS,
	OPT_PIDS,
	OPT_NOFILE,
	OPT_TIMEOUT,
	OPT_NETWORK,
	OPT_ENV,
	OPT_RO,
	OPT_RW,
	OPT_UNPROTECT,
	OPT_ALLOW_DEGRADED,
	OPT_YES,
	OPT_DRY_RUN,
	OPT_JSON,
	OPT_HELP,
	OPT_ALLOW_HOST,
	OPT_DNS,
	OPT_ENV_FILE,
	OPT_EVIDENCE,
	OPT_FORENSIC,
};

static const struct option run_options[] = {
    {"workspace", required_argument, NULL, OPT_WORKSPACE},
    {"tmp-size", required_argument, NULL, OPT_TMP_SIZE},
    {"memory", required_argument, NULL, OPT_MEMORY},
    {"cpus", required_argument, NULL, OPT_CPUS},
    {"pids", required_argument, NULL, OPT_PIDS},
    {"nofile", required_argument, NULL, OPT_NOFILE},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"network", required_argument, NULL, OPT_NETWORK},
    {"allow-host", required_argument, NULL, OPT_ALLOW_HOST},
    {"dns", required_argument, NULL, OPT_DNS},
    {"env", required_argument, NULL, OPT_ENV},
    {"env-file", required_argument, NULL, OPT_ENV_FILE},
    {"evidence", required_argument, NULL, OPT_EVIDENCE},
    {"forensic", no_argument, NULL, OPT_FORENSIC},
    {"ro", required_argument, NULL, OPT_RO},
    {"rw", required_argument, NULL, OPT_RW},
    {"unprotect", required_argument, NULL, OPT_UNPROTECT},
    {"allow-degraded", no_argument, NULL, OPT_ALLOW_DEGRADED},
    {"yes", no_argument, NULL, OPT_YES},
    {"dry-run", no_argument, NULL, OPT_DRY_RUN},
    {"json", no_argument, NULL, OPT_JSON},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

/* --allow-host PATTERN: validated with the broker's own grammar and kept in
 * its canonical spelling (docs/egress.md). */
static int add_allow_host(struct berth_policy *p, const char *arg, struct berth_error *err)
{
	struct berth_host_pattern pat;
	char reason[512], canon[300];
	char **v;

	if (berth_host_pattern_parse(arg, &pat, reason, sizeof reason) < 0) {
		char clean[160];
		berth_usage_err(err, "invalid --allow-host `%s`: %s",
				berth_text_clean(clean, sizeof clean, arg), reason);
		return berth_err_hint(
		    err, "write host, *.domain, an IP address or [IPv6], optionally :PORT or :*");
	}
	if (berth_host_pattern_format(&pat, canon, sizeof canon) < 0)
		return berth_err(err, EINVAL, "cannot format --allow-host `%s`", arg);
	for (size_t i = 0; i < p->n_allow_hosts; i++)
		if (strcmp(p->allow_hosts[i], canon) == 0)
			return 0;
	v = realloc(p->allow_hosts, (p->n_allow_hosts + 1) * sizeof *v);
	if (v == NULL || (v[p->n_allow_hosts] = strdup(canon)) == NULL) {
		if (v != NULL)
			p->allow_hosts = v;
		return berth_err(err, ENOMEM, "out of memory");
	}
	p->allow_hosts = v;
	p->n_allow_hosts++;
	return 0;
}

/* A preset is a short list: a larger file is not one. */
#define PRESET_MAX_BYTES 65536
#define PRESET_LINE_MAX 511

/* Open @path for reading if it is a regular file (a FIFO, a device such as
 * /dev/zero or a directory would block or never end): the fd, -1 when it
 * does not exist, or -2 with @err filled. */
static int open_preset(const char *path, struct berth_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	struct stat st;

	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return -1;
		berth_err(err, errno, "cannot open the network preset `%s`", path);
		return -2;
	}
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		return fd;
	close(fd);
	berth_usage_err(err, "the network preset `%s` is not a regular file", path);
	berth_err_hint(err, "write one allow-host pattern per line in a regular file");
	return -2;
}

/*
 * A network preset: allow-host patterns, one per line (`#` comments), from
 * $XDG_CONFIG_HOME/berth/network/NAME (the user's override), else the copy
 * shipped with berth: ../data/network/NAME next to the binary (build tree),
 * or ../share/berth/network/NAME (installed).  A regular file of at most
 * PRESET_MAX_BYTES, lines of at most PRESET_LINE_MAX bytes, no NUL byte: a
 * longer line is refused, not cut (the cut-off end of a `#` comment would
 * have been read as a pattern of its own).
 */
static int load_preset(struct berth_policy *p, const char *name, struct berth_error *err)
{
	char path[PATH_MAX], exe[PATH_MAX];
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	cleanup_free char *text = NULL;
	int fd = -1;
	ssize_t n;

	if (xdg != NULL && xdg[0] == '/')
		snprintf(path, sizeof path, "%s/berth/network/%s", xdg, name);
	else if (home != NULL && home[0] == '/')
		snprintf(path, sizeof path, "%s/.config/berth/network/%s", home, name);
	else
		path[0] = '\0';
	if (path[0] != '\0' && (fd = open_preset(path, err)) == -2)
		return -1;
	n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (fd < 0 && n > 0) {
		exe[n] = '\0';
		*strrchr(exe, '/') = '\0';
		snprintf(path, sizeof path, "%s/../data/network/%s", exe, name);
		if ((fd = open_preset(path, err)) == -1) {
			snprintf(path, sizeof path, "%s/../share/berth/network/%s", exe, name);
			fd = open_preset(path, err);
		}
		if (fd == -2)
			return -1;
	}
	if (fd < 0) {
		berth_usage_err(err, "cannot find the network preset `%s`", name);
		return berth_err_hint(
		    err, "write one allow-host pattern per line in $XDG_CONFIG_HOME/berth/network/%s", name);
	}
	size_t len = 0;
	text = malloc(PRESET_MAX_BYTES + 1);
	while (text != NULL && len <= PRESET_MAX_BYTES) {
		ssize_t r = read(fd, text + len, PRESET_MAX_BYTES + 1 - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r < 0) {
				int e = errno;
				close(fd);
				return berth_err(err, e, "cannot read the network preset `%s`", path);
			}
			break;
		}
		len += (size_t)r;
	}
	close(fd);
	if (text == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	if (len > PRESET_MAX_BYTES) {
		berth_usage_err(err, "the network preset `%s` is larger than %d bytes", path,
				PRESET_MAX_BYTES);
		return berth_err_hint(err, "write one allow-host pattern per line");
	}
	text[len] = '\0';
	if (memchr(text, '\0', len) != NULL) {
		berth_usage_err(err, "the network preset `%s` contains a NUL byte: it is not a text file",
				path);
		return berth_err_hint(err, "write one allow-host pattern per line");
	}
	unsigned lineno = 0;
	for (char *s = text; *s != '\0';) {
		char *nl = strchr(s, '\n'), *e;
		size_t ll = nl != NULL ? (size_t)(nl - s) : strlen(s);
		lineno++;
		if (ll > PRESET_LINE_MAX) {
			berth_usage_err(err, "the network preset `%s`, line %u, is longer than %d bytes",
					path, lineno, PRESET_LINE_MAX);
			return berth_err_hint(err, "write one allow-host pattern per line");
		}
		if (nl != NULL)
			*nl = '\0';
		while (*s == ' ' || *s == '\t')
			s++;
		e = s + strcspn(s, "#\r");
		while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		*e = '\0';
		if (*s != '\0' && add_allow_host(p, s, err) < 0)
			return berth_err_wrap(err, "in the network preset `%s`, line %u", path, lineno);
		if (nl == NULL)
			break;
		s = nl + 1;
	}
	return 0;
}

const char *berth_caller_home(void)
{
	struct passwd *pw = getpwuid(getuid());

	return pw != NULL && pw->pw_dir != NULL && pw->pw_dir[0] == '/' ? pw->pw_dir : NULL;
}

/* Is @a equal to @b or an ancestor of it (path-component wise)? */
static bool is_ancestor_or_same(const char *a, const char *b)
{
	size_t n = strlen(a);

	if (strcmp(a, "/") == 0)
		return true;
	return strncmp(a, b, n) == 0 && (b[n] == '\0' || b[n] == '/');
}

__attribute__((format(printf, 2, 3))) static int add_widening(struct berth_run_opts *o, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	/* one that does not fit would be in force without being named, nor
	 * confirmed: the parse refuses the run instead (berth_run_parse) */
	if (o->n_widenings >= (int)BERTH_ARRAY_SIZE(o->widenings) - 1) {
		o->widenings_full = true;
		return 0;
	}
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	o->widenings[o->n_widenings] = strdup(buf);
	if (o->widenings[o->n_widenings] == NULL)
		return -1;
	o->n_widenings++;
	return 0;
}

/* Refuse host paths that would expose everything or the caller's secrets. */
static int check_host_path(const char *what, const char *given, const char *real, struct berth_error *err)
{
	const char *home = berth_caller_home();

	if (strcmp(real, "/") == 0) {
		berth_usage_err(err, "%s `%s` is the host root", what, given);
		return berth_err_hint(err, "name a project directory instead");
	}
	if (home != NULL && is_ancestor_or_same(real, home)) {
		berth_usage_err(err, "%s `%s` would expose your home directory `%s`", what, given, home);
		return berth_err_hint(err, "name a directory inside it, such as a project folder");
	}
	if (is_ancestor_or_same("/proc", real) || is_ancestor_or_same("/sys", real) ||
	    is_ancestor_or_same("/dev", real)) {
		berth_usage_err(err, "%s `%s` is a kernel interface, not a directory of files", what, given);
		return berth_err_hint(err, "name a regular directory");
	}
	return 0;
}

/*
 * A directory shared with other programs and users holds their unix sockets:
 * tmux's (send-keys into a shell), ssh-agent's, emacs and VS Code servers',
 * X11's, D-Bus's.  Landlock does not govern connect(2) to a socket file,
 * and when root runs berth the workspace is idmapped so that the files of
 * its owner, root for /tmp, belong to the sandbox.  A workspace or bind
 * source that is such a directory (sticky and world-writable, like /tmp) or
 * holds one of the runtime directories would hand those sockets over.
 */
static int check_shared_dir(const char *what, const char *given, const char *real, struct berth_error *err)
{
	const char *runtime[] = {"/run", "/var/run", "/var/tmp", "/tmp", "/dev/shm", getenv("XDG_RUNTIME_DIR"), NULL};
	struct stat st;

	if (stat(real, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX) != 0 &&
	    (st.st_mode & S_IWOTH) != 0) {
		berth_usage_err(err, "%s `%s` is a shared directory (sticky, world-writable): the sockets of other "
				     "programs in it (tmux, ssh-agent, X11, editors' servers) would be reachable from "
				     "the sandbox",
				what, given);
		return berth_err_hint(err, "make a directory of its own for the sandbox inside it (`mktemp -d`)");
	}
	for (size_t i = 0; i < sizeof runtime / sizeof runtime[0] - 1; i++) {
		char rt[PATH_MAX];
		if (runtime[i] == NULL || runtime[i][0] != '/' || realpath(runtime[i], rt) == NULL)
			continue;
		if (is_ancestor_or_same(real, rt)) {
			berth_usage_err(err, "%s `%s` would expose `%s`, which holds the sockets of running programs",
					what, given, runtime[i]);
			return berth_err_hint(err, "name a project directory instead");
		}
	}
	return 0;
}

/*
 * A unix socket file inside a --ro/--rw source or the workspace hands the
 * sandbox a connect(2) that Landlock does not govern (a bind mount keeps
 * the socket reachable, read-only or not): docker's or podman's socket is
 * root on the host, the session bus runs any program.  berth refuses the
 * source: a socket the host's network namespace has bound there
 * (/proc/net/unix, whatever its depth, also when bound through a link), and
 * any socket file a bounded walk of the source meets (SOCK_SCAN_MAX entries, SOCK_SCAN_DEPTH levels; it
 * follows no symbolic link), which is also how a socket of a program in
 * another network namespace is found.
 */
#define SOCK_SCAN_MAX 20000
#define SOCK_SCAN_DEPTH 16

/* The first live socket /proc/net/unix lists below @real, into @out. */
static bool bound_socket_below(const char *real, char out[PATH_MAX])
{
	cleanup_fclose FILE *f = fopen("/proc/net/unix", "re");
	char line[PATH_MAX + 128];

	if (f == NULL)
		return false;
	while (fgets(line, sizeof line, f) != NULL) {
		char *path = strchr(line, '/');
		struct stat st;
		if (path == NULL)
			continue;
		path[strcspn(path, "\n")] = '\0';
		/* the path as bound: through a symbolic link (/var/run/x for
		 * /run/x, a link into the source) it names the source only once
		 * resolved */
		char rp[PATH_MAX];
		const char *at = is_ancestor_or_same(real, path)				  ? path
				 : realpath(path, rp) != NULL && is_ancestor_or_same(real, rp) ? rp
												  : NULL;
		if (at != NULL && lstat(at, &st) == 0 && S_ISSOCK(st.st_mode)) {
			snprintf(out, PATH_MAX, "%s", at);
			return true;
		}
	}
	return false;
}

/* Walk directory @dfd (named @path) for a socket file; false when none in
 * the budget @left. */
static bool scan_socket(int dfd, const char *path, int depth, long *left, char out[PATH_MAX])
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	bool found = false;

	if (d == NULL) {
		close(dfd);
		return false;
	}
	while (!found && *left > 0 && (de = readdir(d)) != NULL) {
		struct stat st;
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		(*left)--;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		/* a mode-0000 socket that nothing has bound (an older berth's
		 * guard placeholder): connect(2) to it is refused; a bound one
		 * is in /proc/net/unix */
		if (S_ISSOCK(st.st_mode) && (st.st_mode & 07777) != 0) {
			snprintf(out, PATH_MAX, "%s/%s", strcmp(path, "/") == 0 ? "" : path, de->d_name);
			found = true;
			break;
		}
		if (S_ISDIR(st.st_mode) && depth < SOCK_SCAN_DEPTH) {
			char sub[PATH_MAX];
			if ((size_t)snprintf(sub, sizeof sub, "%s/%s", path, de->d_name) >= sizeof sub)
				continue;
			int fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd >= 0 && scan_socket(fd, sub, depth + 1, left, out))
				found = true;
		}
	}
	closedir(d);
	return found;
}

/*
 * A unix socket at or below @real.  With @found (PATH_MAX bytes; an explicit
 * --ro/--rw source, which the person named) the socket's path is put there
 * for the caller to name as a widening; without it (the workspace, which
 * may be just the current directory) it is a refusal.
 */
static int check_sockets(const char *what, const char *given, const char *real, char *found,
			 struct berth_error *err)
{
	char sock[PATH_MAX];
	struct stat st;
	bool live;

	if (lstat(real, &st) < 0)
		return 0;
	live = bound_socket_below(real, sock);
	if (!live) {
		long left = SOCK_SCAN_MAX;
		int fd;
		if (S_ISSOCK(st.st_mode) && (st.st_mode & 07777) != 0)
			snprintf(sock, sizeof sock, "%s", real);
		else if (!S_ISDIR(st.st_mode) ||
			 (fd = open(real, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
			 !scan_socket(fd, real, 0, &left, sock))
			return 0;
	}
	char clean[PATH_MAX];
	if (found != NULL) {
		snprintf(found, PATH_MAX, "%s", sock);
		return 0;
	}
	berth_usage_err(err, "%s `%s` holds the %sunix socket `%s`: the sandbox could connect to it, and Landlock does "
			     "not govern connect(2) to a socket (a docker or podman socket is root on the host)",
			what, given, live ? "live " : "", berth_text_clean(clean, sizeof clean, sock));
	return berth_err_hint(err, "name a workspace that does not hold it (move the socket out, or remove it if "
				   "no program listens on it); to share a socket on purpose, mount its directory with "
				   "--ro instead: berth names that and asks you to confirm it");
}

/* @given made absolute (from the current directory) with `.` and `..`
 * removed as written, without resolving symbolic links. */
static bool lexical_abs(const char *given, char out[PATH_MAX])
{
	char buf[PATH_MAX], cwd[PATH_MAX];
	size_t n = 0;

	if (given[0] == '/')
		snprintf(buf, sizeof buf, "%s", given);
	else if (getcwd(cwd, sizeof cwd) == NULL ||
		 (size_t)snprintf(buf, sizeof buf, "%s/%s", cwd, given) >= sizeof buf)
		return false;
	out[0] = '\0';
	for (char *save = NULL, *t = strtok_r(buf, "/", &save); t != NULL; t = strtok_r(NULL, "/", &save)) {
		if (strcmp(t, ".") == 0)
			continue;
		if (strcmp(t, "..") == 0) {
			char *slash = strrchr(out, '/');
			n = slash != NULL ? (size_t)(slash - out) : 0;
			out[n] = '\0';
			continue;
		}
		if (n + 1 + strlen(t) >= PATH_MAX)
			return false;
		n += (size_t)sprintf(out + n, "/%s", t);
	}
	if (n == 0)
		snprintf(out, PATH_MAX, "/");
	return true;
}

/*
 * A --ro/--rw source named through the workspace that resolves outside it
 * went through a symbolic link in the workspace, which the sandbox may have
 * made in an earlier run (`vendor -> ~/.ssh`, and the caller later passes
 * `--ro ./vendor`).  Refuse it: the caller names the target itself.
 */
static int check_mount_links(const struct berth_policy *p, struct berth_error *err)
{
	for (size_t i = 0; i < p->n_mounts; i++) {
		const struct berth_mount *m = &p->mounts[i];
		char lex[PATH_MAX];

		if (m->given == NULL || !lexical_abs(m->given, lex))
			continue;
		if (is_ancestor_or_same(p->workspace, lex) && !is_ancestor_or_same(p->workspace, m->src)) {
			berth_usage_err(err, "--%s source `%s` leads out of the workspace, through a symbolic link, to `%s`",
					m->rw ? "rw" : "ro", m->given, m->src);
			return berth_err_hint(err, "a sandbox may have made that link: if `%s` is what you mean, name it "
						   "directly",
					      m->src);
		}
	}
	return 0;
}

/* Canonical absolute sandbox path: no `.`/`..` components, no `//`, no trailing `/`. */
static int check_target(const char *given, const char *dst, struct berth_error *err)
{
	static const char *const reserved[] = {"/proc", "/sys", "/dev", "/workspace", "/tmp", "/home", NULL};

	if (dst[0] != '/' || strstr(dst, "//") != NULL || strstr(dst, "/./") != NULL ||
	    strstr(dst, "/../") != NULL || (strlen(dst) > 1 && dst[strlen(dst) - 1] == '/') ||
	    (strlen(dst) >= 3 && strcmp(dst + strlen(dst) - 3, "/..") == 0) ||
	    (strlen(dst) >= 2 && strcmp(dst + strlen(dst) - 2, "/.") == 0)) {
		berth_usage_err(err, "mount target `%s` in `%s` is not a canonical absolute path", dst,
				given);
		return berth_err_hint(err, "write it as `/path/inside` without `.`, `..` or a trailing `/`");
	}
	/* berth builds the mount point under its own staging root, in PATH_MAX
	 * buffers: a longer target would be cut short (or refused by the kernel
	 * half-way through the set-up, exit 125), so refuse it here. */
	size_t len = strlen(dst), comp = 0;
	for (size_t i = 0; i <= len; i++) {
		unsigned char c = (unsigned char)dst[i];
		if (c != '\0' && (c < 0x20 || c == 0x7f)) {
			berth_usage_err(err, "mount target `%.*s` is followed by the control character 0x%02x",
					(int)i, dst, c);
			return berth_err_hint(err, "name a target without control characters, such as `/data`");
		}
		comp = (c == '/' || c == '\0') ? 0 : comp + 1;
		if (comp > NAME_MAX || len > BERTH_MOUNT_TARGET_MAX) {
			berth_usage_err(err, "mount target `%.64s...` is too long (%zu bytes)", dst, len);
			return berth_err_hint(err, "keep a target under %d bytes and each name in it under %d",
					      BERTH_MOUNT_TARGET_MAX + 1, NAME_MAX + 1);
		}
	}
	if (strcmp(dst, "/") == 0) {
		berth_usage_err(err, "mount target `/` in `%s` would replace the sandbox root", given);
		return berth_err_hint(err, "mount under a directory such as `/data`");
	}
	for (size_t i = 0; reserved[i] != NULL; i++) {
		if (is_ancestor_or_same(reserved[i], dst) && strcmp(reserved[i], "/workspace") != 0) {
			berth_usage_err(err,
					"mount target `%s` in `%s` is under `%s`, which berth builds itself",
					dst, given, reserved[i]);
			return berth_err_hint(err, "choose another target such as `/data`");
		}
		if (is_ancestor_or_same(dst, reserved[i]) ||
		    (strcmp(reserved[i], "/workspace") == 0 && strcmp(dst, "/workspace") == 0)) {
			berth_usage_err(err, "mount target `%s` in `%s` would hide `%s`", dst, given,
					reserved[i]);
			return berth_err_hint(err, "choose a target that is not `/` or a parent of `%s`",
					      reserved[i]);
		}
	}
	return 0;
}

/* @sock: PATH_MAX bytes; set to a unix socket the source holds ("" when none), a widening to name */
static int add_mount(struct berth_policy *p, const char *arg, bool rw, char *sock, struct berth_error *err)
{
	cleanup_free char *src = strdup(arg);
	char *colon;
	const char *dst;
	char real[PATH_MAX];
	struct stat st;
	struct berth_mount *m;

	if (src == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	colon = strchr(src, ':');
	if (colon != NULL)
		*colon = '\0';
	if (src[0] == '\0') {
		berth_usage_err(err, "empty source in `--%s %s`", rw ? "rw" : "ro", arg);
		return berth_err_hint(err, "write `--%s /host/path[:/target]`", rw ? "rw" : "ro");
	}
	if (realpath(src, real) == NULL || stat(real, &st) < 0) {
		int e = errno;
		berth_usage_err(err, "cannot use `--%s %s`: `%s`: %s", rw ? "rw" : "ro", arg, src,
				strerror(e));
		return berth_err_hint(err, "name an existing file or directory");
	}
	if (check_host_path(rw ? "--rw source" : "--ro source", src, real, err) < 0 ||
	    check_shared_dir(rw ? "--rw source" : "--ro source", src, real, err) < 0 ||
	    check_sockets(rw ? "--rw source" : "--ro source", src, real, sock, err) < 0)
		return -1;
	dst = colon != NULL ? colon + 1 : real;
	if (check_target(arg, dst, err) < 0)
		return -1;
	for (size_t i = 0; i < p->n_mounts; i++)
		if (strcmp(p->mounts[i].dst, dst) == 0) {
			/* The later mount would hide the earlier one. */
			berth_usage_err(err, "mount target `%s` is given twice (`%s` and `--%s %s`)", dst,
					p->mounts[i].src, rw ? "rw" : "ro", arg);
			return berth_err_hint(err, "give each --ro/--rw its own target (`SRC:/target`)");
		}
	m = realloc(p->mounts, (p->n_mounts + 1) * sizeof *m);
	if (m == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	p->mounts = m;
	m = &p->mounts[p->n_mounts];
	m->src = strdup(real);
	m->dst = strdup(dst);
	m->rw = rw;
	m->given = strdup(src);
	if (m->src == NULL || m->dst == NULL || m->given == NULL) {
		free(m->src);
		free(m->dst);
		free(m->given);
		return berth_err(err, ENOMEM, "out of memory");
	}
	p->n_mounts++;
	return 0;
}

static bool valid_env_name(const char *s, size_t n)
{
	if (n == 0 || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
			return false;
	}
	return true;
}

/* Set NAME (valid) to @value (taken over) with its origin; a later
 * assignment of NAME replaces an earlier one. */
static int set_env(struct berth_policy *p, char *name, char *value, bool from_host, bool from_file,
		   struct berth_error *err)
{
	struct berth_env *e;

	e = realloc(p->env, (p->n_env + 1) * sizeof *e);
	if (name == NULL || value == NULL || e == NULL) {
		free(name);
		if (value != NULL)
			explicit_bzero(value, strlen(value));
		free(value);
		if (e != NULL)
			p->env = e;
		return berth_err(err, ENOMEM, "out of memory");
	}
	p->env = e;
	for (size_t i = 0; i < p->n_env; i++) {
		if (strcmp(p->env[i].name, name) == 0) {
			free(p->env[i].name);
			explicit_bzero(p->env[i].value, strlen(p->env[i].value));
			free(p->env[i].value);
			p->env[i] = (struct berth_env){name, value, from_host, from_file};
			return 0;
		}
	}
	p->env[p->n_env++] = (struct berth_env){name, value, from_host, from_file};
	return 0;
}

static int add_env(struct berth_policy *p, const char *arg, char *(*env_lookup)(const char *),
		   struct berth_error *err)
{
	const char *eq = strchr(arg, '=');
	size_t n = eq != NULL ? (size_t)(eq - arg) : strlen(arg);
	char *name, *value;

	if (!valid_env_name(arg, n)) {
		/* Never echo a value: only the part before `=`. */
		berth_usage_err(err, "invalid environment variable name `%.*s` in `--env`", (int)(n > 64 ? 64 : n), arg);
		return berth_err_hint(
		    err, "use `--env NAME` or `--env NAME=VALUE` with NAME made of A-Z, a-z, 0-9, _");
	}
	name = strndup(arg, n);
	if (eq != NULL) {
		value = strdup(eq + 1);
	} else {
		const char *v = env_lookup(name);
		if (v == NULL) {
			berth_usage_err(err, "`--env %s`: `%s` is not set in berth's environment", arg, name);
			free(name);
			return berth_err_hint(err, "set it, or give a value with `--env %.*s=VALUE` or `--env-file`",
					      (int)n, arg);
		}
		value = strdup(v);
	}
	return set_env(p, name, value, eq == NULL, false, err);
}

static int envfile_add(void *ctx, const char *name, const char *value, struct berth_error *err)
{
	return set_env(ctx, strdup(name), strdup(value), false, true, err);
}

static int add_unprotect(struct berth_policy *p, const char *arg, struct berth_error *err)
{
	char buf[2];
	const char *g = berth_trust_canonical(arg, false, buf, sizeof buf, err);
	char **v;

	if (g == NULL)
		return -1;
	for (size_t i = 0; i < p->n_unprotect; i++)
		if (strcmp(p->unprotect[i], g) == 0)
			return 0;
	v = realloc(p->unprotect, (p->n_unprotect + 1) * sizeof *v);
	if (v == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	p->unprotect = v;
	p->unprotect[p->n_unprotect] = strdup(g);
	if (p->unprotect[p->n_unprotect] == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	p->n_unprotect++;
	return 0;
}

static int parse_u32(const char *s, const char *what, uint32_t min, uint32_t max, uint32_t *out,
		     struct berth_error *err)
{
	char *end = NULL;
	unsigned long v;

	errno = 0;
	v = s[0] >= '0' && s[0] <= '9' ? strtoul(s, &end, 10) : 0;
	if (end == NULL || *end != '\0' || errno != 0 || v < min || v > max) {
		berth_usage_err(err, "invalid %s `%s`", what, s);
		return berth_err_hint(err, "give a whole number between %u and %u", min, max);
	}
	*out = (uint32_t)v;
	return 0;
}

/* flags.h.  Not refused (an image or chroot under /srv may be what is
 * meant) but a widening, named and confirmed like --rw. */
int berth_run_recheck(const struct berth_run_opts *o, struct berth_error *err)
{
	const struct berth_policy *p = &o->policy;
	size_t n = 1 + p->n_mounts + o->n_evidence;

	for (size_t i = 0; i < n; i++) {
		const char *what, *path, *given;
		char real[PATH_MAX], c1[PATH_MAX], c2[PATH_MAX];
		if (i == 0) {
			what = "the workspace", path = p->workspace, given = p->workspace;
		} else if (i < 1 + p->n_mounts) {
			const struct berth_mount *m = &p->mounts[i - 1];
			what = m->rw ? "the --rw source" : "the --ro source", path = m->src;
			given = m->given != NULL ? m->given : m->src;
		} else {
			what = "the --evidence", path = o->evidence[i - 1 - p->n_mounts];
			given = o->evidence_lex != NULL && o->evidence_lex[i - 1 - p->n_mounts] != NULL
					? o->evidence_lex[i - 1 - p->n_mounts]
					: path;
		}
		if (path == NULL)
			continue;
		if (realpath(path, real) == NULL || strcmp(real, path) != 0) {
			berth_usage_err(err, "%s `%s` changed after berth checked it: `%s` is now %s%s%s", what,
					berth_text_clean(c1, sizeof c1, given), path,
					realpath(path, real) != NULL ? "a symbolic link to `" : "gone",
					realpath(path, real) != NULL ? berth_text_clean(c2, sizeof c2, real) : "",
					realpath(path, real) != NULL ? "`" : "");
			return berth_err_hint(err, "something (a sandbox in the same workspace?) replaced it while berth "
						   "waited: look at it, then run again");
		}
	}
	return 0;
}

int berth_run_system_workspace(struct berth_run_opts *o, struct berth_error *err)
{
	static const char *const sys[] = {"/etc", "/usr", "/var", "/boot", "/opt", "/srv", "/root", "/bin",
					  "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/efi", NULL};
	const char *ws = o->policy.workspace, *home = berth_caller_home();
	char hreal[PATH_MAX];

	if (geteuid() != 0 || ws == NULL)
		return 0;
	/* root's own projects (/root/src/x) are not system files */
	if (home != NULL && realpath(home, hreal) != NULL && strcmp(hreal, "/") != 0 && is_ancestor_or_same(hreal, ws))
		return 0;
	for (size_t i = 0; sys[i] != NULL; i++) {
		char real[PATH_MAX];
		const char *d = realpath(sys[i], real) != NULL ? real : sys[i];
		if (is_ancestor_or_same(sys[i], ws) || is_ancestor_or_same(d, ws)) {
			if (add_widening(o,
					 "workspace `%s`: a system directory (under %s): run as root, the sandbox "
					 "can change the files there that the host runs or trusts",
					 ws, sys[i]) < 0)
				return berth_err(err, ENOMEM, "out of memory");
			if (o->widenings_full) {
				berth_usage_err(err, "more than %d widenings: berth names and confirms each one",
						(int)BERTH_ARRAY_SIZE(o->widenings) - 1);
				return berth_err_hint(err, "give fewer (one --rw of a parent directory covers several)");
			}
			return 0;
		}
	}
	return 0;
}

static int set_workspace(struct berth_policy *p, const char *dir, struct berth_error *err)
{
	char real[PATH_MAX];
	struct stat st;

	if (realpath(dir, real) == NULL || stat(real, &st) < 0) {
		int e = errno;
		berth_usage_err(err, "cannot use workspace `%s`: %s", dir, strerror(e));
		return berth_err_hint(err, "create the directory or pass `--workspace DIR`");
	}
	if (!S_ISDIR(st.st_mode)) {
		berth_usage_err(err, "workspace `%s` is not a directory", dir);
		return berth_err_hint(err, "pass `--workspace DIR` naming a directory");
	}
	if (access(real, R_OK | X_OK) < 0) {
		int e = errno;
		berth_usage_err(err, "cannot use workspace `%s`: %s (uid %u)", dir, strerror(e), (unsigned)getuid());
		return berth_err_hint(err, "pass `--workspace DIR` naming a directory you can read");
	}
	if (check_host_path("workspace", dir, real, err) < 0 || check_shared_dir("workspace", dir, real, err) < 0 ||
	    check_sockets("workspace", dir, real, NULL, err) < 0)
		return -1;
	free(p->workspace);
	p->workspace = strdup(real);
	return p->workspace != NULL ? 0 : berth_err(err, ENOMEM, "out of memory");
}

/* --evidence PATH: checked here (exists, not the host root or home), read
 * and copied by the run (src/supervisor/evidence.c). */
static int add_evidence(struct berth_run_opts *o, const char *arg, struct berth_error *err)
{
	char real[PATH_MAX];
	char **v;

	if (realpath(arg, real) == NULL) {
		int e = errno;
		berth_usage_err(err, "cannot use `--evidence %s`: %s", arg, strerror(e));
		return berth_err_hint(err, "name an existing file or directory");
	}
	if (check_host_path("--evidence", arg, real, err) < 0)
		return -1;
	/* Each appears as /evidence/NAME: two of the same name would collide. */
	for (size_t i = 0; i < o->n_evidence; i++)
		if (strcmp(strrchr(o->evidence[i], '/') + 1, strrchr(real, '/') + 1) == 0) {
			berth_usage_err(err, "evidence name `%s` is given twice (`%s` and `%s`)", strrchr(real, '/') + 1,
					o->evidence[i], real);
			return berth_err_hint(err, "each --evidence appears as /evidence/NAME: copy one of them under "
						   "another name first");
		}
	v = realloc(o->evidence_lex, (o->n_evidence + 1) * sizeof *v);
	if (v == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	o->evidence_lex = v;
	char lex[PATH_MAX];
	o->evidence_lex[o->n_evidence] = lexical_abs(arg, lex) ? strdup(lex) : NULL;
	v = realloc(o->evidence, (o->n_evidence + 1) * sizeof *v);
	if (v == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	o->evidence = v;
	o->evidence[o->n_evidence] = strdup(real);
	if (o->evidence[o->n_evidence] == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	o->n_evidence++;
	return 0;
}

/*
 * --forensic: static triage of untrusted files (docs/security.md).  The
 * evidence is the point, so it must be given; no value from berth's
 * environment or an --env-file reaches the sandbox (a literal --env
 * NAME=VALUE, already on the command line, is no secret and passes); the
 * workspace guard cannot be opted out of; the network is api-only unless
 * the user chose one.
 */
static int apply_forensic(struct berth_run_opts *o, struct berth_error *err)
{
	struct berth_policy *p = &o->policy;

	if (o->n_evidence == 0) {
		berth_usage_err(err, "--forensic needs the files to triage");
		return berth_err_hint(err, "add `--evidence PATH` (a file or a directory; repeatable)");
	}
	for (size_t i = 0; i < p->n_env; i++)
		if (p->env[i].from_host || p->env[i].from_file) {
			berth_usage_err(err, "--forensic runs without secrets, and `%s` comes from %s", p->env[i].name,
					p->env[i].from_file ? "an --env-file" : "berth's environment (`--env NAME`)");
			return berth_err_hint(err, "drop it, give a non-secret value as `--env NAME=VALUE`, or drop "
						   "`--forensic`");
		}
	if (p->n_unprotect > 0) {
		berth_usage_err(err, "--forensic keeps the workspace guard on, and `--unprotect %s` turns part of it off",
				p->unprotect[0]);
		return berth_err_hint(err, "drop `--unprotect`, or drop `--forensic`");
	}
	p->forensic = true;
	if (!o->network_given) {
		p->network = BERTH_NET_PROXY;
		o->network_mode = "api-only";
		if (load_preset(p, "api-only", err) < 0)
			return -1;
	}
	return 0;
}

static bool berth_reads(const char *name, size_t n)
{
	static const char *const own[] = {"HOME", "PATH", "TERM", "LANG", "USER", "LOGNAME", NULL};

	for (size_t i = 0; own[i] != NULL; i++)
		if (strlen(own[i]) == n && strncmp(name, own[i], n) == 0)
			return true;
	return strncmp(name, "LC_", 3) == 0 || strncmp(name, "XDG_", 4) == 0 || strncmp(name, "BERTH_", 6) == 0;
}

void berth_run_scrub(int argc, char **argv, const struct berth_run_opts *o)
{
	extern char **environ;

	for (int i = 1; i < argc; i++) {
		char *v = NULL;
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "--env") == 0 && i + 1 < argc) {
			v = strchr(argv[++i], '=');
		} else if (strncmp(argv[i], "--env=", 6) == 0) {
			v = strchr(argv[i] + 6, '=');
		} else if (i + 1 < argc && argv[i][0] == '-' && argv[i][1] == '-' && strchr(argv[i], '=') == NULL) {
			/* an option with a separate value: skip the value */
			static const char *const with_value[] = {"--workspace", "--tmp-size", "--memory", "--cpus", "--pids",
								 "--nofile", "--timeout", "--network", "--allow-host", "--dns",
								 "--env-file", "--evidence", "--ro", "--rw", "--unprotect", NULL};
			for (size_t k = 0; with_value[k] != NULL; k++)
				if (strcmp(argv[i], with_value[k]) == 0) {
					i++;
					break;
				}
			continue;
		}
		if (v != NULL)
			memset(v + 1, '*', strlen(v + 1));
	}
	for (size_t i = 0; i < o->policy.n_env; i++) {
		const char *name = o->policy.env[i].name;
		size_t n = strlen(name);
		if (!o->policy.env[i].from_host || berth_reads(name, n))
			continue;
		for (char **e = environ; e != NULL && *e != NULL; e++)
			if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
				explicit_bzero(*e + n + 1, strlen(*e + n + 1));
	}
}

static int handle_opt(struct berth_run_opts *o, int c, const char *arg, char *(*env_lookup)(const char *),
		      struct berth_error *err)
{
	struct berth_policy *p = &o->policy;

	switch (c) {
	case OPT_WORKSPACE:
		return set_workspace(p, arg, err);
	case OPT_TMP_SIZE:
		return berth_parse_size(arg, "--tmp-size", &p->tmp_size, err);
	case OPT_MEMORY:
		p->memory_set = true;
		if (berth_parse_size(arg, "--memory", &p->memory, err) < 0)
			return -1;
		/* Below this the sandbox's own start-up (its init, the dynamic
		 * loader of the command) fails: as a SIGSEGV or "the sandbox died
		 * during setup", not a message about --memory. */
		if (p->memory < BERTH_MIN_MEMORY) {
			berth_usage_err(err, "--memory `%s` is less than the %d MiB a sandbox needs to start", arg,
					(int)(BERTH_MIN_MEMORY >> 20));
			return berth_err_hint(err, "give at least `%dM`", (int)(BERTH_MIN_MEMORY >> 20));
		}
		return 0;
	case OPT_CPUS:
		p->cpus_set = true;
		return berth_parse_millicpus(arg, &p->millicpus, err);
	case OPT_PIDS:
		p->pids_set = true;
		/* two: the sandbox's init and the command */
		return parse_u32(arg, "--pids", 2, 4194304, &p->pids, err);
	case OPT_NOFILE:
		return parse_u32(arg, "--nofile", 16, 1048576, &p->nofile, err);
	case OPT_TIMEOUT:
		return berth_parse_duration_ms(arg, "--timeout", &p->timeout_ms, err);
	case OPT_NETWORK:
		o->network_given = true;
		if (strcmp(arg, "none") == 0 || strcmp(arg, "host") == 0 || strcmp(arg, "proxy") == 0 ||
		    strcmp(arg, "api-only") == 0)
			o->network_mode = strcmp(arg, "none") == 0 ? "none"
					  : strcmp(arg, "host") == 0 ? "host"
					  : strcmp(arg, "proxy") == 0 ? "proxy"
								      : "api-only";
		if (strcmp(arg, "none") == 0) {
			p->network = BERTH_NET_NONE;
			return 0;
		}
		if (strcmp(arg, "host") == 0) {
			p->network = BERTH_NET_HOST;
			return add_widening(
			    o,
			    "--network host: the sandbox shares the host's network: it can reach "
			    "every host and port this machine can, including loopback services%s",
			    "");
		}
		if (strcmp(arg, "proxy") == 0) {
			p->network = BERTH_NET_PROXY;
			return 0;
		}
		if (strcmp(arg, "api-only") == 0) {
			p->network = BERTH_NET_PROXY;
			return load_preset(p, arg, err);
		}
		char clean[160];
		berth_usage_err(err, "invalid --network `%s`", berth_text_clean(clean, sizeof clean, arg));
		return berth_err_hint(
		    err, "use `none` (default), `proxy` (with --allow-host), `api-only` or `host`");
	case OPT_ALLOW_HOST:
		o->network_given = true;
		return add_allow_host(p, arg, err);
	case OPT_DNS: {
		/* checked here, not first when the broker starts: --dry-run showed
		 * any text, and a run had written its audit records by then */
		char csv[96], dclean[160];
		struct berth_error de = {0};
		if (berth_dns_server_parse(arg, csv, sizeof csv, &de) < 0) {
			berth_usage_err(err, "invalid --dns `%s`: expected `IP`, `IP:PORT` or `[IPV6]:PORT`",
					berth_text_clean(dclean, sizeof dclean, arg));
			return berth_err_hint(err, "give the DNS server's address, such as `192.0.2.53`, "
						   "`192.0.2.53:5353` or `[2001:db8::53]:53`");
		}
		o->network_given = true;
		free(p->dns);
		p->dns = strdup(arg);
		return p->dns != NULL ? 0 : berth_err(err, ENOMEM, "out of memory");
	}
	case OPT_ENV:
		return add_env(p, arg, env_lookup, err);
	case OPT_ENV_FILE:
		return berth_envfile_load(arg, envfile_add, p, err);
	case OPT_EVIDENCE:
		return add_evidence(o, arg, err);
	case OPT_FORENSIC:
		o->forensic = true;
		return 0;
	case OPT_RO:
	case OPT_RW: {
		char sock[PATH_MAX] = "", sclean[PATH_MAX];
		bool rw = c == OPT_RW;
		if (add_mount(p, arg, rw, sock, err) < 0)
			return -1;
		/* A socket below a source the person named: shared on purpose (the
		 * MCP bridge to `berth dev`), or not; either way named and confirmed. */
		if (sock[0] != '\0' &&
		    add_widening(o, "--%s %s: the sandbox can connect to the unix socket `%s` below it, and Landlock "
				    "does not govern connect(2) to a socket (a docker or podman socket is root on the host)",
				 rw ? "rw" : "ro", arg, berth_text_clean(sclean, sizeof sclean, sock)) < 0)
			return -1;
		if (!rw)
			return 0;
		/* Name the directory the sandbox gets when the path given is not
		 * it: `--rw ./data` where data is a link (a sandbox may have
		 * planted it) to /etc. */
		const char *real = p->mounts[p->n_mounts - 1].src, *colon = strchr(arg, ':');
		size_t gl = colon != NULL ? (size_t)(colon - arg) : strlen(arg);
		if (strlen(real) != gl || strncmp(real, arg, gl) != 0)
			return add_widening(o, "--rw %s: the sandbox can change and delete these host files, in `%s`",
					    arg, real);
		return add_widening(o, "--rw %s: the sandbox can change and delete these host files", arg);
	}
	case OPT_UNPROTECT:
		if (add_unprotect(p, arg, err) < 0)
			return -1;
		return add_widening(
		    o, "--unprotect %s: the sandbox can write a file the host later runs or trusts", arg);
	case OPT_ALLOW_DEGRADED:
		p->allow_degraded = true;
		return add_widening(
		    o,
		    "--allow-degraded: berth runs even when the kernel cannot enforce part of the "
		    "policy%s",
		    "");
	case OPT_YES:
		o->yes = true;
		return 0;
	case OPT_DRY_RUN:
		o->dry_run = true;
		return 0;
	case OPT_JSON:
		o->json = true;
		return 0;
	case OPT_HELP:
		o->help = true;
		return 0;
	default:
		return berth_usage_err(err, "unknown option");
	}
}

int berth_run_parse(int argc, char **argv, char *(*env_lookup)(const char *), struct berth_run_opts *o,
		    struct berth_error *err)
{
	int c;

	memset(o, 0, sizeof *o);
	berth_policy_init(&o->policy);
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:h", run_options, NULL)) != -1) {
		if (c == '?' || c == ':') {
			const char *bad = optind > 0 && optind <= argc ? argv[optind - 1] : "?";
			char clean[160];
			berth_usage_err(err, c == ':' ? "`%s` needs a value" : "unknown option `%s`",
					berth_text_clean(clean, sizeof clean, bad));
			return berth_err_hint(err, "see `berth run --help`");
		}
		if (c == 'h')
			c = OPT_HELP;
		if (handle_opt(o, c, optarg, env_lookup, err) < 0)
			return -1;
	}
	if (o->help)
		return 0;
	if (o->forensic && apply_forensic(o, err) < 0)
		return -1;
	/* --allow-host implies --network proxy; with --network host it means nothing. */
	if (o->policy.n_allow_hosts > 0 || o->policy.dns != NULL) {
		if (o->policy.network == BERTH_NET_HOST) {
			berth_usage_err(
			    err,
			    "--allow-host and --dns need the egress broker, and --network host has none");
			return berth_err_hint(
			    err, "drop `--network host`: --allow-host implies `--network proxy`");
		}
		if (o->network_mode != NULL && strcmp(o->network_mode, "none") == 0) {
			berth_usage_err(err, "--network none and --allow-host/--dns contradict each other: "
					     "--allow-host gives the sandbox the hosts it names");
			return berth_err_hint(err, "drop `--network none` (--allow-host implies `--network proxy`), "
						   "or the --allow-host/--dns");
		}
		o->policy.network = BERTH_NET_PROXY;
		if (o->network_mode == NULL)
			o->network_mode = "proxy";
	}
	if (o->network_mode == NULL)
		o->network_mode = "none";
	/* Through the broker, berth sets the proxy variables itself
	 * (docs/egress.md): a value given with --env would be overridden in
	 * silence, so it is refused. */
	if (o->policy.network == BERTH_NET_PROXY) {
		static const char *const proxy_vars[] = {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"};
		for (size_t i = 0; i < o->policy.n_env; i++)
			for (size_t k = 0; k < sizeof proxy_vars / sizeof proxy_vars[0]; k++)
				if (strcasecmp(o->policy.env[i].name, proxy_vars[k]) == 0) {
					berth_usage_err(err, "`--env %s` cannot be used with the egress broker: berth sets "
							     "the proxy variables to its own listeners",
							o->policy.env[i].name);
					return berth_err_hint(err, "drop `--env %s`; the sandbox reaches only the declared "
								   "hosts, through the broker",
							      o->policy.env[i].name);
				}
	}
	if (o->policy.workspace == NULL && set_workspace(&o->policy, ".", err) < 0)
		return -1;
	if (o->widenings_full) {
		berth_usage_err(err, "more than %d widenings: berth names and confirms each one, and the rest would "
				     "be in force unnamed",
				(int)BERTH_ARRAY_SIZE(o->widenings) - 1);
		return berth_err_hint(err, "give fewer (one --rw of a parent directory covers several)");
	}
	if (check_mount_links(&o->policy, err) < 0)
		return -1;
	/* The same for --evidence: `--evidence ./report.txt`, a link a sandbox
	 * made to ~/.ssh/id_ed25519, copied the key into the sandbox. */
	for (size_t i = 0; i < o->n_evidence; i++) {
		const char *lex = o->evidence_lex != NULL ? o->evidence_lex[i] : NULL;
		if (lex != NULL && is_ancestor_or_same(o->policy.workspace, lex) &&
		    !is_ancestor_or_same(o->policy.workspace, o->evidence[i])) {
			char c1[PATH_MAX], c2[PATH_MAX];
			berth_usage_err(err, "--evidence `%s` leads out of the workspace, through a symbolic link, to `%s`",
					berth_text_clean(c1, sizeof c1, lex), berth_text_clean(c2, sizeof c2, o->evidence[i]));
			return berth_err_hint(err, "a sandbox may have made that link: if `%s` is what you mean, name it "
						   "directly",
					      c2);
		}
	}
	/* berth mounts the evidence at /evidence: nothing else may go there. */
	for (size_t i = 0; o->n_evidence > 0 && i < o->policy.n_mounts; i++)
		if (is_ancestor_or_same("/evidence", o->policy.mounts[i].dst) ||
		    is_ancestor_or_same(o->policy.mounts[i].dst, "/evidence")) {
			berth_usage_err(err, "mount target `%s` collides with /evidence, where --evidence goes",
					o->policy.mounts[i].dst);
			return berth_err_hint(err, "choose another target such as `/data`");
		}
	if (optind >= argc) {
		berth_usage_err(err, "no command given");
		return berth_err_hint(err, "write `berth run [OPTIONS] -- COMMAND [ARG...]`");
	}
	o->policy.argc = (size_t)(argc - optind);
	o->policy.argv = calloc(o->policy.argc + 1, sizeof(char *));
	if (o->policy.argv == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	for (size_t i = 0; i < o->policy.argc; i++) {
		o->policy.argv[i] = strdup(argv[optind + (int)i]);
		if (o->policy.argv[i] == NULL)
			return berth_err(err, ENOMEM, "out of memory");
	}
	if (o->policy.argv[0][0] == '\0') {
		berth_usage_err(err, "empty command name");
		return berth_err_hint(err, "write `berth run -- COMMAND [ARG...]`");
	}
	/* Every limit, here and not only in the runtime: --dry-run refuses
	 * what the run refuses, before anything is recorded. */
	return berth_policy_validate(&o->policy, err);
}

void berth_run_opts_free(struct berth_run_opts *o)
{
	for (size_t i = 0; i < o->n_evidence; i++) {
		free(o->evidence[i]);
		if (o->evidence_lex != NULL)
			free(o->evidence_lex[i]);
	}
	free(o->evidence);
	free(o->evidence_lex);
	o->evidence = NULL;
	o->evidence_lex = NULL;
	o->n_evidence = 0;
	berth_policy_free(&o->policy);
	for (int i = 0; i < o->n_widenings; i++)
		free(o->widenings[i]);
	o->n_widenings = 0;
}
