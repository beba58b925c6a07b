// SPDX-License-Identifier: MIT
/*
 * The walk engine: a thread's chain from its GCS (PC, optionally LR, then
 * the entries from GCSPR up, read in one go through the back end), or from
 * a fallback unwinder; handed out frame by frame.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct gcswalk_walk {
	struct gcswalk_frame *frames;
	size_t nframes;
	size_t next;
	int final;                 /* GCSWALK_END or GCSWALK_CUT */
};

#define DEFAULT_MAX_FRAMES 1024
/* No walk reads more than this many frames, whatever the caller asks. */
#define LIMIT_MAX_FRAMES (1u << 22)

static int check_gcs(struct gcswalk_target *t, struct gw_thread *th)
{
	if (!th->regs.valid)
		return gw_fail(t, GCSWALK_E_NO_REGISTERS, "thread %d: no registers", (int)th->tid);
	if (!th->have_gcs)
		return gw_fail(t, t->be->no_gcs_status, "thread %d: no %s state (%s)",
			       (int)th->tid, t->arch->note_name, t->be->no_gcs_detail);
	if (!(th->gcs.features_enabled & GCSWALK_GCS_ENABLE))
		return gw_fail(t, GCSWALK_E_GCS_DISABLED, "thread %d: %s is off (features %#llx)",
			       (int)th->tid, t->arch->feature,
			       (unsigned long long)th->gcs.features_enabled);
	return GCSWALK_OK;
}

/* How far above the stack pointer a signal frame is looked for. */
#define SIGNAL_FRAME_WINDOW (128 * 1024)

/* The stack from SP up (as much as is readable, at most the window), for
 * finding signal frames; NULL if none of it is. */
static unsigned char *read_stack(struct gcswalk_target *t, struct gw_thread *th, size_t *len)
{
	unsigned char *buf = malloc(SIGNAL_FRAME_WINDOW);
	size_t got = 0;

	*len = 0;
	if (!buf)
		return NULL;
	(void)t->be->read(t, th->regs.sp, buf, SIGNAL_FRAME_WINDOW, &got);
	gw_clear_error(t);
	if (got == 0) {
		free(buf);
		return NULL;
	}
	*len = got;
	return buf;
}

/*
 * Whether the LR goes after the PC: asked for (GCSWALK_WALK_LR) and not
 * the newest entry; or, where callees push (riscv), when it is the caller
 * of a function that pushed nothing (leaf.c), with S's CFI.
 */
static int want_lr(struct gcswalk_target *t, struct gw_thread *th, unsigned flags,
		   gcswalk_symbolizer *s, const uint64_t *entries, size_t got)
{
	uint64_t newest = got ? entries[0] : 0;

	if (!th->regs.lr || (got && newest == th->regs.lr))
		return 0;
	if (flags & GCSWALK_WALK_LR)
		return 1;
	return t->arch->callee_pushes && gw_leaf_caller(t, s, th, newest);
}

/*
 * The entries from GCSPR up, read in one go, bounded by the GCS region and
 * by MAX + 1 (one more entry than frames fit, to know whether the chain
 * was cut): *ENTRIES (to free) with room for *N, of which *GOT could be
 * read. Room for the walk's frames too, in W.
 */
static int read_entries(struct gcswalk_target *t, struct gw_thread *th, size_t max,
			struct gcswalk_walk *w, uint64_t **entries, size_t *n, size_t *got)
{
	const struct gw_arch *arch = t->arch;
	uint64_t lo, hi, gcspr = th->gcs.gcspr;
	int ret = check_gcs(t, th);

