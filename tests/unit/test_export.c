/* SPDX-License-Identifier: MIT */
/*
 * test_export.c - `berth export k8s` (src/export): the YAML quoting read
 * back by libyaml (through berth's own YAML front end) for every kind of
 * character, the refusal of what is not UTF-8, the options a Pod cannot
 * carry refused by name, the quantities, and the NetworkPolicy's except
 * lists against berth's own address rules (addr.h): nothing excepted that
 * berth allows (but the one documented range), every IPv4 range berth
 * refuses excepted.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "export/k8s.h"
#include "export/yamlw.h"
#include "policy/addr.h"
#include "util/buf.h"
#include "util/ynode.h"

/* `k: QUOTED` read back by berth_ynode_build (libyaml's parser). */
static void roundtrip(const char *s)
{
	struct berth_buf b = {0};
	struct berth_ynode *root = NULL;
	struct berth_yopts o = {0};

	berth_buf_puts(&b, "k: ");
	assert_int_equal(berth_yaml_quote(&b, s), 0);
	berth_buf_puts(&b, "\n");
	assert_false(b.oom);
	if (berth_ynode_build(b.p, b.len, &o, &root) != 0 || root == NULL) {
		fprintf(stderr, "not read back: %s\n", b.p);
		fail();
	}
	assert_int_equal(root->kind, BERTH_YN_MAP);
	const struct berth_ynode *v = berth_ymap_val(root, 0);
	assert_int_equal(v->kind, BERTH_YN_SCALAR);
	assert_false(v->plain);
	assert_int_equal(v->len, strlen(s));
	assert_memory_equal(v->s, s, v->len);
	berth_ynode_free(root);
	berth_buf_free(&b);
}

static void test_quote_roundtrip(void **state)
{
	static const char *const cases[] = {
	    "",
	    "plain",
	    "null",
	    "~",
	    "yes",
	    "No",
	    "true",
	    "0x1F",
	    "1e3",
	    "012",
	    ".inf",
	    "- a",
	    "a: b",
	    "#c",
	    "a #b",
	    " lead",
	    "trail ",
	    "tab\tx",
	    "nl\nx",
	    "two\n\nnl",
	    "cr\rx",
	    "quote\"x",
	    "back\\x",
	    "\\\"",
	    "esc\x1b[31m",
	    "del\x7f",
	    "nel \xc2\x85",
	    "csi \xc2\x9b",
	    "ls \xe2\x80\xa8",
	    "ps \xe2\x80\xa9",
	    "bom \xef\xbb\xbf",
	    "\xef\xbf\xbe\xef\xbf\xbf",
	    "\xef\xbf\xbd",
	    "\xc2\xa0nbsp",
	    "caf\xc3\xa9",
	    "\xe6\x97\xa5\xe6\x9c\xac",
	    "emoji \xf0\x9f\x98\x80",
	    "\xf4\x8f\xbf\xbd",
	    "{a: b}",
	    "[1]",
	    "&x",
	    "*x",
	    "!tag",
	    "%x",
	    "@x",
	    "`x",
	    "'single'",
	    "|",
	    ">",
	    "---",
	    "...",
	    "?",
	    ",",
	    "a,b",
	    "*.example.com:443,[2001:db8::1]:*",
	};
	char ctl[2] = "";

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		roundtrip(cases[i]);
	for (int c = 1; c < 0x20; c++) {
		ctl[0] = (char)c;
		roundtrip(ctl);
	}
}

static void test_quote_refuses_non_utf8(void **state)
{
	static const char *const bad[] = {"\xff",     "a\xc0\x80",        "\xed\xa0\x80",
					  "\xe2\x82", "\xf4\x90\x80\x80", "ok \x80"};
	(void)state;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct berth_buf b = {0};
		assert_int_equal(berth_yaml_quote(&b, bad[i]), -1);
		assert_int_equal(b.len, 0);
		berth_buf_free(&b);
	}
}

/* The YAML of `berth export k8s ARGS...` (NULL-terminated), asserted to
 * parse; *@status set to the exit status when it fails (then NULL). */
