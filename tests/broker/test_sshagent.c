/* SPDX-License-Identifier: MIT */
/*
 * test_sshagent.c - berth run --ssh's pure parts: fingerprints and key lines
 * (src/policy/sshkey.c), the agent protocol the relay parses
 * (src/supervisor/agentproto.c), --ssh/--ssh-host in the policy and its
 * canonical JSON read back (src/policy/flags_ssh.c, from_json.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy/flags.h"
#include "policy/policy.h"
#include "policy/sshkey.h"
#include "supervisor/agentproto.h"

/* GitHub's Ed25519 host key and its published fingerprint */
#define GH_ED "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"
#define GH_FP "SHA256:+DiY3wvvV6TuJJhbpZisF/zLDA0zPMSvHdkr4UvCOqU"

static struct berth_ssh_pubkey key;

static void test_fingerprint(void **state)
{
	(void)state;
	char why[128], fp[BERTH_SSH_FP_LEN], line[256];

	assert_int_equal(
	    berth_ssh_pubkey_parse(GH_ED " a comment", strlen(GH_ED) + 10, false, &key, why, sizeof why), 1);
	assert_string_equal(key.type, "ssh-ed25519");
	assert_int_equal(key.blob_len, 51);
	berth_ssh_fingerprint(key.blob, key.blob_len, fp);
	assert_string_equal(fp, GH_FP); /* as ssh-keygen -l prints it */
	assert_true(berth_ssh_fp_valid(GH_FP));
	assert_int_equal(berth_ssh_pubkey_line(&key, line, sizeof line), (int)strlen(GH_ED));
	assert_string_equal(line, GH_ED);
	/* a known_hosts line: the names are not the key */
	const char *kh = "github.com,[gh]:22 " GH_ED;
	assert_int_equal(berth_ssh_pubkey_parse(kh, strlen(kh), true, &key, why, sizeof why), 1);
	assert_string_equal(key.type, "ssh-ed25519");
	assert_int_equal(berth_ssh_pubkey_parse("# c", 3, true, &key, why, sizeof why), 0);
	assert_int_equal(berth_ssh_pubkey_parse("   ", 3, true, &key, why, sizeof why), 0);
	/* refusals */
	static const char *const bad[] = {"ssh-rsa "
					  "AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GK"
					  "Jl", /* type mismatch */
					  "ssh-ed25519 AAAA!!", "ssh-ed25519", "SSH-ED25519 AAAA",
					  "@revoked * " GH_ED};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_int_equal(berth_ssh_pubkey_parse(bad[i], strlen(bad[i]), true, &key, why, sizeof why),
				 -1);
	static const char *const badfp[] = {
	    "SHA256:+DiY3wvvV6TuJJhbpZisF/zLDA0zPMSvHdkr4UvCOqV", /* not canonical */
	    "SHA256:+DiY3wvvV6TuJJhbpZisF/zLDA0zPMSvHdkr4UvCOq", "MD5:aa:bb",
	    "sha256:+DiY3wvvV6TuJJhbpZisF/zLDA0zPMSvHdkr4UvCOqU", ""};
	for (size_t i = 0; i < sizeof badfp / sizeof badfp[0]; i++)
		assert_false(berth_ssh_fp_valid(badfp[i]));
}

/* ---- messages ---------------------------------------------------------- */

static size_t put_str(uint8_t *p, const void *s, size_t n)
{
	p[0] = (uint8_t)(n >> 24), p[1] = (uint8_t)(n >> 16), p[2] = (uint8_t)(n >> 8), p[3] = (uint8_t)n;
	memcpy(p + 4, s, n);
	return 4 + n;
}

static bool only_gh(const char *fp, void *arg)
{
	(void)arg;
	return strcmp(fp, GH_FP) == 0;
}

static void test_filter_identities(void **state)
{
	(void)state;
	static uint8_t msg[4096], out[4096];
	uint8_t other[51];
	size_t n = 0;
	char why[128];

	assert_int_equal(berth_ssh_pubkey_parse(GH_ED, strlen(GH_ED), false, &key, why, sizeof why), 1);
	memcpy(other, key.blob, sizeof other);
	other[50] ^= 1;
	msg[n++] = BERTH_AGENT_IDENTITIES_ANSWER;
	msg[n++] = 0, msg[n++] = 0, msg[n++] = 0, msg[n++] = 2;
	n += put_str(msg + n, other, sizeof other);
	n += put_str(msg + n, "other", 5);
	n += put_str(msg + n, key.blob, key.blob_len);
	n += put_str(msg + n, "gh", 2);
	ssize_t w = berth_agent_filter_identities(msg, n, only_gh, NULL, out, sizeof out);
	assert_int_equal(w, 9 + 4 + 51 + 4 + 2);
	assert_int_equal(out[4], BERTH_AGENT_IDENTITIES_ANSWER);
	assert_int_equal(out[8], 1);
	assert_memory_equal(out + 13, key.blob, 51);
	size_t len;
	assert_int_equal(berth_agent_frame(out, (size_t)w, &len), 1);
	assert_int_equal(len, (size_t)w - 4);
	/* malformed: a count its keys do not fill, a trailing byte, a cut key */
	msg[4] = 3;
	assert_int_equal(berth_agent_filter_identities(msg, n, only_gh, NULL, out, sizeof out), -1);
	msg[4] = 2;
	msg[n] = 0;
	assert_int_equal(berth_agent_filter_identities(msg, n + 1, only_gh, NULL, out, sizeof out), -1);
	assert_int_equal(berth_agent_filter_identities(msg, n - 1, only_gh, NULL, out, sizeof out), -1);
	msg[0] = BERTH_AGENT_FAILURE;
	assert_int_equal(berth_agent_filter_identities(msg, n, only_gh, NULL, out, sizeof out), -1);
	/* a count no message could hold is refused before any key is read */
	uint8_t huge[] = {BERTH_AGENT_IDENTITIES_ANSWER, 0xff, 0xff, 0xff, 0xff};
	assert_int_equal(berth_agent_filter_identities(huge, sizeof huge, only_gh, NULL, out, sizeof out),
			 -1);
}

