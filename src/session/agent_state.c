/* SPDX-License-Identifier: MIT */
/*
 * agent_state.c - the agent-state classifier and its pattern files
 * (agent_state.h; the file format and the rules are in docs/agents.md).
 */
#include "agent_state.h"

#include <errno.h>
#include <limits.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/ynode.h"

#define DEFAULT_REGION_ROWS 12
#define DEFAULT_QUIET_MS 1500
#define MAX_PATTERN_FILE (256 * 1024)

struct rx {
	regex_t re;
	bool compiled;
};

struct brule {
	char *name;
	struct rx question;
	struct rx options;    /* compiled only when the rule has options */
	unsigned min_options; /* option lines needed below the question */
	bool at_cursor;       /* the question must be on the cursor row */
};

struct rx_list {
	struct rx *v;
	size_t n;
};

struct berth_agent_patterns {
	char *origin;
	unsigned region_rows;
	unsigned quiet_ms;
	enum berth_agent_state otherwise; /* IDLE or WORKING */
	struct brule *blocked;
	size_t n_blocked;
	struct rx_list working, input, done, error;
};

static const char *const state_names[] = {
    [BERTH_AGENT_WORKING] = "working", [BERTH_AGENT_BLOCKED] = "blocked", [BERTH_AGENT_IDLE] = "idle",
    [BERTH_AGENT_DONE] = "done",       [BERTH_AGENT_EXITED] = "exited",   [BERTH_AGENT_ERROR] = "error",
};

const char *berth_agent_state_name(enum berth_agent_state s)
{
	if ((unsigned)s >= BERTH_ARRAY_SIZE(state_names))
		return "unknown";
	return state_names[s];
}

int berth_agent_state_parse(const char *name, enum berth_agent_state *out, struct berth_error *err)
{
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(state_names); i++) {
		if (name != NULL && strcmp(name, state_names[i]) == 0) {
			*out = (enum berth_agent_state)i;
			return 0;
		}
	}
	berth_usage_err(err, "unknown agent state `%.60s`", name != NULL ? name : "(null)");
	return berth_err_hint(err, "use one of working, blocked, idle, done, error, exited");
}

/* ---- pattern files ---- */

static void rx_free(struct rx *r)
{
	if (r->compiled)
		regfree(&r->re);
	r->compiled = false;
}

