/* SPDX-License-Identifier: MIT */
/*
 * sshagent.c - the --ssh relay (sshagent.h): a listening socket in the run's
 * directory, a thread that accepts on it and one per connection (at most
 * MAX_CLIENTS), each reading the sandbox's messages one at a time and
 * answering from the caller's agent only for REQUEST_IDENTITIES (filtered)
 * and SIGN_REQUEST (allowed keys only); everything else is FAILURE here.
 */
#include "sshagent.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "../policy/sshkey.h"
#include "../util/cleanup.h"
#include "agentproto.h"
#include "credentials.h"
#include "runs.h"

#define MAX_CLIENTS 8
#define MAX_KEYS 16
#define MAX_HOSTS 64
#define UPSTREAM_TIMEOUT_MS 120000 /* a hardware key may wait for a touch */
#define FRAME_MAX (BERTH_AGENT_MSG_MAX + 4)

struct client {
	struct berth_ssh_run *s;
	int fd, up;
	pthread_t th;
	bool started;
	atomic_bool done;
	uint8_t *in, *out;
};

struct berth_ssh_run {
	char dir[PATH_MAX];
	char upstream[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int dirfd, lfd, stop[2];
	pthread_t th;
	bool running;
	pthread_mutex_t mu;
	char keys[MAX_KEYS][BERTH_SSH_FP_LEN];
	uint64_t counts[MAX_KEYS];
	size_t n_keys;
	char host_fp[MAX_HOSTS][BERTH_SSH_FP_LEN];
	char host_name[MAX_HOSTS][BERTH_HOST_NAME_MAX + 16];
	size_t n_hosts;
	struct client clients[MAX_CLIENTS];
	/* refusals, for the lines at the end */
	uint32_t refused_ops; /* bit per message type below 32 */
	bool refused_other;
	uint64_t refused_signs;
	char refused_key[BERTH_SSH_FP_LEN];
	uint64_t refused_hosts; /* logins to a host key --ssh-host did not pin */
	char refused_host_key[BERTH_SSH_FP_LEN];
	uint64_t busy;
	berth_ssh_sign_fn sign;
	berth_ssh_notice_fn notice;
	void *arg;
};

/* ------------------------------------------------------------------ I/O */

/* Wait for @ev on @fd, or the stop pipe (then -1), at most @ms (-1: no limit). */
static int wait_fd(const struct berth_ssh_run *s, int fd, short ev, int ms)
{
	struct pollfd p[2] = {{.fd = fd, .events = ev}, {.fd = s->stop[0], .events = POLLIN}};

	for (;;) {
		int r = poll(p, 2, ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || (p[1].revents & POLLIN))
			return -1;
		return 0;
	}
}

static int read_full(const struct berth_ssh_run *s, int fd, uint8_t *buf, size_t n, int ms)
{
	for (size_t got = 0; got < n;) {
		if (wait_fd(s, fd, POLLIN, ms) < 0)
			return -1;
		ssize_t r = read(fd, buf + got, n - got);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

static int write_full(const struct berth_ssh_run *s, int fd, const uint8_t *buf, size_t n)
{
	for (size_t put = 0; put < n;) {
		if (wait_fd(s, fd, POLLOUT, UPSTREAM_TIMEOUT_MS) < 0)
			return -1;
		ssize_t r = send(fd, buf + put, n - put, MSG_NOSIGNAL);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r <= 0)
			return -1;
		put += (size_t)r;
	}
	return 0;
}

/* One framed message from @fd into @buf (FRAME_MAX bytes); its length
 * (without the 4-byte frame) in *@len. */
static int read_msg(const struct berth_ssh_run *s, int fd, uint8_t *buf, size_t *len, int ms)
{
	if (read_full(s, fd, buf, 4, ms) < 0)
		return -1;
	/* the length alone: 0 (more needed) for any length within bounds */
	if (berth_agent_frame(buf, 4, len) < 0)
		return -1; /* 0 or over BERTH_AGENT_MSG_MAX: the stream cannot be trusted further */
	*len = (uint32_t)buf[0] << 24 | (uint32_t)buf[1] << 16 | (uint32_t)buf[2] << 8 | buf[3];
	return read_full(s, fd, buf + 4, *len, ms);
}

static int send_failure(const struct berth_ssh_run *s, int fd)
{
	static const uint8_t failure[5] = {0, 0, 0, 1, BERTH_AGENT_FAILURE};
	return write_full(s, fd, failure, sizeof failure);
}

static int connect_upstream(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
	if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* @req (@n bytes, framed) to the caller's agent, its answer into c->out
 * (*@len without the frame).  A failed agent connection is dropped (the
 * next request connects again). */
static int ask_upstream(struct client *c, const uint8_t *req, size_t n, size_t *len)
{
	if (c->up < 0 && (c->up = connect_upstream(c->s->upstream)) < 0)
		return -1;
	if (write_full(c->s, c->up, req, n) < 0 ||
	    read_msg(c->s, c->up, c->out, len, UPSTREAM_TIMEOUT_MS) < 0) {
		close(c->up);
		c->up = -1;
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------ the relay */

static bool key_allowed(const char *fp, void *arg)
{
	const struct berth_ssh_run *s = arg;

	for (size_t i = 0; i < s->n_keys; i++)
		if (strcmp(s->keys[i], fp) == 0)
			return true;
	return false;
}

/* berth_agent_filter_identities' filter for one fingerprint (@arg) */
static bool key_is(const char *fp, void *arg)
{
	return strcmp(fp, arg) == 0;
}

static int identities(struct client *c)
{
	static const uint8_t req[5] = {0, 0, 0, 1, BERTH_AGENTC_REQUEST_IDENTITIES};
	size_t len;
	ssize_t w;

	if (ask_upstream(c, req, sizeof req, &len) < 0 ||
	    (w = berth_agent_filter_identities(c->out + 4, len, key_allowed, c->s, c->in, FRAME_MAX)) < 0)
		return send_failure(c->s, c->fd);
	return write_full(c->s, c->fd, c->in, (size_t)w);
}

/* The record of one signature: what was signed, as far as it parses. */
static void record(struct berth_ssh_run *s, const char *fp, const struct berth_agent_sign *sg)
{
	struct berth_agent_userauth ua;
	char ns[BERTH_AGENT_NAME_MAX], hfp[BERTH_SSH_FP_LEN];
	struct berth_ssh_sign_event e = {.key = fp, .kind = "other"};

	if (berth_agent_parse_userauth(sg->data, sg->data_len, &ua) == 0) {
		e.kind = "userauth";
		e.user = ua.user;
		if (ua.host_key != NULL) {
			berth_ssh_fingerprint(ua.host_key, ua.host_key_len, hfp);
			e.host_key = hfp;
			for (size_t i = 0; i < s->n_hosts && e.host == NULL; i++)
				if (strcmp(s->host_fp[i], hfp) == 0)
					e.host = s->host_name[i];
		}
	} else if (berth_agent_parse_sshsig(sg->data, sg->data_len, ns) == 0) {
		e.kind = "sshsig";
		e.ns = ns;
	}
	pthread_mutex_lock(&s->mu);
	for (size_t i = 0; i < s->n_keys; i++)
		if (strcmp(s->keys[i], fp) == 0)
			e.count = ++s->counts[i];
	if (s->sign != NULL)
		s->sign(&e, s->arg);
	pthread_mutex_unlock(&s->mu);
}

/* Whether @sg, if a host-bound login, is to a pinned host key; the
 * fingerprint of its host key into @hfp (for the refusal's line). */
static bool host_pinned(const struct berth_ssh_run *s, const struct berth_agent_sign *sg,
			char hfp[BERTH_SSH_FP_LEN])
{
	struct berth_agent_userauth ua;

	if (berth_agent_parse_userauth(sg->data, sg->data_len, &ua) < 0 || ua.host_key == NULL)
		return true; /* not a host-bound login: nothing names the server */
	berth_ssh_fingerprint(ua.host_key, ua.host_key_len, hfp);
	for (size_t i = 0; i < s->n_hosts; i++)
		if (strcmp(s->host_fp[i], hfp) == 0)
			return true;
	return false;
}

static int sign_request(struct client *c, size_t n)
{
	struct berth_agent_sign sg;
	char fp[BERTH_SSH_FP_LEN], hfp[BERTH_SSH_FP_LEN];
	size_t len;

	if (berth_agent_parse_sign(c->in + 4, n, &sg) < 0)
		return send_failure(c->s, c->fd);
	berth_ssh_fingerprint(sg.key, sg.key_len, fp);
	if (!key_allowed(fp, c->s)) {
		pthread_mutex_lock(&c->s->mu);
		if (c->s->refused_signs++ == 0)
			memcpy(c->s->refused_key, fp, sizeof fp);
		pthread_mutex_unlock(&c->s->mu);
		return send_failure(c->s, c->fd);
	}
	/* A login bound to its server's host key (OpenSSH's
	 * publickey-hostbound-v00) to a key --ssh-host did not pin: a client
	 * that skipped the host key check (ssh -o StrictHostKeyChecking=no,
	 * its own known_hosts) gets no signature for that server. */
	if (!host_pinned(c->s, &sg, hfp)) {
		pthread_mutex_lock(&c->s->mu);
		if (c->s->refused_hosts++ == 0)
			memcpy(c->s->refused_host_key, hfp, sizeof hfp);
		pthread_mutex_unlock(&c->s->mu);
		return send_failure(c->s, c->fd);
	}
	/* the request as read: its every field was checked, and nothing follows */
	if (ask_upstream(c, c->in, n + 4, &len) < 0 || !berth_agent_sign_response_ok(c->out + 4, len))
		return send_failure(c->s, c->fd);
	record(c->s, fp, &sg);
	return write_full(c->s, c->fd, c->out, len + 4);
}

static void *client_main(void *arg)
{
	struct client *c = arg;
	size_t n;

	while (read_msg(c->s, c->fd, c->in, &n, -1) == 0) {
		uint8_t type = c->in[4];
		int r;
		if (type == BERTH_AGENTC_REQUEST_IDENTITIES && n == 1) {
			r = identities(c);
		} else if (type == BERTH_AGENTC_SIGN_REQUEST) {
			r = sign_request(c, n);
		} else {
			pthread_mutex_lock(&c->s->mu);
			if (type < 32)
				c->s->refused_ops |= UINT32_C(1) << type;
			else
				c->s->refused_other = true;
			pthread_mutex_unlock(&c->s->mu);
			r = send_failure(c->s, c->fd);
		}
		if (r < 0)
			break;
	}
	close(c->fd);
	c->fd = -1;
	if (c->up >= 0)
		close(c->up);
	c->up = -1;
	atomic_store(&c->done, true);
	return NULL;
}

static void reap(struct client *c)
{
	if (c->started) {
		pthread_join(c->th, NULL);
		c->started = false;
	}
}

static void *accept_main(void *arg)
{
	struct berth_ssh_run *s = arg;

	while (wait_fd(s, s->lfd, POLLIN, -1) == 0) {
		int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);
		struct client *c = NULL;
		if (fd < 0)
			continue;
		for (size_t i = 0; i < MAX_CLIENTS && c == NULL; i++) {
			if (s->clients[i].started && atomic_load(&s->clients[i].done))
				reap(&s->clients[i]);
			if (!s->clients[i].started)
				c = &s->clients[i];
		}
		if (c == NULL) {
			s->busy++;
			close(fd); /* MAX_CLIENTS at once: the client sees the agent go away */
			continue;
		}
		c->fd = fd;
		c->up = -1;
		atomic_store(&c->done, false);
		if (pthread_create(&c->th, NULL, client_main, c) != 0) {
			close(fd);
			continue;
		}
		c->started = true;
	}
	return NULL;
}

/* ------------------------------------------------------------- set-up */

/* The fingerprints of the keys the caller's agent holds; a missing one is a
 * usage error naming it. */
static int check_agent(struct berth_ssh_run *s, struct berth_error *err)
{
	static const uint8_t req[5] = {0, 0, 0, 1, BERTH_AGENTC_REQUEST_IDENTITIES};
	struct client c = {.s = s, .fd = -1, .up = -1, .out = malloc(FRAME_MAX), .in = malloc(FRAME_MAX)};
	size_t len;
	int rc = 0;

	if (c.out == NULL || c.in == NULL) {
		free(c.out);
		free(c.in);
		return berth_err(err, ENOMEM, "out of memory");
	}
	if (ask_upstream(&c, req, sizeof req, &len) < 0) {
		berth_usage_err(err, "--ssh: cannot list the keys of your ssh-agent at `%s`", s->upstream);
		berth_err_hint(err, "start one (eval $(ssh-agent); ssh-add KEYFILE) and run berth with its "
				    "SSH_AUTH_SOCK");
		rc = -1;
	}
	for (size_t i = 0; rc == 0 && i < s->n_keys; i++) {
		/* the answer filtered to this one key: 9 bytes when it is not there */
		ssize_t w =
		    berth_agent_filter_identities(c.out + 4, len, key_is, s->keys[i], c.in, FRAME_MAX);
		if (w < 0) {
			rc = berth_usage_err(err, "--ssh: your ssh-agent's list of keys does not parse");
		} else if (w == 9) {
			berth_usage_err(err, "--ssh %s: your ssh-agent does not hold this key", s->keys[i]);
			rc = berth_err_hint(
			    err, "ssh-add its private key first (`ssh-add -l` lists what the agent "
				 "holds)");
		}
	}
	if (c.up >= 0)
		close(c.up);
	free(c.out);
	free(c.in);
	return rc;
}

static int write_file(int dirfd, const char *name, const char *text, struct berth_error *err)
{
	cleanup_close int fd =
	    openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	size_t n = strlen(text);

	if (fd < 0 || write(fd, text, n) != (ssize_t)n || fsync(fd) < 0)
		return berth_err(err, errno ? errno : EIO, "cannot write `%s` in the run's directory", name);
	return 0;
}

/* known_hosts, the config, and the pinned keys' fingerprints (for the records) */
static int write_files(struct berth_ssh_run *s, const struct berth_policy *p, struct berth_error *err)
{
	size_t cap = 1, len = 0;
	for (size_t i = 0; i < p->n_ssh_known_hosts; i++)
		cap += strlen(p->ssh_known_hosts[i]) + 1;
	cleanup_free char *kh = malloc(cap);
	char cfg[1024];

	if (kh == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	kh[0] = '\0';
	for (size_t i = 0; i < p->n_ssh_known_hosts; i++) {
		const char *l = p->ssh_known_hosts[i], *sp = strchr(l, ' ');
		struct berth_ssh_pubkey k;
		char why[64];
		len += (size_t)sprintf(kh + len, "%s\n", l);
		if (sp != NULL && s->n_hosts < MAX_HOSTS &&
		    berth_ssh_pubkey_parse(sp + 1, strlen(sp + 1), false, &k, why, sizeof why) == 1) {
			berth_ssh_fingerprint(k.blob, k.blob_len, s->host_fp[s->n_hosts]);
			snprintf(s->host_name[s->n_hosts], sizeof s->host_name[0], "%.*s", (int)(sp - l), l);
			s->n_hosts++;
		}
	}
	snprintf(cfg, sizeof cfg,
		 "# berth run --ssh: the hosts of --ssh-host, their keys pinned (docs/credentials.md)\n"
		 "Host *\n"
		 "\tStrictHostKeyChecking yes\n"
		 "\tUserKnownHostsFile " BERTH_SSH_KNOWN_HOSTS "\n"
		 "\tGlobalKnownHostsFile " BERTH_SSH_KNOWN_HOSTS "\n"
		 "\tUpdateHostKeys no\n"
		 "\tCheckHostIP no\n"
		 "\tIdentityAgent %s\n",
		 p->n_ssh_keys > 0 ? BERTH_SSH_SOCK : "none");
	if (write_file(s->dirfd, "known_hosts", kh, err) < 0 || write_file(s->dirfd, "config", cfg, err) < 0)
		return -1;
	return 0;
}

static int listen_socket(struct berth_ssh_run *s, struct berth_error *err)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};

	/* through the directory's descriptor: a run directory's path may be
	 * longer than sun_path */
	snprintf(a.sun_path, sizeof a.sun_path, "/proc/self/fd/%d/agent.sock", s->dirfd);
	s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s->lfd < 0 || bind(s->lfd, (struct sockaddr *)&a, sizeof a) < 0 ||
	    fchmodat(s->dirfd, "agent.sock", 0666, 0) < 0 || listen(s->lfd, 16) < 0)
		return berth_err(err, errno, "--ssh: cannot make the agent socket in `%s`", s->dir);
	return 0;
}

static int mount_view(struct berth_ssh_run *s, struct berth_policy *p, struct berth_error *err)
{
	char cfg[PATH_MAX + 8];
	struct stat st;

	if (berth_cred_add_mount(p, s->dir, BERTH_SSH_DIR, err) < 0)
		return -1;
	snprintf(cfg, sizeof cfg, "%s/config", s->dir);
	/* the system-wide config is the one ssh reads whoever runs it */
	if (stat(BERTH_SSH_CONFIG, &st) == 0 && S_ISREG(st.st_mode) &&
	    berth_cred_add_mount(p, cfg, BERTH_SSH_CONFIG, err) < 0)
		return -1;
	if (p->n_ssh_keys > 0 && berth_cred_set_env(p, "SSH_AUTH_SOCK", BERTH_SSH_SOCK, err) < 0)
		return -1;
	return 0;
}

int berth_ssh_prepare(struct berth_policy *p, const char *run_id, struct berth_ssh_run **out,
		      struct berth_error *err)
{
	struct berth_ssh_run *s;
	char rd[PATH_MAX];
	const char *up = getenv("SSH_AUTH_SOCK");

	*out = NULL;
	if (p->n_ssh_keys == 0 && p->n_ssh_known_hosts == 0)
		return 0;
	if (p->n_ssh_keys > MAX_KEYS || p->n_ssh_known_hosts > MAX_HOSTS)
		return berth_usage_err(err, "too many --ssh keys or --ssh-host keys");
	if (p->n_ssh_keys > 0 && (up == NULL || up[0] == '\0')) {
		berth_usage_err(err, "--ssh needs your ssh-agent, and SSH_AUTH_SOCK is not set");
		return berth_err_hint(err,
				      "start one (eval $(ssh-agent); ssh-add KEYFILE) and run berth with "
				      "its SSH_AUTH_SOCK");
	}
	if (up != NULL && strlen(up) >= sizeof s->upstream)
		return berth_usage_err(err, "--ssh: SSH_AUTH_SOCK `%s` is longer than a socket path can be",
				       up);
	if ((s = calloc(1, sizeof *s)) == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	s->dirfd = s->lfd = s->stop[0] = s->stop[1] = -1;
	pthread_mutex_init(&s->mu, NULL);
	for (size_t i = 0; i < p->n_ssh_keys; i++)
		snprintf(s->keys[s->n_keys++], BERTH_SSH_FP_LEN, "%s", p->ssh_keys[i]);
	if (up != NULL)
		snprintf(s->upstream, sizeof s->upstream, "%s", up);
	for (size_t i = 0; i < MAX_CLIENTS; i++)
		s->clients[i] = (struct client){.s = s, .fd = -1, .up = -1};
	if ((p->n_ssh_keys > 0 && check_agent(s, err) < 0) || berth_run_dir(run_id, true, rd, err) < 0 ||
	    snprintf(s->dir, sizeof s->dir, "%s/ssh", rd) >= (int)sizeof s->dir) {
		berth_ssh_run_free(s);
		return err->msg[0] != '\0' ? -1 : berth_err(err, ENAMETOOLONG, "run directory");
	}
	if (mkdir(s->dir, 0755) < 0 || chmod(s->dir, 0755) < 0 ||
	    (s->dirfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)) < 0) {
		berth_err(err, errno, "cannot make `%s`", s->dir);
		berth_ssh_run_free(s);
		return -1;
	}
	if (write_files(s, p, err) < 0 || (p->n_ssh_keys > 0 && listen_socket(s, err) < 0) ||
	    pipe2(s->stop, O_CLOEXEC) < 0 || mount_view(s, p, err) < 0) {
		if (err->msg[0] == '\0')
			berth_err(err, errno, "--ssh: pipe");
		berth_ssh_run_free(s);
		return -1;
	}
	*out = s;
	return 0;
}

int berth_ssh_start(struct berth_ssh_run *s, berth_ssh_sign_fn on_sign, berth_ssh_notice_fn notice, void *arg,
		    struct berth_error *err)
{
	s->sign = on_sign;
	s->notice = notice;
	s->arg = arg;
	if (s->lfd < 0)
		return 0; /* --ssh-host only: no agent */
	for (size_t i = 0; i < MAX_CLIENTS; i++)
		if ((s->clients[i].in = malloc(FRAME_MAX)) == NULL ||
		    (s->clients[i].out = malloc(FRAME_MAX)) == NULL)
			return berth_err(err, ENOMEM, "out of memory");
	if (pthread_create(&s->th, NULL, accept_main, s) != 0)
		return berth_err(err, EAGAIN, "cannot start the --ssh agent relay");
	s->running = true;
	return 0;
}

static void note(const struct berth_ssh_run *s, const char *what)
{
	char line[256];

	if (s->notice == NULL)
		return;
	snprintf(line, sizeof line, "refused: ssh-agent: %s", what);
	s->notice(line, s->arg);
}

void berth_ssh_stop(struct berth_ssh_run *s)
{
	char line[200];

	if (s == NULL || !s->running)
		return;
	(void)!write(s->stop[1], "x", 1);
	pthread_join(s->th, NULL);
	for (size_t i = 0; i < MAX_CLIENTS; i++)
		reap(&s->clients[i]);
	s->running = false;
	/* not an extension: ssh asks session-bind@openssh.com of every agent,
	 * and goes on without it */
	for (unsigned t = 0; t < 32; t++)
		if ((s->refused_ops & (UINT32_C(1) << t)) && t != BERTH_AGENTC_EXTENSION)
			note(s, berth_agent_op_name((uint8_t)t));
	if (s->refused_other)
		note(s, berth_agent_op_name(255));
	if (s->refused_signs > 0) {
		snprintf(line, sizeof line, "%llu signature(s) with a key --ssh did not allow (%s)",
			 (unsigned long long)s->refused_signs, s->refused_key);
		note(s, line);
	}
	if (s->refused_hosts > 0) {
		snprintf(line, sizeof line,
			 "%llu login(s) to a server whose host key --ssh-host did not pin (%s): not signed",
			 (unsigned long long)s->refused_hosts, s->refused_host_key);
		note(s, line);
	}
	if (s->busy > 0)
		note(s, "connections beyond 8 at once were closed");
}

void berth_ssh_run_free(struct berth_ssh_run *s)
{
	if (s == NULL)
		return;
	berth_ssh_stop(s);
	for (size_t i = 0; i < MAX_CLIENTS; i++) {
		free(s->clients[i].in);
		free(s->clients[i].out);
	}
	if (s->lfd >= 0) {
		close(s->lfd);
		unlinkat(s->dirfd, "agent.sock", 0);
	}
	if (s->dirfd >= 0)
		close(s->dirfd);
	for (int i = 0; i < 2; i++)
		if (s->stop[i] >= 0)
			close(s->stop[i]);
	pthread_mutex_destroy(&s->mu);
	free(s);
}