static void test_frame(void **state)
{
	(void)state;
	uint8_t b[8] = {0, 0, 0, 1, 11};
	size_t len = 99;

	assert_int_equal(berth_agent_frame(b, 5, &len), 1);
	assert_int_equal(len, 1);
	assert_int_equal(berth_agent_frame(b, 4, &len), 0);
	assert_int_equal(berth_agent_frame(b, 3, &len), 0);
	uint8_t zero[4] = {0}, big[4] = {0, 0x04, 0, 1}; /* 256 KiB + 1 */
	assert_int_equal(berth_agent_frame(zero, 4, &len), -1);
	assert_int_equal(berth_agent_frame(big, 4, &len), -1);
}

/* A login's data, hostbound to @host (NULL: plain publickey). */
static size_t userauth(uint8_t *p, const char *user, const uint8_t *k, size_t kl, const uint8_t *host)
{
	size_t n = 0;
	uint8_t sid[32] = {1};
	const char *m = host != NULL ? "publickey-hostbound-v00@openssh.com" : "publickey";

	n += put_str(p + n, sid, sizeof sid);
	p[n++] = 50;
	n += put_str(p + n, user, strlen(user));
	n += put_str(p + n, "ssh-connection", 14);
	n += put_str(p + n, m, strlen(m));
	p[n++] = 1;
	n += put_str(p + n, "ssh-ed25519", 11);
	n += put_str(p + n, k, kl);
	if (host != NULL)
		n += put_str(p + n, host, kl);
	return n;
}

static void test_sign_and_userauth(void **state)
{
	(void)state;
	static uint8_t data[1024], msg[2048];
	char why[128], ns[BERTH_AGENT_NAME_MAX];
	struct berth_agent_sign s;
	struct berth_agent_userauth u;
	size_t dl, n = 0;

	assert_int_equal(berth_ssh_pubkey_parse(GH_ED, strlen(GH_ED), false, &key, why, sizeof why), 1);
	dl = userauth(data, "git", key.blob, key.blob_len, key.blob);
	msg[n++] = BERTH_AGENTC_SIGN_REQUEST;
	n += put_str(msg + n, key.blob, key.blob_len);
	n += put_str(msg + n, data, dl);
	msg[n++] = 0, msg[n++] = 0, msg[n++] = 0, msg[n++] = 4; /* SSH_AGENT_RSA_SHA2_512 */
	assert_int_equal(berth_agent_parse_sign(msg, n, &s), 0);
	assert_int_equal(s.flags, 4);
	assert_int_equal(s.key_len, key.blob_len);
	assert_int_equal(s.data_len, dl);
	assert_int_equal(berth_agent_parse_sign(msg, n + 1, &s), -1); /* a byte after */
	assert_int_equal(berth_agent_parse_sign(msg, n - 1, &s), -1);
	assert_int_equal(berth_agent_parse_userauth(data, dl, &u), 0);
	assert_string_equal(u.user, "git");
	assert_string_equal(u.service, "ssh-connection");
	assert_non_null(u.host_key);
	assert_int_equal(u.host_key_len, key.blob_len);
	dl = userauth(data, "root", key.blob, key.blob_len, NULL);
	assert_int_equal(berth_agent_parse_userauth(data, dl, &u), 0);
	assert_null(u.host_key);
	assert_int_equal(berth_agent_parse_userauth(data, dl - 1, &u), -1);
	dl = userauth(data, "a\nb", key.blob, key.blob_len, NULL); /* not printable */
	assert_int_equal(berth_agent_parse_userauth(data, dl, &u), -1);
	/* an SSHSIG */
	n = 6;
	memcpy(msg, "SSHSIG", 6);
	n += put_str(msg + n, "git", 3);
	n += put_str(msg + n, "", 0);
	n += put_str(msg + n, "sha512", 6);
	n += put_str(msg + n, data, 64);
	assert_int_equal(berth_agent_parse_sshsig(msg, n, ns), 0);
	assert_string_equal(ns, "git");
	assert_int_equal(berth_agent_parse_sshsig(msg, n - 1, ns), -1);
	assert_int_equal(berth_agent_parse_userauth(msg, n, &u), -1);
	/* a response */
	uint8_t inner[128];
	size_t il = put_str(inner, "ssh-ed25519", 11);
	il += put_str(inner + il, data, 64);
	n = 0;
	msg[n++] = BERTH_AGENT_SIGN_RESPONSE;
	n += put_str(msg + n, inner, il);
	assert_true(berth_agent_sign_response_ok(msg, n));
	assert_false(berth_agent_sign_response_ok(msg, n - 1));
	msg[0] = BERTH_AGENT_SUCCESS;
	assert_false(berth_agent_sign_response_ok(msg, n));
}

