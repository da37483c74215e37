/* SPDX-License-Identifier: MIT */
/*
 * caps.h - capabilities and securebits.  Sources: capabilities(7), prctl(2).
 */
#ifndef BERTH_CAPS_H
#define BERTH_CAPS_H

#include "../util/error.h"

/*
 * berth_caps_drop_all - empty the bounding set, lock the securebits
 * (NOROOT, NO_SETUID_FIXUP, KEEP_CAPS, NO_CAP_AMBIENT_RAISE, each locked),
 * clear the ambient set, then clear the effective, permitted and inheritable
 * sets.  Must run while CAP_SETPCAP is still effective.  Allocation-free.
 * Returns 0, or -1 with @err filled.
 */
int berth_caps_drop_all(struct berth_error *err);

/*
 * berth_caps_raise_effective - make every permitted capability effective
 * (after a setresuid(2) with PR_SET_KEEPCAPS).  Returns 0 or -1 with @err.
 */
int berth_caps_raise_effective(struct berth_error *err);

#endif
