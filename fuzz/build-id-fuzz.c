// SPDX-License-Identifier: MIT
/*
 * Harness: libgcswalk's build-id reader (gcswalk_file_build_id), which
 * gcsprof record, report and archive run on files from outside: the mapped
 * files of a profile found under a sysroot or in a bundle from another
 * machine. The
 * input is an ELF file. Seeds: arm64 programs of the guest build, shrunk
 * (fuzz/seeds.py), and small ELF files in fuzz/corpus/build-id. The same
 * bytes also go to the reader of a mapped image's first page (the build-id
 * of a file a core maps but this machine lacks, from the core's memory).
 */
#include <stdlib.h>

#include "fuzz.h"

/* libgcswalk's hidden helper (src/internal.h), in the static library. */
int gw_image_build_id(const void *image, size_t len, unsigned char **id, size_t *size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fz_input_path(data, size);
	unsigned char *id = NULL;
	size_t n = 0;
	int ret;

	if (!path)
		return 0;
	ret = gcswalk_file_build_id(path, &id, &n);
	if (ret == GCSWALK_OK ? !id || n == 0 : id != NULL)
		abort();        /* an id with its size on success, none on failure */
	free(id);
	id = NULL;
	n = 0;
	ret = gw_image_build_id(data, size, &id, &n);
	if (ret == GCSWALK_OK ? !id || n == 0 || n > size : id != NULL)
		abort();
	free(id);
	return 0;
}
