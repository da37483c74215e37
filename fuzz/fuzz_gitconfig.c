/* SPDX-License-Identifier: MIT */
/*
 * fuzz_gitconfig.c - the git config parser (src/sandbox/gitrules.c), with
 * properties:
 *   - it returns 0 or -1, and -1 only with errnum EINVAL and a line named;
 *   - every key is [a-z][a-z0-9-]*, every section lower-case
 *     [a-z0-9.-]*, no subsection holds a newline, and each line number lies
 *     within the text;
 *   - what was parsed, written back in canonical form (every value quoted
 *     and escaped, every subsection in `[section "sub"]`), parses again to
 *     exactly the same keys and values;
 *   - the inert list never admits a key that runs a program.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/gitrules.h"

#define CHECK(c)                                                                                             \
	do {                                                                                                 \
		if (!(c)) {                                                                                  \
			fprintf(stderr, "fuzz_gitconfig: property failed: %s\n", #c);                        \
			abort();                                                                             \
		}                                                                                            \
	} while (0)

struct buf {
	char *p;
	size_t n, cap;
};

static void put(struct buf *b, const char *s, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		size_t cap = (b->n + n + 1) * 2;
		char *p = realloc(b->p, cap);
		CHECK(p != NULL);
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
}

static void puts_(struct buf *b, const char *s)
{
	put(b, s, strlen(s));
}

struct state {
	struct buf list;  /* per key: section NUL, [-+]sub NUL, key NUL, [-+]value NUL (-: none) */
	struct buf canon; /* the same keys, written back */
	unsigned max_line;
	bool have_header;
	char last_section[256], last_sub[256];
	bool last_has_sub;
};

static void escaped(struct buf *b, const char *s, bool value)
{
	for (; *s != '\0'; s++) {
		switch (*s) {
		case '"':
			puts_(b, "\\\"");
			break;
		case '\\':
			puts_(b, "\\\\");
			break;
		case '\n':
			puts_(b, value ? "\\n" : "?");
			break;
		case '\t':
			puts_(b, value ? "\\t" : "\t");
			break;
		case '\b':
			puts_(b, value ? "\\b" : "\b");
			break;
		default:
			put(b, s, 1);
		}
	}
}

static void canon_header(struct state *st, const char *section, const char *sub)
{
	bool same = st->have_header && strcmp(st->last_section, section) == 0 &&
		    st->last_has_sub == (sub != NULL) && (sub == NULL || strcmp(st->last_sub, sub) == 0);
	if (same || (!st->have_header && *section == '\0' && sub == NULL))
		return;
	CHECK(*section != '\0' || sub != NULL); /* a key with no section comes before every header */
	puts_(&st->canon, "[");
	puts_(&st->canon, section);
	if (sub != NULL) {
		puts_(&st->canon, " \"");
		escaped(&st->canon, sub, false);
		puts_(&st->canon, "\"");
	}
	puts_(&st->canon, "]\n");
	st->have_header = true;
	snprintf(st->last_section, sizeof st->last_section, "%s", section);
	snprintf(st->last_sub, sizeof st->last_sub, "%s", sub != NULL ? sub : "");
	st->last_has_sub = sub != NULL;
}

