/* SPDX-License-Identifier: MIT */
/*
 * The sampling storm's tracer: it re-points one thread's GCSPR_EL0 through
 * ptrace while the thread runs, and reads NT_ARM_GCS in a loop (tracer.c).
 */
#ifndef GCSPROF_STORM_TRACER_H
#define GCSPROF_STORM_TRACER_H

#include <stdint.h>
#include <sys/types.h>

#include "storm.h"

/* Shared (MAP_SHARED) between the storm and its tracer child. */
struct storm_tracer {
	pid_t victim;         /* the thread to re-point */
	uint64_t spare[2];    /* two GCSs from map_shadow_stack, no token */
	uint64_t spare_size;
	int stop;             /* set by the storm: detach and exit */
	uint64_t repoints;
	uint64_t regset_reads;
	char error[160];      /* why the tracer gave up, if it did */
};

/* The tracer child's life; it exits 0 after a clean detach. */
void storm_tracer_run(struct storm_tracer *c) __attribute__((noreturn));

#endif
