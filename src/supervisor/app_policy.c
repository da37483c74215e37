/* SPDX-License-Identifier: MIT */

#include "app_policy.h"

#include "../policy/credential.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../policy/hostpat.h"
#include "../util/cleanup.h"
#include "../util/rundir.h"
#include "../util/crash.h"
#include "../util/sha256.h"
#include "../util/sys.h"

int berth_app_state_root(char *buf, size_t len, struct berth_error *err)
{
	if (berth_state_path("apps", buf, len) == 0)
		return 0;
	if (errno == EINVAL)
		return berth_usage_err(
		    err, "cannot place app state: neither XDG_STATE_HOME nor HOME is an absolute path");
	return berth_usage_err(err, "the app state directory path is too long");
}

/* An SDK directory: $@env_name (which must hold @marker: everything in it is
 * mounted into the app), else one of @rel next to the berth binary. */
static int find_sdk(const char *env_name, const char *marker, const char *const rel[2], char *out, size_t len)
{
	const char *env = getenv(env_name);
	char exe[PATH_MAX], cand[PATH_MAX];
	ssize_t n;
	char *slash;
	struct stat st;

	if (env != NULL && env[0] != '\0') {
		snprintf(cand, sizeof cand, "%s/%s", env, marker);
		if (realpath(env, out) == NULL || strlen(out) >= len || stat(cand, &st) < 0 ||
		    !S_ISREG(st.st_mode))
			return -1;
		return 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return -1;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash == NULL)
		return -1;
	*slash = '\0';
	for (size_t i = 0; i < 2; i++) {
		snprintf(cand, sizeof cand, "%s/%s/%s", exe, rel[i], marker);
		if (stat(cand, &st) == 0 && S_ISREG(st.st_mode)) {
			snprintf(cand, sizeof cand, "%s/%s", exe, rel[i]);
			if (realpath(cand, out) != NULL && strlen(out) < len)
				return 0;
		}
	}
	return -1;
}

static int find_sdk_python(char *out, size_t len)
{
	static const char *const rel[2] = {"../sdk/python", "../share/berth/sdk/python"};
	return find_sdk("BERTH_SDK_PYTHON", "berth_app.py", rel, out, len);
}

static int find_sdk_node(char *out, size_t len)
{
	static const char *const rel[2] = {"../sdk/typescript", "../share/berth/sdk/typescript"};
	return find_sdk("BERTH_SDK_NODE", "index.js", rel, out, len);
}

/* The entry must be there (and, native, executable) before anything boots. */
static int check_entry(const char *real_dir, const char *shown_dir, const struct berth_manifest *m,
		       struct berth_error *err)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof path, "%s/%s", real_dir, m->entry);
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode)) {
		berth_usage_err(err, "the entry `%s` of the app `%s` is not a file in `%s`", m->entry,
				m->name, shown_dir);
		return m->runtime == BERTH_RUNTIME_NATIVE
			   ? berth_err_hint(
				 err, "build it first (e.g. `make -C %s`), or fix `entry` in its berth.yml",
				 shown_dir)
			   : berth_err_hint(err, "fix `entry` in its berth.yml");
	}
	if (m->runtime == BERTH_RUNTIME_NATIVE && access(path, X_OK) < 0) {
		berth_usage_err(err, "the entry `%s` of the app `%s` is not executable", m->entry, m->name);
		return berth_err_hint(err, "chmod +x %s/%s", shown_dir, m->entry);
	}
	return 0;
}

