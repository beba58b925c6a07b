// SPDX-License-Identifier: MIT
/*
 * Fallback unwinders for threads without GCS, and for comparing a GCS
 * chain with what the stack itself says (corruption reports):
 *  - frame records: the frame pointer's chain (arm64's x29, riscv's s0),
 *    each record {previous frame pointer, return}, at the frame pointer
 *    plus the architecture's record_offset;
 *  - CFI: the symboliser's libdwfl unwinder over its modules (symbol.c
 *    owns the Dwfl and its thread state); this file only collects frames.
 */
#include <string.h>

#include "internal.h"

int gw_unwind_fp(struct gcswalk_target *t, struct gw_thread *th, struct gcswalk_frame *frames,
		 size_t max, size_t *count)
{
	uint64_t fp = th->regs.fp;
	size_t k = 0;

	*count = 0;
	if (max == 0)
		return GCSWALK_CUT;
	frames[k++] = (struct gcswalk_frame){ GCSWALK_FRAME_PC, GCSWALK_SOURCE_FP, th->regs.pc, 0 };
	while (fp != 0 && fp % 16 == 0) {
		uint64_t rec[2], at = fp + (uint64_t)(int64_t)t->arch->record_offset;
		size_t got;

		if (t->be->read(t, at, rec, sizeof(rec), &got) != GCSWALK_OK)
			break;
		rec[1] = t->arch->strip_pac(rec[1]);
		if (rec[1] == 0)
			break;
		if (k == max) {
			*count = k;
			return GCSWALK_CUT;
		}
		frames[k++] = (struct gcswalk_frame){ GCSWALK_FRAME_RETURN, GCSWALK_SOURCE_FP,
						      rec[1], at };
		/* Stacks grow down: an older record is at a higher address. */
		if (rec[0] <= fp)
			break;
		fp = rec[0];
	}
	gw_clear_error(t);
	*count = k;
	return GCSWALK_END;
}

struct cfi_walk {
	struct gcswalk_frame *frames;
	size_t max, count;
	int cut;
};

/* One frame from the symboliser's unwinder: 0 goes on, 1 stops. */
static int cfi_frame(void *arg, uint64_t pc)
{
	struct cfi_walk *w = arg;

	if (w->count == w->max) {
		w->cut = 1;
		return 1;
	}
	w->frames[w->count] = (struct gcswalk_frame){
		w->count == 0 ? GCSWALK_FRAME_PC : GCSWALK_FRAME_RETURN, GCSWALK_SOURCE_CFI, pc, 0 };
	w->count++;
	return 0;
}

int gw_unwind_cfi(struct gcswalk_target *t, gcswalk_symbolizer *s, struct gw_thread *th,
		  struct gcswalk_frame *frames, size_t max, size_t *count)
{
	struct cfi_walk w = { frames, max, 0, 0 };
	int ret;

	*count = 0;
	if (!s)
		return gw_fail(t, GCSWALK_E_INVALID, "the CFI unwinder needs a symboliser");
	ret = gw_symbolizer_unwind(s, t, th, cfi_frame, &w);
	if (ret < 0)
		return ret;
	*count = w.count;
	return w.cut ? GCSWALK_CUT : GCSWALK_END;
}
