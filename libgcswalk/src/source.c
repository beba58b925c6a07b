// SPDX-License-Identifier: MIT
/*
 * Targets whose registers and memory the caller supplies: a debugger that
 * owns ptrace and reads memory its own way, or a test with hand-made
 * stacks. Threads and mappings are copied at open; memory is read through
 * the caller's callback for as long as the target lives.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define GW_EM_AARCH64 183
/* Granule of the retry after a short read (the smallest arm64 page). */
#define RETRY_PAGE 4096u

struct source_state {
	gcswalk_read_fn read;
	void *data;
};

/* One call of the callback, its answer checked: *GOT never exceeds LEN. */
static int call_read(struct gcswalk_target *t, uint64_t addr, void *buf, size_t len, size_t *got)
{
	const struct source_state *s = t->priv;
	int ret;

	*got = 0;
	ret = s->read(s->data, addr, buf, len, got);
	if (*got > len || (ret == GCSWALK_OK && *got != len))
		return gw_fail(t, GCSWALK_E_INVALID,
			       "the read callback reported %zu of %zu bytes at %#llx", *got, len,
			       (unsigned long long)addr);
	if (ret > 0 || (ret < 0 && ret < GW_E_LOWEST))
		return gw_fail(t, GCSWALK_E_INVALID, "the read callback returned status %d", ret);
	if (ret < 0 && ret != GCSWALK_E_IO)
		return gw_fail(t, ret, "the read callback failed at %#llx: %s",
			       (unsigned long long)addr, gcswalk_strerror(ret));
	return ret;
}

/*
 * A callback may fail a whole request for one unreadable byte (a debugger's
 * memory read often does): after a short read, the rest is asked for again
 * a page at a time, so that *GOT ends where the memory really does (to the
 * page).
 */
static int source_read(struct gcswalk_target *t, uint64_t addr, void *buf, size_t len,
		       size_t *got)
{
	size_t done = 0, piece, n;
	int ret;

	ret = call_read(t, addr, buf, len, &done);
	while (ret == GCSWALK_E_IO && done < len) {
		uint64_t at = addr + done;

		piece = RETRY_PAGE - (size_t)(at % RETRY_PAGE);
		if (piece > len - done)
			piece = len - done;
		ret = call_read(t, at, (char *)buf + done, piece, &n);
		done += n;
		if (ret == GCSWALK_OK && done < len)
			ret = GCSWALK_E_IO;     /* go on with the next page */
		else if (ret == GCSWALK_E_IO || n < piece)
			break;
	}
	*got = done;
	if (ret == GCSWALK_E_IO || (ret == GCSWALK_OK && done < len))
		return gw_fail(t, GCSWALK_E_IO, "memory at %#llx is not readable",
			       (unsigned long long)(addr + done));
	return ret;
}

/* No GCS mapping is known: the walk reads as far as it may (the frame
 * limit) and stops at the terminator or the first unreadable slot. */
static int source_region(struct gcswalk_target *t, uint64_t addr, uint64_t *lo, uint64_t *hi)
{
	(void)t;
	*lo = addr;
	*hi = UINT64_MAX - UINT64_MAX % 8;
	return GCSWALK_OK;
}

static void source_close(struct gcswalk_target *t)
{
	free(t->priv);
	t->priv = NULL;
}

static const struct gw_backend source_backend = {
	.name = "source",
	.read = source_read,
	.region = source_region,
	.check_thread = NULL,
	.close = source_close,
	.no_gcs_status = GCSWALK_E_NO_GCS_CPU,
	.no_gcs_detail = "the source gave no GCS state",
};

