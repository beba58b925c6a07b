// SPDX-License-Identifier: MIT
/*
 * Healthy: abort() 3000 recursive calls down. Every one of the 3000
 * frame records matches the GCS: no corruption claimed, none left
 * unchecked.
 */
#include <stdlib.h>

#include "../corpus.h"

volatile int bottom = 0;

NOINLINE int recurse(int depth)
{
	int r;

	if (depth == bottom)
		abort();
	if (depth < 0)          /* never: a way out, for the compiler */
		return 0;
	r = recurse(depth - 1);
	KEEP();
	return r + 1;
}

int main(void)
{
	return recurse(3000);
}