	if (ret < 0)
		return ret;
	if (gcspr % arch->entry_size)
		return gw_fail(t, GCSWALK_E_GCS_NOT_DUMPED, "thread %d: misaligned GCSPR %#llx",
			       (int)th->tid, (unsigned long long)gcspr);
	ret = t->be->region(t, gcspr, &lo, &hi);
	if (ret < 0)
		return ret;
	*n = (size_t)((hi - gcspr) / arch->entry_size);
	if (*n > max + 1)
		*n = max + 1;
	/* Frames by the depth, not by the limit: the PC, the LR, and at most
	 * two per entry (a signal cap and the PC it interrupted). */
	w->frames = calloc(max + 1 < 2 * *n + 3 ? max + 1 : 2 * *n + 3, sizeof(*w->frames));
	*entries = calloc(*n ? *n : 1, sizeof(**entries));
	if (!w->frames || !*entries)
		return gw_fail(t, GCSWALK_E_NOMEM, "out of memory for %zu GCS entries", *n);
	ret = t->be->read(t, gcspr, *entries, *n * sizeof(**entries), got);
	/* An unreadable slot ends the chain (an UNREADABLE frame); any other
	 * failure (the thread gone, a caller's callback error) is the walk's. */
	if (ret < 0 && ret != GCSWALK_E_IO)
		return ret;
	*got /= sizeof(**entries);
	return GCSWALK_OK;
}

/* The stack around the thread's SP, read at the first signal cap, for
 * the interrupted PCs. */
struct stack_copy {
	unsigned char *bytes;
	size_t len;
	int read;
};

/* The PC a signal delivered at SLOT (a signal cap) interrupted, from the
 * kernel's signal frame on the stack: 1 and *F, or 0 when not found. */
static int interrupted_pc(struct gcswalk_target *t, struct gw_thread *th, uint64_t slot,
			  struct stack_copy *stack, struct gcswalk_frame *f)
{
	uint64_t pc, at;

	if (!stack->read) {
		stack->bytes = read_stack(t, th, &stack->len);
		stack->read = 1;
	}
	if (!stack->bytes ||
	    t->arch->signal_pc(stack->bytes, stack->len, th->regs.sp, slot, &pc, &at) != 0)
		return 0;
	*f = (struct gcswalk_frame){ GCSWALK_FRAME_INTERRUPTED_PC, GCSWALK_SOURCE_GCS, pc, at };
	return 1;
}

/* The frames of ENTRIES (N wanted, GOT read) into W after the K it has,
 * up to MAX: the walk's frame count, W->final set. */
static size_t entry_frames(struct gcswalk_target *t, struct gw_thread *th, const uint64_t *entries,
			   size_t n, size_t got, struct gcswalk_walk *w, size_t k, size_t max)
{
	struct stack_copy stack = { NULL, 0, 0 };
	size_t i;

	w->final = GCSWALK_END;
	for (i = 0; i < n; i++) {
		uint64_t slot = th->gcs.gcspr + i * t->arch->entry_size;
		enum gcswalk_frame_kind kind;
		struct gcswalk_frame f;

		if (k == max) {
			w->final = GCSWALK_CUT;
			break;
		}
		if (i >= got) {
			w->frames[k++] = (struct gcswalk_frame){ GCSWALK_FRAME_UNREADABLE,
								 GCSWALK_SOURCE_GCS, 0, slot };
			break;
		}
		kind = t->arch->classify(entries[i], slot);
		w->frames[k++] = (struct gcswalk_frame){ kind, GCSWALK_SOURCE_GCS,
							 kind == GCSWALK_FRAME_TERMINATOR ? 0 : entries[i],
							 slot };
		if (kind == GCSWALK_FRAME_TERMINATOR)
			break;
		if (kind == GCSWALK_FRAME_SIGNAL_CAP && interrupted_pc(t, th, slot, &stack, &f)) {
			if (k == max) {
				w->final = GCSWALK_CUT;
				break;
			}
			w->frames[k++] = f;
		}
	}
	free(stack.bytes);
	/* Entries that run out at the end of the region with no terminator
	 * (a stack from map_shadow_stack without a marker; every riscv
	 * shadow stack) end the chain: the frame limit check above fires
	 * first when it is longer. */
	return k;
}

/*
 * The GCS walk: PC, maybe LR (want_lr), then the entries from GCSPR up, read in
 * one go bounded by the GCS region and by the frame limit.
 */
