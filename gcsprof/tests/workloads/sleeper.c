// SPDX-License-Identifier: MIT
/*
 * One thread sleeps (in sleep_here) while another burns CPU (in
 * spin_here): a wall-clock profile sees both, a CPU profile mostly the
 * second. Usage: gcsprof-sleeper [SECONDS] (default 3).
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "common.h"

static double seconds = 3.0;
volatile uint64_t sink;

NOINLINE void sleep_here(void)
{
	struct timespec ts = { 0, 50000000 };
	double end = seconds_now() + seconds;

	while (seconds_now() < end)
		nanosleep(&ts, NULL);
	KEEP_FRAME();
}

NOINLINE void *spin_here(void *arg)
{
	(void)arg;
	sink += spin_for(seconds);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc > 1)
		seconds = atof(argv[1]);
	if (pthread_create(&t, NULL, spin_here, NULL) != 0)
		return 1;
	pthread_setname_np(t, "spinner");
	sleep_here();
	if (pthread_join(t, NULL) != 0)
		return 1;
	printf("sleeper: done\n");
	return 0;
}