static void rx_list_free(struct rx_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		rx_free(&l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

void berth_agent_patterns_free(struct berth_agent_patterns *p)
{
	if (p == NULL)
		return;
	for (size_t i = 0; i < p->n_blocked; i++) {
		free(p->blocked[i].name);
		rx_free(&p->blocked[i].question);
		rx_free(&p->blocked[i].options);
	}
	free(p->blocked);
	rx_list_free(&p->working);
	rx_list_free(&p->input);
	rx_list_free(&p->done);
	rx_list_free(&p->error);
	free(p->origin);
	free(p);
}

const char *berth_agent_patterns_origin(const struct berth_agent_patterns *p)
{
	return p->origin;
}

/*
 * The size glibc's regcomp(3) builds for @src, estimated: it copies a
 * repeated atom once per repetition it must spell out (`x+` is `xx*`,
 * `x{3}` is `xxx`), so stacked and nested repetitions grow exponentially
 * (`a++++++++`, `((a{9}){9}){9}`) and can take gigabytes.  Each atom costs
 * 1; a repetition multiplies the cost of the atom or group before it by the
 * copies it needs.  Returns false when the estimate passes MAX_RX_COST or
 * the nesting MAX_RX_DEPTH.
 */
#define MAX_RX_COST 4096
#define MAX_RX_DEPTH 16
#define MAX_RX_LEN 1024

static bool rx_cost_ok(const char *s)
{
	unsigned long long stack[MAX_RX_DEPTH + 1], cost = 0, last = 0;
	int depth = 0;

	if (strlen(s) > MAX_RX_LEN)
		return false;
	while (*s != '\0') {
		unsigned long long mult = 0;
		switch (*s) {
		case '\\':
			s += s[1] != '\0' ? 2 : 1;
			last = 1;
			cost += 1;
			continue;
		case '[': {
			const char *p = s + 1;
			if (*p == '^')
				p++;
			if (*p == ']')
				p++;
			while (*p != '\0' && *p != ']') {
				if (*p == '[' && (p[1] == ':' || p[1] == '.' || p[1] == '=')) {
					const char *e = strchr(p + 2, p[1]);
					p = e != NULL && e[1] == ']' ? e + 2 : p + 1;
				} else {
					p++;
				}
			}
			s = *p == ']' ? p + 1 : p;
			last = 1;
			cost += 1;
			continue;
		}
		case '(':
			if (depth >= MAX_RX_DEPTH)
				return false;
			stack[depth++] = cost;
			cost = 0;
			last = 0;
			s++;
			continue;
		case ')':
			if (depth > 0) {
				last = cost;
				cost = stack[--depth] + cost;
			}
			s++;
			continue;
		case '|':
		case '^':
		case '$':
			last = 0;
			s++;
			continue;
		case '*':
		case '?':
			mult = 1;
			s++;
			break;
		case '+':
			mult = 2;
			s++;
			break;
		case '{': {
			char *e;
			unsigned long a = strtoul(s + 1, &e, 10), b = a;
			if (*e == ',')
				b = e[1] == '}' ? a + 1 : strtoul(e + 1, &e, 10);
			mult = (b > a ? b : a) + 1;
			s = strchr(s, '}') != NULL ? strchr(s, '}') + 1 : s + strlen(s);
			break;
		}
		default:
			last = 1;
			cost += 1;
			s++;
			continue;
		}
		if (mult > MAX_RX_COST)
			return false;
		cost += last * (mult - 1);
		last *= mult;
		if (cost > MAX_RX_COST || last > MAX_RX_COST)
			return false;
	}
	return cost <= MAX_RX_COST;
}

/* Compile the regular expression in scalar @n (POSIX extended, one line at a time). */
static int rx_compile(struct rx *r, const struct berth_ynode *n, const char *origin, const char *key,
		      struct berth_error *err)
{
	const char *src;
	char buf[256];
	int rc;

	if (berth_ynode_str(n, origin, key, &src, err) < 0)
		return -1;
	if (src[0] == '\0')
		return berth_ynode_err(err, origin, n, "`%s` is an empty pattern, which matches every line",
				       key);
	if (!rx_cost_ok(src))
		return berth_ynode_err(err, origin, n,
				       "`%s`: the regular expression `%.60s` is too long or repeats too much "
				       "(stacked or nested repetitions, large {m,n}); simplify it",
				       key, src);
	rc = regcomp(&r->re, src, REG_EXTENDED | REG_NOSUB);
	if (rc != 0) {
		regerror(rc, &r->re, buf, sizeof buf);
		return berth_ynode_err(err, origin, n, "`%s`: bad regular expression `%.80s`: %s", key, src,
				       buf);
	}
	r->compiled = true;
	return 0;
}

static int rx_list_parse(struct rx_list *l, const struct berth_ynode *n, const char *origin, const char *key,
			 struct berth_error *err)
{
	if (n->kind != BERTH_YN_SEQ)
		return berth_ynode_err(err, origin, n, "`%s` must be a list of regular expressions, got %s",
				       key, berth_ynode_describe(n));
	l->v = calloc(n->n + 1, sizeof *l->v);
	if (l->v == NULL)
		return berth_err(err, ENOMEM, "%s", origin);
	for (size_t i = 0; i < n->n; i++) {
		if (rx_compile(&l->v[i], n->kids[i], origin, key, err) < 0)
			return -1;
		l->n++;
	}
	return 0;
}

static int brule_parse(struct brule *b, const struct berth_ynode *m, const char *origin,
		       struct berth_error *err)
{
	const struct berth_ynode *name = NULL, *question = NULL, *options = NULL, *min = NULL, *cursor = NULL;
	uint64_t v;

	if (m->kind != BERTH_YN_MAP)
		return berth_ynode_err(err, origin, m,
				       "each `blocked` rule must be a mapping with `name`, `question` and "
				       "`options`, got %s",
				       berth_ynode_describe(m));
	for (size_t i = 0; i < berth_ymap_size(m); i++) {
		const struct berth_ynode *k = berth_ymap_key(m, i), *val = berth_ymap_val(m, i);
		const char *key = k->kind == BERTH_YN_SCALAR ? k->s : "";
		const struct berth_ynode **slot = NULL;

		if (strcmp(key, "name") == 0)
			slot = &name;
		else if (strcmp(key, "question") == 0)
			slot = &question;
		else if (strcmp(key, "options") == 0)
			slot = &options;
		else if (strcmp(key, "min-options") == 0)
			slot = &min;
		else if (strcmp(key, "at-cursor") == 0)
			slot = &cursor;
		else
			return berth_ynode_err(
			    err, origin, k,
			    "unknown key `%.60s` in a `blocked` rule; known: name, question, "
			    "options, min-options, at-cursor",
			    key);
		if (*slot != NULL)
			return berth_ynode_err(err, origin, k, "`%s` is given twice", key);
		*slot = val;
	}
	if (name == NULL || question == NULL)
		return berth_ynode_err(err, origin, m, "a `blocked` rule needs `name` and `question`");
	{
		const char *s;
		if (berth_ynode_str(name, origin, "name", &s, err) < 0)
			return -1;
		if ((b->name = strdup(s)) == NULL)
			return berth_err(err, ENOMEM, "%s", origin);
	}
	if (cursor != NULL && berth_ynode_bool(cursor, origin, "at-cursor", &b->at_cursor, err) < 0)
		return -1;
	if (rx_compile(&b->question, question, origin, "question", err) < 0)
		return -1;
	if (options != NULL && rx_compile(&b->options, options, origin, "options", err) < 0)
		return -1;
	b->min_options = options != NULL ? 2 : 0;
	if (min != NULL) {
		if (berth_ynode_uint(min, origin, "min-options", 0, 50, &v, err) < 0)
			return -1;
		b->min_options = (unsigned)v;
	}
	if (b->min_options > 0 && options == NULL)
		return berth_ynode_err(err, origin, min,
				       "`min-options` is %u but the rule has no `options` pattern",
				       b->min_options);
	/* A question alone is prose; only the cursor sitting on it makes it a prompt. */
	if (b->min_options == 0 && !b->at_cursor)
		return berth_ynode_err(err, origin, m,
				       "the `blocked` rule `%.60s` needs options (min-options >= 1) or "
				       "`at-cursor: true`; a question alone is not a prompt",
				       b->name);
	return 0;
}

/* The list of regular expressions a top-level @key names, or NULL. */
static struct rx_list *rx_list_named(struct berth_agent_patterns *p, const char *key)
{
	const struct {
		const char *key;
		struct rx_list *l;
	} lists[] = {
	    {"working", &p->working}, {"input", &p->input}, {"done", &p->done}, {"error", &p->error}};

	for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++)
		if (strcmp(key, lists[i].key) == 0)
			return lists[i].l;
	return NULL;
}

static int top_parse(struct berth_agent_patterns *p, const struct berth_ynode *root, struct berth_error *err)
{
	const char *o = p->origin;
	struct rx_list *rx;
	uint64_t v;

	if (root == NULL || root->kind != BERTH_YN_MAP)
		return berth_ynode_err(err, o, root,
				       "a pattern file is a mapping (keys: agent, region-rows, quiet-ms, "
				       "otherwise, blocked, working, input, done, error)");
	for (size_t i = 0; i < berth_ymap_size(root); i++) {
		const struct berth_ynode *k = berth_ymap_key(root, i), *val = berth_ymap_val(root, i);
		const char *key = k->kind == BERTH_YN_SCALAR ? k->s : "";
		const char *s;

		for (size_t j = 0; j < i; j++) {
			const struct berth_ynode *kj = berth_ymap_key(root, j);
			if (kj->kind == BERTH_YN_SCALAR && strcmp(kj->s, key) == 0)
				return berth_ynode_err(err, o, k, "`%.60s` is given twice", key);
		}
		if (strcmp(key, "agent") == 0) {
			if (berth_ynode_str(val, o, key, &s, err) < 0)
				return -1;
		} else if (strcmp(key, "region-rows") == 0) {
			if (berth_ynode_uint(val, o, key, 1, 500, &v, err) < 0)
				return -1;
			p->region_rows = (unsigned)v;
		} else if (strcmp(key, "quiet-ms") == 0) {
			if (berth_ynode_uint(val, o, key, 0, 600000, &v, err) < 0)
				return -1;
			p->quiet_ms = (unsigned)v;
		} else if (strcmp(key, "otherwise") == 0) {
			if (berth_ynode_str(val, o, key, &s, err) < 0)
				return -1;
			if (strcmp(s, "idle") == 0)
				p->otherwise = BERTH_AGENT_IDLE;
			else if (strcmp(s, "working") == 0)
				p->otherwise = BERTH_AGENT_WORKING;
			else
				return berth_ynode_err(
				    err, o, val, "`otherwise` must be `idle` or `working`, got `%.60s`", s);
		} else if (strcmp(key, "blocked") == 0) {
			if (val->kind != BERTH_YN_SEQ)
				return berth_ynode_err(err, o, val,
						       "`blocked` must be a list of rules, got %s",
						       berth_ynode_describe(val));
			p->blocked = calloc(val->n + 1, sizeof *p->blocked);
			if (p->blocked == NULL)
				return berth_err(err, ENOMEM, "%s", o);
			for (size_t j = 0; j < val->n; j++) {
				p->n_blocked++;
				if (brule_parse(&p->blocked[j], val->kids[j], o, err) < 0)
					return -1;
			}
		} else if ((rx = rx_list_named(p, key)) != NULL) {
			if (rx_list_parse(rx, val, o, key, err) < 0)
				return -1;
		} else {
			return berth_ynode_err(
			    err, o, k,
			    "unknown key `%.60s`; known: agent, region-rows, quiet-ms, otherwise, "
			    "blocked, working, input, done, error",
			    key);
		}
	}
	return 0;
}

struct berth_agent_patterns *berth_agent_patterns_parse(const char *text, size_t len, const char *origin,
							struct berth_error *err)
{
	struct berth_agent_patterns *p = calloc(1, sizeof *p);
	struct berth_ynode *root = NULL;

	if (p == NULL || (p->origin = strdup(origin)) == NULL) {
		free(p);
		berth_err(err, ENOMEM, "%s", origin);
		return NULL;
	}
	p->region_rows = DEFAULT_REGION_ROWS;
	p->quiet_ms = DEFAULT_QUIET_MS;
	p->otherwise = BERTH_AGENT_IDLE;
	if (berth_ynode_parse(text, len, origin, &root, err) < 0 || top_parse(p, root, err) < 0) {
		berth_ynode_free(root);
		berth_agent_patterns_free(p);
		return NULL;
	}
	berth_ynode_free(root);
	return p;
}

static bool valid_agent_name(const char *a)
{
	if (a == NULL || a[0] == '\0' || a[0] == '.' || strlen(a) > 64)
		return false;
	for (; *a != '\0'; a++)
		if (!((*a >= 'a' && *a <= 'z') || (*a >= 'A' && *a <= 'Z') || (*a >= '0' && *a <= '9') ||
		      *a == '-' || *a == '_' || *a == '.'))
			return false;
	return true;
}

/* Read all of @f (at most MAX_PATTERN_FILE bytes). */
static char *slurp(FILE *f, const char *path, size_t *len, struct berth_error *err)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);

	if (buf == NULL) {
		berth_err(err, ENOMEM, "read `%s`", path);
		return NULL;
	}
	for (;;) {
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
		if (n > MAX_PATTERN_FILE) {
			free(buf);
			berth_usage_err(err, "`%s` is larger than %d bytes; it is not a pattern file", path,
					MAX_PATTERN_FILE);
			return NULL;
		}
		if (n == cap) {
			char *nb = realloc(buf, cap * 2);
			if (nb == NULL) {
				free(buf);
				berth_err(err, ENOMEM, "read `%s`", path);
				return NULL;
			}
			buf = nb;
			cap *= 2;
		}
	}
	if (ferror(f)) {
		free(buf);
		berth_err(err, EIO, "read `%s`", path);
		return NULL;
	}
	*len = n;
	return buf;
}

