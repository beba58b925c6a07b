// SPDX-License-Identifier: MIT
/*
 * A deliberate stack smash: main -> level1 -> level2 -> victim, and victim
 * overflows a local buffer upwards, over level2's frame record (arm64
 * frames keep the record at the bottom, so a local's overflow reaches the
 * caller's). level2's return then loads a forged x30; with GCS the RET
 * faults (SIGSEGV, SEGV_CPERR) and the core shows the damage. Built with
 * frame pointers, without the stack protector, at -O0.
 */
#include <stdio.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

volatile unsigned overflow = 96;

NOINLINE void victim(void)
{
	char buf[16];

	/* memset's own frame is below this one: the overflow runs upwards
	 * through this frame into level2's, and nothing stops it early. */
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

NOINLINE int level1(int x)
{
	return level2(x + 1) + 1;
}

int main(void)
{
	int r = level1(1);

	printf("smash: survived (%d)\n", r);
	return 0;
}
