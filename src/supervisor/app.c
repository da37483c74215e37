/* SPDX-License-Identifier: MIT */
/*
 * app.c - a resident app (app.h): open, boot and stop its sandbox, the
 * channel to it, denials explained.  Its audit trail and its calls are in
 * files of their own (app_int.h lists them).
 */

#include <fcntl.h>
#include <limits.h>
#include <string.h>

#include "../policy/hostpat.h"
#include "../util/cleanup.h"
#include "../util/text.h"

#include "app_int.h"
#include "credentials.h"

/* ---------------------------------------------------------- small helpers */

static void default_log(void *ctx, const char *app, const char *level, const char *line)
{
	(void)ctx;
	if (strcmp(level, "info") == 0)
		fprintf(stderr, "[%s] %s\n", app, line);
	else
		fprintf(stderr, "[%s] %s: %s\n", app, level, line);
}

void berth_ap_app_log(struct berth_app *a, const char *level, const char *line)
{
	/* Everything the app says is cleaned of terminal controls here, once,
	 * for every consumer (a terminal, berth mcp's notifications). */
	static char clean[65536 * 4 + 64];
	char lv[32];

	berth_text_clean(clean, sizeof clean, line);
	berth_text_clean(lv, sizeof lv, level);
	if (a->o.log != NULL)
		a->o.log(a->o.log_ctx, a->m.name, lv, clean);
	else
		default_log(NULL, a->m.name, lv, clean);
}

void berth_call_error_free(struct berth_call_error *ce)
{
	json_decref(ce->data);
	ce->data = NULL;
	free(ce->denial);
	ce->denial = NULL;
}

int berth_ap_call_fail(struct berth_call_error *ce, int code, json_t *data, const char *fmt, ...)
{
	va_list ap;

	ce->code = code;
	va_start(ap, fmt);
	vsnprintf(ce->message, sizeof ce->message, fmt, ap);
	va_end(ap);
	json_decref(ce->data);
	ce->data = data;
	return -1;
}

const struct berth_export *berth_ap_find_export(const struct berth_manifest *m, const char *name)
{
	for (size_t i = 0; i < m->n_exports; i++)
		if (strcmp(m->exports[i].name, name) == 0)
			return &m->exports[i];
	return NULL;
}

/* ---------------------------------------------------------- open */

int berth_app_open(const char *app_dir, const struct berth_app_opts *o, struct berth_app **out,
		   struct berth_diags *d, struct berth_error *err)
{
	struct berth_app *a = calloc(1, sizeof *a);

