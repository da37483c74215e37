/* SPDX-License-Identifier: MIT */
/*
 * cmd_attest.c - `berth attest RUN_ID|--last [--out FILE]` and
 * `berth attest --verify FILE [--key PUBKEY]` (docs/attest.md).
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../supervisor/attest.h"
#include "../supervisor/runs.h"
#include "../util/cleanup.h"
#include "../util/sign.h"
#include "../util/sys.h"
#include "../util/text.h"
#include "../vm/pins.h"
#include "cli.h"

static const char attest_usage[] =
    "usage: berth attest RUN_ID|--last [--out FILE]\n"
    "       berth attest --verify FILE [--key PUBKEY.pem]\n"
    "\n"
    "  RUN_ID, --last   the run to attest (16 hex digits; --last: the newest run)\n"
    "  --out FILE       write the signed record to FILE (0644) instead of stdout\n"
    "  --verify FILE    check a record's Ed25519 signature and content ('-': stdin)\n"
    "  --key PUBKEY     the trusted public key (PEM); default: this host's key\n"
    "\n"
    "exit status: 0 signed / valid; 1 --verify: the signature or the content does not check;\n"
    "2 usage error, no such run, unreadable or non-JSON file; 125 berth failed (key, audit trail)\n";

static int write_out(const char *path, const char *text, struct berth_error *err)
{
	size_t len = strlen(text);

	if (path == NULL) {
		if (fwrite(text, 1, len, stdout) != len || fflush(stdout) != 0)
			return berth_err(err, errno, "cannot write the attestation to stdout");
		return 0;
	}
	return berth_write_atomic(path, text, len, 0644, BERTH_WRITE_SYNC, err);
}

/* --out names a file to be (re)placed: refused before any work when it is
 * a directory or its directory does not exist (bad input: 2). */
static int check_out(const char *path, struct berth_error *err)
{
	cleanup_free char *dir = NULL;
	struct stat st;
	char clean[PATH_MAX + 64];

	if (path == NULL)
		return 0;
	berth_text_clean(clean, sizeof clean, path);
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		berth_usage_err(err, "--out `%s` is a directory", clean);
		return berth_err_hint(err, "name the file to write, e.g. `%s/attestation.json`", clean);
	}
	dir = strdup(path);
	if (dir == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	if (stat(dirname(dir), &st) < 0 || !S_ISDIR(st.st_mode)) {
		berth_usage_err(err, "--out `%s`: its directory does not exist", clean);
		return berth_err_hint(err, "create the directory first, or name a file in an existing one");
	}
	return 0;
}

/* A run that did not end normally (attest.h, "ended"): its verdict is the
 * measurement's at its start, and nothing is known of its end. */
static void print_ended(const char *id, const char *verdict, const char *ended)
{
	fprintf(stderr,
		"berth: run %s did not end normally (ended: %s): the verdict %s is what was enforced when "
		"its command started; its exit status is not known\n",
		id, CLI_SAFE(ended), CLI_SAFE(verdict != NULL ? verdict : "?"));
}

static int attest(const char *run_id, bool last, const char *out)
{
	struct berth_error err = {0};
	struct berth_hostkey k = {0};
	char id[17];
	json_auto_t *rec = NULL;
	cleanup_free char *text = NULL;

	if (check_out(out, &err) < 0)
		goto fail;
	if (last) {
		if (berth_run_get_last(id, &err) < 0)
			goto fail;
	} else {
		snprintf(id, sizeof id, "%s", run_id);
		if (!berth_run_id_valid(run_id)) {
			berth_usage_err(&err, "invalid run id `%s`", run_id);
			berth_err_hint(&err, "a run id is 16 lowercase hex digits; or use `--last`");
			goto fail;
		}
	}
	rec = berth_attest_build(id, NULL, &err);
	if (rec == NULL)
		goto fail;
	if (berth_hostkey_load(&k, true, &err) < 0 || berth_attest_sign(rec, &k, &err) < 0) {
		berth_hostkey_clear(&k);
		err.status = err.status == BERTH_EXIT_USAGE ? BERTH_EXIT_USAGE : BERTH_EXIT_INTERNAL;
		goto fail;
	}
	berth_hostkey_clear(&k);
	text = cli_json_dumps(rec, JSON_SORT_KEYS | JSON_INDENT(2));
	if (text == NULL) {
		berth_err(&err, ENOMEM, "cannot encode the attestation");
		goto fail;
	}
	text[strlen(text)] = '\0';
	{
		size_t n = strlen(text);
		char *t2 = realloc(text, n + 2);
		if (t2 == NULL) {
			berth_err(&err, ENOMEM, "out of memory");
			goto fail;
		}
		text = t2;
		text[n] = '\n';
		text[n + 1] = '\0';
	}
	if (write_out(out, text, &err) < 0)
		goto fail;
	if (json_is_string(json_object_get(rec, "ended")))
		print_ended(id, json_string_value(json_object_get(rec, "verdict")),
			    json_string_value(json_object_get(rec, "ended")));
	return 0;
fail:
	cli_print_error(&err);
	return err.status ? err.status : BERTH_EXIT_INTERNAL;
}

/* A microVM run (enforced.runtime.name `vm`) is valid only when its guest
 * booted the kernel this berth pins (src/vm/pins.h): a signed record of
 * another kernel is that host's word, not this berth's pin. */
