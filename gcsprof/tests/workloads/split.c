// SPDX-License-Identifier: MIT
/*
 * A CPU-bound workload whose time splits 3:1 between two call paths:
 * main -> path_a -> burn_a and main -> path_b -> burn_b. Each call burns
 * one unit; every round of four units makes three calls of path_a and one
 * of path_b, the latter at a random place in the round.
 *
 * The random order is what makes the split measurable under emulation: a
 * loaded host stops the emulated CPU at a steady stride of guest work, and
 * with a fixed a-a-a-b order that stride would fall on one path more than
 * its share. With the order random, where a stop falls says nothing about
 * which path it hits.
 *
 * Built with -O2 -fomit-frame-pointer: only the GCS gives the chains.
 * Usage: gcsprof-split [SECONDS] (default 4).
 */
#include <stdio.h>

#include "common.h"

volatile uint64_t sink;

NOINLINE void burn_a(void)
{
	sink += spin(1);
	KEEP_FRAME();
}

NOINLINE void burn_b(void)
{
	sink += spin(1);
	KEEP_FRAME();
}

NOINLINE void path_a(void)
{
	burn_a();
	KEEP_FRAME();
}

NOINLINE void path_b(void)
{
	burn_b();
	KEEP_FRAME();
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 4.0, end = seconds_now() + seconds;
	uint64_t rng = 0x9e3779b97f4a7c15ULL;
	unsigned long rounds = 0;

	while (seconds_now() < end) {
		unsigned b_slot, i;

		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		b_slot = (unsigned)(rng >> 32) % 4;
		for (i = 0; i < 4; i++) {
			if (i == b_slot)
				path_b();
			else
				path_a();
		}
		rounds++;
	}
	printf("split: %lu rounds\n", rounds);
	return 0;
}
