/* SPDX-License-Identifier: MIT */
/*
 * channel.c - step 5 of the vm runtime's start (vm_int.h): the host's half
 * of sync 1 to 3 on the channel (src/vm/proto.h, docs/vm.md).
 *
 *   sync 1  HELLO from the guest (within the boot deadline); POLICY (the
 *           policy's canonical JSON, the bytes the host digests) and START
 *   sync 2  READY: the guest's namespace runtime built the sandbox; the
 *           supervisor's before_release runs here, and its on_egress with
 *           --network proxy (relay.c, berth_vm_egress_start), then GO 2
 *   sync 3  MEASURE: the command measured what is enforced; on_measured,
 *           then GO 3 and the command's execve
 * A hook that fails sends no GO: the command never passes the point it
 * waits at, and the caller kills the VM.  An ERROR frame instead of READY
 * or MEASURE is the guest's berth_error: it becomes this run's.
 */
#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "../util/sha256.h"
#include "../util/sys.h"
#include "vm_int.h"

char *berth_vm_start_json(const struct vm_rt *vm, const char *digest, struct berth_error *err)
{
	struct passwd *pw = getpwuid(getuid());
	char user[64], home[128];
	json_t *env = json_array(), *j;
	char *s;

	snprintf(user, sizeof user, "%s", pw != NULL && pw->pw_name[0] != '\0' ? pw->pw_name : "berth");
	snprintf(home, sizeof home, "/home/%s", user);
	/* the values the canonical JSON replaced by their sha256 */
	for (size_t i = 0; env != NULL && i < vm->p->n_env; i++)
		json_array_append_new(env, json_pack("{s:s, s:s}", "name", vm->p->env[i].name, "value",
						     vm->p->env[i].value != NULL ? vm->p->env[i].value : ""));
	/* what the guest's namespace runtime needs that the canonical JSON
	 * does not hold: the env values, the evidence copy's path, whether a
	 * limit was given (its notices), the host's TERM and LANG it passes on,
	 * whether the command gets an RPC channel (fd 3, chan BERTH_VM_RPC),
	 * how many HOME frames came before (a session's seeded home) */
	j = json_pack("{s:s, s:s, s:I, s:I, s:s, s:s, s:o, s:b, s:i, s:i, s:b, s:b, s:b, s:b, s:I}", "digest",
		      digest, "run_id", vm->run_id, "uid", (json_int_t)vm->uid, "gid", (json_int_t)vm->gid,
		      "user", user, "home", home, "env", env, "tty", vm->io.tty, "rows", (int)vm->rows,
		      "cols", (int)vm->cols, "memory_set", vm->p->memory_set, "cpus_set", vm->p->cpus_set,
		      "pids_set", vm->p->pids_set, "rpc", vm->o->has_rpc, "home_files",
		      (json_int_t)vm->o->n_home_files);
	/* the optional ones absent, not null, when there is none */
	const char *opt[][2] = {
	    {"evidence_dir", vm->p->evidence_dir}, {"term", getenv("TERM")}, {"lang", getenv("LANG")}};
	for (size_t i = 0; j != NULL && i < sizeof opt / sizeof opt[0]; i++)
		if (opt[i][1] != NULL)
			json_object_set_new(j, opt[i][0], json_string(opt[i][1]));
	s = j != NULL ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(j);
	if (s == NULL)
		berth_err(err, ENOMEM, "out of memory");
	return s;
}

/* The guest's ERROR payload as this run's error. */
static int guest_error(const struct berth_vm_frame *f, struct berth_error *err)
{
	json_t *j = json_loadb((const char *)f->payload, f->len, 0, NULL);
	json_int_t st = json_integer_value(json_object_get(j, "status"));
	const char *m = json_string_value(json_object_get(j, "message"));
	const char *h = json_string_value(json_object_get(j, "hint"));

	if (m == NULL) {
		json_decref(j);
		return berth_err(err, 0, "the microVM guest sent a malformed ERROR frame");
	}
	berth_err_status(err, 0, st > 0 && st < 256 ? (int)st : BERTH_EXIT_INTERNAL, "%s", m);
	if (h != NULL && h[0] != '\0')
		berth_err_hint(err, "%s", h);
	json_decref(j);
	return -1;
}

/* The guest ended (or was never there) before @what: its console's last
 * line says why, more often than not. */
static int vm_gone(const struct vm_rt *vm, const char *what, struct berth_error *err)
{
	char tail[256];

	berth_vm_console_tail(vm, tail, sizeof tail);
	berth_err(err, 0, "the microVM ended before %s; its console's last line: `%s`", what,
		  tail[0] ? tail : "(empty)");
	return berth_vm_logs_hint(vm, err);
}

