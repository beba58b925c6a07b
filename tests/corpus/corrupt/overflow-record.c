// SPDX-License-Identifier: MIT
/*
 * Corrupt: victim's local buffer overflows upwards over level2's frame
 * record (arm64 keeps a frame's record at its bottom, so a local's
 * overflow reaches the caller's). level2's return loads the forged x30
 * and x29; the GCS check faults (SEGV_CPERR). inspect: corruption in
 * frame #0, level2, whose link register is not the return address the
 * GCS holds.
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

int main(void)
{
	printf("overflow-record: survived (%d)\n", level1(1));
	return 0;
}
