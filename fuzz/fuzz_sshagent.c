/* SPDX-License-Identifier: MIT */
/*
 * fuzz_sshagent.c - libFuzzer target for the SSH agent protocol of berth run
 * --ssh (src/supervisor/agentproto.c) and the public key lines of --ssh-key
 * and --ssh-host (src/policy/sshkey.c).  The first byte chooses what the
 * rest is: a framed IDENTITIES_ANSWER (0), a SIGN_REQUEST (1), what a
 * client signs to log in (2), an SSHSIG (3), a SIGN_RESPONSE (4), a key line
 * (5), a fingerprint (6).  Besides memory errors it checks that:
 *  - the filtered answer is a well-formed answer again, of no more keys and
 *    bytes than the input's, holding only keys the filter allowed, and that
 *    filtering it again with the same filter gives it back byte for byte;
 *  - a frame's length is 1 to BERTH_AGENT_MSG_MAX and within the input;
 *  - a sign request that parses is, field for field, the whole message (it
 *    is relayed as read: nothing may follow or hide);
 *  - a login or an SSHSIG that parses has printable names within bounds, its
 *    key within the data;
 *  - a key line that parses writes a line that parses to the same key, and
 *    its fingerprint is a valid one; a valid fingerprint is canonical.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/sshkey.h"
#include "supervisor/agentproto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void die(const char *what)
{
	fprintf(stderr, "fuzz_sshagent: %s\n", what);
	abort();
}

/* allows a key when its fingerprint's last digit is in the first half of base64's */
static bool half(const char *fp, void *arg)
{
	(void)arg;
	char c = fp[strlen(fp) - 1];
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'f');
}

static bool all(const char *fp, void *arg)
{
	(void)fp;
	(void)arg;
	return true;
}

static uint32_t u32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void printable(const char *s)
{
	size_t n = strlen(s);
	if (n >= BERTH_AGENT_NAME_MAX)
		die("a name past its bound");
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
			die("a name that is not printable");
}

static void within(const uint8_t *p, size_t n, const uint8_t *base, size_t len)
{
	if (p < base || n > len || p - base > (ptrdiff_t)(len - n))
		die("a field outside its message");
}

static void identities(const uint8_t *d, size_t n)
{
	size_t len;
	int f = berth_agent_frame(d, n, &len);
	if (f < 0)
		return;
	if (f == 1 && (len == 0 || len > BERTH_AGENT_MSG_MAX || len > n - 4))
		die("a frame outside its bounds");
	if (f == 0)
		len = n >= 4 ? n - 4 : 0;
	if (n < 4)
		return;
	uint8_t *out = malloc(len + 4), *again = malloc(len + 4);
	if (out == NULL || again == NULL)
		die("out of memory");
	ssize_t w = berth_agent_filter_identities(d + 4, len, half, NULL, out, len + 4);
	if (w >= 0) {
		if ((size_t)w > len + 4 || w < 9 || u32(out) != (uint32_t)w - 4 || out[4] != 12)
			die("a filtered answer of a wrong length or type");
		if (u32(out + 5) > u32(d + 5))
			die("more keys out than in");
		ssize_t w2 =
		    berth_agent_filter_identities(out + 4, (size_t)w - 4, half, NULL, again, len + 4);
		if (w2 != w || memcmp(out, again, (size_t)w) != 0)
			die("filtering a filtered answer changed it");
		/* every key kept is one the filter allows */
		ssize_t w3 = berth_agent_filter_identities(out + 4, (size_t)w - 4, all, NULL, again, len + 4);
		if (w3 != w)
			die("a filtered answer is not an answer");
		size_t off = 9;
		for (uint32_t i = 0; i < u32(out + 5); i++) {
			char fp[BERTH_SSH_FP_LEN];
			uint32_t kl = u32(out + off);
			berth_ssh_fingerprint(out + off + 4, kl, fp);
			if (!half(fp, NULL))
				die("a key kept that the filter refused");
			off += 4 + kl;
			off += 4 + u32(out + off);
		}
		if (off != (size_t)w)
			die("the answer's keys do not fill it");
	}
	free(out);
	free(again);
}

static void sign(const uint8_t *d, size_t n)
{
	struct berth_agent_sign s;
	if (berth_agent_parse_sign(d, n, &s) < 0)
		return;
	within(s.key, s.key_len, d, n);
	within(s.data, s.data_len, d, n);
	/* type, key, data, flags: the whole message */
	if (n != 1 + 4 + s.key_len + 4 + s.data_len + 4 || d[0] != 13 || s.key != d + 5 ||
	    s.data != d + 9 + s.key_len || u32(d + 9 + s.key_len + s.data_len) != s.flags)
		die("a sign request that parses is not its whole message");
}

static void userauth(const uint8_t *d, size_t n)
{
	struct berth_agent_userauth u;
	if (berth_agent_parse_userauth(d, n, &u) < 0)
		return;
	printable(u.user);
	printable(u.service);
	printable(u.method);
	within(u.key, u.key_len, d, n);
	if (u.host_key != NULL)
		within(u.host_key, u.host_key_len, d, n);
}

static void keyline(const uint8_t *d, size_t n)
{
	static struct berth_ssh_pubkey k, k2;
	char reason[128], fp[BERTH_SSH_FP_LEN];
	static char line[BERTH_SSH_BLOB_MAX * 2 + BERTH_SSH_TYPE_MAX];

	for (int kh = 0; kh < 2; kh++) {
		if (berth_ssh_pubkey_parse((const char *)d, n, kh, &k, reason, sizeof reason) != 1)
			continue;
		if (berth_ssh_pubkey_line(&k, line, sizeof line) < 0)
			die("a parsed key does not write");
		if (berth_ssh_pubkey_parse(line, strlen(line), false, &k2, reason, sizeof reason) != 1 ||
		    strcmp(k.type, k2.type) != 0 || k.blob_len != k2.blob_len ||
		    memcmp(k.blob, k2.blob, k.blob_len) != 0)
			die("a written key line does not parse to the same key");
		berth_ssh_fingerprint(k.blob, k.blob_len, fp);
		if (!berth_ssh_fp_valid(fp))
			die("a fingerprint berth wrote is not valid");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char ns[BERTH_AGENT_NAME_MAX], s[128];

	if (size < 1 || size > BERTH_AGENT_MSG_MAX)
		return 0;
	const uint8_t *d = data + 1;
	size_t n = size - 1;
	switch (data[0] % 7) {
	case 0:
		identities(d, n);
		break;
	case 1:
		sign(d, n);
		break;
	case 2:
		userauth(d, n);
		break;
	case 3:
		if (berth_agent_parse_sshsig(d, n, ns) == 0)
			printable(ns);
		break;
	case 4:
		(void)berth_agent_sign_response_ok(d, n);
		break;
	case 5:
		keyline(d, n);
		break;
	default:
		if (n < sizeof s) {
			memcpy(s, d, n);
			s[n] = '\0';
			if (berth_ssh_fp_valid(s) &&
			    (strlen(s) != BERTH_SSH_FP_LEN - 1 || strncmp(s, "SHA256:", 7)))
				die("a fingerprint of the wrong form is valid");
		}
		break;
	}
	return 0;
}