	*out = NULL;
	if (a == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	a->o = *o;
	a->rpc = a->logfd = -1;
	a->exit_status = -1;
	berth_text_clean(a->actor, sizeof a->actor, o->actor != NULL ? o->actor : "");
	berth_policy_init(&a->p);
	if (berth_manifest_load(app_dir, app_dir, &a->m, d, err) < 0 ||
	    berth_app_resolve(app_dir, &a->m, o->state_root, o->dry, &a->paths, err) < 0 ||
	    berth_app_digest(a->paths.app_dir, a->digest, err) < 0 ||
	    berth_app_policy(&a->m, &a->paths, a->digest, getenv, &a->p, err) < 0 ||
	    (!o->dry && berth_audit_exposure_check(&a->p, NULL, 0, NULL, err) < 0)) {
		berth_app_close(a);
		return -1;
	}
	a->p.allow_degraded = o->allow_degraded;
	/* credentials: the secrets read now (never into the policy or the
	 * app's view), the run's CA bundle in the app's state directory */
	if (!o->dry && a->p.n_credentials > 0 &&
	    berth_cred_prepare_in(&a->p, a->paths.state_dir, &a->creds, err) < 0) {
		berth_app_close(a);
		return -1;
	}
	*out = a;
	return 0;
}

const struct berth_manifest *berth_app_manifest(const struct berth_app *a)
{
	return &a->m;
}

const struct berth_app_paths *berth_app_paths(const struct berth_app *a)
{
	return &a->paths;
}

const struct berth_policy *berth_app_policy_of(const struct berth_app *a)
{
	return &a->p;
}

bool berth_app_running(const struct berth_app *a)
{
	return a->sb != NULL;
}

/* ---------------------------------------------------------- the channel */

/* Every complete log line the app wrote so far, to the log callback. */
void berth_ap_drain_logs(struct berth_app *a)
{
	size_t budget = 256 * 1024; /* bytes per call: a flood cannot starve deadlines */
	char *line;
	size_t len;
	int r;

	if (a->logfd < 0)
		return;
	for (;;) {
		while ((r = berth_lines_next(&a->lin, &line, &len)) != 0)
			berth_ap_app_log(a, r == 1 ? "info" : "warning",
					 r == 1 ? line : "(a log line over 64 KiB was dropped)");
		if (a->lin.eof || budget == 0)
			break;
		long n = berth_lines_fill(&a->lin, a->logfd);
		if (n <= 0)
			break;
		budget = (size_t)n >= budget ? 0 : budget - (size_t)n;
	}
	if (a->lin.eof) {
		/* A last line without a newline; then stop watching the pipe
		 * (a closed pipe polls readable for ever). */
		while ((r = berth_lines_next(&a->lin, &line, &len)) != 0)
			berth_ap_app_log(a, "info", line);
		close(a->logfd);
		a->logfd = -1;
	}
}

void berth_ap_handle_notification(struct berth_app *a, const struct berth_appmsg *m)
{
	if (m->level != NULL) { /* berth/log: level and text parsed */
		berth_ap_app_log(a, m->level, m->text);
	} else if (m->method != NULL) {
		char buf[256];
		snprintf(buf, sizeof buf, "ignored an unexpected `%.120s` message from the app", m->method);
		berth_ap_app_log(a, "warning", buf);
	}
}

int berth_ap_next_line(struct berth_app *a, struct berth_appmsg *m)
{
	char *line;
	size_t len;
	int r;

	while ((r = berth_lines_next(&a->rin, &line, &len)) == 2)
		berth_ap_app_log(a, "warning", "dropped a protocol message over 1 MiB");
	if (r == 0)
		return 0;
	berth_appmsg_parse(line, len, m);
	return 1;
}

enum wait_result { GOT_MESSAGE, APP_DIED, TIMED_OUT, CHANNEL_BROKEN };

/*
 * Wait until the app sends one JSON-RPC message (parsed into *@m, to free
 * with berth_appmsg_free), while relaying its logs; lines that are no JSON
 * object are reported and skipped.
 */
static enum wait_result next_message(struct berth_app *a, long long deadline, struct berth_appmsg *m)
{
	for (;;) {
		if (berth_ap_next_line(a, m)) {
			if (m->kind == BERTH_APPMSG_BAD) {
				char buf[256];
				snprintf(buf, sizeof buf,
					 "the app sent a line that is not a JSON object (%.120s)", m->bad);
				berth_ap_app_log(a, "warning", buf);
				berth_appmsg_free(m);
				continue;
			}
			return GOT_MESSAGE;
		}
		if (a->rin.eof)
			return APP_DIED;
		long long left = deadline - berth_now_ms();
		if (left <= 0)
			return TIMED_OUT;
		struct pollfd p[3] = {
		    {a->rpc, POLLIN, 0}, {a->logfd, POLLIN, 0}, {berth_rt_pidfd(a->sb), POLLIN, 0}};
		if (poll(p, 3, (int)(left > 60000 ? 60000 : left)) < 0 && errno != EINTR)
			return CHANNEL_BROKEN;
		if (p[1].revents & (POLLIN | POLLHUP))
			berth_ap_drain_logs(a);
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			long n = berth_lines_fill(&a->rin, a->rpc);
			if (n < 0 && errno != EAGAIN)
				a->rin.eof = true;
		} else if (p[2].revents & POLLIN) {
			/* Dead, and nothing more to read on the channel. */
			berth_ap_drain_logs(a);
			return APP_DIED;
		}
	}
}

/* ---------------------------------------------------------- boot, stop */

/* A microVM's app (opts.runtime vm) starts and stops in seconds, not ms. */
static bool in_vm(const struct berth_app *a)
{
	return a->o.runtime == &berth_runtime_vm;
}

static void close_channel(struct berth_app *a)
{
	if (a->rpc >= 0)
		close(a->rpc);
	a->rpc = -1;
	if (a->logfd >= 0)
		berth_ap_drain_logs(a);
	if (a->logfd >= 0)
		close(a->logfd);
	a->logfd = -1;
	berth_lines_free(&a->rin);
	berth_lines_free(&a->lin);
}

/* Stop the sandbox (gracefully: end of file first, then the grace period);
 * pending calls stay pending. */
