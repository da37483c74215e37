/* SPDX-License-Identifier: MIT */
/*
 * guest_driver.c - a stand-in for the host runtime, for tests/vm/guest-harness.sh
 * (a developer tool until `berth run --runtime vm` and its tests replace it):
 * connects to qemu's end of the channel (a unix socket), compiles a policy
 * from `berth run` flags, sends POLICY and START, answers READY and MEASURE
 * with GO, prints the command's output and exits with its status.
 *
 * usage: guest_driver SOCKET [--corrupt] [--pretty] [--uid U] [--gid G] [--user NAME]
 *                    [--tty] [--winsz ROWS COLS] [--signal N] [--hangup] [--stdin TEXT]
 *                    -- BERTH-RUN-FLAGS... -- COMMAND...
 *   --corrupt  change one byte of POLICY after its digest was taken (the
 *              guest must refuse it with ERROR)
 *   --pretty   send the policy's indented JSON, with its own digest: the
 *              same policy, but not the canonical bytes (refused too)
 *   --winsz, --signal  sent once the command printed something (its first
 *              DATA frame: it runs, and whatever it sets up first is done)
 *   --stdin    TEXT as the command's stdin (sent with START, before the
 *              command runs: the guest keeps it), then its end
 *   --hangup   close the channel once the command runs, and exit 0 (the
 *              guest must kill the sandbox and power off)
 * Prints `hello: JSON`, `ready`, `measure: N bytes`, `error: JSON` and
 * `exit: N` lines on stderr; the command's stdout and stderr on its own.
 * Exits with the command's status, 125 after an ERROR, 3 on a protocol
 * failure.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "policy/flags.h"
#include "policy/policy.h"
#include "sandbox/measure.h"
#include "util/sha256.h"
#include "vm/proto.h"

static struct berth_vm_reader rd;

static __attribute__((noreturn)) void die(const char *what, const struct berth_error *err)
{
	fprintf(stderr, "guest_driver: %s: %s%s%s\n", what, err != NULL ? err->msg : strerror(errno),
		err != NULL && err->hint[0] ? "; hint: " : "", err != NULL ? err->hint : "");
	exit(3);
}

static int connect_to(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
	for (int i = 0; i < 300; i++) {
		if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0)
			return fd;
		usleep(100000);
	}
	die("connect", NULL);
}

static void go(int fd, uint32_t n)
{
	unsigned char b[4];
	struct berth_error err = {0};

	berth_vm_put_u32(b, n);
	if (berth_vm_write(fd, BERTH_VM_GO, 0, b, 4, &err) < 0)
		die("GO", &err);
}

static char *start_json(const struct berth_policy *p, const char *digest, long uid, long gid,
			const char *user, bool tty)
{
	json_t *env = json_array();
	char home[256];
	char *s;

	for (size_t i = 0; i < p->n_env; i++)
		json_array_append_new(env, json_pack("{s:s, s:s}", "name", p->env[i].name, "value",
						     p->env[i].value != NULL ? p->env[i].value : ""));
	snprintf(home, sizeof home, "/home/%s", user);
	json_t *j = json_pack("{s:s, s:s, s:i, s:i, s:s, s:s, s:o, s:b, s:i, s:i}", "digest", digest,
			      "run_id", "0123456789abcdef", "uid", (int)uid, "gid", (int)gid, "user", user,
			      "home", home, "env", env, "tty", tty, "rows", 24, "cols", 80);
	s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(j);
	return s;
}

/* What the options send once the command has printed. */
static void after_output(int fd, long rows, long cols, long sig)
{
	struct berth_error err = {0};
	unsigned char b[4];

	if (rows > 0) {
		berth_vm_put_u16(b, (uint16_t)rows);
		berth_vm_put_u16(b + 2, (uint16_t)cols);
		if (berth_vm_write(fd, BERTH_VM_WINSZ, 0, b, 4, &err) < 0)
			die("WINSZ", &err);
	}
	if (sig > 0) {
		berth_vm_put_u32(b, (uint32_t)sig);
		if (berth_vm_write(fd, BERTH_VM_SIGNAL, 0, b, 4, &err) < 0)
			die("SIGNAL", &err);
	}
}

/* The measurement's verdict against the policy sent (docs/attest.md), as
 * the host runtime records it: `verdict: NAME`, one `reason:` line per
 * shortfall, and the limits the command measured. */
static void verdict(const unsigned char *b, const struct berth_policy *p)
{
	struct berth_measure m;
	json_t *reasons = NULL, *r;
	size_t i;

	memcpy(&m, b, sizeof m);
	fprintf(stderr, "verdict: %s\n", berth_verdict_name(berth_measure_verdict(&m, p, &reasons)));
	json_array_foreach(reasons, i, r)
		fprintf(stderr, "reason: %s\n", json_string_value(r));
	json_decref(reasons);
	fprintf(stderr,
		"limits: mode %d memory %llu pids %llu landlock_abi %d seccomp %d nnp %d cap_eff %llx\n",
		m.limits_mode, (unsigned long long)m.cg_memory, (unsigned long long)m.cg_pids, m.landlock_abi,
		m.seccomp_mode, m.no_new_privs, (unsigned long long)m.cap_eff);
}

