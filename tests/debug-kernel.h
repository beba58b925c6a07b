/* SPDX-License-Identifier: MIT */
/*
 * Whether a guest test runs on the debug kernel (KASAN, lockdep, kmemleak),
 * where everything is 10-15 times slower: vm/run --kernel debug puts
 * gcsprof.debug_kernel=1 on the kernel's command line, which the kernel
 * ignores. The shell tests have on_debug_kernel in tap.sh.
 */
#ifndef GCSPROF_DEBUG_KERNEL_H
#define GCSPROF_DEBUG_KERNEL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline int on_debug_kernel(void)
{
	char *line = NULL;
	size_t cap = 0;
	int yes = 0;
	FILE *f = fopen("/proc/cmdline", "r");

	if (!f)
		return 0;
	if (getline(&line, &cap, f) > 0)
		yes = strstr(line, "gcsprof.debug_kernel=1") != NULL;
	free(line);
	fclose(f);
	return yes;
}

#endif
