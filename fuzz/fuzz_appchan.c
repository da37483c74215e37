/* SPDX-License-Identifier: MIT */
/*
 * fuzz_appchan.c - libFuzzer target for the app -> berth channel
 * (docs/protocol.md): the bytes a resident app's sandboxed process writes
 * to fd 3, framed into lines (berth_lines_fill/next, src/supervisor/lines.c)
 * read through a pipe in chunks of the fuzzer's choosing, and every line
 * decided (src/supervisor/appchan.c): a log line, berth/ready and its
 * exports against the manifest's, another notification, an answer and what
 * it means for the call (the app's error, a result its export's output
 * schema accepts, or bad output).  The manifest is apps/filesystem's five
 * exports.  The input (at most 64 KiB): byte 0 picks the line bound (255:
 * the protocol's 1 MiB; else 8 + 4 * byte, so that long lines are dropped),
 * the rest is the stream.
 *
 * Invariants (a violation aborts):
 *  - framing: the lines come out exactly as the stream splits on newlines,
 *    the last one without a newline included; a line of the bound or longer
 *    is reported dropped once (never cut into pieces), and the lines around
 *    it are intact, whatever the read sizes;
 *  - the kind is the one docs/protocol.md gives (judged below on the
 *    line read as JSON on its own; app.c and app_call.c act on the kind):
 *    no JSON object -> a warning whose reason is jansson's, or "not an
 *    object" for a JSON array; no id -> berth/log, a warning for
 *    another method, or nothing; an id -> an answer, matched only when an
 *    integer; berth/log's level is "info" and its text "" when not strings;
 *  - an answer's outcome: the app's error keeps its code unless that is
 *    outside 32 bits (-> -32603) or one of berth's own (crashed, timeout,
 *    bad output -> -32000), its message has no terminal control left, its
 *    data is an object or none; otherwise the result is the message's own
 *    object and the output schema accepts it, or the outcome is bad output;
 *    the message written out again and read back decides the same;
 *  - berth/ready: parity says "same" exactly when every export is
 *    announced and every announced entry is a string naming one, and
 *    "missing"/"extra" are empty exactly when that side is complete.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "manifest/schema.h"
#include "supervisor/appchan.h"
#include "supervisor/lines.h"
#include "util/text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_NAME "fuzz_appchan"
#include "fuzz_line_check.h"

/* apps/filesystem/berth.yml's exports, their output shorthand expanded. */
static const char *const export_names[] = {"write_file", "read_file", "list_files", "delete_file", "stat"};
static const char *const export_outputs[] = {
    "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},\"bytes\":{\"type\":\"integer\"}},"
    "\"required\":[\"path\",\"bytes\"]}",
    "{\"type\":\"object\",\"properties\":{\"content\":{\"type\":\"string\"}},\"required\":[\"content\"]}",
    "{\"type\":\"object\",\"properties\":{\"files\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
    "\"properties\":{\"name\":{\"type\":\"string\"},\"type\":{\"type\":\"string\",\"enum\":[\"file\",\"dir\","
    "\"other\"]},\"size\":{\"type\":\"integer\"}},\"required\":[\"name\",\"type\",\"size\"]}},"
    "\"truncated\":{\"type\":\"boolean\"}},\"required\":[\"files\",\"truncated\"]}",
    "{\"type\":\"object\",\"properties\":{\"deleted\":{\"type\":\"boolean\"}},\"required\":[\"deleted\"]}",
    "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},\"type\":{\"type\":\"string\","
    "\"enum\":[\"file\",\"dir\",\"other\"]},\"size\":{\"type\":\"integer\"},\"mode\":{\"type\":\"string\"},"
    "\"mtime\":{\"type\":\"integer\"}},\"required\":[\"path\",\"type\",\"size\",\"mode\",\"mtime\"]}",
};
#define N_EXPORTS 5
static struct berth_export exports[N_EXPORTS];

static void setup(void)
{
	for (size_t i = 0; i < N_EXPORTS; i++) {
		char path[256], reason[256];

		exports[i].name = (char *)export_names[i];
		exports[i].output = json_loads(export_outputs[i], 0, NULL);
		if (exports[i].output == NULL ||
		    berth_schema_check(exports[i].output, path, sizeof path, reason, sizeof reason) < 0) {
			fprintf(stderr, "fuzz_appchan: output schema %zu: %s: %s\n", i, path, reason);
			abort();
		}
	}
}

/* docs/protocol.md: what a line from the app is ("Life of an app" 2, 4, 6
 * and the paragraph after the error table). */
static enum berth_appmsg_kind documented_kind(const char *line, size_t len)
{
	json_t *j = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
	const char *method = json_string_value(json_object_get(j, "method"));
	enum berth_appmsg_kind k;

