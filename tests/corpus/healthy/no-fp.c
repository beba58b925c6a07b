// SPDX-License-Identifier: MIT
/*
 * Healthy: a chain built at -O2 without frame pointers (x29 is a free
 * register there), one of them holding data in x29, ends in abort().
 * Only libc's functions make frame records; the chain of records skips
 * this code's frames, or ends in whatever x29 held: no corruption
 * claimed.
 */
#include <stdlib.h>

#include "../corpus.h"

volatile long seed[11] = { 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37 };

/* Eleven values live across the call, in registers at the asm after it:
 * more than the ten callee-saved registers x19-x28. (GCC 12 spills the
 * eleventh rather than use x29.) */
NOINLINE long busy(long n)
{
	long a = seed[0], b = seed[1], c = seed[2], d = seed[3], e = seed[4], f = seed[5],
	     g = seed[6], h = seed[7], i = seed[8], j = seed[9], k = seed[10];

	if (n == 0)
		abort();
	if (n < 0)              /* never: a way out, for the compiler */
		return 0;
	n = busy(n - 1);
	__asm__ volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e), "+r"(f), "+r"(g),
			 "+r"(h), "+r"(i), "+r"(j), "+r"(k));
	return n + a + b + c + d + e + f + g + h + i + j + k;
}

/* x29 holding data, as code built without frame pointers may: the
 * records libc's functions make below hold this value as their link. */
NOINLINE long x29_user(long n)
{
	register long counter __asm__("x29") = n * 2 + 1;   /* odd: no record address */

	__asm__ volatile("" : "+r"(counter));
	n = busy(n);
	__asm__ volatile("" : "+r"(counter));
	return n + counter;
}

int main(void)
{
	return (int)x29_user(12);
}
