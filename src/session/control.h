/* SPDX-License-Identifier: MIT */
/*
 * control.h - one request line of a session's control socket
 * (docs/sessions.md, served by src/session/supervise.c) parsed into an
 * operation, without the session: pure, so it is fuzzed on its own
 * (fuzz/fuzz_control.c).  One JSON object per line:
 *   {"op":"info"}  {"op":"peek"}
 *   {"op":"send","data":TEXT[,"paste":true][,"enter":true]}
 *   {"op":"resize","rows":R,"cols":C}  {"op":"attach","rows":R,"cols":C}
 *   {"op":"stop"[,"grace_ms":MS]}
 */
#ifndef BERTH_SESSION_CONTROL_H
#define BERTH_SESSION_CONTROL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* A terminal size outside these bounds leaves the size as it is. */
#define BERTH_CONTROL_ROWS_MIN 2
#define BERTH_CONTROL_ROWS_MAX 500
#define BERTH_CONTROL_COLS_MIN 10
#define BERTH_CONTROL_COLS_MAX 1000
#define BERTH_CONTROL_GRACE_DEFAULT_MS 5000
#define BERTH_CONTROL_GRACE_MAX_MS 600000

enum berth_control_op {
	BERTH_CONTROL_INFO,
	BERTH_CONTROL_PEEK,
	BERTH_CONTROL_SEND,
	BERTH_CONTROL_RESIZE,
	BERTH_CONTROL_ATTACH,
	BERTH_CONTROL_STOP,
};

struct berth_control_req {
	enum berth_control_op op;
	json_t *msg;        /* the request (owned): data points into it */
	const char *data;   /* send: the text (never a NUL byte: \u0000 is refused) */
	size_t data_len;    /* send: its length in bytes */
	bool paste, enter;  /* send: "paste":true, "enter":true */
	int rows, cols;     /* resize, attach: both within the bounds above, or both 0 (keep the size) */
	long long grace_ms; /* stop: 0 to BERTH_CONTROL_GRACE_MAX_MS (clamped), default 5000 */
};

/*
 * berth_control_parse - parse the request line @line of @len bytes (without
 * its newline) into @req.
 * Returns 0 with @req filled (free it with berth_control_req_free), or -1
 * with @req empty and the answer's message in @why (@whylen bytes):
 * "bad request: a NUL byte in the request",
 * "bad request: " and jansson's reason for a line that is no JSON,
 * "bad request: no `op`" for JSON that is no object or has no string "op",
 * "send needs a string `data`", "unknown op `OP`".
 */
int berth_control_parse(const char *line, size_t len, struct berth_control_req *req, char *why,
			size_t whylen);

/* berth_control_req_free - release @req's request; @req is left empty. */
void berth_control_req_free(struct berth_control_req *req);

#endif
