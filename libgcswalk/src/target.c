// SPDX-License-Identifier: MIT
/* What every target has: threads, mappings, accessors; and the walk. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct gcswalk_target *gw_target_alloc(const struct gw_backend *be)
{
	struct gcswalk_target *t = calloc(1, sizeof(*t));

	if (t) {
		t->be = be;
		t->fd = -1;
	}
	return t;
}

/* ARR (N items, *CAP allocated) with room for one more, doubling (a core
 * with a million notes must not cost a million copies); NULL when out of
 * memory, ARR then unchanged. */
static void *grow(void *arr, size_t n, size_t *cap, size_t size)
{
	size_t ncap;
	void *p;

	if (n < *cap)
		return arr;
	ncap = *cap ? *cap * 2 : 8;
	if (ncap > SIZE_MAX / size)
		return NULL;
	p = realloc(arr, ncap * size);
	if (p)
		*cap = ncap;
	return p;
}

struct gw_thread *gw_target_add_thread(struct gcswalk_target *t, pid_t tid)
{
	struct gw_thread *n;

	n = grow(t->threads, t->nthreads, &t->threads_cap, sizeof(*n));
	if (!n)
		return NULL;
	t->threads = n;
	n = &t->threads[t->nthreads++];
	memset(n, 0, sizeof(*n));
	n->tid = tid;
	return n;
}

int gw_target_add_mapping(struct gcswalk_target *t, uint64_t start, uint64_t end,
			  uint64_t offset, const char *path, size_t path_len)
{
	struct gw_mapping *n;
	char *p;

	n = grow(t->maps, t->nmaps, &t->maps_cap, sizeof(*n));
	if (!n)
		return GCSWALK_E_NOMEM;
	t->maps = n;
	p = malloc(path_len + 1);
	if (!p)
		return GCSWALK_E_NOMEM;
	memcpy(p, path, path_len);
	p[path_len] = '\0';
	if (t->nmaps && start < t->maps[t->nmaps - 1].end)
		t->maps_unsorted = 1;
	n = &t->maps[t->nmaps++];
	n->start = start;
	n->end = end;
	n->offset = offset;
	n->path = p;
	return GCSWALK_OK;
}

void gw_target_free(struct gcswalk_target *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->nthreads; i++)
		free(t->threads[i].name);
	free(t->threads);
	for (i = 0; i < t->nmaps; i++)
		free(t->maps[i].path);
	free(t->maps);
	for (i = 0; i < t->nretired; i++)
		free(t->retired[i]);
	free(t->retired);
	free(t->segs);
	free(t->procname);
	free(t->errmsg);
	free(t);
}

int gw_target_retire(struct gcswalk_target *t, char *s)
{
	char **n;

	if (!s)
		return GCSWALK_OK;
	n = grow(t->retired, t->nretired, &t->retired_cap, sizeof(*n));
	if (!n)
		return GCSWALK_E_NOMEM; /* S leaks: the caller may still hold it */
	t->retired = n;
	t->retired[t->nretired++] = s;
	return GCSWALK_OK;
}

const struct gw_mapping *gw_target_find_mapping(const struct gcswalk_target *t, uint64_t addr)
{
	size_t lo = 0, hi = t->nmaps, i;

	if (t->maps_unsorted) {
		for (i = 0; i < t->nmaps; i++)
			if (addr >= t->maps[i].start && addr < t->maps[i].end)
				return &t->maps[i];
		return NULL;
	}
	/* Sorted and disjoint: the last mapping starting at or below ADDR. */
	while (lo < hi) {
		i = lo + (hi - lo) / 2;
		if (t->maps[i].start <= addr)
			lo = i + 1;
		else
			hi = i;
	}
	if (lo && addr < t->maps[lo - 1].end)
		return &t->maps[lo - 1];
	return NULL;
}

int gw_target_opened(struct gcswalk_target *t, int status, gcswalk_target **out, char **errmsg)
{
	if (status >= 0) {
		*out = t;
		return GCSWALK_OK;
	}
	if (errmsg) {
		*errmsg = t->errmsg;
		t->errmsg = NULL;
	}
	gcswalk_target_close(t);
	return status;
}

void gcswalk_target_close(gcswalk_target *t)
{
	if (!t)
		return;
	if (t->be && t->be->close)
		t->be->close(t);
	gw_target_free(t);
}