static int record(const char *section, const char *sub, const char *key, const char *value, unsigned line,
		  void *arg)
{
	struct state *st = arg;

	CHECK(line >= 1 && line <= st->max_line);
	CHECK(key[0] >= 'a' && key[0] <= 'z');
	for (const char *k = key; *k != '\0'; k++)
		CHECK((*k >= 'a' && *k <= 'z') || (*k >= '0' && *k <= '9') || *k == '-');
	for (const char *s = section; *s != '\0'; s++)
		CHECK((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-' || *s == '.');
	CHECK(sub == NULL || strchr(sub, '\n') == NULL);
	if (berth_git_key_inert(section, sub, key)) {
		/* section.key pairs that run a program or read another file */
		static const char *const never[][2] = {
		    {"core", "fsmonitor"},   {"core", "pager"},        {"core", "editor"},
		    {"core", "sshcommand"},  {"core", "hookspath"},    {"core", "worktree"},
		    {"core", "askpass"},     {"core", "gitproxy"},     {"core", "excludesfile"},
		    {"submodule", "update"}, {"remote", "uploadpack"}, {"remote", "receivepack"},
		    {"remote", "vcs"},       {"diff", "command"},      {"diff", "textconv"},
		    {"merge", "driver"},     {"sequence", "editor"},
		};
		for (size_t i = 0; i < sizeof never / sizeof never[0]; i++)
			CHECK(strcmp(section, never[i][0]) != 0 || strcmp(key, never[i][1]) != 0);
		static const char *const never_section[] = {"alias",      "include", "includeif", "filter",
							    "credential", "gpg",     "pager",     "url",
							    "protocol",   "http",    "safe"};
		for (size_t i = 0; i < sizeof never_section / sizeof never_section[0]; i++)
			CHECK(strcmp(section, never_section[i]) != 0);
	}
	put(&st->list, section, strlen(section) + 1);
	put(&st->list, sub != NULL ? "+" : "-", 1);
	put(&st->list, sub != NULL ? sub : "", strlen(sub != NULL ? sub : "") + 1);
	put(&st->list, key, strlen(key) + 1);
	put(&st->list, value != NULL ? "+" : "-", 1);
	put(&st->list, value != NULL ? value : "", strlen(value != NULL ? value : "") + 1);

	if (strlen(section) >= sizeof st->last_section || (sub != NULL && strlen(sub) >= sizeof st->last_sub))
		return 0;
	canon_header(st, section, sub);
	puts_(&st->canon, "\t");
	puts_(&st->canon, key);
	if (value != NULL) {
		puts_(&st->canon, " = \"");
		escaped(&st->canon, value, true);
		puts_(&st->canon, "\"");
	}
	puts_(&st->canon, "\n");
	return 0;
}

static unsigned count_lines(const uint8_t *d, size_t n)
{
	unsigned lines = 1;
	for (size_t i = 0; i < n; i++)
		lines += d[i] == '\n';
	return lines;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct state a = {.max_line = count_lines(data, size)}, b = {0};
	struct berth_error err = {0};

	int rc = berth_git_config_parse((const char *)data, size, record, &a, &err);
	CHECK(rc == 0 || rc == -1);
	if (rc == -1) {
		CHECK(err.errnum == EINVAL);
		CHECK(strstr(err.msg, "bad git config line ") != NULL);
		goto out;
	}
	bool canon_ok = true; /* false when a name was too long to write back here */
	for (size_t i = 0; i < a.list.n;) {
		const char *sec = a.list.p + i, *sub = sec + strlen(sec) + 1;
		if (strlen(sec) >= sizeof a.last_section || strlen(sub) > sizeof a.last_sub)
			canon_ok = false;
		const char *key = sub + strlen(sub) + 1, *val = key + strlen(key) + 1;
		i = (size_t)(val + strlen(val) + 1 - a.list.p);
	}
	if (canon_ok) {
		b.max_line = count_lines((const uint8_t *)(a.canon.p ? a.canon.p : ""), a.canon.n);
		rc = berth_git_config_parse(a.canon.p ? a.canon.p : "", a.canon.n, record, &b, &err);
		if (rc != 0)
			fprintf(stderr, "fuzz_gitconfig: canonical form refused: %s\n%.*s\n", err.msg,
				(int)a.canon.n, a.canon.p);
		CHECK(rc == 0);
		CHECK(a.list.n == b.list.n && (a.list.n == 0 || memcmp(a.list.p, b.list.p, a.list.n) == 0));
	}
out:
	free(a.list.p);
	free(a.canon.p);
	free(b.list.p);
	free(b.canon.p);
	return 0;
}
