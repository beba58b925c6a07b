// SPDX-License-Identifier: MIT
/*
 * Harness: a target whose registers and memory the caller supplies
 * (gcswalk_target_open_source), with a read callback that serves the
 * input as memory: walks, the stack check and the signal-frame search
 * over hostile memory, through the library's short-read handling (the
 * callback stops at the first byte outside the two regions, and every
 * third call of an input fails outright, as a debugger's read may).
 * Input: memory-input.h, the core-memory harness's format and corpus.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "memory-input.h"

struct memory {
	const struct fz_memory *m;
	unsigned calls;
};

/* Bytes of segment S readable from ADDRESS on, at most SIZE. */
static size_t in_segment(const struct fz_segment *s, uint64_t address, size_t size)
{
	uint64_t left;

	if (address < s->vaddr || address - s->vaddr >= s->size)
		return 0;
	left = s->size - (address - s->vaddr);
	return left < size ? (size_t)left : size;
}

static int read_memory(void *data, uint64_t address, void *buf, size_t size, size_t *got)
{
	struct memory *mem = data;
	size_t done = 0;

	*got = 0;
	if (++mem->calls % 3 == 0)
		return GCSWALK_E_IO;
	while (done < size) {
		uint64_t at = address + done;
		size_t i, n = 0;

		if (at < address)
			break;          /* wrapped past the top */
		for (i = 0; i < 2 && n == 0; i++) {
			n = in_segment(&mem->m->segs[i], at, size - done);
			if (n)
				memcpy((unsigned char *)buf + done,
				       (const unsigned char *)mem->m->segs[i].data +
					       (at - mem->m->segs[i].vaddr), n);
		}
		if (n == 0)
			break;
		done += n;
	}
	*got = done;
	return done == size ? GCSWALK_OK : GCSWALK_E_IO;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_memory m;
	struct memory mem = { &m, 0 };
	struct gcswalk_source_thread th = { .size = sizeof(th) };
	struct gcswalk_source src = { .size = sizeof(src) };
	gcswalk_target *t;
	char *errmsg;

	if (fz_memory_parse(data, size, &m) != 0)
		return 0;
	th.tid = 4242;
	th.name = "fuzzed";
	th.have_registers = 1;
	th.pc = m.h.pc;
	th.lr = m.h.lr;
	th.sp = m.h.sp;
	th.fp = m.h.fp;
	/* Bit 63 of features off: no GCS state (a CPU without GCS). */
	th.have_gcs = !(m.h.features >> 63);
	th.gcs.features_enabled = m.h.features & ~(1ULL << 63);
	th.gcs.gcspr = m.h.gcspr;
	src.pid = 4242;
	src.read = read_memory;
	src.data = &mem;
	src.threads = &th;
	src.thread_count = 1;
	if (gcswalk_target_open_source(&t, &src, &errmsg) != GCSWALK_OK)
		abort();        /* a valid source must open */
	fz_exercise_target(t);
	gcswalk_target_close(t);
	return 0;
}
