/* SPDX-License-Identifier: MIT */
/*
 * fuzz_export.c - libFuzzer target for `berth export k8s` (src/export): its
 * arguments (argv split on NUL bytes, after "k8s") through parse, prepare
 * and the YAML writer.  Properties: a refusal is a usage error with a
 * message; what is written is three YAML documents that libyaml reads
 * (berth_ynode_build) without a problem, and the Pod's command and env
 * values read back exactly as the policy holds them (the quoting).
 * Inputs are capped at 64 KiB.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/k8s.h"
#include "util/ynode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_export: %s\n", what);
		abort();
	}
}

static const struct berth_ynode *get(const struct berth_ynode *m, const char *key)
{
	if (m == NULL || m->kind != BERTH_YN_MAP)
		return NULL;
	for (size_t i = 0; i < berth_ymap_size(m); i++)
		if (strcmp(berth_ymap_key(m, i)->s, key) == 0)
			return berth_ymap_val(m, i);
	return NULL;
}

static bool same(const struct berth_ynode *n, const char *s)
{
	return n != NULL && n->kind == BERTH_YN_SCALAR && n->len == strlen(s) && memcmp(n->s, s, n->len) == 0;
}

/* The Pod (the second document): its command and env as the policy's. */
static void check_pod(const struct berth_ynode *pod, const struct berth_policy *p)
{
	const struct berth_ynode *ctrs = get(get(pod, "spec"), "containers");
	check(ctrs != NULL && ctrs->kind == BERTH_YN_SEQ && ctrs->n == 1, "one container");
	const struct berth_ynode *c = ctrs->kids[0], *cmd = get(c, "command"), *env = get(c, "env");
	check(cmd != NULL && cmd->kind == BERTH_YN_SEQ && cmd->n == p->argc, "the command's length");
	for (size_t i = 0; i < p->argc; i++)
		check(same(cmd->kids[i], p->argv[i]), "the command reads back as given");
	check(env != NULL && env->kind == BERTH_YN_SEQ, "an env list");
	for (size_t i = 0; i < p->n_env; i++) {
		bool found = false;
		for (size_t k = 0; k < env->n && !found; k++)
			found = same(get(env->kids[k], "name"), p->env[i].name) &&
				same(get(env->kids[k], "value"), p->env[i].value);
		check(found, "every variable reads back as given");
	}
}

static void check_yaml(const char *yaml, const struct berth_policy *p)
{
	size_t docs = 0;
	const char *start = strstr(yaml, "\n---\n");

	while (start != NULL) {
		start += 5;
		const char *end = strstr(start, "\n---\n");
		size_t len = end != NULL ? (size_t)(end - start) + 1 : strlen(start);
		struct berth_ynode *root = NULL;
		struct berth_yopts o = {0};
		check(berth_ynode_build(start, len, &o, &root) == 0 && root != NULL &&
			  root->kind == BERTH_YN_MAP,
		      "each document reads back without a problem");
		if (docs == 1)
			check_pod(root, p);
		berth_ynode_free(root);
		docs++;
		start = end;
	}
	check(docs == 3, "three documents");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf, *argv[66];
	int argc = 0;
	struct berth_error err = {0};
	struct berth_k8s_req r;

	if (size > 65536)
		return 0;
	buf = malloc(size + 1);
	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	argv[argc++] = "k8s";
	for (char *q = buf; q < buf + size && argc < 64; q += strlen(q) + 1)
		argv[argc++] = q;
	argv[argc] = NULL;
	if (berth_k8s_parse(argc, argv, &r, &err) < 0 || berth_k8s_prepare(&r, &err) < 0) {
		check(err.msg[0] != '\0' &&
			  (err.status == BERTH_EXIT_USAGE || err.status == BERTH_EXIT_INTERNAL),
		      "a refusal is a usage error with a message");
	} else if (!r.help) {
		char *yaml = berth_k8s_yaml(&r.spec, &r.run.policy, &err);
		if (yaml != NULL)
			check_yaml(yaml, &r.run.policy);
		else
			check(err.status == BERTH_EXIT_USAGE && strstr(err.msg, "not UTF-8") != NULL,
			      "only text that is not UTF-8 is refused by the writer");
		free(yaml);
	}
	berth_k8s_req_free(&r);
	free(buf);
	return 0;
}
