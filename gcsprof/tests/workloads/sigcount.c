// SPDX-License-Identifier: MIT
/*
 * Counts queued real-time signals while busy, for the test that signals
 * sent to an attached target all arrive, those held at the moment of the
 * detach included. Real-time signals queue, so every one sent must be
 * counted exactly once. Prints "signal N" (the signal to send, SIGRTMIN)
 * at start; on SIGUSR2 prints "sigcount: COUNT" and exits 0.
 * Usage: gcsprof-sigcount
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "common.h"

static volatile sig_atomic_t count, done;
volatile uint64_t sink;

static void on_rt(int sig)
{
	(void)sig;
	count++;
}

static void on_usr2(int sig)
{
	(void)sig;
	done = 1;
}

NOINLINE void count_loop(void)
{
	while (!done)
		sink += spin(1);
	KEEP_FRAME();
}

int main(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_rt;
	if (sigaction(SIGRTMIN, &sa, NULL) != 0)
		return 1;
	sa.sa_handler = on_usr2;
	if (sigaction(SIGUSR2, &sa, NULL) != 0)
		return 1;
	if (printf("signal %d\n", SIGRTMIN) < 0 || fflush(stdout) != 0)
		return 1;
	count_loop();
	printf("sigcount: %d\n", (int)count);
	return 0;
}
