// SPDX-License-Identifier: MIT
/*
 * Healthy: a worker thread spins in a leaf function (no frame record, its
 * return address only in the link register) when the main thread
 * abort()s. The worker's chain of records starts at its caller's: no
 * corruption claimed.
 */
#include <pthread.h>
#include <stdlib.h>

#include "../corpus.h"

static volatile int spinning, stop;

NOINLINE static void leaf_spin(void)
{
	spinning = 1;
	while (!stop)
		;
}

NOINLINE static void w2(void) { leaf_spin(); KEEP(); }
NOINLINE static void *worker(void *arg) { (void)arg; w2(); KEEP(); return NULL; }

int main(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, worker, NULL) != 0)
		return 2;
	while (!spinning)
		;
	abort();
}