	if (!json_is_object(j))
		k = BERTH_APPMSG_BAD;
	else if (json_object_get(j, "id") != NULL)
		k = BERTH_APPMSG_ANSWER;
	else if (method == NULL)
		k = BERTH_APPMSG_NONE;
	else if (strcmp(method, "berth/log") == 0)
		k = BERTH_APPMSG_LOG;
	else
		k = strcmp(method, "berth/ready") == 0 ? BERTH_APPMSG_READY : BERTH_APPMSG_OTHER;
	json_decref(j);
	return k;
}

/* The warning's reason: "not an object" exactly for a JSON array (a bare
 * scalar is no JSON text to jansson: its reason is jansson's). */
static bool is_other_json(const char *line, size_t len)
{
	json_t *j = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
	bool other = j != NULL && !json_is_object(j);

	json_decref(j);
	return other;
}

static bool clean_text(const char *s)
{
	for (; *s != '\0'; s++)
		if (((unsigned char)*s < 0x20 && *s != '\t') || *s == 0x7f)
			return false;
	return true;
}

static void check_parity(const struct berth_appmsg *m, const char *line, size_t len)
{
	char missing[1024], extra[1024];
	int r = berth_appmsg_parity(m->exports, exports, N_EXPORTS, missing, extra, sizeof missing);
	bool all_announced = true, all_known = true;
	size_t i;
	json_t *v;

	if (!json_is_array(m->exports)) {
		CHECK(r == -1);
		return;
	}
	for (size_t k = 0; k < N_EXPORTS; k++) {
		bool found = false;
		json_array_foreach(m->exports, i, v)
			found |= json_is_string(v) && strcmp(json_string_value(v), export_names[k]) == 0;
		all_announced &= found;
	}
	json_array_foreach(m->exports, i, v) {
		bool known = false;
		for (size_t k = 0; json_is_string(v) && k < N_EXPORTS; k++)
			known |= strcmp(json_string_value(v), export_names[k]) == 0;
		all_known &= known;
	}
	CHECK(r == (all_announced && all_known ? 0 : 1));
	CHECK((missing[0] == '\0') == all_announced);
	CHECK((extra[0] == '\0') == all_known);
	CHECK(clean_text(missing) && clean_text(extra));
}

struct decision {
	enum berth_appmsg_kind kind;
	int rc, code;
	char message[1024];
};

static void decide(const char *line, size_t len, struct decision *d, json_t **copy)
{
	struct berth_appmsg m;

	memset(d, 0, sizeof *d);
	berth_appmsg_parse(line, len, &m);
	d->kind = m.kind;
	CHECK(m.kind == documented_kind(line, len));
	CHECK((m.kind == BERTH_APPMSG_BAD) == (m.msg == NULL));
	if (m.kind == BERTH_APPMSG_BAD) {
		CHECK(m.bad[0] != '\0');
		CHECK((strcmp(m.bad, "not an object") == 0) == is_other_json(line, len));
		return;
	}
	CHECK(m.method == json_string_value(json_object_get(m.msg, "method")));
	if (m.method != NULL && strcmp(m.method, "berth/log") == 0) {
		json_t *params = json_object_get(m.msg, "params");
		const char *level = json_string_value(json_object_get(params, "level"));
		const char *text = json_string_value(json_object_get(params, "message"));
		CHECK(strcmp(m.level, level != NULL ? level : "info") == 0);
		CHECK(strcmp(m.text, text != NULL ? text : "") == 0);
	} else
		CHECK(m.level == NULL && m.text == NULL);
	if (m.method != NULL && strcmp(m.method, "berth/ready") == 0)
		check_parity(&m, line, len);
	if (m.kind == BERTH_APPMSG_ANSWER) {
		json_t *id = json_object_get(m.msg, "id"), *result = NULL;
		struct berth_call_error ce;
		const struct berth_export *ex = &exports[(unsigned long long)m.id % N_EXPORTS];

		CHECK(m.id_ok == json_is_integer(id) && (!m.id_ok || m.id == json_integer_value(id)));
		d->rc = berth_appmsg_outcome(&m, ex, &result, &ce);
		if (d->rc == 0) {
			char p[256], r[256];
			CHECK(json_object_get(m.msg, "error") == NULL);
			CHECK(result != NULL && result == json_object_get(m.msg, "result") &&
			      json_is_object(result));
			CHECK(berth_schema_validate(ex->output, result, p, sizeof p, r, sizeof r) == 0);
		} else {
			json_t *error = json_object_get(m.msg, "error"),
			       *code = json_object_get(error, "code");
			/* (an app's own message may be empty: it is passed on as it is) */
			CHECK(d->rc == -1 && result == NULL && clean_text(ce.message));
			CHECK(ce.message[0] != '\0' || json_is_string(json_object_get(error, "message")));
			CHECK(ce.denial == NULL && (ce.data == NULL || json_is_object(ce.data)));
			if (error != NULL) {
				json_int_t c = json_integer_value(code);
				bool own = c == BERTH_RPC_CRASHED || c == BERTH_RPC_TIMEOUT ||
					   c == BERTH_RPC_BAD_OUTPUT;
				CHECK(ce.code == (!json_is_integer(code) || c < INT32_MIN || c > INT32_MAX
						      ? BERTH_RPC_INTERNAL
						  : own ? BERTH_RPC_APP_ERROR
							: (int)c));
				CHECK(json_is_object(json_object_get(error, "data")) == (ce.data != NULL));
			} else {
				CHECK(ce.code == BERTH_RPC_BAD_OUTPUT);
			}
			d->code = ce.code;
			snprintf(d->message, sizeof d->message, "%s", ce.message);
			berth_call_error_free(&ce);
		}
	}
	if (copy != NULL)
		*copy = json_incref(m.msg);
	berth_appmsg_free(&m);
}

