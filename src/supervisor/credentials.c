/* SPDX-License-Identifier: MIT */
/*
 * credentials.c - secrets read into locked memory, placeholders, the run's CA
 * in the sandbox's view (credentials.h).
 */
#include "credentials.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sodium.h>

#include "../broker/tls.h"
#include "../util/cleanup.h"
#include "runs.h"

#define READ_MAX (BERTH_CRED_SECRET_MAX + 2) /* a value and its line end */
#define HOST_BUNDLE_MAX (16 << 20)           /* bytes of the host's bundle read */

/* Read what @fd gives, up to READ_MAX + 1 bytes, into @buf (locked). */
static ssize_t read_all(int fd, char *buf, size_t cap)
{
	size_t n = 0;

	while (n < cap) {
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		n += (size_t)r;
	}
	return (ssize_t)n;
}

static int from_env(const struct berth_credential *c, char *buf, size_t cap, size_t *len,
		    struct berth_error *err)
{
	extern char **environ;
	size_t nl = strlen(c->source_arg);

	for (char **e = environ; e != NULL && *e != NULL; e++) {
		if (strncmp(*e, c->source_arg, nl) != 0 || (*e)[nl] != '=')
			continue;
		size_t vl = strlen(*e + nl + 1);
		if (vl >= cap)
			vl = cap; /* too long: refused below */
		memcpy(buf, *e + nl + 1, vl);
		*len = vl;
		/* berth's environ (and /proc/PID/environ) no longer holds it */
		explicit_bzero(*e + nl + 1, strlen(*e + nl + 1));
		return 0;
	}
	berth_usage_err(err, "--credential %s: the variable `%s` is not set", c->name, c->source_arg);
	return berth_err_hint(err, "export %s in berth's environment, or bind another source", c->source_arg);
}

static int from_file(const struct berth_credential *c, char *buf, size_t cap, size_t *len,
		     struct berth_error *err)
{
	cleanup_close int fd = open(c->source_arg, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	struct stat st;
	ssize_t n;

	if (fd < 0)
		return berth_err_status(err, errno, BERTH_EXIT_USAGE, "--credential %s: cannot open `%s`",
					c->name, c->source_arg);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		berth_usage_err(err, "--credential %s: `%s` is not a regular file", c->name, c->source_arg);
		return berth_err_hint(err, "keep the secret in a regular file, mode 0600");
	}
	if (st.st_uid != getuid() || (st.st_mode & 077) != 0) {
		berth_usage_err(err, "--credential %s: `%s` is %s (mode %04o)", c->name, c->source_arg,
				st.st_uid != getuid() ? "not yours" : "readable by others",
				(unsigned)(st.st_mode & 07777));
		return berth_err_hint(err, "chmod 600 %s (a secret's file is its owner's only)",
				      c->source_arg);
	}
	if ((n = read_all(fd, buf, cap)) < 0)
		return berth_err_status(err, errno, BERTH_EXIT_USAGE, "--credential %s: cannot read `%s`",
					c->name, c->source_arg);
	*len = (size_t)n;
	return 0;
}

static int from_cmd(const struct berth_credential *c, char *buf, size_t cap, size_t *len,
		    struct berth_error *err)
{
	int p[2], status = 0;
	pid_t pid;
	ssize_t n;

