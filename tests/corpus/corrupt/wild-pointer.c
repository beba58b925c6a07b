// SPDX-License-Identifier: MIT
/*
 * A bug that is not stack corruption: a store through a wild pointer,
 * three calls deep, faults (SIGSEGV, SEGV_MAPERR) with the stack intact.
 * inspect names the signal and claims no corruption.
 */
#include <stdint.h>

#include "../corpus.h"

volatile uintptr_t wild = 0x10000;

NOINLINE void store(int v) { *(volatile int *)wild = v; }
NOINLINE void w2(int v) { store(v + 1); KEEP(); }
NOINLINE void w1(int v) { w2(v + 1); KEEP(); }

int main(void)
{
	w1(1);
	return 1;
}
