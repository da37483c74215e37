/* SPDX-License-Identifier: MIT */
/*
 * fuzz_ask.c - the pure half of `berth run --ask` (src/supervisor/ask.h):
 * the first byte picks what the rest is.
 *   0: a control socket request (berth_ask_parse_command).  Oracles: an
 *      accepted request is list, approve or deny with an id 1..999999999;
 *      its canonical text parses back to the same request.
 *   1: a notification: a syscall selector, six arguments (8 bytes each),
 *      the rest the path as read from the caller's memory (no NUL
 *      promised), classified under a policy with a workspace and a bind.
 *      Oracles: a held call's path is absolute, NUL-terminated, has no `.`
 *      or `..` component, is not under the sandbox's own trees, and its
 *      errno is ENOENT or EROFS; the denial block for it is NUL-terminated
 *      and starts with the BERTH CAPABILITY DENIAL line.
 *   2: openat2's struct open_how (berth_ask_decode_how) of any length.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "policy/policy.h"
#include "supervisor/ask.h"

static void command(const uint8_t *data, size_t size)
{
	struct berth_ask_cmd c, c2;
	char canon[80];

	if (berth_ask_parse_command((const char *)data, size, &c) < 0)
		return;
	if (c.op == BERTH_ASK_OP_LIST) {
		if (c.id != 0 || c.always)
			abort();
		return;
	}
	if ((c.op != BERTH_ASK_OP_APPROVE && c.op != BERTH_ASK_OP_DENY) || c.id < 1 || c.id > 999999999)
		abort();
	snprintf(canon, sizeof canon, "%s %u%s\n", c.op == BERTH_ASK_OP_APPROVE ? "approve" : "deny", c.id,
		 c.always ? " always" : "");
	if (berth_ask_parse_command(canon, strlen(canon), &c2) < 0 || c2.op != c.op || c2.id != c.id ||
	    c2.always != c.always)
		abort();
}

static bool bad_component(const char *p)
{
	return strstr(p, "/./") || strstr(p, "/../") ||
	       (strlen(p) >= 2 && !strcmp(p + strlen(p) - 2, "/.")) ||
	       (strlen(p) >= 3 && !strcmp(p + strlen(p) - 3, "/.."));
}

static void call(const uint8_t *data, size_t size)
{
	static const int nrs[] = {SYS_open, SYS_openat, SYS_creat, SYS_openat2, SYS_read};
	struct berth_policy p;
	struct berth_mount m = {0};
	struct berth_ask_call c;
	struct berth_ask_req r;
	uint64_t args[6];
	char ws[] = "/work/ws", src[] = "/srv/data", dst[] = "/data";
	char block[BERTH_ASK_PATH_MAX + 2048];

	if (size < 1 + 48)
		return;
	memcpy(args, data + 1, 48);
	if (berth_ask_decode(nrs[data[0] % 5], args, &c) < 0)
		return;
	if (c.how_size != 0)
		c.resolve = args[2] & 1 ? 0 : args[2]; /* as if read: a mix of asked and not */
	data += 49;
	size -= 49;
	/* exactly @size bytes: the classifier must not read past them */
	char *path = malloc(size > 0 ? size : 1);
	if (path == NULL)
		return;
	memcpy(path, data, size);
	berth_policy_init(&p);
	p.workspace = ws;
	m.src = src;
	m.dst = dst;
	p.mounts = &m;
	p.n_mounts = 1;
	if (berth_ask_classify(&p, &c, path, size, &r) == BERTH_ASK_HOLD) {
		if (memchr(r.path, '\0', sizeof r.path) == NULL || r.path[0] != '/' || bad_component(r.path))
			abort();
		/* one spelling: the tree tests below would miss `//tmp` */
		if (strstr(r.path, "//") != NULL)
			abort();
		if (!strncmp(r.path, "/workspace", 10) && (r.path[10] == '\0' || r.path[10] == '/'))
			abort();
		if (!strncmp(r.path, "/tmp", 4) && (r.path[4] == '\0' || r.path[4] == '/'))
			abort();
		if (!strncmp(r.path, "/data", 5) && (r.path[5] == '\0' || r.path[5] == '/'))
			abort();
		if (r.errnum != ENOENT && r.errnum != EROFS)
			abort();
		size_t n =
		    berth_ask_block(block, sizeof block, "0123456789abcdef", 1, &r, r.errnum, "a human", &p);
		if (n >= sizeof block || block[n] != '\0' ||
		    strncmp(block, "BERTH CAPABILITY DENIAL\n", 24) != 0)
			abort();
	}
	p.workspace = NULL;
	p.mounts = NULL;
	p.n_mounts = 0;
	berth_policy_free(&p);
	free(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > (1U << 14))
		return 0;
	switch (data[0] % 3) {
	case 0:
		command(data + 1, size - 1);
		break;
	case 1:
		call(data + 1, size - 1);
		break;
	default: {
		struct berth_ask_call c = {.how_size = size - 1};
		char *how = malloc(size);
		if (how == NULL)
			return 0;
		memcpy(how, data + 1, size - 1);
		(void)berth_ask_decode_how(&c, how, size - 1);
		free(how);
		break;
	}
	}
	return 0;
}
