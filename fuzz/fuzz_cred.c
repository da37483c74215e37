/* SPDX-License-Identifier: MIT */
/*
 * fuzz_cred.c - libFuzzer target for the header rewrite of injected
 * credentials (src/broker/cred.c) and the binding grammar
 * (src/policy/credential.c).  The first byte chooses the header mode (bits
 * 0-1), a path prefix (bit 2), whether the input goes through the broker's
 * own pipeline first (bit 3: the HTTP parser in origin mode, then
 * berth_http_rewrite_origin(), as broker_mitm.c does) and whether the rest is
 * a binding to parse (bit 4).  Besides memory errors it checks that:
 *  - the length query and the write agree, the output is NUL-terminated,
 *    and a buffer one byte short is never written past;
 *  - nothing replaced (used 0): the output is the input, byte for byte;
 *  - the secret is in the output only where something was replaced;
 *  - bearer, x-api-key and raw header: putting the placeholder back where the
 *    secret is gives the input again (nothing else changed);
 *  - a head the broker's pipeline wrote is always one the rewrite reads
 *    (never -1, but for a Basic value that is not base64);
 *  - a binding that parses formats to a canonical text that parses back to
 *    the same text.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/cred.h"
#include "broker/http.h"
#include "policy/credential.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define PH "berth-cred-T-0123456789abcdef"
#define SECRET "~SECRET~"

static void die(const char *what)
{
	fprintf(stderr, "fuzz_cred: %s\n", what);
	abort();
}

static char *replace_all(const char *s, size_t n, const char *a, const char *b, size_t *out_len)
{
	size_t al = strlen(a), bl = strlen(b), o = 0;
	char *out = malloc(n * (bl > al ? bl : al) + 1);

	for (size_t i = 0; i < n;) {
		if (i + al <= n && memcmp(s + i, a, al) == 0) {
			memcpy(out + o, b, bl);
			o += bl;
			i += al;
		} else {
			out[o++] = s[i++];
		}
	}
	out[o] = '\0';
	*out_len = o;
	return out;
}

static void binding(const uint8_t *p, size_t n)
{
	char *s = malloc(n + 1), why[512], a[BERTH_CRED_TEXT_MAX], b[BERTH_CRED_TEXT_MAX];
	struct berth_credential c, d;

	memcpy(s, p, n);
	s[n] = '\0';
	if (berth_credential_parse(s, &c, why, sizeof why) == 0) {
		if (berth_credential_format(&c, a, sizeof a) < 0)
			die("a parsed binding does not format");
		if (berth_credential_parse(a, &d, why, sizeof why) != 0)
			die("the canonical text does not parse back");
		if (berth_credential_format(&d, b, sizeof b) < 0 || strcmp(a, b) != 0)
			die("the canonical text is not stable");
		berth_credential_clear(&d);
	}
	berth_credential_clear(&c);
	free(s);
}

static void check(const char *head, size_t len, const char *path, size_t path_len,
		  const struct berth_cred_inject *in, bool from_pipeline)
{
	uint32_t used = 0, used2 = 0;
	long k = berth_cred_rewrite(head, len, path, path_len, in, 1, NULL, 0, &used);

	if (k < 0) {
		if (from_pipeline && in->header != BERTH_CRED_BASIC)
			die("a head of berth_http_rewrite_origin() is refused");
		return;
	}
	char *out = malloc((size_t)k + 2);
	out[k] = 'Z';
	out[k + 1] = 'Z';
	if (k > 0 && berth_cred_rewrite(head, len, path, path_len, in, 1, out, (size_t)k, &used2) != k)
		die("the short write returns another length");
	if (out[k] != 'Z')
		die("the short write went past its buffer");
	if (berth_cred_rewrite(head, len, path, path_len, in, 1, out, (size_t)k + 1, &used2) != k ||
	    used2 != used)
		die("the length query and the write disagree");
	if (out[k] != '\0' || out[k + 1] != 'Z')
		die("the output is not NUL-terminated in its buffer");
	if (used & ~1u)
		die("a bit of a binding that does not exist");
	bool had_secret = memmem(head, len, SECRET, strlen(SECRET)) != NULL;
	if (used == 0 && ((size_t)k != len || memcmp(out, head, len) != 0))
		die("nothing replaced, yet the head changed");
	if (used == 0 && !had_secret && memmem(out, (size_t)k, SECRET, strlen(SECRET)) != NULL)
		die("the secret appeared without a replacement");
	if (used != 0 && in->header != BERTH_CRED_BASIC && !had_secret) {
		size_t bl;
		char *back = replace_all(out, (size_t)k, SECRET, PH, &bl);
		if (bl != len || memcmp(back, head, len) != 0)
			die("more than the placeholder changed");
		free(back);
	}
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const fields[] = {"Authorization", "x-api-key", "Authorization", "X-Tok"};
	if (size < 1)
		return 0;
	uint8_t ctl = data[0];
	const uint8_t *p = data + 1;
	size_t n = size - 1;
	enum berth_cred_header h = (enum berth_cred_header)(1 + (ctl & 3));
	struct berth_cred_inject in = {.header = h,
				       .field = fields[ctl & 3],
				       .prefix = (ctl & 4) ? "/v1/" : "/",
				       .placeholder = PH,
				       .secret = SECRET,
				       .secret_len = strlen(SECRET)};

	if (ctl & 0x10) {
		binding(p, n);
		return 0;
	}
	if (!(ctl & 8)) {
		/* the path: up to the first space after the request line's method */
		const char *sp = memchr(p, ' ', n), *end = (const char *)p + n;
		const char *path = sp != NULL ? sp + 1 : "/";
		size_t pl = 0;
		if (sp == NULL)
			pl = 1;
		else
			while (path + pl < end && path[pl] != ' ' && path[pl] != '\r' && path[pl] != '\n')
				pl++;
		check((const char *)p, n, path, pl, &in, false);
		return 0;
	}
	struct berth_http_parser hp;
	size_t used = 0;
	berth_http_init(&hp, BERTH_HTTP_ORIGIN);
	if (berth_http_feed(&hp, p, n, &used) == BERTH_HTTP_DONE && !hp.req.connect) {
		struct berth_http_error e;
		long hl = berth_http_rewrite_origin(&hp.req, NULL, 0, &e);
		if (hl >= 0) {
			char *head = malloc((size_t)hl + 1);
			if (berth_http_rewrite_origin(&hp.req, head, (size_t)hl + 1, &e) == hl)
				check(head, (size_t)hl, hp.req.path, hp.req.path_len, &in, true);
			free(head);
		}
	}
	berth_http_free(&hp);
	return 0;
}
