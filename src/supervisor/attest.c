/* SPDX-License-Identifier: MIT */
/*
 * attest.c - build, sign and verify attestations (attest.h).
 */
#include "attest.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "../audit/audit.h"
#include "../sandbox/measure.h"
#include "../util/cleanup.h"
#include "../util/journal.h"
#include "../util/json.h"
#include "../util/jcs.h"
#include "runs.h"

#ifndef BERTH_VERSION
#define BERTH_VERSION "0.0.0"
#endif

struct range {
	const char *run_id;
	json_int_t first, last, head;
	char head_hash[65];
	/* the run's records that the run directory must agree with */
	json_t *enforced, *policy_digest, *stop_status;
	json_t *stop_ended; /* run.stop's "ended" (orphans.h), or NULL */
	json_t *denials;    /* the `denial.summary` record's payload (docs/denials.md), or NULL */
	json_t *asks;       /* run.stop's "ask", --ask's counts (docs/ask.md), or NULL */
	bool stopped;       /* a run.stop record exists */
	json_t *review; /* --review: the change set's digest (run.stop's "review", docs/review.md), or NULL */
	json_int_t enforced_seq;
};

static int range_cb(const struct berth_audit_record *r, void *ctx)
{
	struct range *g = ctx;

	if (r->run_id != NULL && strcmp(r->run_id, g->run_id) == 0) {
		if (g->first == 0)
			g->first = (json_int_t)r->seq;
		g->last = (json_int_t)r->seq;
		if (r->kind != NULL && strcmp(r->kind, "enforced") == 0) {
			json_decref(g->enforced);
			g->enforced = json_incref((json_t *)r->payload);
			g->enforced_seq = (json_int_t)r->seq;
		} else if (r->kind != NULL && strcmp(r->kind, "policy") == 0) {
			json_decref(g->policy_digest);
			g->policy_digest = json_incref(json_object_get(r->payload, "digest"));
		} else if (r->kind != NULL && strcmp(r->kind, "denial.summary") == 0) {
			json_decref(g->denials);
			g->denials = json_incref((json_t *)r->payload);
		} else if (r->kind != NULL && strcmp(r->kind, "run.stop") == 0) {
			json_decref(g->review);
			g->review =
			    json_incref(json_object_get(json_object_get(r->payload, "review"), "digest"));
			json_decref(g->stop_status);
			g->stop_status = json_incref(json_object_get(r->payload, "status"));
			json_decref(g->asks);
			g->asks = json_incref(json_object_get(r->payload, "ask"));
			json_decref(g->stop_ended);
			g->stop_ended = json_incref(json_object_get(r->payload, "ended"));
			g->stopped = true;
		}
	}
	g->head = (json_int_t)r->seq;
	snprintf(g->head_hash, sizeof g->head_hash, "%s", r->hash != NULL ? r->hash : "");
	return 0;
}

static json_t *str_array1(const json_t *v)
{
	json_t *a = json_array();

	if (json_is_string(v))
		json_array_append(a, (json_t *)v);
	return a;
}

/* @err: run.json of @run_id @differs (from a record) in the audit trail. */
static void run_json_edited(struct berth_error *err, const char *run_id, const char *differs)
{
	berth_err(
	    err, 0,
	    "`run.json` of run `%s` %s in the audit trail: the run directory was edited; nothing is signed",
	    run_id, differs);
}

/* A run that did not end normally says how it ended (docs/attest.md,
 * "ended"): its supervisor died (the run.stop record the next berth wrote,
 * orphans.h), it is still going, or its end is not recorded at all.  The
 * verdict is the measurement's at the start; the exit status is then null. */
static void set_ended(json_t *rec, const struct range *g, const char *run_id)
{
	const char *how = NULL;

	if (json_is_string(g->stop_ended))
		how = json_string_value(g->stop_ended);
	else if (!g->stopped)
		how = berth_journal_live(run_id) ? "running" : "not recorded";
	if (how != NULL)
		json_object_set_new(rec, "ended", json_string(how));
}

