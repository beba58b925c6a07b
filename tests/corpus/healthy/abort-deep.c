// SPDX-License-Identifier: MIT
/*
 * Healthy: abort() at the bottom of a chain of 40 distinct functions,
 * built with frame pointers. Every frame record matches the GCS: inspect
 * claims no corruption.
 */
#include <stdlib.h>

#include "../corpus.h"

#define STEP(n, next) \
	NOINLINE int f##n(int x) { int r = next(x + 1); KEEP(); return r + 1; }

NOINLINE int bottom(int x)
{
	if (x > 0)
		abort();
	return x;
}

STEP(39, bottom) STEP(38, f39) STEP(37, f38) STEP(36, f37) STEP(35, f36)
STEP(34, f35) STEP(33, f34) STEP(32, f33) STEP(31, f32) STEP(30, f31)
STEP(29, f30) STEP(28, f29) STEP(27, f28) STEP(26, f27) STEP(25, f26)
STEP(24, f25) STEP(23, f24) STEP(22, f23) STEP(21, f22) STEP(20, f21)
STEP(19, f20) STEP(18, f19) STEP(17, f18) STEP(16, f17) STEP(15, f16)
STEP(14, f15) STEP(13, f14) STEP(12, f13) STEP(11, f12) STEP(10, f11)
STEP(9, f10) STEP(8, f9) STEP(7, f8) STEP(6, f7) STEP(5, f6)
STEP(4, f5) STEP(3, f4) STEP(2, f3) STEP(1, f2) STEP(0, f1)

int main(void)
{
	return f0(1);
}
