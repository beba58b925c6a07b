// SPDX-License-Identifier: MIT
/*
 * Healthy: a SIGUSR1 handler raises SIGUSR2, whose handler abort()s: two
 * signal frames on the stack, two signal caps on the GCS. Each signal
 * frame's record is the interrupted LR, not checked; the rest match: no
 * corruption claimed.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "../corpus.h"

NOINLINE static void inner2(void) { abort(); }
static void on_usr2(int sig) { (void)sig; inner2(); KEEP(); }
NOINLINE static void inner1(void) { raise(SIGUSR2); KEEP(); }
static void on_usr1(int sig) { (void)sig; inner1(); KEEP(); }

NOINLINE static int m2(void) { raise(SIGUSR1); KEEP(); return 0; }
NOINLINE static int m1(void) { int r = m2(); KEEP(); return r; }

int main(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	if (sigaction(SIGUSR1, &sa, NULL) != 0)
		return 2;
	sa.sa_handler = on_usr2;
	if (sigaction(SIGUSR2, &sa, NULL) != 0)
		return 2;
	return m1();
}
