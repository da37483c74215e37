/* SPDX-License-Identifier: MIT */
/*
 * body.c - request body framing (RFC 9112 6.3 and 7.1); see body.h.
 */
#include "body.h"

#include "../util/hex.h"

enum {
	S_SIZE,          /* chunk-size hex digits */
	S_EXT,           /* chunk extensions, up to CR */
	S_SIZE_LF,       /* LF after a chunk-size line */
	S_DATA,          /* chunk data */
	S_DATA_CR,       /* CR after chunk data */
	S_DATA_LF,       /* LF after chunk data */
	S_TRAILER_START, /* start of a trailer line, or of the final CRLF */
	S_TRAILER,       /* inside a trailer field line */
	S_TRAILER_LF,    /* LF ending a trailer field line */
	S_END_LF,        /* LF of the final CRLF */
	S_LENGTH,        /* Content-Length bytes */
	S_DONE,
};

void berth_body_init(struct berth_body *f, enum berth_body_kind kind, uint64_t length)
{
	*f = (struct berth_body){.kind = kind};
	if (kind == BERTH_BODY_CHUNKED) {
		f->state = S_SIZE;
	} else if (kind == BERTH_BODY_LENGTH && length > 0) {
		f->state = S_LENGTH;
		f->left = length;
	} else {
		f->state = S_DONE;
		f->done = true;
	}
}

bool berth_body_done(const struct berth_body *f)
{
	return f->done;
}

/* A byte allowed inside a size-line extension or a trailer field line. */
static bool line_byte(unsigned char c)
{
	return c == '\t' || (c >= 0x20 && c != 0x7f);
}

long berth_body_feed(struct berth_body *f, const unsigned char *p, size_t n)
{
	size_t i = 0;

	while (i < n && f->state != S_DONE) {
		unsigned char c = p[i];

		switch (f->state) {
		case S_LENGTH: {
			uint64_t take = n - i < f->left ? n - i : f->left;
			i += take;
			f->left -= take;
			if (f->left == 0) {
				f->state = S_DONE;
				f->done = true;
			}
			continue;
		}
		case S_DATA: {
			uint64_t take = n - i < f->left ? n - i : f->left;
			i += take;
			f->left -= take;
			if (f->left == 0)
				f->state = S_DATA_CR;
			continue;
		}
		case S_SIZE: {
			int v = berth_hex_digit(c);
			if (++f->line > BERTH_BODY_LINE_MAX)
				return -1;
			if (v >= 0) {
				if (++f->digits > 15)
					return -1;
				f->left = f->left * 16 + (uint64_t)v;
			} else if (f->digits == 0) {
				return -1;
			} else if (c == '\r') {
				f->state = S_SIZE_LF;
			} else if (c == ';' || c == ' ' || c == '\t') {
				f->state = S_EXT; /* chunk-ext, with BWS before ';' */
			} else {
				return -1;
			}
			break;
		}
		case S_EXT:
			if (++f->line > BERTH_BODY_LINE_MAX)
				return -1;
			if (c == '\r')
				f->state = S_SIZE_LF;
			else if (!line_byte(c))
				return -1;
			break;
		case S_SIZE_LF:
			if (c != '\n' || ++f->line > BERTH_BODY_LINE_MAX)
				return -1;
			f->line = 0;
			f->digits = 0;
			f->state = f->left == 0 ? S_TRAILER_START : S_DATA;
			break;
		case S_DATA_CR:
			if (c != '\r')
				return -1;
			f->state = S_DATA_LF;
			break;
		case S_DATA_LF:
			if (c != '\n')
				return -1;
			f->state = S_SIZE;
			break;
		case S_TRAILER_START:
		case S_TRAILER:
			if (++f->trailer > BERTH_BODY_TRAILER_MAX)
				return -1;
			if (c == '\r')
				f->state = f->state == S_TRAILER_START ? S_END_LF : S_TRAILER_LF;
			else if (!line_byte(c) || (f->state == S_TRAILER_START && (c == ' ' || c == '\t')))
				return -1; /* no obsolete line folding (RFC 9112 5.2) */
			else
				f->state = S_TRAILER;
			break;
		case S_TRAILER_LF:
			if (++f->trailer > BERTH_BODY_TRAILER_MAX || c != '\n')
				return -1;
			f->state = S_TRAILER_START;
			break;
		case S_END_LF:
			if (c != '\n')
				return -1;
			f->state = S_DONE;
			f->done = true;
			break;
		default:
			return -1;
		}
		i++;
	}
	return (long)i;
}
