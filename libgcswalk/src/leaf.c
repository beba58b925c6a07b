// SPDX-License-Identifier: MIT
/*
 * The caller of a function that pushed nothing. On riscv the callee's
 * prologue pushes its return address onto the shadow stack (sspush ra):
 * while the PC is in a function that does not (a leaf built without frame
 * pointers, code built without -fcf-protection, a prologue before its
 * sspush), that function's caller is only in ra, and a walk that took the
 * shadow stack alone would drop it. But ra is also what a function's
 * last call left there, stale, once the function has saved its own.
 *
 * The CFI of the PC's function says which: ra holds the caller while no
 * rule saves it, and a value pointing back into the PC's own function (a
 * call it made has returned, in an epilogue) never is. The module comes
 * from the caller's symboliser, or from one of the target's own, made on
 * the first need and again after a new memory map.
 */
#include "internal.h"

static gcswalk_symbolizer *own_symbolizer(struct gcswalk_target *t)
{
	if (t->leaf_sym && t->leaf_sym_generation == t->maps_generation)
		return t->leaf_sym;
	gcswalk_symbolizer_free(t->leaf_sym);
	t->leaf_sym = NULL;
	if (gcswalk_symbolizer_new(&t->leaf_sym, t, NULL) != GCSWALK_OK)
		return NULL;
	t->leaf_sym_generation = t->maps_generation;
	t->leaf_sym_free = gcswalk_symbolizer_free;
	return t->leaf_sym;
}

int gcswalk_symbolizer_leaf_caller(gcswalk_symbolizer *s, uint64_t pc, uint64_t ra)
{
	uint64_t lo = 0, hi = 0;
	int live;

	if (!s || !ra)
		return GCSWALK_E_INVALID;
	live = gw_symbolizer_ra_live(s, pc, &lo, &hi);
	if (live < 0)
		return GCSWALK_E_NO_SYMBOL;
	/* A return address belongs to the instruction before it. */
	return live && !(ra - 1 >= lo && ra - 1 < hi);
}

int gw_leaf_caller(struct gcswalk_target *t, gcswalk_symbolizer *s, const struct gw_thread *th,
		   uint64_t newest)
{
	uint64_t ra = th->regs.lr;

	if (!ra || ra == newest)
		return 0;
	if (!s)
		s = own_symbolizer(t);
	return s && gcswalk_symbolizer_leaf_caller(s, th->regs.pc, ra) == 1;
}