int main(int argc, char **argv)
{
	struct berth_error err = {0};
	struct berth_run_opts o;
	bool corrupt = false, pretty = false, tty = false, hangup = false, printed = false;
	long rows = 0, cols = 0, sig = 0;
	long uid = 1000, gid = 1000;
	const char *user = "berth", *input = NULL;
	char hex[65], *policy, *start;
	int i = 2, fd;

	if (argc < 3) {
		fprintf(stderr, "usage: guest_driver SOCKET [--corrupt] [--pretty] [--uid U] [--gid G] "
				"[--user NAME] [--tty] "
				"-- BERTH-RUN-FLAGS...\n");
		return 2;
	}
	for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--corrupt") == 0)
			corrupt = true;
		else if (strcmp(argv[i], "--pretty") == 0)
			pretty = true;
		else if (strcmp(argv[i], "--tty") == 0)
			tty = true;
		else if (strcmp(argv[i], "--uid") == 0 && i + 1 < argc)
			uid = atol(argv[++i]);
		else if (strcmp(argv[i], "--gid") == 0 && i + 1 < argc)
			gid = atol(argv[++i]);
		else if (strcmp(argv[i], "--user") == 0 && i + 1 < argc)
			user = argv[++i];
		else if (strcmp(argv[i], "--signal") == 0 && i + 1 < argc)
			sig = atol(argv[++i]);
		else if (strcmp(argv[i], "--stdin") == 0 && i + 1 < argc)
			input = argv[++i];
		else if (strcmp(argv[i], "--hangup") == 0)
			hangup = true;
		else if (strcmp(argv[i], "--winsz") == 0 && i + 2 < argc) {
			rows = atol(argv[++i]);
			cols = atol(argv[++i]);
		}
	}
	/* argv[i] is "--": what follows is `berth run`'s, with argv[i] as its argv[0] */
	if (i >= argc || berth_run_parse(argc - i, argv + i, getenv, &o, &err) < 0)
		die("berth run flags", &err);
	policy = berth_policy_to_json(&o.policy, pretty, &err);
	if (policy == NULL || berth_sha256_hex(policy, strlen(policy), hex, &err) < 0)
		die("policy", &err);
	start = start_json(&o.policy, hex, uid, gid, user, tty);
	if (corrupt)
		policy[strlen(policy) / 2] ^= 0x01;
	fd = connect_to(argv[1]);
	berth_vm_reader_init(&rd);
	for (;;) {
		struct berth_vm_frame f;
		if (berth_vm_read(fd, &rd, &f, &err) <= 0)
			die("the channel", &err);
		switch (f.type) {
		case BERTH_VM_HELLO:
			fprintf(stderr, "hello: %.*s\n", (int)f.len, (const char *)f.payload);
			if (berth_vm_write(fd, BERTH_VM_POLICY, 0, policy, strlen(policy), &err) < 0 ||
			    berth_vm_write(fd, BERTH_VM_START, 0, start, strlen(start), &err) < 0 ||
			    (input != NULL && berth_vm_write(fd, BERTH_VM_DATA, BERTH_VM_STDIN, input,
							     strlen(input), &err) < 0) ||
			    berth_vm_write(fd, BERTH_VM_EOF, BERTH_VM_STDIN, NULL, 0, &err) < 0)
				die("POLICY and START", &err);
			break;
		case BERTH_VM_READY:
			fprintf(stderr, "ready\n");
			go(fd, 2);
			break;
		case BERTH_VM_MEASURE:
			fprintf(stderr, "measure: %u bytes%s\n", f.len,
				f.len == sizeof(struct berth_measure) ? "" : " (not this build's size)");
			if (f.len != sizeof(struct berth_measure))
				return 3;
			verdict(f.payload, &o.policy);
			go(fd, 3);
			if (hangup) {
				fprintf(stderr, "hangup\n");
				return 0;
			}
			break;
		case BERTH_VM_DATA:
			if (write(f.chan == BERTH_VM_STDERR ? 2 : 1, f.payload, f.len) < 0)
				return 3;
			if (!printed)
				after_output(fd, rows, cols, sig);
			printed = true;
			break;
		case BERTH_VM_EOF:
			break;
		case BERTH_VM_ERROR:
			fprintf(stderr, "error: %.*s\n", (int)f.len, (const char *)f.payload);
			return 125;
		case BERTH_VM_EXIT:
			if (f.len != 4)
				return 3;
			fprintf(stderr, "exit: %d\n", (int)berth_vm_get_u32(f.payload));
			return (int)berth_vm_get_u32(f.payload);
		default:
			fprintf(stderr, "guest_driver: unexpected frame type %u\n", f.type);
			return 3;
		}
	}
}
