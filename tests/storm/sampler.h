/* SPDX-License-Identifier: MIT */
/*
 * A perf_event_open sampler with call chains for the storm programs: open
 * an event, map its ring buffer, and hand each sample's user call chain to
 * a callback (records are read with the documented head/tail protocol;
 * records that wrap are copied out first; lost records are counted).
 */
#ifndef GCSPROF_STORM_SAMPLER_H
#define GCSPROF_STORM_SAMPLER_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* GCSPR_EL0 as a sample's user register (the series' patch 37). */
#define STORM_PERF_REG_GCSPR 47

struct storm_sample {
	uint32_t pid, tid;
	uint64_t ip;
	const uint64_t *user; /* the user part of the chain: PC first */
	uint64_t nr_user;
	uint64_t nr;          /* the whole chain, context markers included */
	int has_gcspr;
	uint64_t gcspr;
};

typedef void storm_sample_fn(void *arg, const struct storm_sample *s);

struct storm_sampler {
	int fd;
	void *base;
	size_t data_size;
	uint64_t sample_type;
	uint64_t regs_mask;
	uint64_t lost;    /* PERF_RECORD_LOST: samples the buffer had no room for */
	uint64_t samples;
};

/*
 * Open ATTR (sample_type holds IP, TID and CALLCHAIN, REGS_USER allowed)
 * for PID on CPU, with a ring buffer of DATA_PAGES pages (a power of 2),
 * or none if 0. 0, or -1 with errno set.
 */
int storm_sampler_open(struct storm_sampler *s, struct perf_event_attr *attr, pid_t pid, int cpu,
		       unsigned int data_pages);

/*
 * ATTR on every online CPU, for every task (perf refuses to map the ring
 * buffer of an inherited per-task event): into S[0..MAX), each with
 * DATA_PAGES pages. The number opened, or -1 with errno set.
 */
int storm_sampler_open_cpus(struct storm_sampler *s, int max, struct perf_event_attr *attr,
			    unsigned int data_pages);

/* Read every record now in the buffer; FN gets each sample. */
void storm_sampler_drain(struct storm_sampler *s, storm_sample_fn *fn, void *arg);

void storm_sampler_close(struct storm_sampler *s);

/* The highest sampling rate the kernel allows (perf_event_max_sample_rate). */
long storm_max_sample_rate(void);

/* Does the kernel take user call chains from the GCS (the series)? */
int storm_gcs_callchains(void);

#endif