void berth_ap_stop_sandbox(struct berth_app *a, bool graceful)
{
	if (a->sb == NULL)
		return;
	if (!graceful)
		berth_rt_kill(a->sb);
	/* End of file on its channel asks the app to exit (docs/protocol.md). */
	if (graceful && a->rpc >= 0) {
		shutdown(a->rpc, SHUT_WR);
		long long deadline =
		    berth_now_ms() + (in_vm(a) ? BERTH_APP_STOP_GRACE_VM_MS : BERTH_APP_STOP_GRACE_MS);
		for (;;) {
			long long left = deadline - berth_now_ms();
			struct pollfd p[2] = {{berth_rt_pidfd(a->sb), POLLIN, 0}, {a->logfd, POLLIN, 0}};
			if (left <= 0 || poll(p, 2, (int)left) <= 0)
				break;
			if (p[1].revents & (POLLIN | POLLHUP))
				berth_ap_drain_logs(a);
			if (p[0].revents & POLLIN)
				break;
		}
	}
	if (a->exit_status < 0) {
		/* How it ended, for run.stop: still running after the grace
		 * period (or not asked to stop) means killed. */
		struct pollfd pd = {berth_rt_pidfd(a->sb), POLLIN, 0};
		if (poll(&pd, 1, 0) <= 0)
			berth_rt_kill(a->sb);
		berth_rt_wait(a->sb, &a->exit_status);
	}
	berth_rt_free(a->sb);
	a->sb = NULL;
	close_channel(a);
	berth_ap_audit_end(a); /* the broker stops here: its decisions are queued */
	a->out.len = 0;
	/* What was sent is lost with the app; what waits goes out again. */
	for (size_t i = 0; i < a->n_pend;)
		if (a->pend[i].sent)
			berth_ap_pend_remove(a, i);
		else
			i++;
}

void berth_app_stop(struct berth_app *a)
{
	if (a == NULL)
		return;
	/* Calls the app had are on record as ended by the stop. */
	for (size_t i = 0; a->sb != NULL && i < a->n_pend; i++)
		if (a->pend[i].recorded) {
			struct berth_call_error ce = {0};
			berth_ap_call_fail(&ce, BERTH_RPC_CRASHED, NULL,
					   "the app `%s` was stopped during the call", a->m.name);
			berth_ap_finish(a, &a->pend[i], NULL, &ce, false);
			berth_call_error_free(&ce);
		}
	berth_ap_stop_sandbox(a, true);
	/* Calls still owed are dropped: callers that track them (berth mcp)
	 * fail them before stopping. */
	while (a->n_pend > 0)
		berth_ap_pend_remove(a, a->n_pend - 1);
}

void berth_app_fds(const struct berth_app *a, int *log_fd, int *pid_fd)
{
	*log_fd = a->sb != NULL ? a->logfd : -1;
	*pid_fd = a->sb != NULL ? berth_rt_pidfd(a->sb) : -1;
}

static void idle_done(void *ctx, long long id, json_t *result, const struct berth_call_error *ce)
{
	(void)ctx;
	(void)id;
	(void)result;
	(void)ce;
}

bool berth_app_idle(struct berth_app *a)
{
	if (a->sb == NULL)
		return false;
	berth_app_process(a, idle_done, NULL);
	return a->sb == NULL;
}

void berth_app_close(struct berth_app *a)
{
	if (a == NULL)
		return;
	berth_app_stop(a);
	for (size_t i = 0; i < a->n_comp; i++) {
		json_decref(a->comp[i].result);
		berth_call_error_free(&a->comp[i].ce);
	}
	free(a->comp);
	berth_manifest_free(&a->m);
	berth_cred_run_free(a->creds);
	berth_policy_free(&a->p);
	free(a->pend);
	berth_outq_free(&a->out);
	free(a);
}

/* The announced exports (berth/ready's params.exports) against the
 * manifest's, compared by berth_appmsg_parity (appchan.h). */
static int check_parity(struct berth_app *a, const json_t *exports, struct berth_error *err)
{
	char missing[1024], extra[1024];
	int r = berth_appmsg_parity(exports, a->m.exports, a->m.n_exports, missing, extra, sizeof missing);

	if (r < 0)
		return berth_err(err, EPROTO, "the app `%s` announced no `exports` list in berth/ready",
				 a->m.name);
	if (r == 0)
		return 0;
	berth_err(err, 0, "the app `%s` serves other exports than %s declares: missing %s; extra %s",
		  a->m.name, a->paths.manifest, missing[0] ? missing : "none", extra[0] ? extra : "none");
	err->errnum = EPROTO; /* marks a parity failure (berth test: the app fails its test) */
	return berth_err_hint(err, "make the exports in %s and those the code registers the same",
			      a->paths.manifest);
}