/* ---- the flags and the policy ------------------------------------------- */

static void test_flags(void **state)
{
	(void)state;
	struct berth_run_opts o;
	struct berth_error err = {0};
	char kf[] = "/tmp/berth-test-sshkey.XXXXXX";
	int fd = mkstemp(kf);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "# a comment\n" GH_ED "\n", strlen(GH_ED) + 13),
			 (ssize_t)strlen(GH_ED) + 13);
	close(fd);
	char arg[256];
	snprintf(arg, sizeof arg, "git.example.com:2222=%s", kf);
	char *argv[] = {"run", "--ssh", GH_FP, "--ssh-key", kf, "--ssh-host", arg, "--", "true", NULL};
	assert_int_equal(berth_run_parse(9, argv, getenv, &o, &err), 0);
	assert_int_equal(o.policy.network, BERTH_NET_PROXY);
	assert_int_equal(o.policy.n_ssh_keys, 1); /* the same key twice: once */
	assert_string_equal(o.policy.ssh_keys[0], GH_FP);
	assert_int_equal(o.policy.n_ssh_known_hosts, 1);
	assert_string_equal(o.policy.ssh_known_hosts[0], "[git.example.com]:2222 " GH_ED);
	assert_int_equal(o.policy.n_allow_hosts, 1);
	assert_string_equal(o.policy.allow_hosts[0], "git.example.com:2222");
	assert_int_equal(o.n_widenings, 1);
	assert_non_null(strstr(o.widenings[0], "--ssh " GH_FP ": the sandbox may have your ssh-agent sign"));
	/* the canonical JSON reads back to the same policy */
	char *j = berth_policy_to_json(&o.policy, false, &err);
	assert_non_null(j);
	assert_non_null(
	    strstr(j, "\"ssh\":{\"keys\":[\"" GH_FP "\"],\"known_hosts\":[\"[git.example.com]:2222 "));
	struct berth_policy back;
	assert_int_equal(berth_policy_from_json(j, strlen(j), &back, &err), 0);
	char *j2 = berth_policy_to_json(&back, false, &err);
	assert_string_equal(j, j2);
	/* network.ssh outside proxy mode is refused, not dropped */
	const char *proxy = "\"allow_hosts\":[\"git.example.com:2222\"],\"mode\":\"proxy\"";
	char *at = strstr(j, proxy), nonej[8192];
	assert_non_null(at);
	snprintf(nonej, sizeof nonej, "%.*s\"mode\":\"none\"%s", (int)(at - j), j, at + strlen(proxy));
	struct berth_policy bad_net;
	memset(&err, 0, sizeof err);
	assert_int_equal(berth_policy_from_json(nonej, strlen(nonej), &bad_net, &err), -1);
	assert_non_null(strstr(err.msg, "network.ssh"));
	berth_policy_free(&bad_net);
	free(j);
	free(j2);
	berth_policy_free(&back);
	berth_run_opts_free(&o);

	/* refusals, exit status 2, the value named */
	static const char *const bad[][2] = {
	    {"--ssh", "SHA256:x"},
	    {"--ssh-host", "git.example.com"},         /* no key known for it */
	    {"--ssh-host", "*.example.com=/dev/null"}, /* a wildcard */
	    {"--ssh-host", "a.example=/nonexistent"},
	    {"--ssh-key", "/dev/null"}, /* not a regular file */
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char *v[] = {"run", (char *)bad[i][0], (char *)bad[i][1], "--", "true", NULL};
		memset(&err, 0, sizeof err);
		assert_int_equal(berth_run_parse(5, v, getenv, &o, &err), -1);
		assert_int_equal(err.status, 2);
		berth_run_opts_free(&o);
	}
	char *none[] = {"run", "--network", "none", "--ssh", GH_FP, "--", "true", NULL};
	assert_int_equal(berth_run_parse(7, none, getenv, &o, &err), -1);
	berth_run_opts_free(&o);
	unlink(kf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fingerprint), cmocka_unit_test(test_filter_identities),
	    cmocka_unit_test(test_frame),       cmocka_unit_test(test_sign_and_userauth),
	    cmocka_unit_test(test_flags),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
