/* SPDX-License-Identifier: MIT */
/*
 * cmd_audit.c - `berth audit [list] [--run ID] [--kind K] [-n N] [--json]`,
 * `berth audit verify [--key PUBKEY.pem]`.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../audit/audit.h"
#include "../util/sha256.h"
#include "../util/sign.h"
#include "cli.h"

static const char audit_usage[] =
    "usage: berth audit [list] [--run ID] [--kind K] [-n N] [--json] [--dir DIR]\n"
    "       berth audit verify [--key PUBKEY.pem] [--dir DIR]\n"
    "\n"
    "  list       the records, oldest first (default: all; -n N: the last N that match)\n"
    "  verify     check the hash chain, the signed head and the quarantine files; prints\n"
    "             `intact: N records, head HASH`, or `BROKEN at record N (FILE:LINE): REASON`\n"
    "             and `what to do: ...` (what the next berth write repairs, or the command that\n"
    "             keeps a damaged log and starts a new one) and exits 1\n"
    "  --dir DIR  the audit directory (default $BERTH_AUDIT_DIR, $XDG_STATE_HOME/berth/audit,\n"
    "             ~/.local/state/berth/audit)\n"
    "  --key PEM  check the head with this Ed25519 public key (default: the host key)\n"
    "\n"
    "exit status: 0; 1 when verify finds the log broken; 2 usage error; 125 the log cannot be read\n";

struct list_ctx {
	const char *run, *kind;
	bool json;
	size_t n;      /* 0: all */
	json_t **ring; /* the last n matches */
	size_t count;
};

