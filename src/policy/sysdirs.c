/* SPDX-License-Identifier: MIT */
/*
 * sysdirs.c - the default view's table (sysdirs.h).  Read it as the answer
 * to "what can a sandbox see and do outside its workspace?".
 */
#include "sysdirs.h"

#define RO BERTH_LL_RO
#define RX BERTH_LL_RX
#define RW BERTH_LL_RW
#define NONE BERTH_LL_NONE

const struct berth_sysdir berth_sysdirs[] = {
    {"/", BERTH_SYSDIR_ROOT, BERTH_LL_DIR, BERTH_LL_DIR, BERTH_ATTEST_NONE, false,
     "the root lists its entries and nothing more: no new top-level file (read-only mount), no access below "
     "it "
     "but through the rows that follow"},
    /* The system: the programs and libraries the command runs, read-only
     * (bubblewrap's --ro-bind /usr; a sandbox that could write them could
     * change what the host runs next). */
    {"/usr", BERTH_SYSDIR_BIND, RX, RX, BERTH_ATTEST_SYSTEM_RO, false, "programs and libraries"},
    {"/bin", BERTH_SYSDIR_BIND, RX, RX, BERTH_ATTEST_SYSTEM_RO, false,
     "programs; a link to usr/bin on merged-/usr hosts (the link is copied, Landlock then has no rule for "
     "it)"},
    {"/sbin", BERTH_SYSDIR_BIND, RX, RX, BERTH_ATTEST_SYSTEM_RO, false, "programs (a link on merged /usr)"},
    {"/lib", BERTH_SYSDIR_BIND, RX, RX, BERTH_ATTEST_SYSTEM_RO, false,
     "the dynamic loader and libraries (a link on merged /usr)"},
    {"/lib64", BERTH_SYSDIR_BIND, RX, RX, BERTH_ATTEST_SYSTEM_RO, true, "the x86-64 and arm64 loader's path"},
    {"/lib32", BERTH_SYSDIR_BIND, RX, RX, BERTH_ATTEST_SYSTEM_RO, true, "32-bit libraries (multilib hosts)"},
    /* Mounted and granted since the first runtime, never attested: the
     * policy's system_ro predates it (issue 14; docs/security.md). */
    {"/libx32", BERTH_SYSDIR_BIND, RX, RX, BERTH_ATTEST_NONE, true,
     "x32-ABI libraries (multilib hosts); mounted and granted like /lib32 but not in the attested system_ro"},
    {"/etc", BERTH_SYSDIR_BIND, RO, RO, BERTH_ATTEST_SYSTEM_RO, false,
     "configuration: read, never executed (no program lives there)"},
    /* The kernel's interfaces, instances of the sandbox's own. */
    {"/sys", BERTH_SYSDIR_OWN, RO, RO, BERTH_ATTEST_NONE, false,
     "a read-only sysfs of the sandbox's network namespace (the host's, read-only and noexec, without one)"},
    {"/proc", BERTH_SYSDIR_OWN, BERTH_LL_PROC, BERTH_LL_PROC, BERTH_ATTEST_NONE, false,
     "the sandbox's pid namespace; /proc/self is written to (oom_score_adj, attr); the kernel knobs are "
     "bound read-only (proc_ro in mounts.c)"},
    {"/dev", BERTH_SYSDIR_OWN, BERTH_LL_DEV, BERTH_LL_DEV, BERTH_ATTEST_NONE, false,
     "a read-only tmpfs with null, zero, full, random, urandom, tty bound from the host and a devpts of its "
     "own"},
    /* Scratch space: private tmpfs, gone with the sandbox. */
    {"/tmp", BERTH_SYSDIR_TMPFS, RW, NONE, BERTH_ATTEST_PRIVATE_TMPFS, false,
     "scratch space; an app reaches it only through a filesystem grant"},
    {"/home", BERTH_SYSDIR_HOME, NONE, NONE, BERTH_ATTEST_PRIVATE_TMPFS, false,
     "the home tmpfs, attested by its parent's name: the runtime mounts it at /home/USER ($HOME) and grants "
     "that path (an app's only through a grant)"},
    {"/dev/shm", BERTH_SYSDIR_TMPFS, RW, NONE, BERTH_ATTEST_PRIVATE_TMPFS, false,
     "POSIX shared memory; an app has only /dev's rights there (no file can be made)"},
};

const size_t berth_n_sysdirs = sizeof berth_sysdirs / sizeof berth_sysdirs[0];
