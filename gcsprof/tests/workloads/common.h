/* SPDX-License-Identifier: MIT */
/* Helpers for gcsprof's test workloads. */
#ifndef GCSPROF_WORKLOAD_H
#define GCSPROF_WORKLOAD_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))
/* After a call, so that it is not a tail call and its frame stays on the
 * GCS. */
#define KEEP_FRAME() __asm__ volatile("" ::: "memory")

static inline double seconds_now(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		abort();
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Burn about UNITS units of CPU: a loop the compiler cannot remove. */
static inline uint64_t spin(unsigned units)
{
	volatile uint64_t x = 1;
	unsigned i;

	for (i = 0; i < units * 20000u; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

/* Burn CPU for SECONDS of wall-clock time. Always inlined, so that the
 * caller stays the innermost function of every chain. */
static inline __attribute__((always_inline)) uint64_t spin_for(double seconds)
{
	double end = seconds_now() + seconds;
	uint64_t x = 0;

	while (seconds_now() < end)
		x += spin(1);
	return x;
}

#endif
