/* SPDX-License-Identifier: MIT */
/*
 * The input of the harnesses that fuzz memory (core-memory, source): one
 * thread's registers and GCS state as a header, then its stack and its
 * GCS. Little-endian: struct fz_memory_header, then STACK_LEN (the
 * header's value modulo what is left) bytes of stack mapped at the page of
 * sp, then the rest as the GCS, mapped at the page of gcspr.
 */
#ifndef GCSPROF_FUZZ_MEMORY_INPUT_H
#define GCSPROF_FUZZ_MEMORY_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "core-image.h"

struct fz_memory_header {
	uint64_t pc, lr, sp, fp, gcspr, features, stack_len;
	uint64_t x[4];            /* x0..x3, for the CFI unwinder to see */
};

struct fz_memory {
	struct fz_memory_header h;
	struct fz_segment segs[2]; /* the stack, the GCS */
};

/* Split DATA; -1 if it is too short for the header. */
int fz_memory_parse(const uint8_t *data, size_t size, struct fz_memory *m);

/* Whether a segment wraps past the top of the address space. */
int fz_segment_wraps(const struct fz_segment *s);

#endif
