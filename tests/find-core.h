/* SPDX-License-Identifier: MIT */
/*
 * The core file a crashed child left in a folder, for the C tests that make
 * one (the shell tests have first_core in tap.sh). The kernel's default
 * core_pattern names it "core", or "core.PID" with core_uses_pid.
 */
#ifndef GCSPROF_FIND_CORE_H
#define GCSPROF_FIND_CORE_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* DIR/core or DIR/core.*, malloc'd (the caller frees it), or NULL when
 * there is none or memory ran out. */
static inline char *find_core(const char *dir)
{
	struct dirent *de;
	char *path = NULL;
	DIR *d = opendir(dir);

	if (!d)
		return NULL;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, "core") == 0 || strncmp(de->d_name, "core.", 5) == 0) {
			if (asprintf(&path, "%s/%s", dir, de->d_name) < 0)
				path = NULL;
			break;
		}
	}
	closedir(d);
	return path;
}

#endif