struct berth_agent_patterns *berth_agent_patterns_load(const char *agent, struct berth_error *err)
{
	char cands[3][PATH_MAX], exe[PATH_MAX];
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	int nc = 0;
	ssize_t n;

	if (!valid_agent_name(agent)) {
		berth_usage_err(err, "bad agent name `%.60s`", agent != NULL ? agent : "(null)");
		berth_err_hint(
		    err,
		    "use letters, digits, `-`, `_` and `.` (not first), e.g. `claude`, `codex`, `shell`");
		return NULL;
	}
	if (xdg != NULL && xdg[0] == '/')
		snprintf(cands[nc++], PATH_MAX, "%s/berth/agents/%s.yml", xdg, agent);
	else if (home != NULL && home[0] == '/')
		snprintf(cands[nc++], PATH_MAX, "%s/.config/berth/agents/%s.yml", home, agent);
	n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = '\0';
		*strrchr(exe, '/') = '\0';
		snprintf(cands[nc++], PATH_MAX, "%s/../data/agents/%s.yml", exe, agent);
		snprintf(cands[nc++], PATH_MAX, "%s/../share/berth/agents/%s.yml", exe, agent);
	}
	for (int i = 0; i < nc; i++) {
		cleanup_fclose FILE *f = fopen(cands[i], "re");
		cleanup_free char *buf = NULL;
		size_t len = 0;

		if (f == NULL) {
			if (errno == ENOENT || errno == ENOTDIR)
				continue;
			berth_err(err, errno, "open the pattern file `%s`", cands[i]);
			return NULL;
		}
		buf = slurp(f, cands[i], &len, err);
		if (buf == NULL)
			return NULL;
		return berth_agent_patterns_parse(buf, len, cands[i], err);
	}
	berth_usage_err(err, "no pattern file for the agent `%s`", agent);
	berth_err_hint(err, "write one at $XDG_CONFIG_HOME/berth/agents/%s.yml (format: docs/agents.md)",
		       agent);
	return NULL;
}

