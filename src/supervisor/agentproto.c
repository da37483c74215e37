/* SPDX-License-Identifier: MIT */
/*
 * agentproto.c - the SSH agent protocol, length-checked (agentproto.h).
 */
#include "agentproto.h"

#include <string.h>

/* One reader for every message: each get fails, and every later one, once
 * a field would run past the end. */
struct rd {
	const uint8_t *p;
	size_t n, off;
	bool bad;
};

static bool get_u8(struct rd *r, uint8_t *v)
{
	if (r->bad || r->n - r->off < 1)
		return !(r->bad = true);
	*v = r->p[r->off++];
	return true;
}

static bool get_u32(struct rd *r, uint32_t *v)
{
	if (r->bad || r->n - r->off < 4)
		return !(r->bad = true);
	const uint8_t *q = r->p + r->off;
	*v = (uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 | (uint32_t)q[2] << 8 | q[3];
	r->off += 4;
	return true;
}

/* string: uint32 length and that many bytes */
static bool get_str(struct rd *r, const uint8_t **s, size_t *len)
{
	uint32_t l;

	if (!get_u32(r, &l))
		return false;
	if (r->n - r->off < l)
		return !(r->bad = true);
	*s = r->p + r->off;
	*len = l;
	r->off += l;
	return true;
}

/* a string of printable ASCII shorter than BERTH_AGENT_NAME_MAX into @out */
static bool get_name(struct rd *r, char out[BERTH_AGENT_NAME_MAX])
{
	const uint8_t *s;
	size_t l;

	if (!get_str(r, &s, &l))
		return false;
	if (l >= BERTH_AGENT_NAME_MAX)
		return !(r->bad = true);
	for (size_t i = 0; i < l; i++)
		if (s[i] < 0x20 || s[i] > 0x7e)
			return !(r->bad = true);
	memcpy(out, s, l);
	out[l] = '\0';
	return true;
}

static bool at_end(const struct rd *r)
{
	return !r->bad && r->off == r->n;
}

static void put_u32(uint8_t *q, uint32_t v)
{
	q[0] = (uint8_t)(v >> 24);
	q[1] = (uint8_t)(v >> 16);
	q[2] = (uint8_t)(v >> 8);
	q[3] = (uint8_t)v;
}

int berth_agent_frame(const uint8_t *buf, size_t n, size_t *len)
{
	struct rd r = {buf, n, 0, false};
	uint32_t l;

	if (!get_u32(&r, &l))
		return 0;
	if (l == 0 || l > BERTH_AGENT_MSG_MAX)
		return -1;
	if (n - 4 < l)
		return 0;
	*len = l;
	return 1;
}

const char *berth_agent_op_name(uint8_t type)
{
	switch (type) {
	case BERTH_AGENTC_ADD_IDENTITY:
	case BERTH_AGENTC_ADD_ID_CONSTRAINED:
		return "add a key (ssh-add FILE)";
	case BERTH_AGENTC_REMOVE_IDENTITY:
		return "remove a key (ssh-add -d)";
	case 9: /* SSH_AGENTC_REMOVE_ALL_RSA_IDENTITIES (protocol 1): ssh-add -D sends both */
	case BERTH_AGENTC_REMOVE_ALL_IDENTITIES:
		return "remove every key (ssh-add -D)";
	case BERTH_AGENTC_ADD_SMARTCARD_KEY:
	case BERTH_AGENTC_ADD_SMARTCARD_KEY_CONSTRAINED:
		return "add a smartcard's keys (ssh-add -s)";
	case BERTH_AGENTC_REMOVE_SMARTCARD_KEY:
		return "remove a smartcard's keys (ssh-add -e)";
	case BERTH_AGENTC_LOCK:
		return "lock the agent (ssh-add -x)";
	case BERTH_AGENTC_UNLOCK:
		return "unlock the agent (ssh-add -X)";
	case BERTH_AGENTC_EXTENSION:
		return "an extension";
	default:
		return "a message berth does not relay";
	}
}

ssize_t berth_agent_filter_identities(const uint8_t *msg, size_t n,
				      bool (*allowed)(const char *fp, void *arg), void *arg, uint8_t *out,
				      size_t cap)
{
	struct rd r = {msg, n, 0, false};
	uint8_t type;
	uint32_t count, kept = 0;
	size_t w = 9; /* length, type, count */

	if (!get_u8(&r, &type) || type != BERTH_AGENT_IDENTITIES_ANSWER || !get_u32(&r, &count) || cap < w)
		return -1;
	/* each key takes 8 bytes at least: a count no message could fill */
	if (count > (n - r.off) / 8)
		return -1;
	for (uint32_t i = 0; i < count; i++) {
		const uint8_t *key, *comment;
		size_t kl, cl;
		char fp[BERTH_SSH_FP_LEN];

		if (!get_str(&r, &key, &kl) || !get_str(&r, &comment, &cl) || kl == 0 ||
		    kl > BERTH_SSH_BLOB_MAX)
			return -1;
		berth_ssh_fingerprint(key, kl, fp);
		if (!allowed(fp, arg))
			continue;
		if (cap - w < 8 + kl + cl)
			return -1;
		put_u32(out + w, (uint32_t)kl);
		memcpy(out + w + 4, key, kl);
		put_u32(out + w + 4 + kl, (uint32_t)cl);
		memcpy(out + w + 8 + kl, comment, cl);
		w += 8 + kl + cl;
		kept++;
	}
	if (!at_end(&r))
		return -1;
	put_u32(out, (uint32_t)(w - 4));
	out[4] = BERTH_AGENT_IDENTITIES_ANSWER;
	put_u32(out + 5, kept);
	return (ssize_t)w;
}

int berth_agent_parse_sign(const uint8_t *msg, size_t n, struct berth_agent_sign *s)
{
	struct rd r = {msg, n, 0, false};
	uint8_t type;

	if (!get_u8(&r, &type) || type != BERTH_AGENTC_SIGN_REQUEST || !get_str(&r, &s->key, &s->key_len) ||
	    !get_str(&r, &s->data, &s->data_len) || !get_u32(&r, &s->flags) || !at_end(&r))
		return -1;
	return s->key_len > 0 && s->key_len <= BERTH_SSH_BLOB_MAX ? 0 : -1;
}

bool berth_agent_sign_response_ok(const uint8_t *msg, size_t n)
{
	struct rd r = {msg, n, 0, false}, in;
	const uint8_t *sig, *fmt, *blob;
	size_t sl, fl, bl;
	uint8_t type;

	if (!get_u8(&r, &type) || type != BERTH_AGENT_SIGN_RESPONSE || !get_str(&r, &sig, &sl) || !at_end(&r))
		return false;
	in = (struct rd){sig, sl, 0, false};
	return get_str(&in, &fmt, &fl) && fl > 0 && get_str(&in, &blob, &bl) && at_end(&in);
}

int berth_agent_parse_userauth(const uint8_t *data, size_t n, struct berth_agent_userauth *u)
{
	struct rd r = {data, n, 0, false};
	const uint8_t *sid, *alg;
	size_t sl, al;
	uint8_t msg, has_sig;

	u->host_key = NULL;
	u->host_key_len = 0;
	if (!get_str(&r, &sid, &sl) || sl == 0 || !get_u8(&r, &msg) || msg != 50 /* USERAUTH_REQUEST */ ||
	    !get_name(&r, u->user) || !get_name(&r, u->service) || !get_name(&r, u->method) ||
	    !get_u8(&r, &has_sig) || has_sig != 1 || !get_str(&r, &alg, &al) ||
	    !get_str(&r, &u->key, &u->key_len))
		return -1;
	if (strcmp(u->method, "publickey-hostbound-v00@openssh.com") == 0) {
		if (!get_str(&r, &u->host_key, &u->host_key_len) || u->host_key_len == 0 ||
		    u->host_key_len > BERTH_SSH_BLOB_MAX)
			return -1;
	} else if (strcmp(u->method, "publickey") != 0) {
		return -1;
	}
	return at_end(&r) && u->key_len > 0 ? 0 : -1;
}

int berth_agent_parse_sshsig(const uint8_t *data, size_t n, char ns[BERTH_AGENT_NAME_MAX])
{
	struct rd r = {data, n, 6, false};
	const uint8_t *s;
	size_t l;

	if (n < 6 || memcmp(data, "SSHSIG", 6) != 0)
		return -1;
	if (!get_name(&r, ns) || !get_str(&r, &s, &l) || !get_str(&r, &s, &l) || !get_str(&r, &s, &l) ||
	    !at_end(&r))
		return -1;
	return 0;
}
