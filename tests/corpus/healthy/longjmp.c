// SPDX-License-Identifier: MIT
/*
 * Healthy: longjmp out of 30 calls (glibc unwinds the GCS with it), then
 * a new chain five calls deep abort()s. The GCS and the stack agree
 * again: no corruption claimed.
 */
#include <setjmp.h>
#include <stdlib.h>

#include "../corpus.h"

static jmp_buf env;

NOINLINE static int down(int n)
{
	int r;

	if (n == 0)
		longjmp(env, 1);
	if (n < 0)              /* never: a way out, for the compiler */
		return 0;
	r = down(n - 1);
	KEEP();
	return r + 1;
}

NOINLINE static int after3(void) { abort(); }
NOINLINE static int after2(void) { int r = after3(); KEEP(); return r; }
NOINLINE static int after1(void) { int r = after2(); KEEP(); return r; }

int main(void)
{
	if (setjmp(env) == 0)
		return down(30);
	return after1();
}