/* berth run's signals before the command runs: SIGINT, SIGTERM... end the
 * boot (status 128+N, as the command's death by it would); SIGWINCH and
 * SIGCHLD wait.  True when @err is filled. */
static bool interrupted(struct vm_rt *vm, struct berth_error *err)
{
	struct signalfd_siginfo si;

	while (read(vm->sfd, &si, sizeof si) == (ssize_t)sizeof si)
		if (si.ssi_signo != SIGCHLD && si.ssi_signo != SIGWINCH) {
			berth_err_status(err, 0, 128 + (int)si.ssi_signo,
					 "the microVM's start was interrupted by signal %u", si.ssi_signo);
			return true;
		}
	return false;
}

/*
 * The next frame of type @want (DATA before it is written out: a notice of
 * the guest's), within @ms.  Returns 1 with *@f, or -1 with @err: the
 * guest's ERROR, the VM gone, the deadline, a malformed frame.
 */
static int expect(struct vm_rt *vm, uint16_t want, const char *what, int ms, struct berth_vm_frame *f,
		  struct berth_error *err)
{
	for (;;) {
		struct berth_error re = {0};
		int r = berth_vm_read(vm->chan, vm->rd, f, &re);
		if (r < 0)
			return re.errnum == 0 && strstr(re.msg, "closed") != NULL ? vm_gone(vm, what, err)
										  : (*err = re, -1);
		if (r == 1) {
			if (f->type == want)
				return 1;
			if (f->type == BERTH_VM_ERROR)
				return guest_error(f, err);
			if (f->type == BERTH_VM_DATA)
				berth_vm_data_out(vm, f->chan, f->payload, f->len);
			else if (f->type != BERTH_VM_EOF)
				return berth_err(
				    err, 0, "the microVM guest sent frame type %u while berth waited for %s",
				    f->type, what);
			continue;
		}
		struct pollfd p[3] = {
		    {vm->chan, POLLIN, 0}, {vm->qemu_pidfd, POLLIN, 0}, {vm->sfd, POLLIN, 0}};
		int64_t t0 = berth_now_ms();
		int n = poll(p, 3, ms);
		if (n > 0 && (p[2].revents & POLLIN) && interrupted(vm, err))
			return -1;
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0) {
			char tail[256];
			berth_vm_console_tail(vm, tail, sizeof tail);
			berth_err(err, ETIMEDOUT,
				  "the microVM sent no %s within %d s; its console's last line: `%s`", what,
				  ms / 1000, tail[0] ? tail : "(empty)");
			return berth_vm_logs_hint(vm, err);
		}
		ms -= (int)(berth_now_ms() - t0);
		if (ms < 0)
			ms = 0;
		if (!(p[0].revents & (POLLIN | POLLHUP)) && (p[1].revents & POLLIN))
			return vm_gone(vm, what, err);
	}
}

static int send_go(struct vm_rt *vm, uint32_t n, struct berth_error *err)
{
	unsigned char b[4];

	berth_vm_put_u32(b, n);
	return berth_vm_write(vm->chan, BERTH_VM_GO, 0, b, sizeof b, err);
}

int berth_vm_home_frame(const struct berth_home_file *f, unsigned char **out, size_t *len,
			struct berth_error *err)
{
	size_t pl = strlen(f->path);

