/* SPDX-License-Identifier: MIT */
/*
 * A well-formed arm64 core file around fuzzed parts: the ELF header, one
 * PT_NOTE segment holding NOTES as they are (the fuzzer's bytes, not
 * notes built from fields), then PT_LOAD segments. For harnesses that
 * aim at what lies behind the ELF header.
 */
#ifndef GCSPROF_FUZZ_CORE_IMAGE_H
#define GCSPROF_FUZZ_CORE_IMAGE_H

#include <stddef.h>
#include <stdint.h>

struct fz_segment {
	uint64_t vaddr;
	const void *data;
	size_t size;
};

/* The core in a malloc'd buffer (*OUT, *LEN); 0, or -1 out of memory. */
int fz_core_image(const void *notes, size_t notes_size, const struct fz_segment *segs,
		  size_t nsegs, unsigned char **out, size_t *len);

/* Append one note (NAME, TYPE, DESC of SIZE bytes) to a growing note
 * segment *BUF of *LEN bytes; 0, or -1 out of memory. */
int fz_note_append(unsigned char **buf, size_t *len, const char *name, uint32_t type,
		   const void *desc, size_t size);

#endif
