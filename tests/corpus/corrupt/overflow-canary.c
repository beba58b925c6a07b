// SPDX-License-Identifier: MIT
/*
 * Corrupt: victim's local buffer overflows upwards through its stack
 * canary into level2's frame record; built with the stack protector, the
 * canary check at victim's return calls __stack_chk_fail, which aborts
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

int main(void)
{
	printf("overflow-canary: survived (%d)\n", level1(1));
	return 0;
}