/* ---- the classifier ---- */

static _Thread_local char why_buf[256];

static const char *row_text(const struct berth_screen_view *v, int r)
{
	return v->lines[r] != NULL ? v->lines[r] : "";
}

static bool blank(const char *s)
{
	for (; *s != '\0'; s++)
		if (*s != ' ' && *s != '\t')
			return false;
	return true;
}

static bool rx_match(const struct rx *r, const char *s)
{
	return r->compiled && regexec(&r->re, s, 0, NULL, 0) == 0;
}

static bool any_match(const struct rx_list *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (rx_match(&l->v[i], s))
			return true;
	return false;
}

/* Lowest row in [from, to] matching any pattern of @l, or -1. */
static int last_match(const struct rx_list *l, const struct berth_screen_view *v, int from, int to)
{
	for (int r = to; r >= from; r--)
		if (any_match(l, row_text(v, r)))
			return r;
	return -1;
}

/*
 * Did the latest turn above the input row @in fail?  Returns the row of its
 * error marker, or -1.  The lowest error row counts when nothing a later
 * turn leaves is below it: no `done` row (one that is not itself an error
 * row), or only the failed turn's own summary ("✻ Churned for 3s" under
 * "● API Error: 500 ..."): no input-pattern row (an echoed new prompt)
 * between the error and that `done` row.
 */
