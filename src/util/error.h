/* SPDX-License-Identifier: MIT */
/*
 * error.h - error objects for the berth core.
 *
 * Every core function that can fail takes a `struct berth_error *err` as its
 * last parameter, returns a negative value (-1) on failure and fills `err`
 * with the errno that caused it and a human message.  Only the CLI prints
 * and exits (see src/cli/).  Messages follow crun's rules: lowercase, values
 * in backticks, no trailing period.
 */
#ifndef BERTH_ERROR_H
#define BERTH_ERROR_H

#include <stdarg.h>
#include <stddef.h>

#define BERTH_ERR_MSG_MAX 1024
#define BERTH_ERR_HINT_MAX 512

/*
 * Exit statuses berth uses (podman/docker convention, see berth(1)).
 */
enum {
	BERTH_EXIT_USAGE = 2,      /* bad command line or bad value */
	BERTH_EXIT_TIMEOUT = 124,  /* --timeout expired, tree killed */
	BERTH_EXIT_INTERNAL = 125, /* berth failed before the command ran */
	BERTH_EXIT_NOEXEC = 126,   /* command found but could not be executed */
	BERTH_EXIT_NOTFOUND = 127, /* command not found */
};

struct berth_error {
	int errnum;                    /* errno of the cause, 0 if none */
	int status;                    /* suggested exit status (BERTH_EXIT_*) */
	char msg[BERTH_ERR_MSG_MAX];   /* what failed, with the bad value */
	char hint[BERTH_ERR_HINT_MAX]; /* how to fix it, may be empty */
};

/*
 * berth_err_status - record a failure.
 * @err: error object to fill (must not be NULL)
 * @errnum: errno value of the cause, or 0; its strerror() text is appended
 * @status: the suggested exit status (BERTH_EXIT_*)
 * @fmt: printf format of the message
 * Clears the hint.  Returns -1 so that callers can `return berth_err(...)`.
 */
int berth_err_status(struct berth_error *err, int errnum, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/*
 * berth_err - record a failure (berth_err_status) with the suggested exit
 * status BERTH_EXIT_INTERNAL.
 */
#define berth_err(err, errnum, ...) berth_err_status((err), (errnum), BERTH_EXIT_INTERNAL, __VA_ARGS__)

/*
 * berth_usage_err - as berth_err, but the exit status is BERTH_EXIT_USAGE and
 * no errno is attached.  Use for bad user input.
 */
#define berth_usage_err(err, ...) berth_err_status((err), 0, BERTH_EXIT_USAGE, __VA_ARGS__)

/*
 * berth_err_hint - attach a one-line fix to an already filled error.
 * Returns -1.
 */
int berth_err_hint(struct berth_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * berth_err_wrap - prefix the message of an already filled error with
 * context ("mount `/workspace`: ..."). Returns -1.
 */
int berth_err_wrap(struct berth_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * berth_reasonf - print @fmt into @reason (@len bytes; nothing when @reason
 * is NULL or @len 0), for the checks that say why they refuse in a buffer of
 * the caller's rather than an error object.  Returns -1.
 */
int berth_reasonf(char *reason, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* berth_err_clear - reset an error object to "no error". */
void berth_err_clear(struct berth_error *err);

#endif