	*out = NULL;
	*len = pl + 1 + f->len;
	if (pl == 0 || *len > BERTH_VM_PAYLOAD_MAX) {
		berth_usage_err(err,
				"the seeded home's `~/%s` is %zu bytes, over the %zu bytes of a file the vm "
				"runtime's channel carries (its HOME frame: %d less the path and a NUL)",
				f->path, f->len,
				pl < BERTH_VM_PAYLOAD_MAX ? BERTH_VM_PAYLOAD_MAX - pl - 1 : 0,
				BERTH_VM_PAYLOAD_MAX);
		return berth_err_hint(err, "seed a smaller file, or use `--runtime namespace`");
	}
	if ((*out = malloc(*len)) == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	memcpy(*out, f->path, pl + 1);
	if (f->len > 0)
		memcpy(*out + pl + 1, f->data, f->len);
	return 0;
}

/* The seeded home's files, one HOME frame each (proto.h). */
static int send_home(struct vm_rt *vm, struct berth_error *err)
{
	for (size_t i = 0; i < vm->o->n_home_files; i++) {
		unsigned char *b;
		size_t n;
		int r;
		if (berth_vm_home_frame(&vm->o->home_files[i], &b, &n, err) < 0)
			return -1;
		r = berth_vm_write(vm->chan, BERTH_VM_HOME, 0, b, n, err);
		free(b);
		if (r < 0)
			return -1;
	}
	return 0;
}

/* sync 1: HELLO, then POLICY, the seeded home (HOME) and START. */
static int sync1(struct vm_rt *vm, struct berth_error *err)
{
	struct berth_vm_frame f;
	char digest[65], *policy, *start;
	int r = -1;

	if (expect(vm, BERTH_VM_HELLO, "its HELLO", vm->boot_timeout_ms, &f, err) < 0)
		return -1;
	json_t *h = json_loadb((const char *)f.payload, f.len, 0, NULL);
	if (json_integer_value(json_object_get(h, "proto")) != BERTH_VM_PROTO_VERSION) {
		json_decref(h);
		berth_err(err, 0, "the microVM guest speaks another protocol than this berth (HELLO `%.*s`)",
			  (int)(f.len < 200 ? f.len : 200), (const char *)f.payload);
		return berth_err_hint(err, "run `berth vm install` again: the guest comes with this berth");
	}
	vm->hello_landlock_abi = (int)json_integer_value(json_object_get(h, "landlock_abi"));
	snprintf(vm->hello_kernel, sizeof vm->hello_kernel, "%s",
		 json_is_string(json_object_get(h, "kernel"))
		     ? json_string_value(json_object_get(h, "kernel"))
		     : "");
	json_decref(h);
	policy = berth_policy_to_json(vm->p, false, err);
	if (policy == NULL)
		return -1;
	if (strlen(policy) > BERTH_VM_PAYLOAD_MAX) {
		free(policy);
		return berth_err(err, E2BIG,
				 "the policy's JSON is over %d bytes: the microVM channel cannot carry it",
				 BERTH_VM_PAYLOAD_MAX);
	}
	/* the digest of exactly the bytes sent: the guest checks both */
	if (berth_sha256_hex(policy, strlen(policy), digest, err) == 0 &&
	    (start = berth_vm_start_json(vm, digest, err)) != NULL) {
		if (berth_vm_write(vm->chan, BERTH_VM_POLICY, 0, policy, strlen(policy), err) == 0 &&
		    send_home(vm, err) == 0 &&
		    berth_vm_write(vm->chan, BERTH_VM_START, 0, start, strlen(start), err) == 0)
			r = 0;
		free(start);
	}
	free(policy);
	return r;
}

int berth_vm_handshake(struct vm_rt *vm, struct berth_error *err)
{
	struct berth_vm_frame f;
	const struct berth_run_hooks *hk = &vm->o->hooks;

	if (sync1(vm, err) < 0)
		return -1;
	/* sync 2 */
	if (expect(vm, BERTH_VM_READY, "READY (its sandbox built)", vm->boot_timeout_ms, &f, err) < 0)
		return -1;
	if (hk->on_terminal != NULL && vm->pty_master >= 0)
		hk->on_terminal(hk->arg, vm->pty_master);
	if (hk->before_release != NULL && hk->before_release(hk->arg, err) < 0)
		return -1;
	if (vm->p->network == BERTH_NET_PROXY && berth_vm_egress_start(vm, err) < 0)
		return -1;
	if (send_go(vm, 2, err) < 0)
		return -1;
	/* sync 3 */
	if (expect(vm, BERTH_VM_MEASURE, "its measurement", vm->boot_timeout_ms, &f, err) < 0)
		return -1;
	if (f.len != sizeof vm->meas) {
		berth_err(
		    err, 0,
		    "the microVM guest's measurement is %u bytes, not %zu: its init is of another build",
		    f.len, sizeof vm->meas);
		return berth_err_hint(err,
				      "run `berth vm install` again: the guest's init comes with this berth");
	}
	memcpy(&vm->meas, f.payload, sizeof vm->meas);
	/* what ran is the host's to say, not the guest's bytes */
	snprintf(vm->meas.runtime, sizeof vm->meas.runtime, "vm");
	snprintf(vm->meas.vm_kernel_sha256, sizeof vm->meas.vm_kernel_sha256, "%s", vm->kernel_sha256);
	snprintf(vm->meas.vm_initramfs_sha256, sizeof vm->meas.vm_initramfs_sha256, "%s",
		 vm->initramfs_sha256);
	snprintf(vm->meas.vm_accel, sizeof vm->meas.vm_accel, "%s", vm->accel != NULL ? vm->accel : "");
	snprintf(vm->meas.vm_guest_kernel, sizeof vm->meas.vm_guest_kernel, "%s", vm->hello_kernel);
	vm->measured = true;
	if (hk->on_measured != NULL && hk->on_measured(hk->arg, vm->run_id, &vm->meas, err) < 0)
		return -1;
	return send_go(vm, 3, err);
}
