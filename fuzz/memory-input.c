// SPDX-License-Identifier: MIT
/* The memory harnesses' input: a thread's header, its stack, its GCS. */
#include <string.h>

#include "memory-input.h"

int fz_memory_parse(const uint8_t *data, size_t size, struct fz_memory *m)
{
	size_t rest, stack_len;

	if (size < sizeof(m->h))
		return -1;
	memcpy(&m->h, data, sizeof(m->h));
	rest = size - sizeof(m->h);
	stack_len = (size_t)(m->h.stack_len % (rest + 1));
	m->segs[0] = (struct fz_segment){ m->h.sp & ~0xfffULL, data + sizeof(m->h), stack_len };
	m->segs[1] = (struct fz_segment){ m->h.gcspr & ~0xfffULL, data + sizeof(m->h) + stack_len,
					  rest - stack_len };
	return 0;
}

int fz_segment_wraps(const struct fz_segment *s)
{
	return s->vaddr + s->size < s->vaddr;
}