/* One line: decided, then written out again and decided the same. */
static void check_line(const char *line, size_t len)
{
	struct decision d1, d2;
	json_t *msg = NULL;
	char *text;

	decide(line, len, &d1, &msg);
	if (msg == NULL)
		return;
	text = json_dumps(msg, JSON_COMPACT | JSON_ENCODE_ANY);
	CHECK(text != NULL);
	decide(text, strlen(text), &d2, NULL);
	CHECK(d1.kind == d2.kind && d1.rc == d2.rc && d1.code == d2.code &&
	      strcmp(d1.message, d2.message) == 0);
	free(text);
	json_decref(msg);
}

/* The lines the framing must give: each split on newlines (a last one
 * without its newline too), those of the bound or longer dropped (NULL). */
struct expect {
	const char *p;
	size_t len;
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	const char *line = NULL, *stream;
	size_t len = 0, max, n, ne = 0, got = 0, off = 0;
	struct expect *want;
	struct berth_lines l;
	int pfd[2];
	uint32_t h = 2166136261u;

	if (size < 1 || size > 65536)
		return 0;
	if (!ready) {
		setup();
		ready = true;
	}
	max = data[0] == 255 ? BERTH_RPC_MAX_LINE : 8 + 4 * (size_t)data[0];
	stream = (const char *)data + 1;
	n = size - 1;
	want = calloc(n + 1, sizeof *want);
	CHECK(want != NULL);
	for (size_t i = 0; i < n;) {
		const char *nl = memchr(stream + i, '\n', n - i);
		size_t l2 = nl != NULL ? (size_t)(nl - stream) - i : n - i;
		want[ne].p = l2 < max ? stream + i : NULL;
		want[ne++].len = l2;
		i += l2 + 1;
	}
	for (size_t i = 0; i < size; i++)
		h = (h ^ data[i]) * 16777619u;

	CHECK(berth_lines_init(&l, max) == 0 && pipe2(pfd, O_CLOEXEC) == 0);
	CHECK(fcntl(pfd[0], F_SETFL, O_NONBLOCK) == 0);
	for (bool closed = false;;) {
		char *lp;
		size_t ll;
		int r;

		/* write a chunk (1 byte up to all that is left), or the end */
		if (off < n) {
			h = h * 1103515245u + 12345u;
			size_t c = 1 + (h >> 8) % (n - off < 4096 ? n - off : 4096);
			CHECK(write(pfd[1], stream + off, c) == (ssize_t)c);
			off += c;
		} else if (!closed) {
			close(pfd[1]);
			closed = true;
		}
		for (;;) {
			while ((r = berth_lines_next(&l, &lp, &ll)) != 0) {
				CHECK(got < ne);
				if (r == 2) {
					line = want[got].p;
					len = want[got].len;
					CHECK(want[got].p == NULL);
				} else {
					line = lp;
					len = ll;
					CHECK(want[got].p != NULL && ll == want[got].len &&
					      memcmp(lp, want[got].p, ll) == 0);
					CHECK(lp[ll] == '\0');
					check_line(lp, ll);
				}
				got++;
			}
			if (l.eof)
				break;
			long rd = berth_lines_fill(&l, pfd[0]);
			if (rd < 0) {
				CHECK(errno == EAGAIN);
				break;
			}
		}
		if (l.eof)
			break;
	}
	line = NULL;
	len = 0;
	CHECK(got == ne);
	close(pfd[0]);
	berth_lines_free(&l);
	free(want);
	return 0;
}
