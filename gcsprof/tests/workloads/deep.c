// SPDX-License-Identifier: MIT
/*
 * A program that does nothing wrong and dies of abort() from deep in a
 * recursion: DEPTH calls of recurse(), then abort(). Its core must show
 * every frame (the recursion folded into one line that says how many) and
 * no stack corruption. Usage: gcsprof-deep [DEPTH] (default 2000).
 */
#include <stdio.h>
#include <stdlib.h>

#include "common.h"

volatile unsigned sink;
/* Through a pointer: the compiler must not know that it does not return. */
static void (*volatile die)(void) = abort;

NOINLINE void recurse(unsigned n)
{
	if (n)
		recurse(n - 1);
	else
		die();
	KEEP_FRAME();
	sink++;
}

int main(int argc, char **argv)
{
	unsigned depth = argc > 1 ? (unsigned)atoi(argv[1]) : 2000;

	recurse(depth);
	return 0;
}
