// SPDX-License-Identifier: MIT
/*
 * Spends its time reading the clock: main -> read_clocks ->
 * clock_gettime -> __kernel_clock_gettime, the last in the vDSO, which
 * has no file on disk. Most samples land in the vDSO, so a test of how it
 * is named does not depend on the luck of a few samples.
 * Usage: gcsprof-clock [SECONDS] (default 2).
 */
#include <stdio.h>

#include "common.h"

volatile uint64_t sink;

NOINLINE unsigned long read_clocks(double seconds)
{
	double end = seconds_now() + seconds;
	unsigned long reads = 0;
	struct timespec ts;

	while (seconds_now() < end) {
		int i;

		for (i = 0; i < 1000; i++) {
			if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
				abort();
			sink += (uint64_t)ts.tv_nsec;
		}
		reads += 1000;
	}
	KEEP_FRAME();
	return reads;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 2.0;

	printf("clock: %lu reads\n", read_clocks(seconds));
	return 0;
}
