/* SPDX-License-Identifier: MIT */
/*
 * audit_head.c - the signed head of the audit log (audit.c): two slots, the newer one
 * written into the slot that does not hold the current head.
 */

#include <inttypes.h>
#include <string.h>

#include "../util/cleanup.h"

#include "audit_int.h"

/* ---- the head ---- */

static int head_message(uint64_t seq, const char *hash, char *buf, size_t size)
{
	return snprintf(buf, size, "{\"hash\":\"%s\",\"seq\":%" PRIu64 ",\"type\":\"" HEAD_TYPE "\"}", hash,
			seq);
}

/* Parse and check one slot.  Returns 1 valid, 0 empty, -1 malformed, -2 bad
 * signature. */
/*
 * @k, when not NULL, is the loaded host key whose public half is @pub: a
 * slot that holds exactly the signature @k makes over its message is valid
 * without the verification.  Ed25519 signing is deterministic (RFC 8032
 * 5.1.6: the nonce is a hash of the key and the message), so equal bytes
 * prove the signature is the key's own; a slot that differs in any bit is
 * still verified in full, and refused unless it verifies.  With libsodium a
 * signature costs about a third of a verification (0.24 M against 0.64 M
 * instructions), on every `berth run`.
 */
static int head_slot_parse(const char *slot, const unsigned char *pub, const struct berth_hostkey *k,
			   uint64_t *seq, char hash[65], char *why, size_t whylen)
{
	unsigned char mine_sig[64];
	size_t n = HEAD_SLOT;
	json_t *o, *s;
	const char *h, *sig, *type;
	unsigned char sigb[64];
	char msg[256];
	struct berth_error err = {0};
	int rc = -1;

	while (n > 0 && (slot[n - 1] == ' ' || slot[n - 1] == '\n' || slot[n - 1] == '\0'))
		n--;
	if (n == 0)
		return 0;
	o = json_loadb(slot, n, JSON_REJECT_DUPLICATES, NULL);
	s = json_object_get(o, "seq");
	h = json_string_value(json_object_get(o, "hash"));
	sig = json_string_value(json_object_get(o, "sig"));
	type = json_string_value(json_object_get(o, "type"));
	if (!json_is_integer(s) || json_integer_value(s) < 0 || !berth_aud_is_hex64(h) || sig == NULL ||
	    type == NULL || strcmp(type, HEAD_TYPE) != 0 || berth_unhex(sig, sigb, 64) < 0) {
		snprintf(why, whylen, "malformed");
		goto out;
	}
	*seq = (uint64_t)json_integer_value(s);
	strcpy(hash, h);
	head_message(*seq, h, msg, sizeof msg);
	if (k != NULL && k->loaded && memcmp(k->pub, pub, 32) == 0 &&
	    berth_sign(k, msg, strlen(msg), mine_sig, &err) == 0 && memcmp(mine_sig, sigb, 64) == 0) {
		rc = 1;
		goto out;
	}
	if (berth_verify(pub, msg, strlen(msg), sigb, &err) < 0) {
		const char *other = json_string_value(json_object_get(o, "pub"));
		unsigned char op[32];
		char mine[65];

		berth_hex(pub, 32, mine);
		/* Say whether another key made a valid signature (XDG_CONFIG_HOME
		 * changed, or a log copied from elsewhere) or none did. */
		if (other != NULL && berth_unhex(other, op, 32) == 0 && memcmp(op, pub, 32) != 0 &&
		    berth_verify(op, msg, strlen(msg), sigb, &err) == 0)
			snprintf(why, whylen,
				 "the signature over seq %" PRIu64
				 " does not verify with the host key (pub %.16s...):"
				 " it was made by another key (pub %.16s...)",
				 *seq, mine, other);
		else
			snprintf(why, whylen,
				 "the signature over seq %" PRIu64
				 " does not verify with the host key (pub %.16s...)",
				 *seq, mine);
		rc = -2;
		goto out;
	}
	rc = 1;
out:
	json_decref(o);
	return rc;
}

/*
 * The newest valid head in @buf (2 slots).  Returns 0 with *seq/hash/slot
 * (seq 0, slot -1: none), or -1 with @why set when a slot is signed wrongly
 * or is neither empty nor a head (damaged).
 */
int berth_aud_head_pick(const char *buf, const unsigned char *pub, const struct berth_hostkey *k,
			uint64_t *seq, char hash[65], int *slot, char *why, size_t whylen)
{
	*seq = 0;
	strcpy(hash, ZERO_HASH);
	*slot = -1;
	for (int i = 0; i < 2; i++) {
		uint64_t s = 0;
		char h[65];
		int rc = head_slot_parse(buf + i * HEAD_SLOT, pub, k, &s, h, why, whylen);

		if (rc == -2)
			return -1;
		if (rc == -1) {
			/* berth writes a slot with one pwrite of 512 bytes, or
			 * blanks it: anything else is damage, not a crash */
			snprintf(why, whylen,
				 "slot %d (bytes %d..%d of `head`) is neither empty nor a signed head", i + 1,
				 i * HEAD_SLOT, (i + 1) * HEAD_SLOT - 1);
			return -1;
		}
		if (rc == 1 && (*slot < 0 || s > *seq)) {
			*seq = s;
			strcpy(hash, h);
			*slot = i;
		}
	}
	return 0;
}

int berth_aud_head_read(int fd, char buf[2 * HEAD_SLOT], struct berth_error *err)
{
	ssize_t n;

	memset(buf, 0, 2 * HEAD_SLOT);
	n = pread(fd, buf, 2 * HEAD_SLOT, 0);
	if (n < 0)
		return berth_err(err, errno, "cannot read the audit head");
	return 0;
}

int berth_aud_head_write(struct berth_audit *a, struct berth_error *err)
{
	char msg[256], slot[HEAD_SLOT], sighex[129], pubhex[65];
	unsigned char sig[64];
	int target = a->head_slot == 0 ? 1 : 0, n;

	head_message(a->seq, a->hash, msg, sizeof msg);
	if (berth_sign(&a->key, msg, strlen(msg), sig, err) < 0)
		return -1;
	berth_hex(sig, 64, sighex);
	berth_hex(a->key.pub, 32, pubhex);
	memset(slot, ' ', sizeof slot);
	n = snprintf(slot, sizeof slot,
		     "{\"hash\":\"%s\",\"pub\":\"%s\",\"seq\":%" PRIu64
		     ",\"sig\":\"%s\",\"type\":\"" HEAD_TYPE "\"}",
		     a->hash, pubhex, a->seq, sighex);
	slot[n] = ' ';
	slot[HEAD_SLOT - 1] = '\n';
	if (berth_aud_write_all_at(a->headfd, slot, sizeof slot, (off_t)target * HEAD_SLOT) < 0 ||
	    fdatasync(a->headfd) < 0) {
		int e = errno;

		/* Leave no signed head for records about to be truncated away. */
		memset(slot, ' ', sizeof slot);
		slot[HEAD_SLOT - 1] = '\n';
		if (berth_aud_write_all_at(a->headfd, slot, sizeof slot, (off_t)target * HEAD_SLOT) == 0)
			fdatasync(a->headfd);
		return berth_err(err, e, "cannot write the audit head in `%s`", a->dir);
	}
	a->head_slot = target;
	memcpy(a->head_cache + target * HEAD_SLOT, slot, HEAD_SLOT);
	a->head_cached = true;
	return 0;
}
