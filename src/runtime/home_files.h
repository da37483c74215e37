/* SPDX-License-Identifier: MIT */
/*
 * home_files.h - files written into a sandbox's fresh $HOME before its
 * command starts (agent profiles' seeded home, docs/sessions.md).
 */
#ifndef BERTH_RUNTIME_HOME_FILES_H
#define BERTH_RUNTIME_HOME_FILES_H

#include <stddef.h>

struct berth_home_file {
	const char *path; /* relative to $HOME, no `.`/`..`/empty components */
	const char *data;
	size_t len;
};

#endif