static char *export_yaml(struct berth_error *err, const char *first, ...)
{
	char *argv[64];
	int argc = 0;
	va_list ap;
	struct berth_k8s_req r;
	char *yaml = NULL;

	argv[argc++] = (char *)"k8s";
	va_start(ap, first);
	for (const char *a = first; a != NULL && argc < 63; a = va_arg(ap, const char *))
		argv[argc++] = (char *)a;
	va_end(ap);
	argv[argc] = NULL;
	*err = (struct berth_error){0};
	if (berth_k8s_parse(argc, argv, &r, err) == 0 && berth_k8s_prepare(&r, err) == 0)
		yaml = berth_k8s_yaml(&r.spec, &r.run.policy, err);
	berth_k8s_req_free(&r);
	if (yaml == NULL)
		return NULL;
	/* three documents, each read back without a problem */
	size_t docs = 0;
	const char *start = strstr(yaml, "\n---\n");
	while (start != NULL) {
		start += 5;
		const char *end = strstr(start, "\n---\n");
		size_t len = end != NULL ? (size_t)(end - start) + 1 : strlen(start);
		struct berth_ynode *root = NULL;
		struct berth_yopts o = {0};
		assert_int_equal(berth_ynode_build(start, len, &o, &root), 0);
		assert_non_null(root);
		assert_int_equal(root->kind, BERTH_YN_MAP);
		berth_ynode_free(root);
		docs++;
		start = end;
	}
	assert_int_equal(docs, 3);
	return yaml;
}

static void test_refusals(void **state)
{
	static const struct {
		const char *a, *b, *want;
	} cases[] = {
	    {"--workspace", "/tmp", "export k8s: `--workspace` names a directory of this machine"},
	    {"--ro", "/etc", "export k8s: `--ro` binds a path of this machine"},
	    {"--rw", "/tmp", "export k8s: `--rw` binds a path of this machine"},
	    {"--env", "HOME",
	     "export k8s: `--env HOME` takes the value of `HOME` from this machine's environment"},
	    {"--env=PATH", NULL, "export k8s: `--env PATH` takes the value"},
	    {"--env-file", "/nonexistent", "export k8s: `--env-file` reads values from a file"},
	    {"--evidence", "/etc/hostname", "export k8s: `--evidence` copies files of this machine"},
	    {"--forensic", NULL, "export k8s: `--forensic` needs --evidence"},
	    {"--dns", "192.0.2.53", "export k8s: `--dns` has no annotation"},
	    {"--unprotect", ".git", "export k8s: `--unprotect` has no annotation"},
	    {"--allow-degraded", NULL, "export k8s: `--allow-degraded` has no annotation"},
	    {"--dry-run", NULL, "export k8s: `--dry-run` is `berth run`'s"},
	    {"--json", NULL, "export k8s: `--json` is `berth run`'s"},
	    {"--network", "host", "export k8s: `--network host` is a widening a Pod cannot carry"},
	    {"--mem", "2G", "export k8s: unknown option or argument `--mem`"},
	    {"--tty=1", NULL, "export k8s: `--tty` takes no value"},
	    {"--name", "Bad_Name", "export k8s: invalid --name `Bad_Name`"},
	    {"--namespace", "a.b", "export k8s: invalid --namespace `a.b`"},
	    {"--user", "0", "export k8s: invalid --user `0`"},
	    {"--user", "1:-1", "export k8s: invalid --user `1:-1`"},
	    {"--workspace-claim", "Claim", "export k8s: invalid --workspace-claim `Claim`"},
	    {"--audit-dir", "/var/./log", "export k8s: invalid --audit-dir `/var/./log`"},
	    {"--audit-dir", "/a,b", "export k8s: invalid --audit-dir `/a,b`"},
	    {"--image", "-rf", "export k8s: invalid --image `-rf`"},
	    {"--image", "a b", "export k8s: invalid --image `a b`"},
	    {"--memory", "1K", "invalid --memory `1K`"},
	    {"--network", "bogus", "invalid --network `bogus`"},
	};
	struct berth_error err;

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		/* a later --image replaces nothing: the case's own comes first when it is one */
		char *y = cases[i].b != NULL
			      ? export_yaml(&err, cases[i].a, cases[i].b, "--image", "img", "--", "sh", NULL)
			      : export_yaml(&err, cases[i].a, "--image", "img", "--", "sh", NULL);
		if (strcmp(cases[i].a, "--image") == 0)
			y = export_yaml(&err, cases[i].a, cases[i].b, "--", "sh", NULL);
		if (y != NULL || strstr(err.msg, cases[i].want) == NULL || err.status != 2) {
			fprintf(stderr, "case %zu: status %d, `%s`\n", i, err.status, err.msg);
			fail();
		}
	}
	assert_null(export_yaml(&err, "--", "sh", NULL));
	assert_string_equal(err.msg, "export k8s: no --image given");
	assert_null(export_yaml(&err, "--image", "img", NULL));
	assert_string_equal(err.msg, "export k8s: no command given");
	assert_null(export_yaml(&err, "--image", "img", "--image", "img2", "--", "sh", NULL));
	assert_string_equal(err.msg, "export k8s: `--image` given twice");
	assert_null(export_yaml(&err, "--image", "img", "--env", "A=\xff", "--", "sh", NULL));
	assert_int_equal(err.status, 2);
	assert_non_null(strstr(err.msg, "is not UTF-8 text"));
}

