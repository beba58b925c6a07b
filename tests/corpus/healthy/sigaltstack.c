// SPDX-License-Identifier: MIT
/*
 * Healthy: a SIGUSR1 handler running on sigaltstack, three calls deep,
 * abort()s. The frame record in the signal frame holds the interrupted
 * context's LR and links back to the main stack, whose records match the
 * GCS entries after the signal cap: no corruption claimed.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "../corpus.h"

static char alt[128 * 1024] __attribute__((aligned(16)));

NOINLINE static void h3(void) { abort(); }
NOINLINE static void h2(void) { h3(); KEEP(); }
static void handler(int sig) { (void)sig; h2(); KEEP(); }

NOINLINE static int m3(void) { raise(SIGUSR1); KEEP(); return 0; }
NOINLINE static int m2(void) { int r = m3(); KEEP(); return r; }
NOINLINE static int m1(void) { int r = m2(); KEEP(); return r; }

int main(void)
{
	stack_t ss = { .ss_sp = alt, .ss_size = sizeof(alt), .ss_flags = 0 };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sa.sa_flags = SA_ONSTACK;
	if (sigaltstack(&ss, NULL) != 0 || sigaction(SIGUSR1, &sa, NULL) != 0)
		return 2;
	return m1();
}
