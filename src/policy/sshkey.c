/* SPDX-License-Identifier: MIT */
/*
 * sshkey.c - SSH public keys and their fingerprints (sshkey.h).
 */
#include "sshkey.h"

#include <stdio.h>
#include <string.h>

#include <sodium.h>

void berth_ssh_fingerprint(const uint8_t *blob, size_t n, char out[BERTH_SSH_FP_LEN])
{
	unsigned char h[crypto_hash_sha256_BYTES];
	char b64[sodium_base64_ENCODED_LEN(crypto_hash_sha256_BYTES,
					   sodium_base64_VARIANT_ORIGINAL_NO_PADDING)];

	crypto_hash_sha256(h, blob, n);
	sodium_bin2base64(b64, sizeof b64, h, sizeof h, sodium_base64_VARIANT_ORIGINAL_NO_PADDING);
	snprintf(out, BERTH_SSH_FP_LEN, "SHA256:%s", b64);
}

bool berth_ssh_fp_valid(const char *s)
{
	unsigned char h[crypto_hash_sha256_BYTES + 1];
	size_t hl = 0;
	const char *end = NULL;

	if (strncmp(s, "SHA256:", 7) != 0 || strlen(s) != BERTH_SSH_FP_LEN - 1)
		return false;
	/* the base64 of 32 bytes, canonical: written back, the same text */
	if (sodium_base642bin(h, sizeof h, s + 7, strlen(s + 7), NULL, &hl, &end,
			      sodium_base64_VARIANT_ORIGINAL_NO_PADDING) != 0 ||
	    hl != crypto_hash_sha256_BYTES || *end != '\0')
		return false;
	char back[sodium_base64_ENCODED_LEN(crypto_hash_sha256_BYTES,
					    sodium_base64_VARIANT_ORIGINAL_NO_PADDING)];
	sodium_bin2base64(back, sizeof back, h, hl, sodium_base64_VARIANT_ORIGINAL_NO_PADDING);
	return strcmp(back, s + 7) == 0;
}

static int fail(char *reason, size_t len, const char *what)
{
	snprintf(reason, len, "%s", what);
	return -1;
}

/* the next blank-separated field of @s (@n bytes) from *@i */
static size_t field(const char *s, size_t n, size_t *i, const char **f)
{
	size_t st;

	while (*i < n && (s[*i] == ' ' || s[*i] == '\t'))
		(*i)++;
	st = *i;
	while (*i < n && s[*i] != ' ' && s[*i] != '\t')
		(*i)++;
	*f = s + st;
	return *i - st;
}

static bool type_name(const char *t, size_t n)
{
	if (n == 0 || n >= BERTH_SSH_TYPE_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((t[i] >= 'a' && t[i] <= 'z') || (t[i] >= '0' && t[i] <= '9') || t[i] == '-' ||
		      t[i] == '@' || t[i] == '.' || t[i] == '_'))
			return false;
	return true;
}

int berth_ssh_pubkey_parse(const char *line, size_t n, bool known_hosts, struct berth_ssh_pubkey *k,
			   char *reason, size_t len)
{
	const char *f1, *f2, *f3, *end = NULL;
	size_t i = 0, l1, l2, l3;
	const char *t, *b;
	size_t tl, bl, hl = 0;

	if (n > BERTH_SSH_LINE_MAX)
		return fail(reason, len, "the line is too long");
	for (size_t j = 0; j < n; j++)
		if ((unsigned char)line[j] < 0x20 && line[j] != '\t' && line[j] != '\r')
			return fail(reason, len, "the line holds a control byte");
	while (n > 0 && line[n - 1] == '\r')
		n--;
	l1 = field(line, n, &i, &f1);
	if (l1 == 0 || f1[0] == '#')
		return 0;
	l2 = field(line, n, &i, &f2);
	l3 = field(line, n, &i, &f3);
	/* `TYPE BASE64`, or `NAMES TYPE BASE64` where NAMES is no key type */
	if (known_hosts && l3 > 0 && type_name(f2, l2) && !(l1 > 4 && memcmp(f1, "ssh-", 4) == 0) &&
	    !(l1 > 6 && memcmp(f1, "ecdsa-", 6) == 0) && !(l1 > 3 && memcmp(f1, "sk-", 3) == 0)) {
		if (f1[0] == '@')
			return fail(reason, len, "a @cert-authority or @revoked line is not taken");
		t = f2, tl = l2, b = f3, bl = l3;
	} else {
		t = f1, tl = l1, b = f2, bl = l2;
	}
	if (!type_name(t, tl))
		return fail(reason, len, "the key type is not one (e.g. ssh-ed25519)");
	if (bl == 0)
		return fail(reason, len, "the key (base64) is missing after its type");
	if (sodium_base642bin(k->blob, sizeof k->blob, b, bl, NULL, &hl, &end,
			      sodium_base64_VARIANT_ORIGINAL) != 0 ||
	    end != b + bl)
		return fail(reason, len, "the key is not base64 of at most 4096 bytes");
	/* the blob's first string is its type */
	if (hl < 4)
		return fail(reason, len, "the key is too short");
	uint32_t sl =
	    (uint32_t)k->blob[0] << 24 | (uint32_t)k->blob[1] << 16 | (uint32_t)k->blob[2] << 8 | k->blob[3];
	if (sl != tl || hl - 4 < sl || memcmp(k->blob + 4, t, tl) != 0)
		return fail(reason, len, "the key's own type is not the type the line names");
	memcpy(k->type, t, tl);
	k->type[tl] = '\0';
	k->blob_len = hl;
	return 1;
}

int berth_ssh_pubkey_line(const struct berth_ssh_pubkey *k, char *out, size_t len)
{
	size_t tl = strlen(k->type),
	       need = tl + 1 + sodium_base64_ENCODED_LEN(k->blob_len, sodium_base64_VARIANT_ORIGINAL);

	if (len < need)
		return -1;
	memcpy(out, k->type, tl);
	out[tl] = ' ';
	sodium_bin2base64(out + tl + 1, len - tl - 1, k->blob, k->blob_len, sodium_base64_VARIANT_ORIGINAL);
	return (int)strlen(out);
}