static int check_vm_pin(const json_t *doc, json_t *problems, int r)
{
	const json_t *rt = json_object_get(json_object_get(doc, "enforced"), "runtime");
	const char *name = json_string_value(json_object_get(rt, "name"));
	const char *k = json_string_value(json_object_get(rt, "kernel_sha256"));

	if (name == NULL || strcmp(name, "vm") != 0)
		return r;
	if (k != NULL && strcmp(k, BERTH_VM_VMLINUZ_SHA256) == 0)
		return r;
	json_array_append_new(problems,
			      json_sprintf("the microVM booted kernel sha256 `%.64s`, not the one this berth "
					   "pins (%s %s, sha256 %s)",
					   k != NULL ? k : "", BERTH_VM_KERNEL_PACKAGE,
					   BERTH_VM_KERNEL_VERSION, BERTH_VM_VMLINUZ_SHA256));
	return BERTH_ATTEST_INVALID;
}

static int verify(const char *file, const char *keyfile)
{
	struct berth_error err = {0};
	unsigned char pub[32];
	json_error_t je;
	json_auto_t *doc = NULL, *problems = NULL;
	size_t i;
	json_t *p;
	int r;

	doc = strcmp(file, "-") == 0 ? json_loadf(stdin, JSON_REJECT_DUPLICATES, &je)
				     : json_load_file(file, JSON_REJECT_DUPLICATES, &je);
	if (doc == NULL) {
		fprintf(stderr, "berth: cannot read attestation `%s`: %s (line %d, column %d)\n", file,
			je.text, je.line, je.column);
		return BERTH_EXIT_USAGE;
	}
	if (keyfile != NULL) {
		if (berth_pubkey_load_pem(keyfile, pub, &err) < 0) {
			berth_err_wrap(&err, "--key `%s`", keyfile);
			cli_print_error(&err);
			return BERTH_EXIT_USAGE;
		}
	} else {
		struct berth_hostkey k = {0};
		if (berth_hostkey_load(&k, false, &err) < 0) {
			cli_print_error(&err);
			fprintf(stderr, "berth: hint: pass `--key PUBKEY.pem`, the public key of the host "
					"that signed it\n");
			return err.errnum == ENOENT ? BERTH_EXIT_USAGE : BERTH_EXIT_INTERNAL;
		}
		memcpy(pub, k.pub, sizeof pub);
		berth_hostkey_clear(&k);
	}
	r = berth_attest_verify(doc, pub, &problems, &err);
	if (r < 0) {
		cli_print_error(&err);
		return BERTH_EXIT_INTERNAL;
	}
	r = check_vm_pin(doc, problems, r);
	if (r == BERTH_ATTEST_VALID) {
		/* the document is anyone's file: its strings through the filter */
		printf("valid: run %s, verdict %s, signed by %s\n",
		       CLI_SAFE(json_string_value(json_object_get(doc, "run_id"))),
		       CLI_SAFE(json_string_value(json_object_get(doc, "verdict"))),
		       CLI_SAFE(json_string_value(
			   json_object_get(json_object_get(doc, "signature"), "public_key"))));
		if (json_is_string(json_object_get(doc, "ended")))
			printf("not ended normally: %s (the verdict is what was enforced at its start; its "
			       "exit status is not known)\n",
			       CLI_SAFE(json_string_value(json_object_get(doc, "ended"))));
	} else {
		printf("INVALID: %s\n", CLI_SAFE(file));
		json_array_foreach(problems, i, p)
			printf("  %s\n", CLI_SAFE(json_string_value(p)));
	}
	return r;
}

int cmd_attest(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"last", no_argument, NULL, 'l'},         {"out", required_argument, NULL, 'o'},
	    {"verify", required_argument, NULL, 'v'}, {"key", required_argument, NULL, 'k'},
	    {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
	};
	const char *out = NULL, *vfile = NULL, *key = NULL;
	bool last = false;
	int c;

	optind = 0;
	opterr = 0;
	/* options may follow the run id (`berth attest RUN_ID --out FILE`) */
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			last = true;
			break;
		case 'o':
			out = optarg;
			break;
		case 'v':
			vfile = optarg;
			break;
		case 'k':
			key = optarg;
			break;
		case 'h':
			fputs(attest_usage, stdout);
			return 0;
		default:
			fprintf(stderr,
				c == ':'
				    ? "berth: `%s` needs a value\nberth: hint: see `berth attest --help`\n"
				    : "berth: unknown option `%s`\nberth: hint: see `berth attest --help`\n",
				CLI_SAFE(argv[optind - 1]));
			return BERTH_EXIT_USAGE;
		}
	}
	if (vfile != NULL) {
		if (last || out != NULL || optind < argc) {
			fputs("berth: --verify takes a file and optionally --key, nothing else\n"
			      "berth: hint: see `berth attest --help`\n",
			      stderr);
			return BERTH_EXIT_USAGE;
		}
		return verify(vfile, key);
	}
	if (key != NULL || (last && optind < argc) || (!last && optind != argc - 1)) {
		fputs("berth: name one run: `berth attest RUN_ID` or `berth attest --last`\n"
		      "berth: hint: see `berth attest --help`\n",
		      stderr);
		return BERTH_EXIT_USAGE;
	}
	return attest(last ? NULL : argv[optind], last, out);
}