	if (pipe2(p, O_CLOEXEC) < 0)
		return berth_err(err, errno, "--credential %s: pipe", c->name);
	if ((pid = fork()) < 0) {
		int e = errno;
		close(p[0]);
		close(p[1]);
		return berth_err(err, e, "--credential %s: fork", c->name);
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (null < 0 || dup2(null, 0) < 0 || dup2(p[1], 1) < 0)
			_exit(127);
		signal(SIGPIPE, SIG_DFL);
		execl("/bin/sh", "sh", "-c", c->source_arg, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	n = read_all(p[0], buf, cap);
	if (n >= (ssize_t)cap) { /* too long: drain, so that the command can end */
		char sink[4096];
		while (read(p[0], sink, sizeof sink) > 0)
			;
	}
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		berth_usage_err(err, "--credential %s: the command `%s` failed (%s %d)", c->name,
				c->source_arg, WIFEXITED(status) ? "exit status" : "signal",
				WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		return berth_err_hint(err, "run the command yourself: it must print the secret and exit 0");
	}
	if (n < 0)
		return berth_err(err, EIO, "--credential %s: cannot read the command's output", c->name);
	*len = (size_t)n;
	return 0;
}

/* The secret of @c into r->secrets[i] (locked memory), checked. */
static int read_secret(struct berth_cred_run *r, size_t i, const struct berth_credential *c,
		       struct berth_error *err)
{
	char *buf = sodium_malloc(READ_MAX + 1);
	size_t len = 0;
	int rc;

	if (buf == NULL)
		return berth_err(err, ENOMEM, "cannot lock memory for --credential %s", c->name);
	r->secrets[i] = buf;
	rc = c->source == BERTH_CRED_SRC_ENV    ? from_env(c, buf, READ_MAX, &len, err)
	     : c->source == BERTH_CRED_SRC_FILE ? from_file(c, buf, READ_MAX, &len, err)
						: from_cmd(c, buf, READ_MAX, &len, err);
	if (rc < 0)
		return -1;
	if (len > 0 && buf[len - 1] == '\n')
		len--;
	if (len > 0 && buf[len - 1] == '\r')
		len--;
	buf[len] = '\0';
	if (len == 0 || len > BERTH_CRED_SECRET_MAX) {
		berth_usage_err(err, "--credential %s: the secret from %s `%s` is %s", c->name,
				berth_cred_source_name(c->source), c->source_arg,
				len == 0 ? "empty" : "longer than 16384 bytes");
		return berth_err_hint(err, "bind a source that gives the secret itself");
	}
	for (size_t k = 0; k < len; k++)
		if ((unsigned char)buf[k] < 0x20 || (unsigned char)buf[k] > 0x7e) {
			berth_usage_err(err,
					"--credential %s: the secret from %s `%s` holds a byte that is not "
					"printable ASCII (at offset %zu)",
					c->name, berth_cred_source_name(c->source), c->source_arg, k);
			return berth_err_hint(err, "a header value cannot carry it: check the source");
		}
	return 0;
}

int berth_cred_set_env(struct berth_policy *p, const char *name, const char *value, struct berth_error *err)
{
	for (size_t i = 0; i < p->n_env; i++)
		if (strcmp(p->env[i].name, name) == 0) {
			char *v = strdup(value);
			if (v == NULL)
				return berth_err(err, ENOMEM, "out of memory");
			explicit_bzero(p->env[i].value, strlen(p->env[i].value));
			free(p->env[i].value);
			p->env[i].value = v;
			p->env[i].from_host = p->env[i].from_file = false;
			return 0;
		}
	struct berth_env *e = realloc(p->env, (p->n_env + 1) * sizeof *e);
	if (e == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	p->env = e;
	e[p->n_env] = (struct berth_env){strdup(name), strdup(value), false, false};
	if (e[p->n_env].name == NULL || e[p->n_env].value == NULL) {
		free(e[p->n_env].name);
		free(e[p->n_env].value);
		return berth_err(err, ENOMEM, "out of memory");
	}
	p->n_env++;
	return 0;
}

/* The host's bundle and @pem into RUNDIR/ca-bundle.pem; its path in @path. */
static int write_bundle(const char *dir, const char *pem, size_t pem_len, char path[PATH_MAX],
			struct berth_error *err)
{
	cleanup_free char *host = malloc(HOST_BUNDLE_MAX);
	cleanup_close int in = open(BERTH_CRED_BUNDLE, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	ssize_t n;

	if (host == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	if (in < 0 || fstat(in, &st) < 0 || !S_ISREG(st.st_mode)) {
		berth_usage_err(err, "--credential needs the host's trust store at " BERTH_CRED_BUNDLE);
		return berth_err_hint(err, "install ca-certificates (the sandbox's clients find the run's CA "
					   "there)");
	}
	if ((n = read_all(in, host, HOST_BUNDLE_MAX)) < 0)
		return berth_err(err, errno, "cannot read " BERTH_CRED_BUNDLE);
	if (snprintf(path, PATH_MAX, "%s/ca-bundle.pem", dir) >= PATH_MAX)
		return berth_err(err, ENAMETOOLONG, "run directory");
	if (unlink(path) < 0 && errno != ENOENT) /* an app's, from its last open */
		return berth_err(err, errno, "cannot replace `%s`", path);
	cleanup_close int out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (out < 0)
		return berth_err(err, errno, "cannot write `%s`", path);
	if (write(out, host, (size_t)n) != n || (n > 0 && host[n - 1] != '\n' && write(out, "\n", 1) != 1) ||
	    write(out, pem, pem_len) != (ssize_t)pem_len || fsync(out) < 0)
		return berth_err(err, errno ? errno : EIO, "cannot write `%s`", path);
	return 0;
}

int berth_cred_add_mount(struct berth_policy *p, const char *src, const char *dst, struct berth_error *err)
{
	struct berth_mount *m = realloc(p->mounts, (p->n_mounts + 1) * sizeof *m);
	char real[PATH_MAX];

	if (m == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	p->mounts = m;
	if (realpath(src, real) == NULL)
		return berth_err(err, errno, "cannot resolve `%s`", src);
	m[p->n_mounts] = (struct berth_mount){.src = strdup(real), .dst = strdup(dst)};
	if (m[p->n_mounts].src == NULL || m[p->n_mounts].dst == NULL) {
		free(m[p->n_mounts].src);
		free(m[p->n_mounts].dst);
		return berth_err(err, ENOMEM, "out of memory");
	}
	p->n_mounts++;
	return 0;
}

/* The CA for the distinct bound hosts, its certificate in the sandbox's view. */
static int make_ca(struct berth_policy *p, struct berth_cred_run *r, const char *dir, struct berth_error *err)
{
	static const char *const vars[] = {"SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE",
					   "CURL_CA_BUNDLE", "GIT_SSL_CAINFO"};
	const char *hosts[BERTH_CRED_MAX];
	size_t nh = 0, pem_len = 0;
	char path[PATH_MAX];

	for (size_t i = 0; i < p->n_credentials; i++) {
		bool dup = false;
		for (size_t k = 0; k < nh && !dup; k++)
			dup = strcmp(hosts[k], p->credentials[i].host) == 0;
		if (!dup)
			hosts[nh++] = p->credentials[i].host;
	}
	if ((r->ca = berth_tls_ca_new(hosts, nh, err)) == NULL)
		return -1;
	cleanup_free char *pem = berth_tls_ca_pem(r->ca, &pem_len, err);
	if (pem == NULL || write_bundle(dir, pem, pem_len, path, err) < 0 ||
	    berth_cred_add_mount(p, path, BERTH_CRED_BUNDLE, err) < 0)
		return -1;
	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
		if (berth_cred_set_env(p, vars[i], BERTH_CRED_BUNDLE, err) < 0)
			return -1;
	return 0;
}

int berth_cred_prepare(struct berth_policy *p, const char *run_id, struct berth_cred_run **out,
		       struct berth_error *err)
{
	char dir[PATH_MAX];

	*out = NULL;
	if (p->n_credentials == 0)
		return 0;
	if (berth_run_dir(run_id, true, dir, err) < 0)
		return -1;
	return berth_cred_prepare_in(p, dir, out, err);
}

int berth_cred_prepare_in(struct berth_policy *p, const char *dir, struct berth_cred_run **out,
			  struct berth_error *err)
{
	struct berth_cred_run *r;

	*out = NULL;
	if (p->n_credentials == 0)
		return 0;
	if (p->n_credentials > BERTH_CRED_MAX)
		return berth_usage_err(err, "more than %d --credential bindings", BERTH_CRED_MAX);
	if (sodium_init() < 0)
		return berth_err(err, EIO, "libsodium cannot be initialised");
	if ((r = calloc(1, sizeof *r)) == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	for (size_t i = 0; i < p->n_credentials; i++) {
		const struct berth_credential *c = &p->credentials[i];
		unsigned char rnd[16];
		char hex[33];

		if (read_secret(r, i, c, err) < 0) {
			r->n = i + 1;
			berth_cred_run_free(r);
			return -1;
		}
		r->n = i + 1;
		randombytes_buf(rnd, sizeof rnd);
		sodium_bin2hex(hex, sizeof hex, rnd, sizeof rnd);
		snprintf(r->placeholders[i], sizeof r->placeholders[i], "berth-cred-%s-%s", c->name, hex);
		r->creds[i] = (struct berth_broker_cred){.name = c->name,
							 .host = c->host,
							 .port = c->port,
							 .prefix = c->prefix,
							 .header = c->header,
							 .field = c->field,
							 .placeholder = r->placeholders[i],
							 .secret = r->secrets[i],
							 .secret_len = strlen(r->secrets[i])};
		if (berth_cred_set_env(p, c->name, r->placeholders[i], err) < 0) {
			berth_cred_run_free(r);
			return -1;
		}
	}
	if (make_ca(p, r, dir, err) < 0) {
		berth_cred_run_free(r);
		return -1;
	}
	*out = r;
	return 0;
}

void berth_cred_run_free(struct berth_cred_run *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < r->n; i++)
		sodium_free(r->secrets[i]); /* zeroes it */
	berth_tls_ca_free(r->ca);
	sodium_memzero(r, sizeof *r);
	free(r);
}