static int failed_turn(const struct berth_agent_patterns *p, const struct berth_screen_view *v, int in)
{
	int e = last_match(&p->error, v, 0, in - 1), d = -1;

	if (e < 0)
		return -1;
	for (int r = in - 1; r > e && d < 0; r--)
		if (any_match(&p->done, row_text(v, r)) && !any_match(&p->error, row_text(v, r)))
			d = r;
	if (d < 0 || last_match(&p->input, v, e + 1, d - 1) < 0)
		return e;
	return -1;
}

__attribute__((format(printf, 3, 4))) static enum berth_agent_state
say(enum berth_agent_state s, const char **why, const char *fmt, ...)
{
	va_list ap;

	if (why != NULL) {
		int n = snprintf(why_buf, sizeof why_buf, "%s: ", berth_agent_state_name(s));
		va_start(ap, fmt);
		if (n > 0 && (size_t)n < sizeof why_buf)
			vsnprintf(why_buf + n, sizeof why_buf - (size_t)n, fmt, ap);
		va_end(ap);
		*why = why_buf;
	}
	return s;
}

/* Does blocked rule @b hold in the region [r0, r1]?  Sets *@row to the question's row. */
static bool rule_holds(const struct berth_agent_patterns *p, const struct brule *b,
		       const struct berth_screen_view *v, int r0, int r1, int *row)
{
	/* An input box below the question: the question is history, the agent
	 * takes input.  Nothing above the lowest input row can be the prompt. */
	int in = last_match(&p->input, v, r0, r1);

	for (int q = r1; q >= r0 && q > in; q--) {
		int count = 0;

		/* A blank row is never a question, whatever the pattern matches. */
		if (blank(row_text(v, q)) || !rx_match(&b->question, row_text(v, q)))
			continue;
		if (b->at_cursor && q != v->cursor_row)
			continue;
		for (int r = q + 1; r <= r1 && b->options.compiled; r++)
			if (!blank(row_text(v, r)) && rx_match(&b->options, row_text(v, r)))
				count++;
		if ((unsigned)count < b->min_options)
			continue;
		*row = q;
		return true;
	}
	return false;
}