static int walk_gcs(struct gcswalk_target *t, struct gw_thread *th, unsigned flags,
		    gcswalk_symbolizer *sym, struct gcswalk_walk *w, size_t max)
{
	uint64_t *entries = NULL;
	size_t n = 0, got = 0, k = 0;
	int ret = read_entries(t, th, max, w, &entries, &n, &got);

	if (ret < 0) {
		free(entries);
		return ret;
	}
	w->frames[k++] = (struct gcswalk_frame){ GCSWALK_FRAME_PC, GCSWALK_SOURCE_GCS,
						 th->regs.pc, 0 };
	if (want_lr(t, th, flags, sym, entries, got))
		w->frames[k++] = (struct gcswalk_frame){ GCSWALK_FRAME_LR, GCSWALK_SOURCE_GCS,
							 th->regs.lr, 0 };
	k = entry_frames(t, th, entries, n, got, w, k, max);
	free(entries);
	if (k > max) {
		k = max;
		w->final = GCSWALK_CUT;
	}
	w->nframes = k;
	gw_mark_sigreturn(w->frames, k);
	return GCSWALK_OK;
}

int gcswalk_walk_begin(gcswalk_walk **out, gcswalk_target *t, size_t index,
		       const struct gcswalk_walk_options *opts)
{
	struct gcswalk_walk_options def = GCSWALK_WALK_OPTIONS_INIT;
	struct gcswalk_walk *w;
	struct gw_thread *th;
	size_t max, count = 0;
	int ret;

	if (out)
		*out = NULL;
	if (!out || !t)
		return GCSWALK_E_INVALID;
	gw_clear_error(t);
	/* The caller's options over the defaults: an older caller's smaller
	 * struct leaves the later fields at their defaults. */
	if (opts && gw_sized_in(&def, sizeof(def), opts, opts->size, GW_WALK_OPTIONS_SIZE_1_0) < 0)
		return gw_fail(t, GCSWALK_E_INVALID, "walk options of %zu bytes (this library: %zu)",
			       opts->size, sizeof(def));
	opts = &def;
	if (index >= t->nthreads)
		return gw_fail(t, GCSWALK_E_INVALID, "no thread index %zu (%zu threads)", index,
			       t->nthreads);
	if (!t->arch)
		return gw_fail(t, GCSWALK_E_UNSUPPORTED, "no architecture back end");
	max = opts->max_frames ? opts->max_frames : DEFAULT_MAX_FRAMES;
	if (max > LIMIT_MAX_FRAMES)
		max = LIMIT_MAX_FRAMES;
	th = &t->threads[index];
	if (t->be->check_thread) {
		ret = t->be->check_thread(t, th);
		if (ret < 0)
			return ret;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return gw_fail(t, GCSWALK_E_NOMEM, "out of memory");
	switch (opts->method) {
	case GCSWALK_METHOD_GCS:
		ret = walk_gcs(t, th, opts->flags, opts->symbolizer, w, max);
		break;
	case GCSWALK_METHOD_FP:
	case GCSWALK_METHOD_CFI:
		if (!th->regs.valid) {
			ret = gw_fail(t, GCSWALK_E_NO_REGISTERS, "thread %d: no registers",
				      (int)th->tid);
			break;
		}
		w->frames = calloc(max, sizeof(*w->frames));
		if (!w->frames) {
			ret = gw_fail(t, GCSWALK_E_NOMEM, "out of memory");
			break;
		}
		if (opts->method == GCSWALK_METHOD_FP)
			ret = gw_unwind_fp(t, th, w->frames, max, &count);
		else
			ret = gw_unwind_cfi(t, opts->symbolizer, th, w->frames, max, &count);
		if (ret >= 0) {
			w->nframes = count;
			w->final = ret;
			ret = GCSWALK_OK;
		}
		break;
	default:
		ret = gw_fail(t, GCSWALK_E_INVALID, "unknown walk method %d", (int)opts->method);
	}
	if (ret < 0) {
		gcswalk_walk_free(w);
		return ret;
	}
	*out = w;
	return GCSWALK_OK;
}

int gcswalk_walk_next(gcswalk_walk *w, struct gcswalk_frame *frame)
{
	if (!w || !frame)
		return GCSWALK_E_INVALID;
	if (w->next >= w->nframes)
		return w->final;
	*frame = w->frames[w->next++];
	return GCSWALK_OK;
}

void gcswalk_walk_free(gcswalk_walk *w)
{
	if (!w)
		return;
	free(w->frames);
	free(w);
}