int gcswalk_target_pid(const gcswalk_target *t)
{
	return t ? (int)t->pid : -1;
}

size_t gcswalk_target_thread_count(const gcswalk_target *t)
{
	return t ? t->nthreads : 0;
}

int gcswalk_target_thread(const gcswalk_target *t, size_t index, struct gcswalk_thread_info *info)
{
	const struct gw_thread *th;

	if (!t || !info || index >= t->nthreads)
		return GCSWALK_E_INVALID;
	th = &t->threads[index];
	memset(info, 0, sizeof(*info));
	info->tid = th->tid;
	info->name = th->name;
	info->have_registers = th->regs.valid;
	info->pc = th->regs.pc;
	info->lr = th->regs.lr;
	info->sp = th->regs.sp;
	info->fp = th->regs.fp;
	info->have_gcs = th->have_gcs;
	info->gcs = th->gcs;
	return GCSWALK_OK;
}

int gcswalk_target_thread_index(const gcswalk_target *t, int tid)
{
	size_t i;

	if (!t)
		return GCSWALK_E_INVALID;
	for (i = 0; i < t->nthreads && i <= (size_t)INT32_MAX; i++)
		if (t->threads[i].tid == tid)
			return (int)i;
	return GCSWALK_E_INVALID;
}

size_t gcswalk_target_mapping_count(const gcswalk_target *t)
{
	return t ? t->nmaps : 0;
}

int gcswalk_target_mapping(const gcswalk_target *t, size_t index, struct gcswalk_mapping *m)
{
	if (!t || !m || index >= t->nmaps)
		return GCSWALK_E_INVALID;
	m->start = t->maps[index].start;
	m->end = t->maps[index].end;
	m->offset = t->maps[index].offset;
	m->path = t->maps[index].path;
	return GCSWALK_OK;
}

int gcswalk_target_mapping_find(const gcswalk_target *t, uint64_t address)
{
	const struct gw_mapping *m;

	if (!t)
		return GCSWALK_E_INVALID;
	m = gw_target_find_mapping(t, address);
	if (!m || m - t->maps > INT32_MAX)
		return GCSWALK_E_NO_SYMBOL;
	return (int)(m - t->maps);
}

int gcswalk_target_read(gcswalk_target *t, uint64_t address, void *buf, size_t size, size_t *got)
{
	size_t dummy;

	if (!t || (!buf && size))
		return GCSWALK_E_INVALID;
	gw_clear_error(t);
	return t->be->read(t, address, buf, size, got ? got : &dummy);
}

/* ---- Walks ---------------------------------------------------------- */

struct gcswalk_walk {
	struct gcswalk_frame *frames;
	size_t nframes;
	size_t next;
	int final;                 /* GCSWALK_END or GCSWALK_CUT */
};

#define DEFAULT_MAX_FRAMES 1024
/* No walk reads more than this many frames, whatever the caller asks. */
#define LIMIT_MAX_FRAMES (1u << 22)

void gw_mark_sigreturn(struct gcswalk_frame *f, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n; i++)
		if (f[i].kind == GCSWALK_FRAME_RETURN && f[i + 1].kind == GCSWALK_FRAME_SIGNAL_CAP)
			f[i].kind = GCSWALK_FRAME_SIGRETURN;
}

