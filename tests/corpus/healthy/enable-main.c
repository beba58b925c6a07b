// SPDX-License-Identifier: MIT
/*
 * Healthy: run without GCS, main enables it itself (prctl, inline), then
 * calls a chain that ends in abort(). The frames older than the GCS
 * (main's own record, libc's start code) are on the stack only: inspect
 * says so neutrally ("older than the GCS") and claims no corruption.
 * main never returns: its return address is on no GCS.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../corpus.h"

NOINLINE int c3(int x) { if (x) abort(); return x; }
NOINLINE int c2(int x) { int r = c3(x + 1); KEEP(); return r; }
NOINLINE int c1(int x) { int r = c2(x + 1); KEEP(); return r; }

int main(void)
{
	if (enable_gcs_inline() != 0) {
		fputs("enable-main: prctl(PR_SET_SHADOW_STACK_STATUS) failed\n", stderr);
		exit(2);
	}
	exit(c1(1));
}