static json_t *denials_member(const json_t *s)
{
	json_t *o = json_pack("{s:O?, s:O?, s:O?, s:O?, s:O?}", "landlock", json_object_get(s, "landlock"),
			      "count", json_object_get(s, "count"), "kinds", json_object_get(s, "kinds"),
			      "kernel_total", json_object_get(s, "kernel_total"), "broker_refused",
			      json_object_get(s, "broker_refused"));

	return o != NULL ? o : json_null();
}

/* --ask (docs/ask.md): how many opens were put to a human and how they
 * were answered, by kind; never the paths. */
static json_t *asks_member(const json_t *s)
{
	json_t *o =
	    json_pack("{s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?}", "count", json_object_get(s, "asks"),
		      "granted", json_object_get(s, "granted"), "denied", json_object_get(s, "denied"),
		      "timed_out", json_object_get(s, "timed_out"), "limited", json_object_get(s, "limited"),
		      "remembered", json_object_get(s, "remembered"), "kinds", json_object_get(s, "kinds"));

	return o != NULL ? o : json_null();
}

json_t *berth_attest_build(const char *run_id, const char *audit_dir, struct berth_error *err)
{
	json_t *run = NULL, *enf = NULL, *rec = NULL, *audit = json_null();
	struct range g = {.run_id = run_id};
	struct utsname u;
	char now[32];

	run = berth_run_read_json(run_id, "run.json", err);
	if (run == NULL)
		return NULL;
	enf = berth_run_read_json(run_id, "enforced.json", err);
	if (enf == NULL)
		goto out;
	if (berth_audit_each(audit_dir, range_cb, &g, err) < 0)
		goto out;
	/* The run directory is outside the hash chain: sign only what the
	 * audit trail recorded (a measurement edited on disk must not become
	 * a signed ENFORCED). */
	if (g.enforced == NULL) {
		berth_err(err, 0, "the audit trail has no `enforced` record of run `%s`: nothing to attest",
			  run_id);
		berth_err_hint(
		    err,
		    "`berth audit verify` checks the log; `berth audit --run %s` lists the run's records",
		    run_id);
		goto out;
	}
	if (!json_equal(enf, g.enforced)) {
		berth_err(err, 0,
			  "`enforced.json` of run `%s` differs from its `enforced` record in the audit trail "
			  "(seq %" JSON_INTEGER_FORMAT "): the run directory was edited; nothing is signed",
			  run_id, g.enforced_seq);
		goto out;
	}
	/* With --evidence the policy record precedes the copy, whose place
	 * (evidence_dir) the digest in run.json covers: they differ by design. */
	if (g.policy_digest != NULL && !json_is_object(json_object_get(run, "evidence")) &&
	    !json_equal(json_object_get(run, "policy_digest"), g.policy_digest)) {
		run_json_edited(err, run_id, "names another policy digest than its `policy` record");
		goto out;
	}
	/* A run whose supervisor died has no exit status on record: run.json's
	 * (written just before it died, if at all) is not in the audit trail. */
	if (json_is_string(g.stop_ended))
		json_object_del(run, "exit_status");
	if (g.stop_status != NULL && json_object_get(run, "exit_status") != NULL &&
	    !json_equal(json_object_get(run, "exit_status"), g.stop_status)) {
		run_json_edited(err, run_id, "gives another exit status than its `run.stop` record");
		goto out;
	}
	if (g.first > 0)
		audit = json_pack("{s:I, s:I, s:I, s:s}", "first_seq", g.first, "last_seq", g.last,
				  "head_seq", g.head, "head_hash", g.head_hash);
	uname(&u);
	berth_audit_now_rfc3339(now);
	/* The host as berth sees it now, and as the run recorded it. */
	rec = json_pack(
	    "{s:s, s:s, s:s, s:s, s:{s:s, s:s}, s:o, s:o, s:O, s:O, s:O, s:O, s:o}", "type",
	    BERTH_ATTEST_TYPE, "run_id", run_id, "created", now, "berth_version", BERTH_VERSION, "host",
	    "kernel", u.release, "arch", u.machine, "policy_digests",
	    str_array1(json_object_get(run, "policy_digest")), "app_digests",
	    str_array1(json_object_get(run, "app_digest")), "enforced", enf, "verdict",
	    json_object_get(enf, "verdict") ? json_object_get(enf, "verdict") : json_null(), "evidence",
	    json_object_get(run, "evidence") ? json_object_get(run, "evidence") : json_null(), "exit_status",
	    json_object_get(run, "exit_status") ? json_object_get(run, "exit_status") : json_null(), "audit",
	    audit);
	audit = NULL;
	if (rec == NULL)
		berth_err(err, ENOMEM, "cannot build the attestation");
	else if (json_object_get(run, "started") != NULL)
		json_object_set(rec, "started", json_object_get(run, "started"));
	if (rec != NULL)
		set_ended(rec, &g, run_id);
	/* --review: the run wrote a layer, never the host's workspace; what
	 * it changed is the change set the audit trail names (docs/review.md) */
	if (rec != NULL && json_is_string(g.review))
		json_object_set_new(rec, "workspace",
				    json_pack("{s:s, s:b, s:O}", "mode", "review",
					      "host_tree_modified_by_run", 0, "change_set_digest", g.review));
	/* What the kernel refused the run, as recorded (docs/denials.md):
	 * the count and kinds, never the paths (an attestation is shown). */
	if (rec != NULL && g.denials != NULL)
		json_object_set_new(rec, "denials", denials_member(g.denials));
	if (rec != NULL && g.asks != NULL)
		json_object_set_new(rec, "asks", asks_member(g.asks));
out:
	json_decref(g.review);
	json_decref(g.denials);
	json_decref(g.asks);
	json_decref(g.stop_ended);
	json_decref(g.enforced);
	json_decref(g.policy_digest);
	json_decref(g.stop_status);
	json_decref(audit);
	json_decref(run);
	json_decref(enf);
	return rec;
}

