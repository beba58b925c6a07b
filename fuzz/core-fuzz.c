// SPDX-License-Identifier: MIT
/*
 * Harness: the core file reader, on whole files. The input is a core
 * file; gcswalk_target_open_core() reads its ELF headers, notes
 * (NT_PRSTATUS, NT_ARM_GCS, NT_PRPSINFO, NT_FILE) and PT_LOAD table, and
 * whatever opens is put through fz_exercise_target(). Seeds: guest-made
 * cores (fuzz/make-seeds) and their shrunk copies in fuzz/corpus/core.
 */
#include <stdlib.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fz_input_path(data, size);
	gcswalk_target *t;
	char *errmsg;
	int ret;

	if (!path)
		return 0;
	ret = gcswalk_target_open_core(&t, path, &errmsg);
	if (ret == GCSWALK_OK) {
		if (errmsg || gcswalk_target_thread_count(t) == 0)
			abort();        /* success has no message and at least one thread */
		fz_exercise_target(t);
		gcswalk_target_close(t);
	} else {
		if (ret > 0 || t)
			abort();        /* a failure is an error and leaves no target */
		(void)gcswalk_strerror(ret);
		free(errmsg);
	}
	return 0;
}
