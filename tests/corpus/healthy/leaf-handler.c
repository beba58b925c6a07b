// SPDX-License-Identifier: MIT
/*
 * Healthy stack: a SIGUSR1 handler that is a leaf (built at -O2, it makes
 * no frame record) faults on a null pointer. x29 still points at the
 * kernel's record in the signal frame, the first record of the chain,
 * which holds the interrupted LR: not checked, no corruption claimed.
 */
#include <signal.h>
#include <stdint.h>
#include <string.h>

#include "../corpus.h"

volatile uintptr_t null_address;

static void leaf_handler(int sig)
{
	*(volatile int *)null_address = sig;
}

NOINLINE static int m2(void) { raise(SIGUSR1); KEEP(); return 0; }
NOINLINE static int m1(void) { int r = m2(); KEEP(); return r; }

int main(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = leaf_handler;
	if (sigaction(SIGUSR1, &sa, NULL) != 0)
		return 2;
	return m1();
}
