// SPDX-License-Identifier: MIT
/*
 * Corrupt: d overwrites the saved frame pointer in c's frame record with
 * the address of a fake record chain in the heap, then abort()s. c's
 * record still holds the right return address, but its link points down,
 * out of the stack, while the GCS holds older frames. inspect: corruption
 * in c's frame, a frame-pointer chain pointing into the heap.
 */
#include <stdint.h>
#include <stdlib.h>

#include "../corpus.h"

NOINLINE void d(void)
{
	uint64_t *own = __builtin_frame_address(0);   /* d's record */
	uint64_t *c_rec = (uint64_t *)own[0];
	uint64_t *fake = aligned_alloc(16, 64);

	if (!fake)
		exit(2);
	fake[0] = (uint64_t)(fake + 2);   /* a chain of two fake records */
	fake[1] = 0x0000aaaa00001230ULL;
	fake[2] = 0;
	fake[3] = 0x0000aaaa00004560ULL;
	c_rec[0] = (uint64_t)fake;
	abort();
}

NOINLINE void c(void) { d(); KEEP(); }
NOINLINE void b(void) { c(); KEEP(); }
NOINLINE void a(void) { b(); KEEP(); }

int main(void)
{
	a();
	return 1;
}
