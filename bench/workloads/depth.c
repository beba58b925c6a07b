// SPDX-License-Identifier: MIT
/*
 * CPU burnt at a known stack depth: main -> descend x DEPTH -> burn, and
 * burn spins in one-unit rounds until SECONDS have passed. Every sample's
 * true chain is therefore _start ... main, DEPTH descend frames, burn.
 *
 * Each descend frame holds a 32-byte local, so the stack below main is
 * about 48 bytes a level: 8 and 64 levels fit a perf --call-graph dwarf
 * copy of 8 KB, 512 levels only the maximum of 64 KB, 2000 neither. The
 * GCS holds 8 bytes a level whatever the frame size.
 *
 * Built with -O2 -fomit-frame-pointer. Usage: bench-depth SECONDS DEPTH.
 * Prints "depth: N rounds", the work done, for the slowdown figure.
 */
#include <stdio.h>

#include "common.h"

volatile uint64_t sink;
static double end_time;
static unsigned long rounds;

NOINLINE void burn(void)
{
	while (seconds_now() < end_time) {
		sink += spin(1);
		rounds++;
	}
	KEEP_FRAME();
}

NOINLINE void descend(unsigned n)
{
	volatile unsigned char pad[32];

	pad[n % sizeof(pad)] = (unsigned char)n;
	if (n > 1)
		descend(n - 1);
	else
		burn();
	sink += pad[(n + 1) % sizeof(pad)];
}

int main(int argc, char **argv)
{
	double seconds;
	long depth;

	if (argc != 3) {
		fprintf(stderr, "usage: bench-depth SECONDS DEPTH\n");
		return 2;
	}
	seconds = atof(argv[1]);
	depth = atol(argv[2]);
	if (seconds <= 0 || depth < 1 || depth > 100000) {
		fprintf(stderr, "bench-depth: SECONDS must be > 0 and DEPTH 1 to 100000\n");
		return 2;
	}
	end_time = seconds_now() + seconds;
	descend((unsigned)depth);
	printf("depth: %lu rounds\n", rounds);
	return 0;
}
