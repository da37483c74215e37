/* SPDX-License-Identifier: MIT */
/*
 * yamlw.h - writing YAML for other programs to read (berth export k8s):
 * block-style lines at a given indentation, and every value that comes from
 * input as a double-quoted scalar that no YAML reader can take for anything
 * but that string.
 *
 * Not libyaml's emitter: the documents berth writes carry comments (what a
 * Kubernetes object cannot express of a policy), which libyaml cannot emit.
 * The quoting is tested against libyaml's parser (tests/unit/test_export.c).
 */
#ifndef BERTH_EXPORT_YAMLW_H
#define BERTH_EXPORT_YAMLW_H

#include <stdbool.h>

#include "../util/buf.h"

struct berth_yamlw {
	struct berth_buf b; /* the text; b.oom once an allocation failed */
	/* the first string given that is not UTF-8 (the caller's pointer, for
	 * its message), or NULL: a YAML stream is Unicode text */
	const char *bad;
};

/*
 * berth_yaml_quote - append @s to @b as a YAML double-quoted scalar (YAML
 * 1.1 and 1.2 alike): `"` and `\` escaped, the C0 controls, DEL, the C1
 * controls, NEL, U+2028, U+2029, U+FEFF, U+FFFE and U+FFFF as escapes, every
 * other character as its UTF-8.  Returns 0, or -1 when @s is not UTF-8 (the
 * shortest form, no surrogates; berth_utf8_decode): nothing is appended then.
 */
int berth_yaml_quote(struct berth_buf *b, const char *s);

/* berth_yamlw_line - one line: 2 * @indent spaces, then the text of @fmt
 * (the caller's own words and YAML: nothing of it is quoted). */
void berth_yamlw_line(struct berth_yamlw *w, int indent, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * berth_yamlw_str - the line `KEY: "VALUE"` (or `- "VALUE"` when @key is
 * NULL; `- KEY: "VALUE"` when @item) at @indent, @value quoted by
 * berth_yaml_quote.  A @value that is not UTF-8 is written as `""` and
 * remembered in @w->bad (when it is the first).
 */
void berth_yamlw_str(struct berth_yamlw *w, int indent, bool item, const char *key, const char *value);

/*
 * berth_yamlw_comment - the line `# TEXT` at @indent, TEXT from @fmt with
 * every control character (a line break above all, which would end the
 * comment) written as a space.
 */
void berth_yamlw_comment(struct berth_yamlw *w, int indent, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
