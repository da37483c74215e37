/* SPDX-License-Identifier: MIT */
/*
 * sshkey.h - SSH public keys as --ssh, --ssh-key and --ssh-host take them
 * (docs/credentials.md, "--ssh"): a key's SHA256 fingerprint (as
 * `ssh-keygen -l` prints it), a public key line (`TYPE BASE64 [COMMENT]`,
 * as in a .pub file, or a known_hosts line `NAMES TYPE BASE64`).  Pure: no
 * I/O, no allocation but the caller's buffers.
 */
#ifndef BERTH_POLICY_SSHKEY_H
#define BERTH_POLICY_SSHKEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* "SHA256:" and 43 base64 digits (no padding), and its NUL */
#define BERTH_SSH_FP_LEN 51
/* the longest key type name taken (sk-ecdsa-sha2-nistp256@openssh.com is 34) */
#define BERTH_SSH_TYPE_MAX 64
/* the longest key blob taken (an RSA key of 16384 bits is about 2 KiB) */
#define BERTH_SSH_BLOB_MAX 4096
/* the longest line of a key file taken */
#define BERTH_SSH_LINE_MAX 8192

/* berth_ssh_fingerprint - SHA256:BASE64 (no padding) of @blob into @out. */
void berth_ssh_fingerprint(const uint8_t *blob, size_t n, char out[BERTH_SSH_FP_LEN]);

/* berth_ssh_fp_valid - whether @s is a fingerprint as berth_ssh_fingerprint() writes one. */
bool berth_ssh_fp_valid(const char *s);

struct berth_ssh_pubkey {
	char type[BERTH_SSH_TYPE_MAX];
	uint8_t blob[BERTH_SSH_BLOB_MAX];
	size_t blob_len;
};

/*
 * berth_ssh_pubkey_parse - the key of the line @line (@n bytes, no newline):
 * `TYPE BASE64 [COMMENT]`, or with @known_hosts also `NAMES TYPE BASE64
 * [COMMENT]` (the names are not kept).  The blob must decode (base64) to at
 * most BERTH_SSH_BLOB_MAX bytes whose first string is TYPE (RFC 4253 6.6).
 * Returns 1 with @k filled, 0 for a line with nothing but blanks or a `#`
 * comment, or -1 with a reason in @reason (@len bytes).
 */
int berth_ssh_pubkey_parse(const char *line, size_t n, bool known_hosts, struct berth_ssh_pubkey *k,
			   char *reason, size_t len);

/*
 * berth_ssh_pubkey_line - `TYPE BASE64` of @k into @out (@len bytes).
 * Returns its length, or -1 when @len is too small.
 */
int berth_ssh_pubkey_line(const struct berth_ssh_pubkey *k, char *out, size_t len);

#endif
