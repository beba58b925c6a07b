// SPDX-License-Identifier: MIT
/*
 * Harness: gcsprof's build-id reader (gp_read_build_id), which record,
 * report and archive run on files from outside: the mapped files of a
 * profile found under a sysroot or in a bundle from another machine. The
 * input is an ELF file. Seeds: arm64 programs of the guest build, shrunk
 * (fuzz/seeds.py), and small ELF files in fuzz/corpus/build-id.
 */
#include <stdlib.h>

#include "fuzz.h"
#include "gcsprof.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fz_input_path(data, size);
	unsigned char *id;
	size_t n;

	if (!path)
		return 0;
	n = gp_read_build_id(path, &id);
	if ((n == 0) != (id == NULL) || n > 64)
		abort();        /* a size with an id, at most a note's 64 bytes */
	free(id);
	return 0;
}