int berth_app_boot(struct berth_app *a, unsigned long *boot_us, struct berth_error *err)
{
	int sv[2] = {-1, -1}, lp[2] = {-1, -1};
	cleanup_close int devnull = -1;
	long long t0 = berth_now_us(), deadline;
	struct berth_appmsg msg;

	if (a->sb != NULL)
		return 0;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 || pipe2(lp, O_CLOEXEC) < 0 ||
	    (devnull = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
		berth_err(err, errno, "cannot create the app's channel");
		goto fail;
	}
	if (berth_lines_init(&a->rin, BERTH_RPC_MAX_LINE) < 0 || berth_lines_init(&a->lin, 64 * 1024) < 0) {
		berth_err(err, ENOMEM, "out of memory");
		goto fail;
	}
	a->ro = (struct berth_runtime_opts){.force_off = a->o.force_off,
					    .quiet = a->o.quiet,
					    .has_stdio = true,
					    .stdio_fd = {devnull, lp[1], lp[1]},
					    .has_rpc = true,
					    .rpc_fd = sv[1],
					    .identity = berth_app_identity(a->paths.state_dir)};
	a->exit_status = -1;
	a->stop_reason = NULL;
	a->calls = 0;
	a->boot_ms = berth_now_ms();
	a->audit_refused = false;
	/* The run is recorded on a thread while the sandbox is built; the app
	 * starts only once that is durable (src/supervisor/run.h). */
	if (berth_ap_run_begin(a, err) < 0)
		goto fail;
	if (berth_run_start(&a->run, &a->ro, &a->sb, err) < 0) {
		berth_ap_run_failed(a);
		berth_err_wrap(err, "cannot boot the app `%s`", a->m.name);
		goto fail;
	}
	berth_ap_run_started(a);
	close(sv[1]);
	close(lp[1]);
	sv[1] = lp[1] = -1;
	a->rpc = sv[0];
	a->logfd = lp[0];
	fcntl(a->rpc, F_SETFL, O_NONBLOCK);
	fcntl(a->logfd, F_SETFL, O_NONBLOCK);
	berth_rt_enforced(a->sb, &a->enforced);

	/* The first message must be berth/ready. */
	int ready_ms = in_vm(a) ? BERTH_APP_BOOT_TIMEOUT_VM_MS : BERTH_APP_BOOT_TIMEOUT_MS;
	deadline = berth_now_ms() + ready_ms;
	for (;;) {
		enum wait_result w = next_message(a, deadline, &msg);
		if (w == TIMED_OUT) {
			berth_err(err, 0, "the app `%s` did not announce itself (berth/ready) within %d ms",
				  a->m.name, ready_ms);
			berth_err_hint(err, "the entry must start the SDK's run loop (see docs/protocol.md)");
			berth_rt_kill(a->sb); /* unresponsive: no grace period */
			goto stop;
		}
		if (w != GOT_MESSAGE) {
			berth_app_stop(a);
			berth_err(err, 0, "the app `%s` exited before it was ready", a->m.name);
			return berth_err_hint(err,
					      "its log above says why; run the entry by hand to debug it");
		}
		/* By the method alone, with an id or not (appchan.h). */
		if (msg.method != NULL && strcmp(msg.method, "berth/ready") == 0)
			break;
		if (msg.level != NULL) { /* berth/log */
			berth_ap_handle_notification(a, &msg);
			berth_appmsg_free(&msg);
			continue;
		}
		berth_appmsg_free(&msg);
		berth_err(err, EPROTO, "the app `%s` sent something other than berth/ready first", a->m.name);
		goto stop;
	}
	int parity = check_parity(a, msg.exports, err);
	berth_appmsg_free(&msg);
	if (parity < 0)
		goto stop;
	if (boot_us != NULL)
		*boot_us = (unsigned long)(berth_now_us() - t0);
	return 0;
stop:
	berth_app_stop(a);
	return -1;
fail:
	for (int i = 0; i < 2; i++) {
		if (sv[i] >= 0)
			close(sv[i]);
		if (lp[i] >= 0)
			close(lp[i]);
	}
	berth_lines_free(&a->rin);
	berth_lines_free(&a->lin);
	return -1;
}

/* ---------------------------------------------------------- denials */

