// SPDX-License-Identifier: MIT
/*
 * Harness: the core reader's note parsing (NT_PRSTATUS, NT_ARM_GCS,
 * NT_PRPSINFO, NT_FILE, and notes it must skip). The input is the
 * content of a PT_NOTE segment; the harness wraps it in a well-formed
 * arm64 core (ELF header, the PT_NOTE, and one PT_LOAD that maps the same
 * bytes at NOTES_VADDR, so that registers and GCS pointers the fuzzer
 * aims there find memory), so that every input reaches the note parser
 * instead of being refused at the ELF header. Seeds: the note segments of
 * guest-made cores (fuzz/seeds.py).
 */
#include <stdlib.h>

#include "core-image.h"
#include "fuzz.h"

#define NOTES_VADDR 0x10000000ULL

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_segment seg = { NOTES_VADDR, data, size };
	unsigned char *core;
	size_t len;
	gcswalk_target *t;
	const char *path;
	char *errmsg;
	int ret;

	if (fz_core_image(data, size, &seg, 1, &core, &len) != 0)
		return 0;
	path = fz_input_path(core, len);
	free(core);
	if (!path)
		return 0;
	ret = gcswalk_target_open_core(&t, path, &errmsg);
	if (ret == GCSWALK_OK) {
		fz_exercise_target(t);
		gcswalk_target_close(t);
	} else {
		free(errmsg);
	}
	return 0;
}
