// SPDX-License-Identifier: MIT
/*
 * Corrupt: d overwrites the saved return address in b's frame record, two
 * records up (a stray store, as a bad index would make), then abort()s
 * before anything returns through it. The records below and above match
 * the GCS. inspect: corruption in b's frame, whose record's return
 * address is not the one the GCS holds.
 */
#include <stdint.h>
#include <stdlib.h>

#include "../corpus.h"

NOINLINE void d(void)
{
	uint64_t *own = __builtin_frame_address(0);   /* d's record */
	uint64_t *c_rec = (uint64_t *)own[0];
	uint64_t *b_rec = (uint64_t *)c_rec[0];

	b_rec[1] = 0x0000dead0000bee0ULL;
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
