// SPDX-License-Identifier: MIT
/*
 * Harness: walks, stack checks and signal-frame finding over hostile
 * memory. libgcswalk has no caller-supplied memory source yet, so the
 * memory comes through a core built around the input: a thread whose
 * registers and GCS state are the input's header, a stack segment and a
 * GCS segment with the input's bytes. The header puts the stack pointer
 * and GCSPR_EL0 where the segments are, so nearly every input is walked
 * (a fuzzed whole core rarely gets that far).
 * Input: memory-input.h (the source harness reads the same).
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "memory-input.h"

#define NT_PRSTATUS_ 1
#define NT_PRPSINFO_ 3
#define NT_ARM_GCS_ 0x410
#define PRSTATUS_SIZE 392     /* arm64 struct elf_prstatus */
#define PRSTATUS_PID 32
#define PRSTATUS_REGS 112     /* x0..x30, sp, pc, pstate */
#define PRPSINFO_SIZE 136

static void put64(unsigned char *p, size_t off, uint64_t v)
{
	memcpy(p + off, &v, sizeof(v));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char prstatus[PRSTATUS_SIZE] = { 0 }, prpsinfo[PRPSINFO_SIZE] = { 0 };
	unsigned char *notes = NULL, *core = NULL;
	uint64_t gcs_note[3];
	struct fz_memory m;
	const struct fz_memory_header *h = &m.h;
	size_t nlen = 0, clen;
	int32_t pid = 4242;
	gcswalk_target *t;
	const char *path;
	char *errmsg;
	unsigned i;

	if (fz_memory_parse(data, size, &m) != 0)
		return 0;

	memcpy(prstatus + PRSTATUS_PID, &pid, sizeof(pid));
	for (i = 0; i < 4; i++)
		put64(prstatus, PRSTATUS_REGS + 8 * i, h->x[i]);
	put64(prstatus, PRSTATUS_REGS + 8 * 29, h->fp);
	put64(prstatus, PRSTATUS_REGS + 8 * 30, h->lr);
	put64(prstatus, PRSTATUS_REGS + 8 * 31, h->sp);
	put64(prstatus, PRSTATUS_REGS + 8 * 32, h->pc);
	memcpy(prpsinfo + 24, &pid, sizeof(pid));
	memcpy(prpsinfo + 40, "fuzzed", 6);
	gcs_note[0] = h->features;
	gcs_note[1] = 0;
	gcs_note[2] = h->gcspr;
	if (fz_note_append(&notes, &nlen, "CORE", NT_PRSTATUS_, prstatus, sizeof(prstatus)) ||
	    fz_note_append(&notes, &nlen, "CORE", NT_PRPSINFO_, prpsinfo, sizeof(prpsinfo)) ||
	    fz_note_append(&notes, &nlen, "LINUX", NT_ARM_GCS_, gcs_note, sizeof(gcs_note)) ||
	    fz_core_image(notes, nlen, m.segs, 2, &core, &clen))
		goto out;
	path = fz_input_path(core, clen);
	if (!path)
		goto out;
	if (gcswalk_target_open_core(&t, path, &errmsg) == GCSWALK_OK) {
		fz_exercise_target(t);
		gcswalk_target_close(t);
	} else {
		/* The harness's core is well-formed: it must open, unless a
		 * segment wraps past the top of the address space. */
		if (!fz_segment_wraps(&m.segs[0]) && !fz_segment_wraps(&m.segs[1]))
			abort();
		free(errmsg);
	}
out:
	free(notes);
	free(core);
	return 0;
}