/* The state directory belongs to the app directory that made it. */
static int check_origin(const struct berth_app_paths *paths, const char *name, bool dry,
			struct berth_error *err)
{
	char have[4096];
	ssize_t n;
	int fd = open(paths->origin, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd >= 0) {
		n = read(fd, have, sizeof have - 1);
		close(fd);
		have[n > 0 ? n : 0] = '\0';
		if (n > 0 && have[n - 1] == '\n')
			have[n - 1] = '\0';
		if (strcmp(have, paths->app_dir) == 0 || dry)
			return 0;
		/* The state is the name's (the layout): a copy or a moved
		 * app keeps working, but the user hears that two directories
		 * share one app's state. */
		fprintf(stderr,
			"berth: warning: the state of the app `%s` (%s) was made by the app in `%s`; `%s` "
			"declares the "
			"same name and uses it too\n"
			"berth: hint: give one of them another name; remove `%s` to make `%s` the owner\n",
			name, paths->state_dir, have, paths->app_dir, paths->origin, paths->app_dir);
		return 0;
	}
	if (errno != ENOENT)
		return berth_err(err, errno, "cannot read `%s`", paths->origin);
	if (dry)
		return 0;
	struct stat st;
	bool made = lstat(paths->state_dir, &st) < 0 && errno == ENOENT;
	if (berth_mkdirs(paths->state_dir, 0700, err) < 0)
		return -1;
	berth_crash_point("app.state_dir");
	/* Whole or not at all, and only if absent (link(2)): a full disk or a
	 * kill leaves no empty origin (which would make every later call warn),
	 * and of two first boots at once one writes it, the other reads it. */
	char line[PATH_MAX + 2];
	snprintf(line, sizeof line, "%s\n", paths->app_dir);
	int r = berth_write_atomic(paths->origin, line, strlen(line), 0600,
				   BERTH_WRITE_DURABLE | BERTH_WRITE_EXCL, err);
	if (r == 1)
		return check_origin(paths, name, dry, err); /* a concurrent first run */
	if (r < 0) {
		/* Nothing of a first boot that did not happen: the directory
		 * made for it goes too (rmdir: only while empty, so a concurrent
		 * first boot's state stays). */
		if (made)
			rmdir(paths->state_dir);
		return -1;
	}
	berth_crash_point("app.origin");
	return 0;
}

int berth_app_resolve(const char *app_dir, const struct berth_manifest *m, const char *state_root, bool dry,
		      struct berth_app_paths *paths, struct berth_error *err)
{
	char root[PATH_MAX];
	bool context = false;

	memset(paths, 0, sizeof *paths);
	if (realpath(app_dir, paths->app_dir) == NULL)
		return berth_err(err, errno, "cannot resolve the app directory `%s`", app_dir);
	snprintf(paths->manifest, sizeof paths->manifest, "%s%sberth.yml", app_dir,
		 app_dir[strlen(app_dir) - 1] == '/' ? "" : "/");
	if (state_root != NULL)
		snprintf(root, sizeof root, "%s", state_root);
	else if (berth_app_state_root(root, sizeof root, err) < 0)
		return -1;
	if (snprintf(paths->state_dir, sizeof paths->state_dir, "%s/%s", root, m->name) >=
	    (int)sizeof paths->state_dir)
		return berth_usage_err(err, "the app state directory path is too long");
	snprintf(paths->workspace, sizeof paths->workspace, "%s/workspace", paths->state_dir);
	snprintf(paths->context, sizeof paths->context, "%s/context", paths->state_dir);
	snprintf(paths->origin, sizeof paths->origin, "%s/origin", paths->state_dir);
	if (check_origin(paths, m->name, dry, err) < 0)
		return -1;
	if (!dry && berth_mkdirs(paths->workspace, 0700, err) < 0)
		return -1;
	if (!dry)
		berth_crash_point("app.workspace");
	for (size_t i = 0; i < m->n_caps; i++)
		if (m->caps[i].kind != BERTH_CAP_NET_HOST && strncmp(m->caps[i].scope, "/context", 8) == 0)
			context = true;
	if (context && !dry && berth_mkdirs(paths->context, 0700, err) < 0)
		return -1;
	if (check_entry(paths->app_dir, app_dir, m, err) < 0)
		return -1;
	if (m->runtime == BERTH_RUNTIME_PYTHON &&
	    find_sdk_python(paths->sdk_python, sizeof paths->sdk_python) < 0) {
		berth_usage_err(err, "cannot find the berth Python SDK for the python app `%s`", m->name);
		return berth_err_hint(err, "set BERTH_SDK_PYTHON to the directory holding berth_app.py");
	}
	if (m->runtime == BERTH_RUNTIME_NODE && find_sdk_node(paths->sdk_node, sizeof paths->sdk_node) < 0) {
		berth_usage_err(err, "cannot find the berth JavaScript SDK for the node app `%s`", m->name);
		return berth_err_hint(err, "set BERTH_SDK_NODE to the sdk/typescript directory of berth's "
					   "source tree (it holds index.js)");
	}
	return 0;
}

