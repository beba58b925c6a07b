// SPDX-License-Identifier: MIT
/*
 * Corrupt: dangling() returns the address of its local buffer; its caller
 * then calls b, whose frame now occupies that memory, and b writes
 * through the dangling pointer, over its own frame record, and abort()s.
 * inspect: corruption in b's frame.
 */
#include <stdlib.h>
#include <string.h>

#include "../corpus.h"

NOINLINE char *dangling(void)
{
	char buf[256];
	char *volatile p = buf;   /* hidden from the compiler's warning */

	memset(buf, 0, sizeof(buf));
	return p;
}

NOINLINE void b(char *stale)
{
	memset(stale, 0x42, 256);   /* the use after return */
	abort();
}

NOINLINE void a(void)
{
	char *stale = dangling();

	b(stale);
	KEEP();
}

int main(void)
{
	a();
	return 1;
}