/* JCS of @doc without its "signature" member. */
static char *signed_bytes(const json_t *doc, size_t *len, struct berth_error *err)
{
	json_t *copy = json_copy((json_t *)doc);
	char *s;

	if (copy == NULL)
		return berth_err(err, ENOMEM, "out of memory"), NULL;
	json_object_del(copy, "signature");
	s = berth_jcs_len(copy, len, err);
	json_decref(copy);
	return s;
}

int berth_attest_sign(json_t *rec, const struct berth_hostkey *k, struct berth_error *err)
{
	size_t len = 0;
	cleanup_free char *msg = signed_bytes(rec, &len, err);
	unsigned char sig[64];
	char sighex[129], pubhex[65];

	if (msg == NULL)
		return -1;
	if (berth_sign(k, msg, len, sig, err) < 0)
		return -1;
	berth_hex(sig, sizeof sig, sighex);
	berth_hex(k->pub, sizeof k->pub, pubhex);
	if (json_object_set_new(
		rec, "signature",
		json_pack("{s:s, s:s, s:s}", "alg", "Ed25519", "public_key", pubhex, "value", sighex)) < 0)
		return berth_err(err, ENOMEM, "out of memory");
	return 0;
}

static bool hex64(const json_t *v)
{
	const char *s = json_string_value(v);

	return s != NULL && strlen(s) == 64 && strspn(s, "0123456789abcdef") == 64;
}

/* enforced.runtime (docs/attest.md): absent in records of berth before the
 * microVM runtime (the namespace runtime's); a microVM's names its guest.
 * Whether that guest is the one a berth pins is the caller's question
 * (`berth attest --verify` asks it: src/cli/cmd_attest.c). */
static void check_runtime(const json_t *rt, json_t *p)
{
	const char *name = json_string_value(json_object_get(rt, "name"));
	const char *accel = json_string_value(json_object_get(rt, "accelerator"));

	if (rt == NULL)
		return;
	if (name == NULL || (strcmp(name, "namespace") != 0 && strcmp(name, "vm") != 0)) {
		berth_json_append_printf(p, "`enforced.runtime.name` is not `namespace` or `vm`");
		return;
	}
	if (strcmp(name, "vm") != 0)
		return;
	if (!hex64(json_object_get(rt, "kernel_sha256")) || !hex64(json_object_get(rt, "initramfs_sha256")))
		berth_json_append_printf(p,
					 "`enforced.runtime`: a microVM's kernel_sha256 and initramfs_sha256 "
					 "must be 64 lowercase hex digits");
	if (accel == NULL || (strcmp(accel, "tcg") != 0 && strcmp(accel, "kvm") != 0))
		berth_json_append_printf(p, "`enforced.runtime.accelerator` is not `tcg` or `kvm`");
}

