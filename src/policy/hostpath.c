/* SPDX-License-Identifier: MIT */
/*
 * hostpath.c - the host paths `berth run` hands the sandbox: the workspace
 * and the --ro/--rw sources, checked where they are named (not the host
 * root, the caller's home, a kernel interface, a shared directory or one
 * holding the sockets of running programs; no link out of the workspace),
 * the mount targets inside (canonical, not over what berth builds), and
 * rechecked before the sandbox is built (hostpath.h).
 */
#include "hostpath.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/text.h"
#include "flags_int.h"

const char *berth_caller_home(void)
{
	struct passwd *pw = getpwuid(getuid());

	return pw != NULL && pw->pw_dir != NULL && pw->pw_dir[0] == '/' ? pw->pw_dir : NULL;
}

bool berth_path_ancestor_or_same(const char *a, const char *b)
{
	size_t n = strlen(a);

	if (strcmp(a, "/") == 0)
		return true;
	return strncmp(a, b, n) == 0 && (b[n] == '\0' || b[n] == '/');
}

/* Refuse host paths that would expose everything or the caller's secrets. */
int berth_hostpath_check(const char *what, const char *given, const char *real, struct berth_error *err)
{
	const char *home = berth_caller_home();

	if (strcmp(real, "/") == 0) {
		berth_usage_err(err, "%s `%s` is the host root", what, given);
		return berth_err_hint(err, "name a project directory instead");
	}
	if (home != NULL && berth_path_ancestor_or_same(real, home)) {
		berth_usage_err(err, "%s `%s` would expose your home directory `%s`", what, given, home);
		return berth_err_hint(err, "name a directory inside it, such as a project folder");
	}
	if (berth_path_ancestor_or_same("/proc", real) || berth_path_ancestor_or_same("/sys", real) ||
	    berth_path_ancestor_or_same("/dev", real)) {
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
	const char *runtime[] = {
	    "/run", "/var/run", "/var/tmp", "/tmp", "/dev/shm", getenv("XDG_RUNTIME_DIR"), NULL};
	struct stat st;

	if (stat(real, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX) != 0 &&
	    (st.st_mode & S_IWOTH) != 0) {
		berth_usage_err(
		    err,
		    "%s `%s` is a shared directory (sticky, world-writable): the sockets of other "
		    "programs in it (tmux, ssh-agent, X11, editors' servers) would be reachable from "
		    "the sandbox",
		    what, given);
		return berth_err_hint(err,
				      "make a directory of its own for the sandbox inside it (`mktemp -d`)");
	}
	for (size_t i = 0; i < sizeof runtime / sizeof runtime[0] - 1; i++) {
		char rt[PATH_MAX];
		if (runtime[i] == NULL || runtime[i][0] != '/' || realpath(runtime[i], rt) == NULL)
			continue;
		if (berth_path_ancestor_or_same(real, rt)) {
			berth_usage_err(
			    err, "%s `%s` would expose `%s`, which holds the sockets of running programs",
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
		const char *at = berth_path_ancestor_or_same(real, path)                               ? path
				 : realpath(path, rp) != NULL && berth_path_ancestor_or_same(real, rp) ? rp
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
			int fd =
			    openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
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
	berth_usage_err(
	    err,
	    "%s `%s` holds the %sunix socket `%s`: the sandbox could connect to it, and Landlock does "
	    "not govern connect(2) to a socket (a docker or podman socket is root on the host)",
	    what, given, live ? "live " : "", berth_text_clean(clean, sizeof clean, sock));
	return berth_err_hint(
	    err, "name a workspace that does not hold it (move the socket out, or remove it if "
		 "no program listens on it); to share a socket on purpose, mount its directory with "
		 "--ro instead: berth names that and asks you to confirm it");
}

bool berth_path_lexical_abs(const char *given, char out[PATH_MAX])
{
	char buf[PATH_MAX], cwd[PATH_MAX];
	size_t n = 0;

	if (given[0] == '/') {
		if ((size_t)snprintf(buf, sizeof buf, "%s", given) >= sizeof buf)
			return false;
	} else if (getcwd(cwd, sizeof cwd) == NULL ||
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
int berth_hostpath_check_links(const struct berth_policy *p, struct berth_error *err)
{
	for (size_t i = 0; i < p->n_mounts; i++) {
		const struct berth_mount *m = &p->mounts[i];
		char lex[PATH_MAX];

		if (m->given == NULL || !berth_path_lexical_abs(m->given, lex))
			continue;
		if (berth_path_ancestor_or_same(p->workspace, lex) &&
		    !berth_path_ancestor_or_same(p->workspace, m->src)) {
			berth_usage_err(
			    err,
			    "--%s source `%s` leads out of the workspace, through a symbolic link, to `%s`",
			    m->rw ? "rw" : "ro", m->given, m->src);
			return berth_err_hint(
			    err,
			    "a sandbox may have made that link: if `%s` is what you mean, name it "
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
			berth_usage_err(err,
					"mount target `%.*s` is followed by the control character 0x%02x",
					(int)i, dst, c);
			return berth_err_hint(err,
					      "name a target without control characters, such as `/data`");
		}
		comp = (c == '/' || c == '\0') ? 0 : comp + 1;
		if (comp > NAME_MAX || len > BERTH_MOUNT_TARGET_MAX) {
			berth_usage_err(err, "mount target `%.64s...` is too long (%zu bytes)", dst, len);
			return berth_err_hint(err,
					      "keep a target under %d bytes and each name in it under %d",
					      BERTH_MOUNT_TARGET_MAX + 1, NAME_MAX + 1);
		}
	}
	if (strcmp(dst, "/") == 0) {
		berth_usage_err(err, "mount target `/` in `%s` would replace the sandbox root", given);
		return berth_err_hint(err, "mount under a directory such as `/data`");
	}
	for (size_t i = 0; reserved[i] != NULL; i++) {
		if (berth_path_ancestor_or_same(reserved[i], dst) && strcmp(reserved[i], "/workspace") != 0) {
			berth_usage_err(err,
					"mount target `%s` in `%s` is under `%s`, which berth builds itself",
					dst, given, reserved[i]);
			return berth_err_hint(err, "choose another target such as `/data`");
		}
		if (berth_path_ancestor_or_same(dst, reserved[i]) ||
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
int berth_hostpath_add_mount(struct berth_policy *p, const char *arg, bool rw, char *sock,
			     struct berth_error *err)
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
	if (berth_hostpath_check(rw ? "--rw source" : "--ro source", src, real, err) < 0 ||
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
	*m = (struct berth_mount){.rw = rw};
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
			berth_usage_err(err, "%s `%s` changed after berth checked it: `%s` is now %s%s%s",
					what, berth_text_clean(c1, sizeof c1, given), path,
					realpath(path, real) != NULL ? "a symbolic link to `" : "gone",
					realpath(path, real) != NULL ? berth_text_clean(c2, sizeof c2, real)
								     : "",
					realpath(path, real) != NULL ? "`" : "");
			return berth_err_hint(
			    err, "something (a sandbox in the same workspace?) replaced it while berth "
				 "waited: look at it, then run again");
		}
	}
	return 0;
}

int berth_run_system_workspace(struct berth_run_opts *o, struct berth_error *err)
{
	static const char *const sys[] = {"/etc",   "/usr",   "/var",    "/boot", "/opt",
					  "/srv",   "/root",  "/bin",    "/sbin", "/lib",
					  "/lib32", "/lib64", "/libx32", "/efi",  NULL};
	const char *ws = o->policy.workspace, *home = berth_caller_home();
	char hreal[PATH_MAX];

	if (geteuid() != 0 || ws == NULL)
		return 0;
	/* root's own projects (/root/src/x) are not system files */
	if (home != NULL && realpath(home, hreal) != NULL && strcmp(hreal, "/") != 0 &&
	    berth_path_ancestor_or_same(hreal, ws))
		return 0;
	for (size_t i = 0; sys[i] != NULL; i++) {
		char real[PATH_MAX];
		const char *d = realpath(sys[i], real) != NULL ? real : sys[i];
		if (berth_path_ancestor_or_same(sys[i], ws) || berth_path_ancestor_or_same(d, ws)) {
			if (berth_fl_add_widening(
				o,
				"workspace `%s`: a system directory (under %s): run as root, the sandbox "
				"can change the files there that the host runs or trusts",
				ws, sys[i]) < 0)
				return berth_err(err, ENOMEM, "out of memory");
			if (o->widenings_full) {
				berth_usage_err(err,
						"more than %d widenings: berth names and confirms each one",
						(int)BERTH_ARRAY_SIZE(o->widenings) - 1);
				return berth_err_hint(
				    err, "give fewer (one --rw of a parent directory covers several)");
			}
			return 0;
		}
	}
	return 0;
}

int berth_hostpath_set_workspace(struct berth_policy *p, const char *dir, struct berth_error *err)
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
		berth_usage_err(err, "cannot use workspace `%s`: %s (uid %u)", dir, strerror(e),
				(unsigned)getuid());
		return berth_err_hint(err, "pass `--workspace DIR` naming a directory you can read");
	}
	if (berth_hostpath_check("workspace", dir, real, err) < 0 ||
	    check_shared_dir("workspace", dir, real, err) < 0 ||
	    check_sockets("workspace", dir, real, NULL, err) < 0)
		return -1;
	free(p->workspace);
	p->workspace = strdup(real);
	return p->workspace != NULL ? 0 : berth_err(err, ENOMEM, "out of memory");
}