static void test_values(void **state)
{
	struct berth_error err;
	char *y =
	    export_yaml(&err, "--image=reg.example/agent@sha256:00", "--memory", "1536M", "--cpus", "0.5",
			"--tmp-size", "3G", "--timeout", "1500ms", "--name=a-1", "--namespace", "ns",
			"--user", "2000:3000", "--workspace-claim", "ws.claim", "--audit-dir",
			"/var/log/berth", "--tty", "--env", "A=x\ny", "--", "sh", "-c", "echo \"$A\"", NULL);

	(void)state;
	assert_non_null(y);
	static const char *const want[] = {
	    "  name: \"a-1\"\n  namespace: \"ns\"\n  labels:\n    berth.dev/pod: \"a-1\"\n",
	    "    berth.dev/workspace: \"/workspace\"\n    berth.dev/audit-dir: \"/var/log/berth\"\nspec:\n",
	    "  activeDeadlineSeconds: 2\n",
	    "    runAsNonRoot: true\n    runAsUser: 2000\n    runAsGroup: 3000\n",
	    "    fsGroup: 3000\n",
	    "      image: \"reg.example/agent@sha256:00\"\n",
	    "      command:\n        - \"sh\"\n        - \"-c\"\n        - \"echo \\\"$A\\\"\"\n",
	    "      stdin: true\n      tty: true\n",
	    "        - name: \"A\"\n          value: \"x\\ny\"\n",
	    "          memory: \"1536Mi\"\n          cpu: \"500m\"\n",
	    "      persistentVolumeClaim:\n        claimName: \"ws.claim\"\n",
	    "        sizeLimit: \"3Gi\"\n",
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		if (strstr(y, want[i]) == NULL) {
			fprintf(stderr, "missing:\n%s\nin:\n%s\n", want[i], y);
			fail();
		}
	/* no allow-host: no annotation, no egress rule */
	assert_null(strstr(y, "    berth.dev/allow-hosts:"));
	assert_null(strstr(y, "\n  egress:"));
	free(y);
	/* the defaults: 8Gi, 4 CPUs, 1000:1000, an emptyDir workspace, no deadline */
	y = export_yaml(&err, "--image", "img", "--network", "proxy", "--", "true", NULL);
	assert_non_null(y);
	assert_non_null(strstr(y, "          memory: \"8Gi\"\n          cpu: \"4\"\n"));
	assert_non_null(strstr(y, "    runAsUser: 1000\n    runAsGroup: 1000\n"));
	assert_non_null(strstr(y, "  - name: workspace\n      # gone with the Pod") ||
			strstr(y, "    - name: workspace\n      # gone with the Pod"));
	assert_null(strstr(y, "activeDeadlineSeconds"));
	assert_null(strstr(y, "stdin: true"));
	assert_null(strstr(y, "    berth.dev/allow-hosts:"));
	assert_null(strstr(y, "\n  egress:"));
	free(y);
	/* a byte count no binary suffix divides */
	y = export_yaml(&err, "--image", "img", "--memory", "16777217", "--", "true", NULL);
	assert_non_null(y);
	assert_non_null(strstr(y, "memory: \"16777217\"\n"));
	free(y);
}

/* The CIDRs listed under `except:` of the ipBlock whose cidr is @cidr. */
static size_t excepts(const char *yaml, const char *cidr, char out[][64], size_t max)
{
	char key[80];
	const char *p;
	size_t n = 0;

	snprintf(key, sizeof key, "cidr: \"%s\"\n", cidr);
	p = strstr(yaml, key);
	assert_non_null(p);
	p = strchr(p, '\n') + 1;
	assert_non_null(strstr(p, "except:\n") == p + strspn(p, " ") ? p : NULL);
	p = strchr(p, '\n') + 1;
	for (;;) {
		const char *q = p + strspn(p, " ");
		if (strncmp(q, "- \"", 3) != 0 || n >= max)
			break;
		q += 3;
		size_t l = strcspn(q, "\"");
		snprintf(out[n++], 64, "%.*s", (int)l, q);
		p = strchr(q, '\n') + 1;
	}
	return n;
}

/* First and last address of @cidr. */
static void range_of(const char *cidr, struct berth_addr *first, struct berth_addr *last)
{
	char a[64];
	unsigned bits;
	const char *slash = strchr(cidr, '/');

	assert_non_null(slash);
	snprintf(a, sizeof a, "%.*s", (int)(slash - cidr), cidr);
	bits = (unsigned)atoi(slash + 1);
	assert_true(berth_addr_parse_literal(a, first) > 0);
	*last = *first;
	unsigned total = first->family == AF_INET ? 32 : 128;
	for (unsigned b = bits; b < total; b++)
		last->bytes[b / 8] |= (uint8_t)(0x80 >> (b % 8));
}

static bool covered_by(const struct berth_addr *a, char list[][64], size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct berth_addr f, l;
		range_of(list[i], &f, &l);
		if (f.family == a->family && memcmp(a->bytes, f.bytes, 16) >= 0 &&
		    memcmp(a->bytes, l.bytes, 16) <= 0)
			return true;
	}
	return false;
}

