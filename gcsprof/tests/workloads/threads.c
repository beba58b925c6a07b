// SPDX-License-Identifier: MIT
/*
 * Three named threads burning CPU (worker-1..3, each in its own function),
 * started after a delay so that they are new to a recorder that is already
 * attached. Usage: gcsprof-threads [SECONDS] (default 3).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
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
	pthread_t t[3];
	int i;

	if (argc > 1)
		seconds = atof(argv[1]);
	usleep(100000);
	for (i = 0; i < 3; i++) {
		char name[16];

		if (pthread_create(&t[i], NULL, worker, NULL) != 0)
			return 1;
		snprintf(name, sizeof(name), "worker-%d", i + 1);
		if (pthread_setname_np(t[i], name) != 0)
			return 1;
	}
	for (i = 0; i < 3; i++)
		if (pthread_join(t[i], NULL) != 0)
			return 1;
	printf("threads: done\n");
	return 0;
}
