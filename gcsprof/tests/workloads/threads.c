// SPDX-License-Identifier: MIT
/*
 * Named threads burning CPU (worker-1..N, each in its own function),
 * started after a delay so that they are new to a recorder that is already
 * attached. At the end it prints the CPU time the process used, which a
 * CPU profile's samples must stand for. Usage: gcsprof-threads [SECONDS
 * [THREADS]] (default 3 s, 3 threads).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common.h"

static double seconds = 3.0;
volatile uint64_t sink;

NOINLINE void *worker(void *arg)
{
	(void)arg;
	sink += spin_for(seconds);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[256];
	struct rusage ru;
	int i, n = 3;

	if (argc > 1)
		seconds = atof(argv[1]);
	if (argc > 2)
		n = atoi(argv[2]);
	if (n < 1 || n > 256)
		return 2;
	usleep(100000);
	for (i = 0; i < n; i++) {
		char name[16];

		if (pthread_create(&t[i], NULL, worker, NULL) != 0)
			return 1;
		snprintf(name, sizeof(name), "worker-%d", i + 1);
		if (pthread_setname_np(t[i], name) != 0)
			return 1;
	}
	for (i = 0; i < n; i++)
		if (pthread_join(t[i], NULL) != 0)
			return 1;
	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 1;
	printf("threads: done, cpu %.3f s\n",
	       (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
		       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
	return 0;
}