static bool write_syscall(const char *sc)
{
	static const char *const reads[] = {"stat",       "lstat",    "fstatat", "statx",    "access",
					    "faccessat",  "readlink", "opendir", "getdents", "read",
					    "readdir",    "realpath", "listdir", "scandir",  "execve",
					    "readlinkat", NULL};

	if (sc == NULL)
		return true;
	for (int i = 0; reads[i] != NULL; i++)
		if (strcmp(sc, reads[i]) == 0)
			return false;
	return true;
}

/* @path made absolute in the sandbox and normalised (".", "..", "//"). */
static void sandbox_path(const char *path, char *out, size_t len)
{
	char buf[PATH_MAX];
	char *save = NULL;
	size_t n = 0;

	snprintf(buf, sizeof buf, "%s%s", path[0] == '/' ? "" : "/workspace/", path);
	out[0] = '\0';
	for (char *c = strtok_r(buf, "/", &save); c != NULL; c = strtok_r(NULL, "/", &save)) {
		if (strcmp(c, ".") == 0)
			continue;
		if (strcmp(c, "..") == 0) {
			char *slash = strrchr(out, '/');
			if (slash != NULL)
				*slash = '\0';
			n = strlen(out);
			continue;
		}
		n += (size_t)snprintf(out + n, n < len ? len - n : 0, "/%s", c);
	}
	if (out[0] == '\0')
		snprintf(out, len, "/");
}

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static bool context_writable(const struct berth_app *a)
{
	for (size_t i = 0; i < a->p.n_mounts; i++)
		if (strcmp(a->p.mounts[i].dst, "/context") == 0)
			return a->p.mounts[i].rw;
	return false;
}

/*
 * The fix for a refused destination: the pattern that declares it, the port
 * left out where the default ports (80 and 443) cover it.
 */
static void net_fix_pattern(const struct berth_host_decision *d, char *out, size_t len)
{
	bool v6 = d->is_literal && strchr(d->host, ':') != NULL;

	if (d->port == 80 || d->port == 443)
		snprintf(out, len, v6 ? "[%s]" : "%s", d->host);
	else
		snprintf(out, len, v6 ? "[%s]:%u" : "%s:%u", d->host, d->port);
}

char *berth_app_net_denial(const struct berth_app *a, const char *host, long long port)
{
	struct berth_host_pattern pats[BERTH_POLICY_ALLOW_HOSTS_MAX];
	struct berth_host_decision d;
	char chost[BERTH_HOST_NAME_MAX + 1], pat[BERTH_HOST_PATTERN_STRLEN + 8], fix[PATH_MAX + 600];
	size_t n = 0;
	char *out = NULL;

	if (host == NULL || port < 1 || port > 65535)
		return NULL;
	host = berth_text_clean(chost, sizeof chost, host);
	for (size_t i = 0; i < a->p.n_allow_hosts && n < BERTH_ARRAY_SIZE(pats); i++)
		if (berth_host_pattern_parse(a->p.allow_hosts[i], &pats[n], NULL, 0) == 0)
			n++;
	/* Only what the policy itself refuses is a denial: an app cannot have
	 * berth vouch for a refusal of a host its manifest declares. */
	if (berth_host_decide(pats, n, host, (unsigned)port, &d) != 0 || d.host[0] == '\0')
		return NULL;
	net_fix_pattern(&d, pat, sizeof pat);
	if (a->p.network == BERTH_NET_PROXY)
		snprintf(fix, sizeof fix, "add \"network:host:%s\" to capabilities in %s", pat,
			 a->paths.manifest);
	else
		snprintf(
		    fix, sizeof fix,
		    "add \"network:host:%s\" to capabilities in %s (the app then gets the egress broker)",
		    pat, a->paths.manifest);
	if (asprintf(&out,
		     "BERTH CAPABILITY DENIAL\n"
		     "app: %s   manifest: %s\n"
		     "denied: connect(2) to %s%s%s:%lld (%s)\n"
		     "denied-by: berth's egress policy compiled from \"%s\"'s berth.yml — the sandbox "
		     "connects only through berth's broker (Landlock: its ports only), which lets "
		     "through only the declared hosts (network:host capabilities)\n"
		     "fix: %s\n",
		     a->m.name, a->paths.manifest, strchr(d.host, ':') ? "[" : "", d.host,
		     strchr(d.host, ':') ? "]" : "", port, d.reason, a->m.name, fix) < 0)
		return NULL;
	return out;
}