static void print_record(const json_t *rec, bool json)
{
	char *s;

	if (json) {
		s = json_dumps(rec, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
		if (s != NULL)
			puts(s);
		free(s);
		return;
	}
	/* The payload quotes what callers sent (an MCP client's arguments, a
	 * command line): JSON escapes C0 controls but not C1 or bidirectional
	 * controls, which CLI_SAFE shows as escapes.  Cut after cleaning, and
	 * not inside a UTF-8 sequence. */
	s = json_dumps(json_object_get(rec, "payload"), JSON_COMPACT | JSON_SORT_KEYS);
	char shown[CLI_SAFE_MAX];
	berth_text_clean(shown, sizeof shown, s != NULL ? s : "");
	if (strlen(shown) > 160) {
		size_t cut = 157;
		while (cut > 0 && ((unsigned char)shown[cut] & 0xc0) == 0x80)
			cut--;
		strcpy(shown + cut, "...");
	}
	printf("%6" JSON_INTEGER_FORMAT "  %s  %-12s %-14s %-10s %s\n",
	       json_integer_value(json_object_get(rec, "seq")),
	       CLI_SAFE(json_string_value(json_object_get(rec, "ts"))),
	       CLI_SAFE(json_string_value(json_object_get(rec, "run_id"))),
	       CLI_SAFE(json_string_value(json_object_get(rec, "kind"))),
	       CLI_SAFE(json_string_value(json_object_get(rec, "actor"))), shown);
	free(s);
}

static int list_one(const struct berth_audit_record *r, void *p)
{
	struct list_ctx *c = p;

	if ((c->run != NULL && strcmp(r->run_id, c->run) != 0) ||
	    (c->kind != NULL && strcmp(r->kind, c->kind) != 0))
		return 0;
	if (c->n == 0) {
		print_record(r->json, c->json);
		return 0;
	}
	json_decref(c->ring[c->count % c->n]);
	c->ring[c->count % c->n] = json_incref((json_t *)r->json);
	c->count++;
	return 0;
}

static int audit_list(const char *dir, struct list_ctx *c)
{
	struct berth_error err = {0};
	int rc;

	if (c->n > 0 && (c->ring = calloc(c->n, sizeof *c->ring)) == NULL) {
		fputs("berth: out of memory\n", stderr);
		return 125;
	}
	rc = berth_audit_each(dir, list_one, c, &err);
	if (c->n > 0) {
		size_t first = c->count > c->n ? c->count - c->n : 0;

		for (size_t i = first; rc == 0 && i < c->count; i++)
			print_record(c->ring[i % c->n], c->json);
		for (size_t i = 0; i < c->n; i++)
			json_decref(c->ring[i]);
		free(c->ring);
	}
	if (rc < 0) {
		cli_print_error(&err);
		fputs("berth: hint: `berth audit verify` checks the whole log\n", stderr);
		return 125;
	}
	return 0;
}

static int print_recovery(const struct berth_audit_record *r, void *p)
{
	(void)p;
	if (strcmp(r->kind, BERTH_AUDIT_KIND_RECOVERY) == 0) {
		char *s = json_dumps(r->payload, JSON_COMPACT | JSON_SORT_KEYS);

		printf("recovered at record %" PRIu64 " (%s): %s\n", r->seq, CLI_SAFE(r->ts), CLI_SAFE(s));
		free(s);
	}
	return 0;
}

static int audit_verify(const char *dir, const char *keyfile)
{
	struct berth_error err = {0};
	struct berth_audit_verdict v;
	unsigned char pub[32];

	if (keyfile != NULL && berth_pubkey_load_pem(keyfile, pub, &err) < 0) {
		cli_print_error(&err);
		return 2;
	}
	/* Thousands of small records: libcrypto's SHA-NI pays for its load. */
	berth_sha256_prefer_bulk();
	if (berth_audit_verify(dir, keyfile ? pub : NULL, &v, &err) < 0) {
		cli_print_error(&err);
		return 125;
	}
	if (v.records == 0 && v.intact) {
		/* Nothing to check is not "intact": an empty or absent log
		 * cannot show whether records were removed. */
		char def[4096];
		struct stat st;

		if (dir == NULL && berth_audit_dir(def, sizeof def, &err) == 0)
			dir = def;
		if (dir != NULL && stat(dir, &st) < 0 && errno == ENOENT) {
			fprintf(stderr,
				"berth: no audit log at `%s` (nothing recorded yet, or it was removed)\n",
				CLI_SAFE(dir));
			return 125;
		}
		printf("empty: no records in `%s` (nothing recorded yet, or everything was removed: an empty "
		       "log "
		       "cannot show which)\n",
		       dir != NULL ? CLI_SAFE(dir) : "the audit directory");
		return 0;
	}
	if (!v.intact) {
		if (v.line)
			printf("BROKEN at record %" PRIu64 " (%s:%" PRIu64 "): %s\n", v.broken_record,
			       CLI_SAFE(v.file), v.line, CLI_SAFE(v.reason));
		else
			printf("BROKEN at record %" PRIu64 " (%s): %s\n", v.broken_record, CLI_SAFE(v.file),
			       CLI_SAFE(v.reason));
		if (v.advice[0] != '\0')
			printf("what to do: %s\n", CLI_SAFE(v.advice));
		return 1;
	}
	if (v.recoveries > 0)
		berth_audit_each(dir, print_recovery, NULL, &err);
	printf("intact: %" PRIu64 " records, head %s\n", v.records, v.head);
	return 0;
}

int cmd_audit(int argc, char **argv)
{
	struct list_ctx c = {0};
	const char *dir = NULL, *key = NULL;
	bool verify = false;
	int i = 1;

	if (i < argc && strcmp(argv[i], "list") == 0)
		i++;
	else if (i < argc && strcmp(argv[i], "verify") == 0) {
		verify = true;
		i++;
	}
	for (; i < argc; i++) {
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(audit_usage, stdout);
			return 0;
		}
		if (strcmp(a, "--json") == 0 && !verify) {
			c.json = true;
			continue;
		}
		if (strcmp(a, "--run") != 0 && strcmp(a, "--kind") != 0 && strcmp(a, "-n") != 0 &&
		    strcmp(a, "--dir") != 0 && strcmp(a, "--key") != 0) {
			fprintf(
			    stderr,
			    "berth: audit: unknown argument `%s`\nberth: hint: see `berth audit --help`\n",
			    a);
			return 2;
		}
		if (val == NULL) {
			fprintf(stderr, "berth: audit: `%s` needs a value\n", a);
			return 2;
		}
		i++;
		if (strcmp(a, "--dir") == 0) {
			if (val[0] != '/') {
				fprintf(stderr, "berth: audit: --dir `%s` is not an absolute path\n", val);
				return 2;
			}
			dir = val;
		} else if (strcmp(a, "--key") == 0 && verify) {
			key = val;
		} else if (verify) {
			fprintf(stderr, "berth: audit verify: `%s` is for `berth audit list`\n", a);
			return 2;
		} else if (strcmp(a, "--run") == 0) {
			c.run = val;
		} else if (strcmp(a, "--kind") == 0) {
			c.kind = val;
		} else if (strcmp(a, "-n") == 0) {
			char *end;
			unsigned long long n;

			errno = 0;
			n = strtoull(val, &end, 10);
			if (val[0] < '0' || val[0] > '9' || *end != '\0' || errno != 0 || n == 0 ||
			    n > 10000000) {
				fprintf(stderr, "berth: audit: -n `%s` is not a count from 1 to 10000000\n",
					val);
				return 2;
			}
			c.n = (size_t)n;
		} else {
			fprintf(stderr, "berth: audit list: `%s` is for `berth audit verify`\n", a);
			return 2;
		}
	}
	return verify ? audit_verify(dir, key) : audit_list(dir, &c);
}
