// SPDX-License-Identifier: MIT
/*
 * Harness: `gcsprof inspect CORE`, the post-mortem report, on a fuzzed
 * core: libgcswalk's reader and walks as gcsprof drives them (every frame,
 * however deep), the core's fatal signal as libgcswalk reads it, the stack check and
 * its corruption report, written to standard output (here /dev/null).
 * The corpus is the core harness's (fuzz/corpus/core).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "gcsprof.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int quiet;
	const char *path = fz_input_path(data, size);
	char *argv[2];
	void *opts;

	/* The report goes to stdout: away with it, once. */
	if (!quiet) {
		if (!freopen("/dev/null", "w", stdout))
			abort();
		quiet = 1;
	}
	if (!path)
		return 0;
	opts = calloc(1, gp_cmd_inspect.opts_size);
	argv[0] = strdup(path);
	argv[1] = NULL;
	if (opts && argv[0]) {
		if (gp_cmd_inspect.init)
			gp_cmd_inspect.init(opts);
		(void)gp_cmd_inspect.run(opts, 1, argv);
	}
	free(argv[0]);
	free(opts);
	return 0;
}
