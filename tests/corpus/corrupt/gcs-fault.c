// SPDX-License-Identifier: MIT
/*
 * Corrupt: hijack writes the address of another function over its own
 * saved return address (frame pointer left intact), as an exploit would;
 * its return is refused by the GCS check (SIGSEGV, SEGV_CPERR) before
 * anything runs there. inspect: corruption in frame #0, hijack, whose
 * link register is not the return address the GCS holds.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../corpus.h"

NOINLINE void evil(void)
{
	puts("gcs-fault: evil() ran: the GCS check did not stop the return");
	exit(3);
}

NOINLINE int hijack(int x)
{
	uint64_t *own = __builtin_frame_address(0);

	own[1] = (uint64_t)(uintptr_t)evil;
	return x + 1;
}

NOINLINE int caller(int x) { int r = hijack(x); KEEP(); return r; }

int main(void)
{
	printf("gcs-fault: survived (%d)\n", caller(1));
	return 0;
}
