// SPDX-License-Identifier: MIT
/* The storm programs' perf sampler: see sampler.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sampler.h"

int storm_sampler_open(struct storm_sampler *s, struct perf_event_attr *attr, pid_t pid, int cpu,
		       unsigned int data_pages)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	memset(s, 0, sizeof(*s));
	s->base = MAP_FAILED;
	s->sample_type = attr->sample_type;
	s->regs_mask = attr->sample_regs_user;
	s->fd = (int)syscall(SYS_perf_event_open, attr, pid, cpu, -1, 0UL);
	if (s->fd < 0)
		return -1;
	if (data_pages == 0)
		return 0;
	s->data_size = data_pages * page;
	s->base = mmap(NULL, s->data_size + page, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
	if (s->base == MAP_FAILED) {
		int e = errno;

		close(s->fd);
		s->fd = -1;
		errno = e;
		return -1;
	}
	return 0;
}

int storm_sampler_open_cpus(struct storm_sampler *s, int max, struct perf_event_attr *attr,
			    unsigned int data_pages)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int n = 0;

	for (int cpu = 0; cpu < cpus && n < max; cpu++) {
		if (storm_sampler_open(&s[n], attr, -1, cpu, data_pages) != 0) {
			int e = errno;

			while (n > 0)
				storm_sampler_close(&s[--n]);
			errno = e;
			return -1;
		}
		n++;
	}
	return n;
}

/* Parse one PERF_RECORD_SAMPLE (REC, LEN bytes) and hand it on. */
static void parse_sample(struct storm_sampler *s, const uint64_t *rec, size_t len,
			 storm_sample_fn *fn, void *arg)
{
	const uint64_t *p = rec + 1, *end = rec + len / 8;
	struct storm_sample smp;

	memset(&smp, 0, sizeof(smp));
	if (s->sample_type & PERF_SAMPLE_IP)
		smp.ip = p < end ? *p++ : 0;
	if ((s->sample_type & PERF_SAMPLE_TID) && p < end) {
		smp.pid = (uint32_t)*p;
		smp.tid = (uint32_t)(*p++ >> 32);
	}
	if (!(s->sample_type & PERF_SAMPLE_CALLCHAIN) || p >= end)
		return;
	smp.nr = *p++;
	if (smp.nr > (uint64_t)(end - p))
		return;
	for (uint64_t i = 0; i < smp.nr; i++) {
		if (p[i] == PERF_CONTEXT_USER) {
			smp.user = p + i + 1;
			smp.nr_user = smp.nr - i - 1;
		}
	}
	p += smp.nr;
	if ((s->sample_type & PERF_SAMPLE_REGS_USER) && p < end && *p++ != PERF_SAMPLE_REGS_ABI_NONE &&
	    (s->regs_mask >> STORM_PERF_REG_GCSPR & 1)) {
		uint64_t below = s->regs_mask & ((1ULL << STORM_PERF_REG_GCSPR) - 1);
		const uint64_t *r = p + __builtin_popcountll(below);

		if (r < end) {
			smp.has_gcspr = 1;
			smp.gcspr = *r;
		}
	}
	s->samples++;
	fn(arg, &smp);
}

void storm_sampler_drain(struct storm_sampler *s, storm_sample_fn *fn, void *arg)
{
	struct perf_event_mmap_page *meta = s->base;
	const char *data;
	uint64_t head, tail;
	/* One record is at most 64 KiB: its size is 16 bits. */
	static __thread uint64_t copy[65536 / 8];

	if (s->base == MAP_FAILED)
		return;
	data = (const char *)s->base + (size_t)sysconf(_SC_PAGESIZE);
	head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	tail = meta->data_tail;
	while (tail + sizeof(struct perf_event_header) <= head) {
		size_t off = tail % s->data_size;
		struct perf_event_header h;
		size_t first;

		first = s->data_size - off < sizeof(h) ? s->data_size - off : sizeof(h);
		memcpy(&h, data + off, first);
		memcpy((char *)&h + first, data, sizeof(h) - first);
		if (h.size < sizeof(h) || tail + h.size > head)
			break;
		first = s->data_size - off < h.size ? s->data_size - off : h.size;
		memcpy(copy, data + off, first);
		memcpy((char *)copy + first, data, h.size - first);
		if (h.type == PERF_RECORD_SAMPLE)
			parse_sample(s, copy, h.size, fn, arg);
		else if (h.type == PERF_RECORD_LOST && h.size >= 24)
			s->lost += copy[2];
		tail += h.size;
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}

void storm_sampler_close(struct storm_sampler *s)
{
	if (s->base != MAP_FAILED)
		munmap(s->base, s->data_size + (size_t)sysconf(_SC_PAGESIZE));
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	s->base = MAP_FAILED;
}

static long read_long(const char *path)
{
	long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

long storm_max_sample_rate(void)
{
	return read_long("/proc/sys/kernel/perf_event_max_sample_rate");
}

int storm_gcs_callchains(void)
{
	return read_long("/proc/sys/kernel/perf_callchain_gcs") == 1;
}
