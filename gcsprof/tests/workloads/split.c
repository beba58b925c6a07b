// SPDX-License-Identifier: MIT
/*
 * A CPU-bound workload whose time splits 3:1 between two call paths:
 * main -> path_a -> burn_a (3 units per round) and main -> path_b ->
 * burn_b (1 unit). Built with -O2 -fomit-frame-pointer: only the GCS gives
 * the chains. Usage: gcsprof-split [SECONDS] (default 4).
 */
#include <stdio.h>

#include "common.h"

volatile uint64_t sink;

NOINLINE void burn_a(void)
{
	sink += spin(3);
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
	unsigned long rounds = 0;

	while (seconds_now() < end) {
		path_a();
		path_b();
		rounds++;
	}
	printf("split: %lu rounds\n", rounds);
	return 0;
}
