/* SPDX-License-Identifier: MIT */
/*
 * flags_ssh.c - --ssh, --ssh-key and --ssh-host (docs/credentials.md,
 * "--ssh"): the keys the sandbox's agent may list and sign with, the hosts
 * it may reach on their SSH port, their host keys pinned.
 */
#include "flags.h"
#include "flags_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hostpat.h"
#include "sshkey.h"
#include "../util/cleanup.h"
#include "../util/text.h"

#define KEYFILE_MAX (64 * 1024)
#define SSH_KEYS_MAX 16
#define SSH_KNOWN_MAX 64

/* @path (a regular file of at most KEYFILE_MAX bytes) into a new string */
static char *read_small(const char *what, const char *path, struct berth_error *err)
{
	cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	struct stat st;
	char *s;
	size_t n = 0;

	if (fd < 0) {
		berth_err_status(err, errno, BERTH_EXIT_USAGE, "%s: cannot open `%s`", what, path);
		return NULL;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > KEYFILE_MAX) {
		berth_usage_err(err, "%s: `%s` is not a regular file of at most 64 KiB", what, path);
		berth_err_hint(err, "give a public key file (`.pub`) or a known_hosts file");
		return NULL;
	}
	if ((s = malloc(KEYFILE_MAX + 1)) == NULL) {
		berth_err(err, ENOMEM, "out of memory");
		return NULL;
	}
	while (n < KEYFILE_MAX) {
		ssize_t r = read(fd, s + n, KEYFILE_MAX - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			berth_err_status(err, errno, BERTH_EXIT_USAGE, "%s: cannot read `%s`", what, path);
			free(s);
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	s[n] = '\0';
	if (memchr(s, '\0', n) != NULL) {
		berth_usage_err(err, "%s: `%s` holds a NUL byte: it is not a key file", what, path);
		free(s);
		return NULL;
	}
	return s;
}

/* each key of the text @s: @fn(@arg, key), or -1 with @err naming @what and the line */
static int each_key(const char *what, const char *path, char *s, bool known_hosts,
		    int (*fn)(void *arg, const struct berth_ssh_pubkey *k, struct berth_error *err),
		    void *arg, struct berth_error *err)
{
	static struct berth_ssh_pubkey k; /* 4 KiB: not on the stack of a parser */
	unsigned lineno = 0, keys = 0;
	char reason[128];

	for (char *line = s; *line != '\0';) {
		char *nl = strchr(line, '\n');
		size_t ll = nl != NULL ? (size_t)(nl - line) : strlen(line);
		lineno++;
		int r = berth_ssh_pubkey_parse(line, ll, known_hosts, &k, reason, sizeof reason);
		if (r < 0) {
			berth_usage_err(err, "%s: `%s`, line %u: %s", what, path, lineno, reason);
			return berth_err_hint(err,
					      "give a public key file (`TYPE BASE64 [COMMENT]` lines) or a "
					      "known_hosts file");
		}
		if (r > 0) {
			keys++;
			if (fn(arg, &k, err) < 0)
				return -1;
		}
		if (nl == NULL)
			break;
		line = nl + 1;
	}
	if (keys == 0) {
		berth_usage_err(err, "%s: `%s` holds no key", what, path);
		return berth_err_hint(err, "give a public key file (`.pub`) or a known_hosts file");
	}
	return 0;
}

static int add_fp(struct berth_run_opts *o, const char *fp, const char *given, struct berth_error *err)
{
	struct berth_policy *p = &o->policy;
	char clean[PATH_MAX];

	for (size_t i = 0; i < p->n_ssh_keys; i++)
		if (strcmp(p->ssh_keys[i], fp) == 0)
			return 0; /* the same key twice: once */
	if (p->n_ssh_keys >= SSH_KEYS_MAX)
		return berth_usage_err(err, "more than %d keys for --ssh", SSH_KEYS_MAX);
	if (berth_fl_strv_add(&p->ssh_keys, &p->n_ssh_keys, fp, false, err) < 0)
		return -1;
	if (berth_fl_add_widening(
		o,
		"--ssh %s%s%s%s: the sandbox may have your ssh-agent sign with this key (it "
		"never gets the key; each signature is recorded)",
		fp, given != NULL ? " (" : "",
		given != NULL ? berth_text_clean(clean, sizeof clean, given) : "",
		given != NULL ? ")" : "") < 0)
		return berth_err(err, ENOMEM, "out of memory");
	return 0;
}

static int add_key_fp(void *arg, const struct berth_ssh_pubkey *k, struct berth_error *err)
{
	void **a = arg;
	char fp[BERTH_SSH_FP_LEN];

	berth_ssh_fingerprint(k->blob, k->blob_len, fp);
	return add_fp(a[0], fp, a[1], err);
}

int berth_fl_add_ssh_key(struct berth_run_opts *o, const char *arg, bool file, struct berth_error *err)
{
	char clean[256];

	if (!file) {
		if (!berth_ssh_fp_valid(arg)) {
			berth_usage_err(err, "invalid --ssh `%s`: not a key's SHA256 fingerprint",
					berth_text_clean(clean, sizeof clean, arg));
			return berth_err_hint(err, "e.g. --ssh SHA256:... as `ssh-add -l` prints it, or "
						   "--ssh-key ~/.ssh/id_ed25519.pub");
		}
		return add_fp(o, arg, NULL, err);
	}
	cleanup_free char *text = read_small("--ssh-key", arg, err);
	void *a[2] = {o, (void *)arg};
	if (text == NULL)
		return -1;
	return each_key("--ssh-key", arg, text, false, add_key_fp, a, err);
}

struct host_ctx {
	struct berth_policy *p;
	char name[BERTH_HOST_NAME_MAX + 16]; /* HOST or [HOST]:PORT */
};

static int add_known(void *arg, const struct berth_ssh_pubkey *k, struct berth_error *err)
{
	struct host_ctx *h = arg;
	char line[BERTH_SSH_TYPE_MAX + BERTH_SSH_BLOB_MAX * 2 + BERTH_HOST_NAME_MAX + 32];
	size_t nl = strlen(h->name);

	if (h->p->n_ssh_known_hosts >= SSH_KNOWN_MAX)
		return berth_usage_err(err, "more than %d host keys for --ssh-host", SSH_KNOWN_MAX);
	memcpy(line, h->name, nl);
	line[nl] = ' ';
	if (berth_ssh_pubkey_line(k, line + nl + 1, sizeof line - nl - 1) < 0)
		return berth_err(err, ENAMETOOLONG, "--ssh-host: a key too long");
	return berth_fl_strv_add(&h->p->ssh_known_hosts, &h->p->n_ssh_known_hosts, line, true, err);
}

/* The host keys berth ships for @host (data/ssh/HOST next to the binary in
 * the build tree, or ../share/berth/ssh/HOST installed), or NULL. */
static char *shipped_keys(const char *host, char path[PATH_MAX], struct berth_error *err)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	static const char *const where[] = {"data", "share/berth"};

	if (n <= 0 || strcmp(host, "github.com") != 0)
		return NULL;
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0';
	for (size_t i = 0; i < 2; i++) {
		snprintf(path, PATH_MAX, "%s/../%s/ssh/%s", exe, where[i], host);
		if (access(path, R_OK) == 0)
			return read_small("--ssh-host", path, err);
	}
	berth_usage_err(err, "--ssh-host %s: berth's copy of its host keys is not installed", host);
	berth_err_hint(err, "reinstall berth, or give them: --ssh-host %s=KNOWN_HOSTS_FILE", host);
	return NULL;
}

int berth_fl_add_ssh_host(struct berth_run_opts *o, const char *arg, struct berth_error *err)
{
	struct host_ctx h = {.p = &o->policy};
	char spec[BERTH_HOST_NAME_MAX + 16], clean[512], path[PATH_MAX], hp[BERTH_HOST_NAME_MAX + 16];
	const char *eq = strchr(arg, '='), *keyfile = eq != NULL ? eq + 1 : NULL;
	size_t sl = eq != NULL ? (size_t)(eq - arg) : strlen(arg);
	struct berth_host_pattern pat;
	char why[BERTH_HOST_REASON_MAX];
	cleanup_free char *text = NULL;

	if (sl == 0 || sl >= sizeof spec || (keyfile != NULL && keyfile[0] == '\0')) {
		berth_usage_err(err, "invalid --ssh-host `%s`", berth_text_clean(clean, sizeof clean, arg));
		return berth_err_hint(err, "--ssh-host HOST[:PORT][=KNOWN_HOSTS_FILE], e.g. --ssh-host "
					   "github.com or --ssh-host git.example.com=host-keys.txt");
	}
	memcpy(spec, arg, sl);
	spec[sl] = '\0';
	if (berth_host_pattern_parse(spec, &pat, why, sizeof why) < 0 || strchr(spec, '*') != NULL) {
		berth_usage_err(err, "invalid --ssh-host `%s`: %s",
				berth_text_clean(clean, sizeof clean, arg),
				strchr(spec, '*') != NULL ? "a wildcard pins no key" : why);
		return berth_err_hint(err, "--ssh-host HOST[:PORT][=KNOWN_HOSTS_FILE]: one host, port 22 "
					   "unless given");
	}
	/* HOST or HOST:PORT (default 22) for the broker; the known_hosts name */
	{
		char host[BERTH_HOST_NAME_MAX + 8];
		unsigned port = 22;
		const char *colon = strrchr(spec, ':');
		size_t hl = strlen(spec);
		if (colon != NULL && (spec[0] != '[' || colon > strchr(spec, ']'))) {
			port = (unsigned)strtoul(colon + 1, NULL, 10);
			hl = (size_t)(colon - spec);
		}
		if (hl >= sizeof host)
			return berth_usage_err(err, "--ssh-host `%s`: the name is too long", spec);
		memcpy(host, spec, hl);
		host[hl] = '\0';
		snprintf(hp, sizeof hp, "%s:%u", host, port);
		if (host[0] == '[') { /* [v6] */
			memmove(host, host + 1, hl);
			host[strcspn(host, "]")] = '\0';
		}
		if (port == 22)
			snprintf(h.name, sizeof h.name, "%s", host);
		else
			snprintf(h.name, sizeof h.name, "[%s]:%u", host, port);
		if (keyfile == NULL)
			text = shipped_keys(host, path, err);
		if (keyfile == NULL && text == NULL) {
			if (err->msg[0] != '\0')
				return -1;
			berth_usage_err(err, "--ssh-host %s: berth knows no host key of `%s`", spec, host);
			return berth_err_hint(
			    err,
			    "give the keys its owner publishes: --ssh-host %s=FILE (known_hosts "
			    "or .pub lines; `ssh-keyscan %s` shows what it presents)",
			    spec, host);
		}
	}
	if (keyfile != NULL && (text = read_small("--ssh-host", keyfile, err)) == NULL)
		return -1;
	if (each_key("--ssh-host", keyfile != NULL ? keyfile : path, text, true, add_known, &h, err) < 0)
		return -1;
	return berth_fl_add_allow_host(&o->policy, hp, err);
}
