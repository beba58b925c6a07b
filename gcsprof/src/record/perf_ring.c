// SPDX-License-Identifier: MIT
/*
 * gcsprof record, perf method: reading the rings, with the documented
 * head/tail protocol (data_head read with acquire, data_tail written with
 * release once the records are copied out). Each round copies out what
 * every ring holds, sorts it by time (the rings are per CPU, and a
 * thread's records may be in several) and hands it to perf_records.c;
 * with --defer the records are held over rounds and handed on at the end,
 * as perf record leaves its work to the end: the command, which shares
 * the CPUs with gcsprof, is then not slowed by its work a sample.
 */
#include <stdlib.h>
#include <string.h>

#include "gcsprof.h"
#include "perf.h"

/* What --defer holds at most: past it the records are handled at once,
 * so that a long recording's memory stays bounded (at 499 samples a
 * second, minutes of shallow chains, about 30 s of 2,000-frame ones). */
#define DEFER_MAX_BYTES (256u << 20)

static void ring_copy(const struct perf_ring *rg, uint64_t pos, void *dst, size_t n)
{
	size_t at = (size_t)(pos & (rg->size - 1)), first = rg->size - at;

	if (first > n)
		first = n;
	memcpy(dst, rg->data + at, first);
	memcpy((unsigned char *)dst + first, rg->data, n - first);
}

/* Does RG hold a quarter of its size, where the kernel wakes us? With
 * --defer a ring is left alone below that: the records wait in it as
 * well as in our memory, and copying them out sooner would only take
 * CPU time (page faults as the batch grows) from the command. */
static int ring_quarter_full(const struct perf_ring *rg)
{
	uint64_t head = __atomic_load_n(&rg->meta->data_head, __ATOMIC_ACQUIRE);

	return head - rg->meta->data_tail >= rg->size / 4;
}

/* Room in the batch for a record of SIZE bytes and its reference. */
static int batch_reserve(struct perf_state *ps, size_t size)
{
	unsigned char *b = gp_grow(ps->batch, &ps->batch_cap, ps->batch_len + size, 1);
	struct perf_ref *ref = gp_grow(ps->refs, &ps->refs_cap, ps->nrefs + 1, sizeof(*ref));

	if (b)
		ps->batch = b;
	if (ref)
		ps->refs = ref;
	return b && ref ? 0 : -1;
}

/* Copy the records RG holds into the batch, and give the space back. */
static int ring_read(struct perf_state *ps, struct perf_ring *rg)
{
	uint64_t head = __atomic_load_n(&rg->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = rg->meta->data_tail;

	while (head - tail >= sizeof(struct perf_event_header)) {
		struct perf_event_header h;
		uint64_t t;

		ring_copy(rg, tail, &h, sizeof(h));
		if (h.size < sizeof(h) || h.size % 8 || h.size > head - tail) {
			tail = head;      /* not a record: drop what is left */
			break;
		}
		if (batch_reserve(ps, h.size) != 0)
			return gp_error(GP_EXIT_SYSTEM, "out of memory");
		ring_copy(rg, tail, ps->batch + ps->batch_len, h.size);
		t = perf_record_time((const struct perf_event_header *)(ps->batch + ps->batch_len));
		if (t)
			rg->last_time = t;
		ps->refs[ps->nrefs++] = (struct perf_ref){ rg->last_time, ps->seq++, ps->batch_len,
							   h.size };
		ps->batch_len += h.size;
		ps->bytes += h.size;
		ps->held_samples += h.type == PERF_RECORD_SAMPLE;
		tail += h.size;
	}
	__atomic_store_n(&rg->meta->data_tail, tail, __ATOMIC_RELEASE);
	return 0;
}

static int ref_cmp(const void *a, const void *b)
{
	const struct perf_ref *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Are the records of the round in time order already? With one ring (one
 * CPU) they nearly always are, and a pass is cheaper than a sort. */
static int in_order(const struct perf_ref *refs, size_t n)
{
	size_t i;

	for (i = 1; i < n; i++)
		if (refs[i].time < refs[i - 1].time)
			return 0;
	return 1;
}

int perf_drain(struct recording *rec, int final)
{
	struct perf_state *ps = perf_state(rec);
	int hold = !final && rec->o->defer, ret = 0;
	size_t i;

	for (i = 0; i < ps->nrings && !ret; i++)
		if (ps->rings[i].fd >= 0 && (!hold || ring_quarter_full(&ps->rings[i])))
			ret = ring_read(ps, &ps->rings[i]);
	if (!ret && hold && ps->batch_len < DEFER_MAX_BYTES)
		return 0;
	/* Past the bound, the other rings' records too: another CPU's
	 * earlier fork or mmap must be handled before the samples after it. */
	for (i = 0; i < ps->nrings && !ret && hold; i++)
		if (ps->rings[i].fd >= 0)
			ret = ring_read(ps, &ps->rings[i]);
	/* Equal times stay in the rings' order either way: seq breaks ties. */
	if (!in_order(ps->refs, ps->nrefs))
		qsort(ps->refs, ps->nrefs, sizeof(*ps->refs), ref_cmp);
	for (i = 0; i < ps->nrefs && !ret && !rec->out.failed; i++)
		ret = perf_handle_record(rec, (const struct perf_event_header *)(ps->batch +
										ps->refs[i].off));
	ps->batch_len = 0;
	ps->nrefs = 0;
	ps->held_samples = 0;
	return ret;
}
