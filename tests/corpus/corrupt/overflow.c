// SPDX-License-Identifier: MIT
/*
 * Corrupt: victim's local buffer overflows upwards over level2's frame
 * record (arm64 keeps a frame's record at its bottom, so a local's
 * overflow reaches the caller's). Built twice:
 *
 * overflow-record, without the stack protector: level2's return loads
 * the forged x30 and x29; the GCS check faults (SEGV_CPERR). inspect:
 * corruption in frame #0, level2, whose link register is not the return
 * address the GCS holds.
 *
 * overflow-canary, with it: the overflow runs through victim's canary,
 * whose check at victim's return calls __stack_chk_fail, which aborts
 * before anything returns through the overwritten record. inspect:
 * corruption in level2's frame, whose record holds 0x4141... where the
 * GCS has level2's return into level1.
 */
#include <stdio.h>
#include <string.h>

#include "../corpus.h"

volatile unsigned overflow = 96;

NOINLINE void victim(void)
{
	char buf[16];

	memset(buf, 0x41, overflow);
	__asm__ volatile("" : : "r"(buf) : "memory");
}

NOINLINE int level2(int x)
{
	char pad[32];

	memset(pad, x, sizeof(pad));
	victim();
	return pad[3];
}

NOINLINE int level1(int x) { return level2(x + 1) + 1; }

int main(int argc, char **argv)
{
	(void)argc;
	printf("%s: survived (%d)\n", argv[0], level1(1));
	return 0;
}