enum berth_agent_state berth_agent_classify(const struct berth_agent_patterns *p,
					    const struct berth_screen_view *v, const char **why)
{
	int r0, r1 = -1, in;
	bool recent;

	if (!v->alive) {
		if (v->exit_status >= 0)
			return say(BERTH_AGENT_EXITED, why, "the process ended with status %d",
				   v->exit_status);
		return say(BERTH_AGENT_EXITED, why, "the process ended");
	}
	recent = p != NULL && v->idle_ms >= 0 && v->idle_ms < (long long)p->quiet_ms;
	if (p == NULL) {
		if (v->idle_ms >= 0 && v->idle_ms < DEFAULT_QUIET_MS)
			return say(BERTH_AGENT_WORKING, why, "output %lld ms ago", v->idle_ms);
		return say(BERTH_AGENT_IDLE, why, "no pattern file; quiet");
	}
	/* The active region: region_rows rows ending at the lower of the last
	 * non-blank row and the cursor row. */
	for (int r = v->n_lines - 1; r >= 0; r--)
		if (!blank(row_text(v, r))) {
			r1 = r;
			break;
		}
	if (v->cursor_row >= 0 && v->cursor_row < v->n_lines && v->cursor_row > r1)
		r1 = v->cursor_row;
	if (r1 < 0)
		return recent ? say(BERTH_AGENT_WORKING, why, "blank screen, output %lld ms ago", v->idle_ms)
			      : say(p->otherwise, why, "blank screen");
	r0 = r1 - (int)p->region_rows + 1;
	if (r0 < 0)
		r0 = 0;

	for (size_t i = 0; i < p->n_blocked; i++) {
		int row;
		if (rule_holds(p, &p->blocked[i], v, r0, r1, &row))
			return say(BERTH_AGENT_BLOCKED, why, "%s (row %d)", p->blocked[i].name, row + 1);
	}
	{
		int w = last_match(&p->working, v, r0, r1);
		if (w >= 0)
			return say(BERTH_AGENT_WORKING, why, "busy marker (row %d)", w + 1);
	}
	if (recent)
		return say(BERTH_AGENT_WORKING, why, "output %lld ms ago", v->idle_ms);
	in = last_match(&p->input, v, r0, r1);
	if (in >= 0) {
		int e = failed_turn(p, v, in), d = last_match(&p->done, v, 0, in - 1);
		if (e >= 0)
			return say(BERTH_AGENT_ERROR, why, "the turn failed (row %d), prompt at row %d",
				   e + 1, in + 1);
		if (d >= 0)
			return say(BERTH_AGENT_DONE, why, "turn finished (row %d), prompt at row %d", d + 1,
				   in + 1);
		return say(BERTH_AGENT_IDLE, why, "prompt at row %d, no turn yet", in + 1);
	}
	return say(p->otherwise, why, "nothing recognised; quiet for %lld ms", v->idle_ms);
}