/* ---------------------------------------------------------- digest */

struct entry {
	char *rel;
	char line[256]; /* everything but the path */
};

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->rel, ((const struct entry *)b)->rel);
}

struct walk {
	struct entry *v;
	size_t n, cap;
};

static int hash_fd(int fd, char hex[65], struct berth_error *err)
{
	struct berth_sha256 *c = berth_sha256_new(err);
	char buf[65536];
	ssize_t n;

	if (c == NULL)
		return -1;
	while ((n = read(fd, buf, sizeof buf)) > 0)
		berth_sha256_update(c, buf, (size_t)n);
	if (n < 0) {
		int e = errno;
		berth_sha256_final(c, hex, err);
		return berth_err(err, e, "read");
	}
	return berth_sha256_final(c, hex, err);
}

static int walk_dir(int dfd, const char *prefix, struct walk *w, int depth, struct berth_error *err)
{
	DIR *d;
	struct dirent *e;
	int r = 0;

	if (depth > 64)
		return berth_usage_err(err, "the app directory is nested too deep at `%s`", prefix);
	d = fdopendir(dfd);
	if (d == NULL) {
		close(dfd);
		return berth_err(err, errno, "cannot list `%s`", prefix);
	}
	while (r == 0 && (e = readdir(d)) != NULL) {
		char rel[PATH_MAX], hex[65] = "-";
		struct stat st;
		char type = 'o';

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(rel, sizeof rel, "%s%s%s", prefix, prefix[0] ? "/" : "", e->d_name);
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			r = berth_err(err, errno, "cannot stat `%s` in the app directory", rel);
			break;
		}
		if (S_ISREG(st.st_mode)) {
			int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
			type = 'f';
			if (fd < 0 || hash_fd(fd, hex, err) < 0) {
				if (fd >= 0)
					close(fd);
				r = berth_err(err, fd < 0 ? errno : err->errnum,
					      "cannot read `%s` in the app directory", rel);
				break;
			}
			close(fd);
		} else if (S_ISLNK(st.st_mode)) {
			char target[PATH_MAX];
			ssize_t n = readlinkat(dirfd(d), e->d_name, target, sizeof target - 1);
			type = 'l';
			if (n < 0 || berth_sha256_hex(target, (size_t)n, hex, err) < 0) {
				r = berth_err(err, errno, "cannot read the link `%s` in the app directory",
					      rel);
				break;
			}
		} else if (S_ISDIR(st.st_mode)) {
			type = 'd';
		}
		if (w->n == w->cap) {
			size_t cap = w->cap ? w->cap * 2 : 64;
			struct entry *v = realloc(w->v, cap * sizeof *v);
			if (v == NULL) {
				r = berth_err(err, ENOMEM, "out of memory");
				break;
			}
			w->v = v;
			w->cap = cap;
		}
		w->v[w->n].rel = strdup(rel);
		if (w->v[w->n].rel == NULL) {
			r = berth_err(err, ENOMEM, "out of memory");
			break;
		}
		snprintf(w->v[w->n].line, sizeof w->v[w->n].line, "%c %04o %lld %s ", type,
			 (unsigned)(st.st_mode & 07777),
			 type == 'f' || type == 'l' ? (long long)st.st_size : 0LL, hex);
		w->n++;
		if (type == 'd') {
			int sub =
			    openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
			if (sub < 0)
				r = berth_err(err, errno, "cannot open `%s` in the app directory", rel);
			else
				r = walk_dir(sub, rel, w, depth + 1, err);
		}
	}
	closedir(d);
	return r;
}

