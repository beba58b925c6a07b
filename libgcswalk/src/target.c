// SPDX-License-Identifier: MIT
/* What every target has: threads, mappings and their accessors. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct gcswalk_target *gw_target_alloc(const struct gw_backend *be)
{
	struct gcswalk_target *t = calloc(1, sizeof(*t));

	if (t) {
		t->be = be;
		t->vdso.status = 1;
	}
	return t;
}

/* ARR (N items, *CAP allocated) with room for one more, doubling (a core
 * with a million notes must not cost a million copies); NULL when out of
 * memory, ARR then unchanged. */
void *gw_grow(void *arr, size_t n, size_t *cap, size_t size)
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

	n = gw_grow(t->threads, t->nthreads, &t->threads_cap, sizeof(*n));
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

	n = gw_grow(t->maps, t->nmaps, &t->maps_cap, sizeof(*n));
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
	free(t->regions);
	for (i = 0; i < t->nbuild_ids; i++) {
		free(t->build_ids[i].path);
		free(t->build_ids[i].id);
	}
	free(t->build_ids);
	free(t->vdso.symbols);
	free(t->vdso.names);
	free(t->vdso.build_id);
	for (i = 0; i < t->nretired; i++)
		free(t->retired[i]);
	free(t->retired);
	free(t->errmsg);
	free(t);
}

int gw_target_retire(struct gcswalk_target *t, char *s)
{
	char **n;

	if (!s)
		return GCSWALK_OK;
	n = gw_grow(t->retired, t->nretired, &t->retired_cap, sizeof(*n));
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
	if (t->leaf_sym_free)
		t->leaf_sym_free(t->leaf_sym);
	t->leaf_sym = NULL;
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

int gw_sized_out(void *dst, size_t dst_size, const void *src, size_t src_size, size_t min_size)
{
	if (!dst || dst_size < min_size || src_size < sizeof(size_t))
		return GCSWALK_E_INVALID;
	memcpy((unsigned char *)dst + sizeof(size_t), (const unsigned char *)src + sizeof(size_t),
	       (dst_size < src_size ? dst_size : src_size) - sizeof(size_t));
	if (dst_size > src_size)
		memset((unsigned char *)dst + src_size, 0, dst_size - src_size);
	return GCSWALK_OK;
}