/* `denials` is optional (records before it, and runs that read no
 * kernel record, have none); when there, its form is checked. */
static void check_denials(const json_t *d, json_t *p)
{
	const char *k;
	const json_t *v, *ll;

	if (d == NULL)
		return;
	ll = json_object_get(d, "landlock");
	if (!json_is_object(d) || !json_is_string(ll) ||
	    (strcmp(json_string_value(ll), "seen") != 0 && strcmp(json_string_value(ll), "not seen") != 0) ||
	    !json_is_integer(json_object_get(d, "count")) ||
	    json_integer_value(json_object_get(d, "count")) < 0 ||
	    !json_is_object(json_object_get(d, "kinds"))) {
		berth_json_append_printf(p, "member `denials` is not of the documented form");
		return;
	}
	json_int_t sum = 0;
	json_object_foreach((json_t *)json_object_get(d, "kinds"), k, v) {
		if (!json_is_integer(v) || json_integer_value(v) < 0) {
			berth_json_append_printf(p, "`denials.kinds` has a count that is not a whole number");
			return;
		}
		sum += json_integer_value(v);
	}
	if (sum != json_integer_value(json_object_get(d, "count")))
		berth_json_append_printf(p, "`denials.count` is not the sum of `denials.kinds`");
}

/* `asks` is optional (a run without --ask has none); when there, whole
 * counts whose kinds add up to the count. */
static void check_asks(const json_t *d, json_t *p)
{
	const char *k;
	const json_t *v;
	json_int_t sum = 0;

	if (d == NULL)
		return;
	if (!json_is_object(d) || !json_is_integer(json_object_get(d, "count")) ||
	    !json_is_object(json_object_get(d, "kinds"))) {
		berth_json_append_printf(p, "member `asks` is not of the documented form");
		return;
	}
	json_object_foreach((json_t *)d, k, v) {
		if (strcmp(k, "kinds") != 0 && (!json_is_integer(v) || json_integer_value(v) < 0)) {
			berth_json_append_printf(p, "`asks.%s` is not a whole number", k);
			return;
		}
	}
	json_object_foreach((json_t *)json_object_get(d, "kinds"), k, v) {
		if (!json_is_integer(v) || json_integer_value(v) < 0) {
			berth_json_append_printf(p, "`asks.kinds` has a count that is not a whole number");
			return;
		}
		sum += json_integer_value(v);
	}
	if (sum != json_integer_value(json_object_get(d, "count")))
		berth_json_append_printf(p, "`asks.count` is not the sum of `asks.kinds`");
}

