/* SPDX-License-Identifier: MIT */
/*
 * exec.h - run a host tool (apt-get, dpkg-deb, qemu) for the microVM code:
 * execvp(3) of an argument vector, never through a shell, with a deadline.
 */
#ifndef BERTH_VM_EXEC_H
#define BERTH_VM_EXEC_H

#include <stdbool.h>
#include <stddef.h>

#include "../util/error.h"

struct berth_vm_cmd {
	const char *const *argv; /* NULL-terminated; argv[0] is looked up in PATH */
	const char *cwd;         /* the child's working directory, or NULL: ours */
	const char *const *env;  /* "NAME=VALUE" set in the child's environment, NULL-terminated, or NULL */
	int out_fd, err_fd;      /* the child's stdout and stderr; -1: /dev/null.  stdin is /dev/null */
	int timeout_ms;          /* SIGKILL to its process group after this long; 0: no deadline */
};

/*
 * berth_vm_exec - run @c and wait for it.  The child is in a process group
 * of its own (a deadline kills the tool's helpers too: apt's methods) and
 * dies with us (PR_SET_PDEATHSIG).  *@wstatus is its waitpid(2) status;
 * *@elapsed_ms (when not NULL) how long it ran, in milliseconds.
 * Returns 0 when it ended by itself (whatever its status), 1 when the
 * deadline passed (it was killed and reaped), or -1 with @err filled:
 * ENOENT "`TOOL` not found" (hint: the Debian package when known), the
 * execve(2) errno "cannot run `TOOL`", or the fork/pipe/wait errno.
 */
int berth_vm_exec(const struct berth_vm_cmd *c, int *wstatus, long *elapsed_ms, struct berth_error *err);

/*
 * berth_vm_status_text - @wstatus as words into @buf (@len bytes): "exit
 * status N" or "killed by signal SIGNAME".  Returns @buf.
 */
char *berth_vm_status_text(int wstatus, char *buf, size_t len);

/*
 * berth_vm_find_tool - the path of @name (no `/`) in PATH into @buf (@len
 * bytes), an executable regular file.  Returns true when found.
 */
bool berth_vm_find_tool(const char *name, char *buf, size_t len);

/*
 * berth_vm_log_line - the last non-empty line of the file @fd (read from
 * its start, at most its last 64 KiB) into @buf (@len bytes, "" when none),
 * with control characters replaced by `?`; with @first, the first
 * non-empty line instead.  Returns @buf.
 */
char *berth_vm_log_line(int fd, bool first, char *buf, size_t len);

/*
 * berth_vm_qemu_opt - @prefix (a qemu option list up to `path=`) then
 * @value with every comma doubled, into @buf (@len bytes): qemu splits
 * option lists at a single comma, so a path with one (TMPDIR=/tmp/a,b)
 * would otherwise end the value and add options of the caller's choosing.
 * Returns 0, or -1 when it does not fit (@buf then holds "").  Pure.
 */
int berth_vm_qemu_opt(char *buf, size_t len, const char *prefix, const char *value);

#endif
