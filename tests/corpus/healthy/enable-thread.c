// SPDX-License-Identifier: MIT
/*
 * Healthy: run without GCS; one thread enables GCS for itself at its
 * start (prctl, inline), calls a chain and abort()s. Its frames older than
 * its GCS (the thread function's record, start_thread) are on the stack
 * only: inspect says so neutrally. The main thread, blocked in
 * pthread_join, has no GCS at all.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "../corpus.h"

NOINLINE int t3(int x) { if (x) abort(); return x; }
NOINLINE int t2(int x) { int r = t3(x + 1); KEEP(); return r; }
NOINLINE int t1(int x) { int r = t2(x + 1); KEEP(); return r; }

/* Never returns: its return address is on no GCS. */
static void *gcs_thread(void *arg)
{
	(void)arg;
	if (enable_gcs_inline() != 0) {
		fputs("enable-thread: prctl(PR_SET_SHADOW_STACK_STATUS) failed\n", stderr);
		exit(2);
	}
	exit(t1(1));
}

int main(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, gcs_thread, NULL) != 0)
		return 1;
	pthread_join(t, NULL);
	return 1;
}