char *berth_app_denial(const struct berth_app *a, const char *errno_name, const char *syscall,
		       const char *path)
{
	static const char *const roots[] = {"/workspace", "/context", "/tmp"};
	char abs[PATH_MAX], fix[PATH_MAX + 512], by[512], scope[PATH_MAX];
	const char *root = NULL;
	bool write = write_syscall(syscall);
	char *out = NULL;
	int e;

	if (errno_name == NULL || path == NULL ||
	    (strcmp(errno_name, "EACCES") != 0 && strcmp(errno_name, "EPERM") != 0 &&
	     strcmp(errno_name, "EROFS") != 0))
		return NULL;
	e = strcmp(errno_name, "EACCES") == 0 ? EACCES : strcmp(errno_name, "EPERM") == 0 ? EPERM : EROFS;
	/* The path and call name come from the app: never raw on a terminal. */
	char cpath[PATH_MAX], csys[64];
	path = berth_text_clean(cpath, sizeof cpath, path);
	syscall = syscall != NULL ? berth_text_clean(csys, sizeof csys, syscall) : NULL;
	sandbox_path(path, abs, sizeof abs);
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(roots); i++)
		if (under(abs, roots[i]))
			root = roots[i];
	/* What the app reports is checked against the policy: EROFS where the
	 * sandbox has no read-only mount is not a denial berth can explain. */
	if (e == EROFS && root != NULL && !(strcmp(root, "/context") == 0 && !context_writable(a)))
		return NULL;

	/* What enforced it, as measured at boot. */
	if (e == EROFS)
		snprintf(by, sizeof by,
			 "the kernel — a read-only mount in the sandbox berth built from \"%s\"'s berth.yml",
			 a->m.name);
	else if (a->enforced.landlock_abi >= 4)
		snprintf(by, sizeof by,
			 "the kernel — Landlock ruleset (ABI %d, fully enforced) compiled from \"%s\"'s "
			 "berth.yml, "
			 "applied before the app's first line ran",
			 a->enforced.landlock_abi, a->m.name);
	else if (a->enforced.landlock_abi > 0)
		snprintf(by, sizeof by,
			 "the kernel — Landlock ruleset (ABI %d, partially enforced: this kernel lacks later "
			 "rights) "
			 "compiled from \"%s\"'s berth.yml, applied before the app's first line ran",
			 a->enforced.landlock_abi, a->m.name);
	else
		snprintf(by, sizeof by,
			 "the kernel's file permissions only — Landlock is NOT enforced for \"%s\" "
			 "(--allow-degraded)",
			 a->m.name);

	/* What would help. */
	if (under(abs, "/app"))
		snprintf(fix, sizeof fix,
			 "none available — /app is the app's own code, read-only by design; "
			 "write under /workspace instead");
	else if (root == NULL)
		snprintf(
		    fix, sizeof fix,
		    "none available — a filesystem scope may only name /workspace, /context, /tmp, /app");
	else {
		bool covered = false;
		for (size_t i = 0; i < a->p.n_grants; i++)
			if (under(abs, a->p.grants[i].path) && (a->p.grants[i].write || !write))
				covered = true;
		/* The directory that holds the path (or the scope root itself). */
		snprintf(scope, sizeof scope, "%s", abs);
		char *slash = strrchr(scope, '/');
		if (slash != NULL && slash != scope && strlen(scope) > strlen(root) &&
		    (size_t)(slash - scope) >= strlen(root))
			*slash = '\0';
		if (strcmp(scope, abs) == 0 && strcmp(abs, root) != 0)
			snprintf(scope, sizeof scope, "%s", root);
		if (covered)
			snprintf(fix, sizeof fix,
				 "none available — \"%s\" already declares access to %s; the kernel refused "
				 "for another reason (%s)",
				 a->m.name, abs, errno_name);
		else
			snprintf(fix, sizeof fix, "add \"filesystem:%s:%s\" to capabilities in %s",
				 write ? "write" : "read", scope, a->paths.manifest);
	}
	char msg[128];
	snprintf(msg, sizeof msg, "%s", strerror(e));
	if (msg[0] >= 'A' && msg[0] <= 'Z')
		msg[0] = (char)(msg[0] - 'A' + 'a');
	if (asprintf(&out,
		     "BERTH CAPABILITY DENIAL\n"
		     "app: %s   manifest: %s\n"
		     "denied: %s(2) on %s (%s: %s)\n"
		     "denied-by: %s\n"
		     "fix: %s\n",
		     a->m.name, a->paths.manifest, syscall != NULL ? syscall : "a system call", path,
		     errno_name, msg, by, fix) < 0)
		return NULL;
	return out;
}
