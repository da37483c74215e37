/* SPDX-License-Identifier: MIT */
/*
 * aptsrc.h - which of the machine's apt sources are Debian archive mirrors
 * that `berth vm install` may download the pinned kernel from (docs/vm.md,
 * "How install works").  Only the mirrors' URIs are taken: berth writes its
 * own sources.list for the pinned suite, signed by Debian's archive key.
 */
#ifndef BERTH_VM_APTSRC_H
#define BERTH_VM_APTSRC_H

#include <stdbool.h>
#include <stddef.h>

#include "../util/error.h"

/* The two formats of sources(5). */
enum berth_apt_format {
	BERTH_APT_ONE_LINE, /* sources.list, *.list: `deb [opts] URI SUITE COMP...` */
	BERTH_APT_DEB822,   /* *.sources: paragraphs of `Field: value` */
};

/*
 * berth_apt_debian_uris - append to the NULL-terminated vector *@uris (*@n
 * strings; src/util/buf.h berth_strv_*) the URI of each entry of the
 * sources(5) text @text (@fmt) that is a Debian archive mirror:
 *   - its Types include `deb` and it is not `Enabled: no`;
 *   - one of its suites is a Debian distribution by name (`bookworm`,
 *     `trixie`, `stable`, `sid`, ...): `-security`, `-updates`, `-backports`
 *     and other suffixed suites are other archives, a third party's suite
 *     (`nodistro`, `cloud-sdk-bookworm`) is not Debian's;
 *   - its Signed-By, if any, is a keyring of Debian's archive
 *     (/usr/share/keyrings/debian-archive-*.gpg);
 *   - its Architectures, if given, include amd64;
 *   - the URI is one apt can fetch from (`http://`, `https://`, `file:`,
 *     `mirror+...`) and holds no `[`, `]` nor a control character.
 * A URI already in *@uris (equal but for a trailing `/`) is not added again.
 * Returns the number of URIs added (0 or more), or -1 with @err filled
 * (ENOMEM).  Pure apart from allocation.
 */
int berth_apt_debian_uris(const char *text, enum berth_apt_format fmt, char ***uris, size_t *n,
			  struct berth_error *err);

/*
 * berth_apt_debian_suite - whether @suite names a Debian distribution
 * (codename or alias) without a suffix.  Pure.
 */
bool berth_apt_debian_suite(const char *suite);

#endif