static void test_network_policy(void **state)
{
	struct berth_error err;
	char v4[64][64], v6[64][64];
	size_t n4, n6;
	char *y = export_yaml(&err, "--image", "img", "--allow-host", "api.example.com", "--allow-host",
			      "*.example.org:8443", "--allow-host", "192.0.2.10:5000", "--allow-host",
			      "[2001:db8::7]:*", "--", "true", NULL);

	(void)state;
	assert_non_null(y);
	assert_non_null(strstr(y,
			       "    berth.dev/allow-hosts: "
			       "\"api.example.com,*.example.org:8443,192.0.2.10:5000,[2001:db8::7]:*\"\n"));
	assert_non_null(strstr(y, "  policyTypes:\n    - Ingress\n    - Egress\n"));
	assert_non_null(strstr(y, "              k8s-app: kube-dns\n      ports:\n        - protocol: UDP\n"
				  "          port: 53\n        - protocol: TCP\n          port: 53\n"));
	/* the names' ports, in order, once each */
	assert_non_null(strstr(y, "              - \"3fff::/20\"\n      ports:\n        - protocol: TCP\n"
				  "          port: 80\n        - protocol: TCP\n          port: 443\n"
				  "        - protocol: TCP\n          port: 8443\n"));
	/* each literal to itself alone */
	assert_non_null(strstr(y,
			       "            cidr: \"192.0.2.10/32\"\n      ports:\n        - protocol: TCP\n"
			       "          port: 5000\n"));
	assert_non_null(strstr(y, "            cidr: \"2001:db8::7/128\"\n      # every port"));

	/* Nothing is excepted that berth allows, but 6to4 (which berth looks
	 * through and a prefix cannot): each except range's first and last
	 * address is one berth_addr_refused refuses. */
	n4 = excepts(y, "0.0.0.0/0", v4, 64);
	n6 = excepts(y, "2000::/3", v6, 64);
	assert_true(n4 >= 10);
	assert_true(n6 >= 3);
	bool sixto4 = false;
	for (size_t i = 0; i < n6; i++)
		sixto4 = sixto4 || strcmp(v6[i], "2002::/16") == 0;
	assert_true(sixto4); /* 6to4 can carry any IPv4 address: excepted whole */
	for (size_t i = 0; i < n4 + n6; i++) {
		const char *c = i < n4 ? v4[i] : v6[i - n4];
		struct berth_addr f, l;
		range_of(c, &f, &l);
		if (strcmp(c, "2002::/16") == 0) {
			struct berth_addr pub;
			assert_true(berth_addr_parse_literal("2002:808:808::1", &pub) > 0);
			assert_false(berth_addr_refused(&pub, NULL)); /* stricter than berth, on purpose */
			continue;
		}
		if (!berth_addr_refused(&f, NULL) || !berth_addr_refused(&l, NULL)) {
			fprintf(stderr, "except %s holds an address berth allows\n", c);
			fail();
		}
	}
	/* Every range berth refuses is excepted: each IPv4 rule, and each IPv6
	 * rule inside 2000::/3. */
	struct berth_addr net, g6;
	unsigned bits;
	assert_true(berth_addr_parse_literal("2000::", &g6) > 0);
	for (size_t i = 0; berth_addr_refused_prefix(i, &net, &bits); i++) {
		if (net.family == AF_INET6 && (net.bytes[0] & 0xe0) != 0x20)
			continue; /* outside 2000::/3: not allowed at all */
		if (!covered_by(&net, net.family == AF_INET ? v4 : v6, net.family == AF_INET ? n4 : n6)) {
			char t[64];
			berth_addr_format(&net, t, sizeof t);
			fprintf(stderr, "refused %s/%u is not excepted\n", t, bits);
			fail();
		}
	}
	free(y);

	/* literals only: no DNS, no rule to every address */
	y = export_yaml(&err, "--image", "img", "--allow-host", "192.0.2.10:8443", "--", "true", NULL);
	assert_non_null(y);
	assert_null(strstr(y, "kube-dns"));
	assert_null(strstr(y, "0.0.0.0/0"));
	assert_non_null(
	    strstr(y, "cidr: \"192.0.2.10/32\"\n      ports:\n        - protocol: TCP\n          port: "
		      "8443\n"));
	free(y);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_quote_roundtrip), cmocka_unit_test(test_quote_refuses_non_utf8),
	    cmocka_unit_test(test_refusals),        cmocka_unit_test(test_values),
	    cmocka_unit_test(test_network_policy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
