// SPDX-License-Identifier: MIT
/*
 * Healthy: a chain built at -O2 without frame pointers (x29 is a free
 * register there), with enough live values that the compiler may use it,
 * ends in abort(). Only libc's functions make frame records; the chain of
 * records skips this code's frames, or ends in whatever x29 held: no
 * corruption claimed.
 */
#include <stdlib.h>

#include "../corpus.h"

volatile long seed = 3;

/* Many values live across the call: every callee-saved register, x29
 * included, is wanted. */
NOINLINE long busy(long n)
{
	long a = seed, b = a * 3, c = b ^ 7, d = c + a, e = d * b, f = e - c, g = f ^ d,
	     h = g + e, i = h * 5, j = i - g, k = j ^ h, l = k + i;

	if (n == 0)
		abort();
	if (n < 0)              /* never: a way out, for the compiler */
		return 0;
	n = busy(n - 1);
	return n + a + b + c + d + e + f + g + h + i + j + k + l;
}

int main(void)
{
	return (int)busy(12);
}