static int add_thread(struct gcswalk_target *t, const struct gcswalk_source_thread *st, size_t i)
{
	struct gw_thread *th;

	if (st->tid <= 0)
		return gw_fail(t, GCSWALK_E_INVALID, "source thread %zu: tid %d", i, st->tid);
	th = gw_target_add_thread(t, st->tid);
	if (!th)
		return gw_fail(t, GCSWALK_E_NOMEM, "out of memory");
	if (st->name) {
		th->name = strdup(st->name);
		if (!th->name)
			return gw_fail(t, GCSWALK_E_NOMEM, "out of memory");
	}
	if (st->have_registers) {
		th->regs.valid = 1;
		th->regs.pc = st->pc;
		th->regs.lr = st->lr;
		th->regs.sp = st->sp;
		th->regs.fp = st->fp;
		/* What the CFI unwinder gets: the caller gave no other
		 * general registers. */
		t->arch->basic_dwarf(&th->regs);
	}
	th->have_gcs = st->have_gcs != 0;
	if (th->have_gcs)
		th->gcs = st->gcs;
	return GCSWALK_OK;
}

static int load_source(struct gcswalk_target *t, const struct gcswalk_source *src)
{
	const unsigned char *items = (const unsigned char *)src->threads;
	struct source_state *s;
	size_t stride, i;
	int ret;

	if (!src->read)
		return gw_fail(t, GCSWALK_E_INVALID, "the source has no read callback");
	if ((!src->threads && src->thread_count) || (!src->mappings && src->mapping_count))
		return gw_fail(t, GCSWALK_E_INVALID, "the source's threads or mappings are NULL");
	s = calloc(1, sizeof(*s));
	if (!s)
		return gw_fail(t, GCSWALK_E_NOMEM, "out of memory");
	s->read = src->read;
	s->data = src->data;
	t->priv = s;
	t->pid = src->pid;
	t->arch = gw_arch_for_machine(src->machine ? src->machine : GW_EM_AARCH64);
	if (!t->arch)
		return gw_fail(t, GCSWALK_E_WRONG_ARCH, "source: machine %u has no back end",
			       src->machine);
	stride = src->thread_count ? src->threads[0].size : 0;
	if (src->thread_count && stride > SIZE_MAX / src->thread_count)
		return gw_fail(t, GCSWALK_E_INVALID, "source threads: absurd size %zu", stride);
	for (i = 0; i < src->thread_count; i++) {
		const struct gcswalk_source_thread *item =
			(const struct gcswalk_source_thread *)(const void *)(items + i * stride);
		struct gcswalk_source_thread st;

		memset(&st, 0, sizeof(st));
		if (item->size != stride ||
		    gw_sized_in(&st, sizeof(st), item, item->size,
				GW_SOURCE_THREAD_SIZE_1_0) != GCSWALK_OK)
			return gw_fail(t, GCSWALK_E_INVALID,
				       "source thread %zu: size %zu (stride %zu, this library's %zu)",
				       i, item->size, stride, sizeof(st));
		ret = add_thread(t, &st, i);
		if (ret < 0)
			return ret;
	}
	for (i = 0; i < src->mapping_count; i++) {
		const struct gcswalk_mapping *m = &src->mappings[i];

		if (!m->path || m->end <= m->start)
			return gw_fail(t, GCSWALK_E_INVALID, "mapping %zu: no path or empty range", i);
		ret = gw_target_add_mapping(t, m->start, m->end, m->offset, m->path,
					    strlen(m->path));
		if (ret < 0)
			return gw_fail(t, ret, "out of memory");
	}
	return GCSWALK_OK;
}

int gcswalk_target_open_source(gcswalk_target **out, const struct gcswalk_source *source,
			       char **errmsg)
{
	struct gcswalk_source src;
	struct gcswalk_target *t;

	if (errmsg)
		*errmsg = NULL;
	if (out)
		*out = NULL;
	memset(&src, 0, sizeof(src));
	if (!out || !source || gw_sized_in(&src, sizeof(src), source, source->size,
					    GW_SOURCE_SIZE_1_0) != GCSWALK_OK)
		return GCSWALK_E_INVALID;
	t = gw_target_alloc(&source_backend);
	if (!t)
		return GCSWALK_E_NOMEM;
	return gw_target_opened(t, load_source(t, &src), out, errmsg);
}
