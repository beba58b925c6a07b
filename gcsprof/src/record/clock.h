/* SPDX-License-Identifier: MIT */
/*
 * gcsprof record: the one clock. CLOCK_MONOTONIC, which is also the clock
 * of the perf method's record time stamps (use_clockid), so that both
 * methods' sample times count from the same start.
 */
#ifndef GCSPROF_RECORD_CLOCK_H
#define GCSPROF_RECORD_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t rec_now_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
