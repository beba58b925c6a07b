// SPDX-License-Identifier: MIT
/*
 * Healthy: functions with frame pointers and without, interleaved in one
 * chain that ends in abort(): the records the frame-pointer functions
 * make skip the others' GCS entries, which is allowed. No corruption
 * claimed.
 */
#include <stdlib.h>

#include "../corpus.h"

#define NOFP __attribute__((optimize("omit-frame-pointer")))

volatile int depth_seen;

NOINLINE void fp4(void) { abort(); }
NOINLINE NOFP void nofp3(void) { depth_seen = 3; fp4(); KEEP(); }
NOINLINE void fp2(void) { depth_seen = 2; nofp3(); KEEP(); }
NOINLINE NOFP void nofp1(void) { depth_seen = 1; fp2(); KEEP(); }

int main(void)
{
	nofp1();
	return 1;
}