static int check_gcs(struct gcswalk_target *t, struct gw_thread *th)
{
	if (!th->regs.valid)
		return gw_fail(t, GCSWALK_E_NO_REGISTERS, "thread %d: no registers", (int)th->tid);
	if (!th->have_gcs)
		return gw_fail(t, t->be->no_gcs_status, "thread %d: no GCS state (%s)",
			       (int)th->tid, t->be->no_gcs_detail);
	if (!(th->gcs.features_enabled & GCSWALK_GCS_ENABLE))
		return gw_fail(t, GCSWALK_E_GCS_DISABLED, "thread %d: GCS is off (features %#llx)",
			       (int)th->tid, (unsigned long long)th->gcs.features_enabled);
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
 * The GCS walk: PC, optionally LR, then the entries from GCSPR up, read in
 * one go bounded by the GCS region and by the frame limit.
 */
static int walk_gcs(struct gcswalk_target *t, struct gw_thread *th, unsigned flags,
		    struct gcswalk_walk *w, size_t max)
{
	const struct gw_arch *arch = t->arch;
	uint64_t lo, hi, gcspr = th->gcs.gcspr, *entries = NULL;
	size_t want, n, got = 0, i, k = 0, stack_len = 0;
	unsigned char *stack = NULL;
	int ret;

	ret = check_gcs(t, th);
	if (ret < 0)
		return ret;
	if (gcspr % arch->entry_size)
		return gw_fail(t, GCSWALK_E_GCS_NOT_DUMPED, "thread %d: misaligned GCSPR %#llx",
			       (int)th->tid, (unsigned long long)gcspr);
	ret = t->be->region(t, gcspr, &lo, &hi);
	if (ret < 0)
		return ret;
	/* One more entry than frames fit, to know whether the chain was cut. */
	n = (size_t)((hi - gcspr) / arch->entry_size);
	want = max + 1;
	if (n > want)
		n = want;
	w->frames = calloc(max + 1, sizeof(*w->frames));
	entries = calloc(n ? n : 1, sizeof(*entries));
	if (!w->frames || !entries) {
		free(entries);
		return gw_fail(t, GCSWALK_E_NOMEM, "out of memory for %zu GCS entries", n);
	}
	ret = t->be->read(t, gcspr, entries, n * sizeof(*entries), &got);
	/* An unreadable slot ends the chain (an UNREADABLE frame); any other
	 * failure (the thread gone, a caller's callback error) is the walk's. */
	if (ret < 0 && ret != GCSWALK_E_IO) {
		free(entries);
		return ret;
	}
	got /= sizeof(*entries);

	w->frames[k++] = (struct gcswalk_frame){ GCSWALK_FRAME_PC, GCSWALK_SOURCE_GCS,
						 th->regs.pc, 0 };
	if ((flags & GCSWALK_WALK_LR) && th->regs.lr && (got == 0 || entries[0] != th->regs.lr))
		w->frames[k++] = (struct gcswalk_frame){ GCSWALK_FRAME_LR, GCSWALK_SOURCE_GCS,
							 th->regs.lr, 0 };
	w->final = GCSWALK_END;
	for (i = 0; i < n; i++) {
		uint64_t slot = gcspr + i * arch->entry_size;
		enum gcswalk_frame_kind kind;

		if (k == max) {
			w->final = GCSWALK_CUT;
			break;
		}
		if (i >= got) {
			w->frames[k++] = (struct gcswalk_frame){ GCSWALK_FRAME_UNREADABLE,
								 GCSWALK_SOURCE_GCS, 0, slot };
			break;
		}
		kind = arch->classify(entries[i], slot);
		w->frames[k++] = (struct gcswalk_frame){ kind, GCSWALK_SOURCE_GCS,
							 kind == GCSWALK_FRAME_TERMINATOR ? 0 : entries[i],
							 slot };
		if (kind == GCSWALK_FRAME_TERMINATOR)
			break;
		if (kind == GCSWALK_FRAME_SIGNAL_CAP) {
			uint64_t pc, at;

			if (!stack)
				stack = read_stack(t, th, &stack_len);
			if (stack && arch->signal_pc(stack, stack_len, th->regs.sp, slot, &pc, &at) == 0) {
				if (k == max) {
					w->final = GCSWALK_CUT;
					break;
				}
				w->frames[k++] = (struct gcswalk_frame){ GCSWALK_FRAME_INTERRUPTED_PC,
									 GCSWALK_SOURCE_GCS, pc, at };
			}
		}
	}
	free(stack);
	/* Entries that run out at the end of the region with no terminator
	 * (a stack from map_shadow_stack without a marker) end the chain:
	 * the frame limit check above fires first when it is longer. */
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
	if (!opts)
		opts = &def;
	if (opts->version != GCSWALK_WALK_OPTIONS_VERSION)
		return gw_fail(t, GCSWALK_E_INVALID, "walk options version %u, expected %u",
			       opts->version, GCSWALK_WALK_OPTIONS_VERSION);
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
		ret = walk_gcs(t, th, opts->flags, w, max);
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

int gw_sized_in(void *dst, size_t dst_size, const void *src, size_t src_size, size_t min_size)
{
	const unsigned char *tail = (const unsigned char *)src + dst_size;
	size_t i;

	if (!src || src_size < min_size)
		return GCSWALK_E_INVALID;
	for (i = dst_size; i < src_size; i++)
		if (tail[i - dst_size])
			return GCSWALK_E_INVALID;
	memcpy(dst, src, src_size < dst_size ? src_size : dst_size);
	return GCSWALK_OK;
}
