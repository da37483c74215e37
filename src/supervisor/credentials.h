/* SPDX-License-Identifier: MIT */
/*
 * credentials.h - the supervisor's side of injected credentials
 * (docs/credentials.md): each bound secret read from its source into locked
 * memory, its placeholder made and given to the command, the run's CA made
 * and its certificate put in the sandbox's view; what the egress broker
 * needs to inject them (src/broker/broker.h, struct berth_broker_cred).
 */
#ifndef BERTH_SUPERVISOR_CREDENTIALS_H
#define BERTH_SUPERVISOR_CREDENTIALS_H

#include "../broker/broker.h"
#include "../policy/credential.h"
#include "../policy/policy.h"
#include "../util/error.h"

/* Where the sandbox finds the bundle (the host's trust store and the run's CA). */
#define BERTH_CRED_BUNDLE "/etc/ssl/certs/ca-certificates.crt"

struct berth_cred_run {
	struct berth_broker_cred creds[BERTH_CRED_MAX];
	size_t n;
	char *secrets[BERTH_CRED_MAX]; /* sodium_malloc(3): locked, guarded, cleared on free */
	char placeholders[BERTH_CRED_MAX][BERTH_CRED_NAME_MAX + 48];
	struct berth_tls_ca *ca;
};

/*
 * berth_cred_prepare - for @p's credentials (none: *@out NULL, 0): read
 * each secret from its source (env: the caller's variable, then cleared in
 * berth's environ; file: a regular file of the caller's with no group or
 * other permission bits; cmd: `/bin/sh -c` with stdin /dev/null, exit
 * status 0), one trailing newline dropped, 1 to BERTH_CRED_SECRET_MAX
 * printable ASCII bytes; set NAME to a placeholder `berth-cred-NAME-<32 hex>`
 * in @p's environment; make the CA for the bound hosts; write the host's
 * BERTH_CRED_BUNDLE with the CA's certificate appended into the run's
 * directory (@run_id, 0700) and bind it read-only over BERTH_CRED_BUNDLE;
 * set SSL_CERT_FILE, NODE_EXTRA_CA_CERTS, REQUESTS_CA_BUNDLE,
 * CURL_CA_BUNDLE and GIT_SSL_CAINFO to it.  Call after the widenings are
 * confirmed (a cmd: source runs a command) and before the sandbox is made.
 * Returns 0, or -1 with @err: a usage error (status 2) naming the binding
 * and its source (unset variable, file not private, command failed, a value
 * empty, too long or not printable; never the value), a host without
 * BERTH_CRED_BUNDLE, ENOMEM, or the error of a read or write.
 */
int berth_cred_prepare(struct berth_policy *p, const char *run_id, struct berth_cred_run **out,
		       struct berth_error *err);

/*
 * berth_cred_set_env - @name=@value in @p's environment (an earlier value
 * of the same name replaced, cleared first).  Returns 0, or -1 (ENOMEM).
 */
int berth_cred_set_env(struct berth_policy *p, const char *name, const char *value, struct berth_error *err);

/*
 * berth_cred_add_mount - the host file or directory @src (resolved)
 * mounted read-only at @dst in @p's view.  Returns 0, or -1 with @err.
 */
int berth_cred_add_mount(struct berth_policy *p, const char *src, const char *dst, struct berth_error *err);

/*
 * berth_cred_prepare_in - berth_cred_prepare() with the bundle written in
 * @dir (a directory of berth's, 0700, not in the sandbox's view: an app's
 * state directory), an earlier bundle there replaced.
 */
int berth_cred_prepare_in(struct berth_policy *p, const char *dir, struct berth_cred_run **out,
			  struct berth_error *err);

/* berth_cred_run_free - clear and free the secrets, the CA and @r.  Safe on NULL. */
void berth_cred_run_free(struct berth_cred_run *r);

#endif
