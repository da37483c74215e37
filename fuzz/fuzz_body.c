/* SPDX-License-Identifier: MIT */
/*
 * fuzz_body.c - libFuzzer target for the broker's request body framer
 * (src/broker/body.c).  The first byte chooses the kind (bits 0-1) and the
 * piece sizes (bits 2-7); the next two bytes a Content-Length.  Besides
 * memory errors it checks that:
 *  - fed at once and in pieces, the framer takes the same bytes, refuses at
 *    the same point and ends at the same point;
 *  - a call never takes more than it was given, and takes everything it was
 *    given unless the body ended or it refused;
 *  - once done, it stays done and takes nothing more;
 *  - a Content-Length body takes exactly min(length, input) bytes.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "broker/body.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 3)
		return 0;
	enum berth_body_kind kind = (enum berth_body_kind)(data[0] & 3);
	if (kind > BERTH_BODY_CHUNKED)
		kind = BERTH_BODY_CHUNKED;
	size_t piece = 1 + (data[0] >> 2);
	uint64_t length = (uint64_t)data[1] << 8 | data[2];
	const unsigned char *p = data + 3;
	size_t n = size - 3;

	struct berth_body a, b;
	berth_body_init(&a, kind, length);
	long whole = berth_body_feed(&a, p, n);
	if (whole > (long)n || whole < -1)
		abort();
	if (whole >= 0 && (size_t)whole < n && !berth_body_done(&a))
		abort(); /* stopped early without ending */

	berth_body_init(&b, kind, length);
	long took = 0;
	bool refused = false;
	for (size_t pos = 0; pos < n;) {
		size_t k = n - pos < piece ? n - pos : piece;
		bool was_done = berth_body_done(&b);
		long r = berth_body_feed(&b, p + pos, k);
		if (r < 0) {
			if (was_done)
				abort();
			refused = true;
			break;
		}
		if ((size_t)r > k || (was_done && r != 0) || ((size_t)r < k && !berth_body_done(&b)))
			abort();
		took += r;
		if (berth_body_done(&b))
			break;
		pos += k;
	}
	if (refused != (whole < 0) || (!refused && took != whole) ||
	    berth_body_done(&a) != berth_body_done(&b))
		abort();
	if (kind == BERTH_BODY_LENGTH && whole != (long)(length < n ? length : n))
		abort();
	if (kind == BERTH_BODY_NONE && (whole != 0 || !berth_body_done(&a)))
		abort();
	return 0;
}