static void check_content(const json_t *doc, json_t *p, struct berth_error *err)
{
	static const struct {
		const char *name;
		json_type type;
	} members[] = {
	    {"run_id", JSON_STRING},   {"created", JSON_STRING},       {"berth_version", JSON_STRING},
	    {"host", JSON_OBJECT},     {"policy_digests", JSON_ARRAY}, {"app_digests", JSON_ARRAY},
	    {"enforced", JSON_OBJECT}, {"verdict", JSON_STRING},
	};
	const json_t *audit = json_object_get(doc, "audit"), *enf = json_object_get(doc, "enforced");
	int v;

	if (!json_is_string(json_object_get(doc, "type")) ||
	    strcmp(json_string_value(json_object_get(doc, "type")), BERTH_ATTEST_TYPE) != 0)
		berth_json_append_printf(p, "`type` is not `%s`", BERTH_ATTEST_TYPE);
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(members); i++)
		if (json_object_get(doc, members[i].name) == NULL ||
		    json_typeof(json_object_get(doc, members[i].name)) != members[i].type)
			berth_json_append_printf(p, "member `%s` missing or of the wrong type",
						 members[i].name);
	if (!berth_run_id_valid(json_string_value(json_object_get(doc, "run_id"))))
		berth_json_append_printf(p, "`run_id` is not 16 lowercase hex digits");
	if (json_object_get(doc, "ended") != NULL && !json_is_string(json_object_get(doc, "ended")))
		berth_json_append_printf(p, "member `ended` of the wrong type");
	if (json_is_object(enf)) {
		struct berth_error e2 = {0};
		v = berth_measure_verdict_json(enf, NULL, &e2);
		if (v < 0)
			berth_json_append_printf(p, "`enforced`: %s", e2.msg);
		else if (!json_is_string(json_object_get(doc, "verdict")) ||
			 strcmp(json_string_value(json_object_get(doc, "verdict")), berth_verdict_name(v)) !=
			     0 ||
			 !json_is_string(json_object_get(enf, "verdict")) ||
			 strcmp(json_string_value(json_object_get(enf, "verdict")), berth_verdict_name(v)) !=
			     0)
			berth_json_append_printf(
			    p, "the verdict stated is not the one the measurement gives (%s)",
			    berth_verdict_name(v));
	}
	check_runtime(json_object_get(enf, "runtime"), p);
	check_denials(json_object_get(doc, "denials"), p);
	check_asks(json_object_get(doc, "asks"), p);
	if (audit != NULL && !json_is_null(audit)) {
		json_int_t f = json_integer_value(json_object_get(audit, "first_seq")),
			   l = json_integer_value(json_object_get(audit, "last_seq")),
			   h = json_integer_value(json_object_get(audit, "head_seq"));
		const char *hh = json_string_value(json_object_get(audit, "head_hash"));
		if (f < 1 || l < f || h < l)
			berth_json_append_printf(
			    p, "audit range is inconsistent (first %lld, last %lld, head %lld)", (long long)f,
			    (long long)l, (long long)h);
		if (hh == NULL || strlen(hh) != 64 || strspn(hh, "0123456789abcdef") != 64)
			berth_json_append_printf(p, "audit `head_hash` is not 64 lowercase hex digits");
	}
	(void)err;
}

int berth_attest_verify(const json_t *doc, const unsigned char pub[32], json_t **problems,
			struct berth_error *err)
{
	json_t *p = json_array();
	const json_t *sig = json_object_get(doc, "signature");
	const char *pubhex = json_string_value(json_object_get(sig, "public_key"));
	const char *sighex = json_string_value(json_object_get(sig, "value"));
	const char *alg = json_string_value(json_object_get(sig, "alg"));
	unsigned char embedded[32], s[64];
	char trusted[65];

	*problems = p;
	if (!json_is_object(doc)) {
		berth_json_append_printf(p, "not a JSON object");
		return BERTH_ATTEST_INVALID;
	}
	berth_hex(pub, 32, trusted);
	if (!json_is_object(sig) || alg == NULL || strcmp(alg, "Ed25519") != 0)
		berth_json_append_printf(p, "no `signature` with `alg` Ed25519");
	else if (pubhex == NULL || berth_unhex(pubhex, embedded, 32) < 0)
		berth_json_append_printf(p, "`signature.public_key` is not 64 hex digits");
	else if (memcmp(embedded, pub, 32) != 0)
		berth_json_append_printf(p, "signed with key %s, not the trusted key %s", pubhex, trusted);
	else if (sighex == NULL || berth_unhex(sighex, s, 64) < 0)
		berth_json_append_printf(p, "`signature.value` is not 128 hex digits");
	else {
		size_t len = 0;
		struct berth_error e2 = {0};
		cleanup_free char *msg = signed_bytes(doc, &len, &e2);
		if (msg == NULL) {
			berth_json_append_printf(p, "cannot canonicalise the record: %s", e2.msg);
		} else if (berth_verify(pub, msg, len, s, &e2) < 0) {
			if (e2.errnum == ELIBACC) {
				*err = e2;
				return -1;
			}
			berth_json_append_printf(
			    p,
			    "the signature does not verify: the record was changed or signed by another key");
		}
	}
	check_content(doc, p, err);
	return json_array_size(p) == 0 ? BERTH_ATTEST_VALID : BERTH_ATTEST_INVALID;
}