int berth_app_digest(const char *app_dir, char hex[65], struct berth_error *err)
{
	struct walk w = {0};
	struct berth_sha256 *c = NULL;
	int fd = open(app_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r = -1;

	if (fd < 0)
		return berth_err(err, errno, "cannot open the app directory `%s`", app_dir);
	if (walk_dir(fd, "", &w, 0, err) < 0)
		goto out;
	qsort(w.v, w.n, sizeof *w.v, cmp_entry);
	c = berth_sha256_new(err);
	if (c == NULL)
		goto out;
	for (size_t i = 0; i < w.n; i++) {
		berth_sha256_update(c, w.v[i].line, strlen(w.v[i].line));
		berth_sha256_update(c, w.v[i].rel, strlen(w.v[i].rel));
		berth_sha256_update(c, "\n", 1);
	}
	r = berth_sha256_final(c, hex, err);
out:
	for (size_t i = 0; i < w.n; i++)
		free(w.v[i].rel);
	free(w.v);
	return r;
}

/* ---------------------------------------------------------- policy */

static unsigned hashed_identity(const char *key)
{
	uint32_t h = 2166136261u; /* FNV-1a, 32 bits */

	for (const unsigned char *p = (const unsigned char *)key; *p != '\0'; p++) {
		h ^= *p;
		h *= 16777619u;
	}
	return 1 + h % (1u << 30);
}

unsigned berth_app_identity(const char *key)
{
	char line[4200];
	unsigned id = 0, max = 0;
	FILE *f;
	int fd;

	if (geteuid() != 0)
		return hashed_identity(key);
	if ((mkdir("/run/berth", 0700) < 0 && errno != EEXIST) ||
	    (fd = open("/run/berth/identities", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)) < 0)
		return hashed_identity(key);
	if (flock(fd, LOCK_EX) < 0 || (f = fdopen(fd, "r+")) == NULL) {
		close(fd);
		return hashed_identity(key);
	}
	while (fgets(line, sizeof line, f) != NULL) {
		unsigned n;
		int off = 0;
		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%u %n", &n, &off) != 1 || off == 0)
			continue;
		if (n > max)
			max = n;
		if (strcmp(line + off, key) == 0)
			id = n;
	}
	if (id == 0) {
		id = max + 1;
		fseek(f, 0, SEEK_END);
		long end = ftell(f);
		/* A line whole or none: on a full /run the torn line is cut off
		 * again (else the next append would join it, and the key would
		 * get a new identity on every call). */
		char last = '\n';
		if (end > 0 && pread(fd, &last, 1, end - 1) != 1)
			last = '\n';
		if (end < 0 || fprintf(f, "%s%u %s\n", last != '\n' ? "\n" : "", id, key) < 0 ||
		    fflush(f) != 0 || fsync(fd) < 0) {
			if (end >= 0 && ftruncate(fd, end) < 0) {
				/* the reader skips what does not parse */
			}
			id = hashed_identity(key);
		}
		berth_crash_point("app.identity");
	}
	fclose(f); /* also releases the lock */
	return id;
}

const char *berth_app_needs_network(const struct berth_manifest *m)
{
	for (size_t i = 0; i < m->n_caps; i++)
		if (m->caps[i].kind == BERTH_CAP_NET_HOST)
			return m->caps[i].scope;
	return NULL;
}

static int add_env_from(struct berth_policy *p, const char *name, const char *value, bool from_host);

static int add_env(struct berth_policy *p, const char *name, const char *value)
{
	return add_env_from(p, name, value, false);
}

/* @from_host: a value from berth's environment (a manifest's `secrets`):
 * the policy names it and nothing more, not even its digest. */
static int add_env_from(struct berth_policy *p, const char *name, const char *value, bool from_host)
{
	struct berth_env *v = realloc(p->env, (p->n_env + 1) * sizeof *v);

	if (v == NULL)
		return -1;
	p->env = v;
	v[p->n_env] = (struct berth_env){strdup(name), strdup(value), from_host, false};
	if (v[p->n_env].name == NULL || v[p->n_env].value == NULL) {
		free(v[p->n_env].name);
		free(v[p->n_env].value);
		return -1;
	}
	p->n_env++;
	return 0;
}

/* @path as the physical path (realpath(3)) when it exists: the sandbox
 * opens its workspace and sources with no link followed
 * (berth_source_open, src/sandbox/mounts.h), so a state root reached
 * through a symbolic link (a symlinked home) must be resolved here. */
static char *physical(const char *path)
{
	char *r = realpath(path, NULL);

	return r != NULL ? r : strdup(path);
}

static int add_mount(struct berth_policy *p, const char *src, const char *dst, bool rw)
{
	struct berth_mount *v = realloc(p->mounts, (p->n_mounts + 1) * sizeof *v);

	if (v == NULL)
		return -1;
	p->mounts = v;
	v[p->n_mounts] = (struct berth_mount){.src = physical(src), .dst = strdup(dst), .rw = rw};
	if (v[p->n_mounts].src == NULL || v[p->n_mounts].dst == NULL) {
		free(v[p->n_mounts].src);
		free(v[p->n_mounts].dst);
		return -1;
	}
	p->n_mounts++;
	return 0;
}

/* A grant, merged: a path named twice keeps the wider access. */
static int add_grant(struct berth_policy *p, const char *path, bool write)
{
	struct berth_grant *v;

	for (size_t i = 0; i < p->n_grants; i++)
		if (strcmp(p->grants[i].path, path) == 0) {
			p->grants[i].write |= write;
			return 0;
		}
	v = realloc(p->grants, (p->n_grants + 1) * sizeof *v);
	if (v == NULL)
		return -1;
	p->grants = v;
	v[p->n_grants].path = strdup(path);
	v[p->n_grants].write = write;
	if (v[p->n_grants].path == NULL)
		return -1;
	p->n_grants++;
	return 0;
}

/* Variables the sandbox's environment is built from: no secret may take
 * their name (a secret named BERTH_RPC_FD or LD_PRELOAD would reshape the
 * app's start). */
static bool reserved_env(const char *n)
{
	static const char *const exact[] = {"PATH", "HOME", "USER", "LOGNAME", "TERM", "LANG", NULL};
	static const char *const prefix[] = {"LC_", "BERTH_", "PYTHON", "NODE_", "LD_", NULL};

	for (int i = 0; exact[i] != NULL; i++)
		if (strcmp(n, exact[i]) == 0)
			return true;
	for (int i = 0; prefix[i] != NULL; i++)
		if (strncmp(n, prefix[i], strlen(prefix[i])) == 0)
			return true;
	return false;
}

/* network:host:PATTERN: checked with the broker's own grammar (stricter than
 * the manifest's, e.g. `localhost` is refused), kept canonical. */
static int add_net_host(struct berth_policy *p, const char *scope, const struct berth_manifest *m,
			const struct berth_app_paths *paths, struct berth_error *err)
{
	struct berth_host_pattern pat;
	char reason[512], canon[300];
	char **v;

	if (berth_host_pattern_parse(scope, &pat, reason, sizeof reason) < 0 ||
	    berth_host_pattern_format(&pat, canon, sizeof canon) < 0) {
		berth_usage_err(err, "the app `%s` declares `network:host:%s`: %s", m->name, scope, reason);
		return berth_err_hint(err, "fix the pattern in %s (docs/egress.md)", paths->manifest);
	}
	p->network = BERTH_NET_PROXY;
	for (size_t i = 0; i < p->n_allow_hosts; i++)
		if (strcmp(p->allow_hosts[i], canon) == 0)
			return 0;
	v = realloc(p->allow_hosts, (p->n_allow_hosts + 1) * sizeof *v);
	if (v == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	p->allow_hosts = v;
	if ((v[p->n_allow_hosts] = strdup(canon)) == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	p->n_allow_hosts++;
	return 0;
}

/* credentials: each binding into the policy (read and injected as for
 * --credential: src/supervisor/credentials.h), its HOST:PORT declared. */
static int add_credentials(struct berth_policy *p, const struct berth_manifest *m,
			   const struct berth_app_paths *paths, struct berth_error *err)
{
	char why[512], hp[BERTH_HOST_NAME_MAX + 8];

	if (m->n_credentials == 0)
		return 0;
	if (m->n_credentials > BERTH_CRED_MAX)
		return berth_usage_err(err, "the app `%s` binds more than %d credentials", m->name,
				       BERTH_CRED_MAX);
	if ((p->credentials = calloc(m->n_credentials, sizeof *p->credentials)) == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	for (size_t i = 0; i < m->n_credentials; i++) {
		struct berth_credential *c = &p->credentials[i];
		int r = berth_credential_parse(m->credentials[i], c, why, sizeof why);
		if (r < 0)
			return r == -2 ? berth_err(err, ENOMEM, "out of memory")
				       : berth_usage_err(err, "the app `%s` binds `%s`: %s", m->name,
							 m->credentials[i], why);
		p->n_credentials++;
		bool clash = reserved_env(c->name);
		for (size_t k = 0; k < m->n_secrets && !clash; k++)
			clash = strcmp(m->secrets[k], c->name) == 0;
		if (clash) {
			berth_usage_err(err, "the app `%s` binds the credential `%s`, a variable %s", m->name,
					c->name,
					reserved_env(c->name) ? "berth sets itself" : "also in `secrets`");
			return berth_err_hint(
			    err, "rename the credential in %s (inside, NAME holds its placeholder)",
			    paths->manifest);
		}
		snprintf(hp, sizeof hp, "%s:%u", c->host, c->port);
		if (add_net_host(p, hp, m, paths, err) < 0)
			return -1;
	}
	return 0;
}

int berth_app_policy(const struct berth_manifest *m, const struct berth_app_paths *paths,
		     const char *digest_hex, char *(*getenv_fn)(const char *), struct berth_policy *p,
		     struct berth_error *err)
{
	char entry[PATH_MAX], digest[80];
	bool context = false, context_rw = false;

	p->app = true;
	p->app_name = strdup(m->name);
	p->app_version = strdup(m->version);
	snprintf(digest, sizeof digest, "sha256:%s", digest_hex);
	p->app_digest = strdup(digest);
	p->workspace = physical(paths->workspace);
	if (p->app_name == NULL || p->app_version == NULL || p->app_digest == NULL || p->workspace == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	if (m->resources.has_memory) {
		p->memory = m->resources.memory;
		p->memory_set = true;
	}
	if (m->resources.has_millicpus) {
		p->millicpus = m->resources.millicpus;
		p->cpus_set = true;
	}
	if (m->resources.has_pids) {
		p->pids = m->resources.pids;
		p->pids_set = true;
	}
	for (size_t i = 0; i < m->n_caps; i++) {
		const struct berth_cap *c = &m->caps[i];
		if (c->kind == BERTH_CAP_NET_HOST) {
			/* Through the egress broker, as `berth run --allow-host`. */
			if (add_net_host(p, c->scope, m, paths, err) < 0)
				return -1;
			continue;
		}
		if (add_grant(p, c->scope, c->kind == BERTH_CAP_FS_WRITE) < 0)
			return berth_err(err, ENOMEM, "out of memory");
		if (strncmp(c->scope, "/context", 8) == 0) {
			context = true;
			context_rw |= c->kind == BERTH_CAP_FS_WRITE;
		}
	}
	if (add_mount(p, paths->app_dir, "/app", false) < 0 ||
	    (context && add_mount(p, paths->context, "/context", context_rw) < 0) ||
	    (m->runtime == BERTH_RUNTIME_PYTHON &&
	     add_mount(p, paths->sdk_python, BERTH_APP_SDK_PYTHON, false) < 0) ||
	    (m->runtime == BERTH_RUNTIME_NODE &&
	     add_mount(p, paths->sdk_node, BERTH_APP_SDK_NODE, false) < 0))
		return berth_err(err, ENOMEM, "out of memory");
	if (add_env(p, "BERTH_RPC_FD", "3") < 0 || add_env(p, "BERTH_APP", m->name) < 0)
		return berth_err(err, ENOMEM, "out of memory");
	if (m->runtime == BERTH_RUNTIME_PYTHON &&
	    (add_env(p, "PYTHONPATH", BERTH_APP_SDK_PYTHON) < 0 ||
	     add_env(p, "PYTHONDONTWRITEBYTECODE", "1") < 0 || add_env(p, "PYTHONUNBUFFERED", "1") < 0))
		return berth_err(err, ENOMEM, "out of memory");
	if (m->runtime == BERTH_RUNTIME_NODE && add_env(p, "NODE_PATH", BERTH_APP_NODE_PATH) < 0)
		return berth_err(err, ENOMEM, "out of memory");
	for (size_t i = 0; i < m->n_secrets; i++) {
		const char *v = getenv_fn(m->secrets[i]);
		if (reserved_env(m->secrets[i])) {
			berth_usage_err(err,
					"the app `%s` declares the secret `%s`, a variable berth sets itself",
					m->name, m->secrets[i]);
			return berth_err_hint(
			    err,
			    "rename the secret in %s (PATH, HOME, USER, LOGNAME, TERM, LANG, LC_*, "
			    "BERTH_*, PYTHON*, NODE_*, LD_* are berth's)",
			    paths->manifest);
		}
		if (v == NULL) {
			berth_usage_err(err, "the app `%s` declares the secret `%s`, which is not set",
					m->name, m->secrets[i]);
			return berth_err_hint(
			    err, "export %s in berth's environment, or remove it from `secrets` in %s",
			    m->secrets[i], paths->manifest);
		}
		if (add_env_from(p, m->secrets[i], v, true) < 0)
			return berth_err(err, ENOMEM, "out of memory");
		p->env[p->n_env - 1].from_host = true; /* a secret: named in the policy, never digested */
	}
	if (add_credentials(p, m, paths, err) < 0)
		return -1;
	snprintf(entry, sizeof entry, "/app/%s", m->entry);
	p->argc = m->runtime == BERTH_RUNTIME_NATIVE ? 1 : 2;
	p->argv = calloc(p->argc + 1, sizeof *p->argv);
	if (p->argv == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	if (m->runtime == BERTH_RUNTIME_PYTHON) {
		p->argv[0] = strdup("/usr/bin/python3");
		p->argv[1] = strdup(entry);
	} else if (m->runtime == BERTH_RUNTIME_NODE) {
		p->argv[0] = strdup("/usr/bin/node");
		p->argv[1] = strdup(entry);
	} else {
		p->argv[0] = strdup(entry);
	}
	for (size_t i = 0; i < p->argc; i++)
		if (p->argv[i] == NULL)
			return berth_err(err, ENOMEM, "out of memory");
	/* The limits, before the app's sandbox or state is made (policy.h). */
	return berth_policy_validate(p, err);
}
