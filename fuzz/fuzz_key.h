/* SPDX-License-Identifier: MIT */
/*
 * fuzz_key.h - a fixed Ed25519 host key for the fuzzers that check
 * signatures (fuzz_attest, fuzz_audit_recover), so that validly signed
 * inputs are reachable and a seed signed once stays valid.  The key is
 * public (it is in this file) and never a real host's key: its seed is
 * SHA-256("berth fuzz test key (public, never a real key)").
 *
 * fuzz_key_setup() writes it as berth's host key files (src/util/sign.h) in
 * a new private directory and points XDG_CONFIG_HOME there, so that
 * berth_hostkey_load() and berth_audit_open() load it.  The seed corpora
 * signed with it were made by the build with XDG_CONFIG_HOME set the same
 * way (fuzz/make-seeds.sh).
 */
#ifndef BERTH_FUZZ_KEY_H
#define BERTH_FUZZ_KEY_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/sign.h"

#define FUZZ_KEY_PRIV_PEM                                                                                    \
	"-----BEGIN PRIVATE KEY-----\n"                                                                      \
	"MC4CAQAwBQYDK2VwBCIEIIS0V4WpZbssPov0Wjm1M4pf0PiokW10RkFHfPNgnbKX\n"                                 \
	"-----END PRIVATE KEY-----\n"
#define FUZZ_KEY_PUB_PEM                                                                                     \
	"-----BEGIN PUBLIC KEY-----\n"                                                                       \
	"MCowBQYDK2VwAyEARhzanmESN+Xo5hV8b8forXMJMKJmXpAbA4Z/AOHRBc0=\n"                                     \
	"-----END PUBLIC KEY-----\n"
#define FUZZ_KEY_PUB_HEX "461cda9e611237e5e8e6157c6fc7e8ad730930a2665e901b03867f00e1d105cd"

static void fuzz_key_write(const char *dir, const char *name, const char *text, mode_t mode)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	f = fopen(path, "w");
	if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0 || chmod(path, mode) < 0) {
		perror(path);
		abort();
	}
}

/* Directories the fuzzer made, removed with all they hold at exit. */
static char fuzz_tmp_dirs[2][4200];

static int fuzz_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static void fuzz_rm_tmp_dirs(void)
{
	for (int i = 0; i < 2; i++)
		if (fuzz_tmp_dirs[i][0] != '\0')
			nftw(fuzz_tmp_dirs[i], fuzz_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Removes @dir and what it holds when the fuzzer exits. */
static void fuzz_remove_at_exit(const char *dir)
{
	if (fuzz_tmp_dirs[0][0] == '\0')
		atexit(fuzz_rm_tmp_dirs);
	for (int i = 0; i < 2; i++)
		if (fuzz_tmp_dirs[i][0] == '\0') {
			snprintf(fuzz_tmp_dirs[i], sizeof fuzz_tmp_dirs[i], "%s", dir);
			return;
		}
}

/*
 * Makes a private directory (under $TMPDIR or /tmp) holding berth/keys/ with
 * the fixed key, sets XDG_CONFIG_HOME to it, loads the key into @k and
 * copies its directory's path into @home (@size bytes); the directory is
 * removed at exit.  Aborts on failure: a fuzzer without its key checks
 * nothing.
 */
static void fuzz_key_setup(struct berth_hostkey *k, char *home, size_t size)
{
	const char *tmp = getenv("TMPDIR");
	char keys[4200];
	struct berth_error err = {0};

	snprintf(home, size, "%s/berth-fuzz-key.XXXXXX", tmp != NULL && tmp[0] == '/' ? tmp : "/tmp");
	if (mkdtemp(home) == NULL) {
		perror(home);
		abort();
	}
	fuzz_remove_at_exit(home);
	snprintf(keys, sizeof keys, "%s/berth/keys", home);
	if (berth_mkdirs_private(keys, &err) < 0) {
		fprintf(stderr, "fuzz: %s\n", err.msg);
		abort();
	}
	fuzz_key_write(keys, BERTH_HOSTKEY_PRIV_FILE, FUZZ_KEY_PRIV_PEM, 0600);
	fuzz_key_write(keys, BERTH_HOSTKEY_PUB_FILE, FUZZ_KEY_PUB_PEM, 0644);
	setenv("XDG_CONFIG_HOME", home, 1);
	if (berth_hostkey_load(k, false, &err) < 0) {
		fprintf(stderr, "fuzz: the fixed key does not load: %s\n", err.msg);
		abort();
	}
	{
		char hex[65];

		berth_hex(k->pub, 32, hex);
		if (strcmp(hex, FUZZ_KEY_PUB_HEX) != 0) {
			fprintf(stderr, "fuzz: the fixed key's public half is %s, not " FUZZ_KEY_PUB_HEX "\n",
				hex);
			abort();
		}
	}
}

#endif
