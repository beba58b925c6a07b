// SPDX-License-Identifier: MIT
/*
 * Fallback unwinders for threads without GCS, and for comparing a GCS
 * chain with what the stack itself says (corruption reports):
 *  - frame records: the x29 chain, each record {previous x29, return};
 *  - CFI: libdwfl's unwinder over the symboliser's modules, reading the
 *    target's registers and memory through this library's back end.
 */
#define _GNU_SOURCE
#include <elfutils/libdwfl.h>
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
		uint64_t rec[2];
		size_t got;

		if (t->be->read(t, fp, rec, sizeof(rec), &got) != GCSWALK_OK)
			break;
		rec[1] = t->arch->strip_pac(rec[1]);
		if (rec[1] == 0)
			break;
		if (k == max) {
			*count = k;
			return GCSWALK_CUT;
		}
		frames[k++] = (struct gcswalk_frame){ GCSWALK_FRAME_RETURN, GCSWALK_SOURCE_FP,
						      rec[1], fp };
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

/* Thread arguments are pointers to our struct gw_thread. */
static pid_t cfi_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct gcswalk_target *t = arg;
	struct gw_thread *prev = *thread_argp;
	size_t i = prev ? (size_t)(prev - t->threads) + 1 : 0;

	(void)dwfl;
	if (i >= t->nthreads)
		return 0;
	*thread_argp = &t->threads[i];
	return t->threads[i].tid;
}

static bool cfi_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	struct gcswalk_target *t = arg;
	size_t i;

	(void)dwfl;
	for (i = 0; i < t->nthreads; i++) {
		if (t->threads[i].tid == tid) {
			*thread_argp = &t->threads[i];
			return true;
		}
	}
	return false;
}

static bool cfi_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct gcswalk_target *t = arg;
	uint64_t v;
	size_t got;

	(void)dwfl;
	if (t->be->read(t, addr, &v, sizeof(v), &got) != GCSWALK_OK)
		return false;
	*result = v;
	return true;
}

static bool cfi_set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	struct gw_thread *th = thread_arg;

	if (!th || !th->regs.valid)
		return false;
	if (!dwfl_thread_state_registers(thread, 0, th->regs.ndwarf, th->regs.dwarf))
		return false;
	dwfl_thread_state_register_pc(thread, th->regs.pc);
	return true;
}

static const Dwfl_Thread_Callbacks cfi_callbacks = {
	.next_thread = cfi_next_thread,
	.get_thread = cfi_get_thread,
	.memory_read = cfi_memory_read,
	.set_initial_registers = cfi_set_initial_registers,
	.detach = NULL,
	.thread_detach = NULL,
};

static int cfi_frame(Dwfl_Frame *state, void *arg)
{
	struct cfi_walk *w = arg;
	Dwarf_Addr pc;

	if (!dwfl_frame_pc(state, &pc, NULL))
		return DWARF_CB_ABORT;
	if (w->count == w->max) {
		w->cut = 1;
		return DWARF_CB_ABORT;
	}
	w->frames[w->count] = (struct gcswalk_frame){
		w->count == 0 ? GCSWALK_FRAME_PC : GCSWALK_FRAME_RETURN, GCSWALK_SOURCE_CFI, pc, 0 };
	w->count++;
	return DWARF_CB_OK;
}

int gw_unwind_cfi(struct gcswalk_target *t, gcswalk_symbolizer *s, struct gw_thread *th,
		  struct gcswalk_frame *frames, size_t max, size_t *count)
{
	struct cfi_walk w = { frames, max, 0, 0 };
	struct gcswalk_target *owner;
	int *attached;
	Dwfl *dwfl;

	*count = 0;
	if (!s)
		return gw_fail(t, GCSWALK_E_INVALID, "the CFI unwinder needs a symboliser");
	dwfl = gw_symbolizer_dwfl(s, &owner, &attached);
	if (owner != t)
		return gw_fail(t, GCSWALK_E_INVALID, "the symboliser belongs to another target");
	if (!*attached) {
		if (!dwfl_attach_state(dwfl, NULL, t->pid ? t->pid : th->tid, &cfi_callbacks, t))
			return gw_fail(t, GCSWALK_E_DWFL, "dwfl_attach_state: %s", dwfl_errmsg(-1));
		*attached = 1;
	}
	/* libdwfl reports the end of some stacks as an error (its own
	 * documentation says to treat that as the end): the frames found
	 * until then are the result. */
	(void)dwfl_getthread_frames(dwfl, th->tid, cfi_frame, &w);
	*count = w.count;
	if (w.count == 0)
		return gw_fail(t, GCSWALK_E_DWFL, "CFI unwind of thread %d: %s", (int)th->tid,
			       dwfl_errmsg(-1));
	return w.cut ? GCSWALK_CUT : GCSWALK_END;
}
