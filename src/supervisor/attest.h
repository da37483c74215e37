/* SPDX-License-Identifier: MIT */
/*
 * attest.h - signed attestations of a run (docs/attest.md).
 *
 * An attestation is one JSON object:
 *   {"type":"berth.attestation/1", "run_id", "created", "berth_version",
 *    "host":{"kernel","arch"}, "policy_digests":[...], "app_digests":[...],
 *    "enforced":{... the measurement, its verdict and shortfalls ...},
 *    "verdict", "evidence":{...}|null, "exit_status",
 *    "audit":{"first_seq","last_seq","head_seq","head_hash"}|null,
 *    "ended" (only for a run that did not end normally: "supervisor died",
 *    "running" or "not recorded"; its exit_status is null),
 *    "signature":{"alg":"Ed25519","public_key":HEX,"value":HEX}}
 * The signature is Ed25519 (RFC 8032) over the RFC 8785 canonical JSON
 * (src/util/jcs.h) of the object without its "signature" member.
 */
#ifndef BERTH_ATTEST_H
#define BERTH_ATTEST_H

#include <jansson.h>

#include "../util/error.h"
#include "../util/sign.h"

#define BERTH_ATTEST_TYPE "berth.attestation/1"

/* Exit statuses of `berth attest --verify` (docs/attest.md). */
enum {
	BERTH_ATTEST_VALID = 0,   /* signature and content check */
	BERTH_ATTEST_INVALID = 1, /* they do not: the problems say why */
};

/*
 * berth_attest_build - the unsigned attestation of run @run_id from its run
 * directory (src/supervisor/runs.h) and the audit trail in @audit_dir (NULL:
 * the default; its records of this run give the range, its last record the
 * head).  What is signed must be what the audit trail recorded: the run
 * directory is outside the log's hash chain, so `enforced.json` must equal
 * the run's `enforced` record, `run.json`'s `policy_digest` its `policy`
 * record's digest (runs without --evidence: with it, the record precedes
 * the copy whose place the digest covers), and its `exit_status` its
 * `run.stop` record's status (when both exist).  Returns a new reference, or NULL with @err filled: the
 * run does not exist or never started its command (status 2), a file does
 * not parse, the audit trail cannot be read, has no `enforced` record of
 * the run, or disagrees with the run directory (status 125: nothing is
 * signed).
 */
json_t *berth_attest_build(const char *run_id, const char *audit_dir, struct berth_error *err);

/*
 * berth_attest_sign - add the "signature" member to @rec, signed with @k.
 * Returns 0, or -1 with @err filled (JCS refused the record, signing failed).
 */
int berth_attest_sign(json_t *rec, const struct berth_hostkey *k, struct berth_error *err);

/*
 * berth_attest_verify - check @doc: the signature with the trusted key
 * @pub (the embedded public key must be that key), then the content: the
 * type, every member present with its type, the verdict recomputed from
 * "enforced" (src/sandbox/measure.h) equal to the one stated, and the
 * audit range consistent (first <= last <= head).
 * @problems: receives a new array of one string per problem (empty: valid).
 * Returns BERTH_ATTEST_VALID or BERTH_ATTEST_INVALID, or -1 with @err
 * filled when the check could not run (ENOMEM, libcrypto missing).
 */
int berth_attest_verify(const json_t *doc, const unsigned char pub[32], json_t **problems,
			struct berth_error *err);

#endif
