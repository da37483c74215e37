/* SPDX-License-Identifier: MIT */
/*
 * agentproto.h - the part of the SSH agent protocol (draft-miller-ssh-agent)
 * that berth's --ssh relay speaks (docs/credentials.md, "--ssh"): framing,
 * the identities answer filtered to the allowed keys, a sign request, its
 * response, and what is signed (an SSH user authentication, RFC 4252 7, or
 * an SSHSIG, OpenSSH's PROTOCOL.sshsig).  Pure: every read is length-checked
 * by one reader; no allocation, no I/O.  A message here is what follows the
 * 4-byte length: its type byte and its contents.
 */
#ifndef BERTH_SUPERVISOR_AGENTPROTO_H
#define BERTH_SUPERVISOR_AGENTPROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../policy/sshkey.h"

/* The largest message either side may send (OpenSSH's agent takes 256 KiB). */
#define BERTH_AGENT_MSG_MAX (256 * 1024)

enum {
	BERTH_AGENT_FAILURE = 5,
	BERTH_AGENT_SUCCESS = 6,
	BERTH_AGENTC_REQUEST_IDENTITIES = 11,
	BERTH_AGENT_IDENTITIES_ANSWER = 12,
	BERTH_AGENTC_SIGN_REQUEST = 13,
	BERTH_AGENT_SIGN_RESPONSE = 14,
	BERTH_AGENTC_ADD_IDENTITY = 17,
	BERTH_AGENTC_REMOVE_IDENTITY = 18,
	BERTH_AGENTC_REMOVE_ALL_IDENTITIES = 19,
	BERTH_AGENTC_ADD_SMARTCARD_KEY = 20,
	BERTH_AGENTC_REMOVE_SMARTCARD_KEY = 21,
	BERTH_AGENTC_LOCK = 22,
	BERTH_AGENTC_UNLOCK = 23,
	BERTH_AGENTC_ADD_ID_CONSTRAINED = 25,
	BERTH_AGENTC_ADD_SMARTCARD_KEY_CONSTRAINED = 26,
	BERTH_AGENTC_EXTENSION = 27,
};

/*
 * berth_agent_frame - whether @buf (@n bytes) begins with a whole framed
 * message: 1 with *@len its length (the message is @buf + 4, *@len bytes),
 * 0 when more bytes are needed, -1 when the length is 0 or over
 * BERTH_AGENT_MSG_MAX (the stream cannot be trusted further).
 */
int berth_agent_frame(const uint8_t *buf, size_t n, size_t *len);

/* berth_agent_op_name - what a client's message of @type asks, for a refusal
 * line ("add a key", "lock the agent", ...). */
const char *berth_agent_op_name(uint8_t type);

/*
 * berth_agent_filter_identities - from the IDENTITIES_ANSWER @msg (@n
 * bytes), the framed answer that keeps only the keys whose fingerprint
 * @allowed accepts (comments kept), into @out (@cap bytes; @n + 4 always
 * suffices).  Returns its length, or -1 when @msg is not a well-formed
 * answer (wrong type, a count its keys do not fill, bytes after the last
 * key, a key over BERTH_SSH_BLOB_MAX) or @cap is too small.
 */
ssize_t berth_agent_filter_identities(const uint8_t *msg, size_t n,
				      bool (*allowed)(const char *fp, void *arg), void *arg, uint8_t *out,
				      size_t cap);

struct berth_agent_sign {
	const uint8_t *key; /* the key blob (into the message) */
	size_t key_len;
	const uint8_t *data; /* what is to be signed */
	size_t data_len;
	uint32_t flags;
};

/*
 * berth_agent_parse_sign - the SIGN_REQUEST @msg (@n bytes): string key,
 * string data, uint32 flags, and nothing after.  Returns 0 with @s filled
 * (pointers into @msg), or -1.
 */
int berth_agent_parse_sign(const uint8_t *msg, size_t n, struct berth_agent_sign *s);

/*
 * berth_agent_sign_response_ok - whether @msg (@n bytes) is a
 * SIGN_RESPONSE: string signature, itself string format and string blob,
 * and nothing after either.
 */
bool berth_agent_sign_response_ok(const uint8_t *msg, size_t n);

#define BERTH_AGENT_NAME_MAX 128

struct berth_agent_userauth {
	char user[BERTH_AGENT_NAME_MAX];    /* printable ASCII */
	char service[BERTH_AGENT_NAME_MAX]; /* "ssh-connection" */
	char method[BERTH_AGENT_NAME_MAX];  /* "publickey" or "publickey-hostbound-v00@openssh.com" */
	const uint8_t *key;                 /* the key authenticated with (into the data) */
	size_t key_len;
	const uint8_t *host_key; /* the server's host key (hostbound), or NULL */
	size_t host_key_len;
};

/*
 * berth_agent_parse_userauth - @data (@n bytes) as what a client signs to
 * authenticate (RFC 4252 7): string session id, byte 50, string user,
 * string service, string method "publickey" (boolean TRUE, string
 * algorithm, string key) or "publickey-hostbound-v00@openssh.com" (the
 * same and string host key), nothing after.  Names must be printable ASCII
 * shorter than BERTH_AGENT_NAME_MAX.  Returns 0 with @u filled, or -1.
 */
int berth_agent_parse_userauth(const uint8_t *data, size_t n, struct berth_agent_userauth *u);

/*
 * berth_agent_parse_sshsig - @data (@n bytes) as an SSHSIG to be signed
 * (`ssh-keygen -Y sign`, git's ssh signing): "SSHSIG", string namespace,
 * string reserved, string hash algorithm, string hash, nothing after; the
 * namespace (printable ASCII) into @ns.  Returns 0, or -1.
 */
int berth_agent_parse_sshsig(const uint8_t *data, size_t n, char ns[BERTH_AGENT_NAME_MAX]);

#endif
