// SPDX-License-Identifier: MIT
/*
 * THREADS busy threads, each in worker() spinning in one-unit rounds for
 * SECONDS. The true chain of every sample in a worker is the thread's
 * entry (clone3 or thread_start), start_thread, worker.
 *
 * Prints the rounds all threads did (the slowdown figure: rounds against
 * an unprofiled run) and the CPU time the process used (what the samples
 * stand for: a CPU profile at F Hz should take CPU x F of them).
 * Built with -O2 -fomit-frame-pointer. Usage: bench-busy SECONDS THREADS.
 */
#include <pthread.h>
#include <stdio.h>
#include <sys/resource.h>

#include "common.h"

volatile uint64_t sink;
static double end_time;
static unsigned long rounds_total;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

NOINLINE void *worker(void *arg)
{
	unsigned long rounds = 0;

	(void)arg;
	while (seconds_now() < end_time) {
		sink += spin(1);
		rounds++;
	}
	pthread_mutex_lock(&lock);
	rounds_total += rounds;
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t *t;
	struct rusage ru;
	long i, n;
	int err;

	if (argc != 3 || atof(argv[1]) <= 0 || atol(argv[2]) < 1 || atol(argv[2]) > 4096) {
		fprintf(stderr, "usage: bench-busy SECONDS THREADS (1 to 4096)\n");
		return 2;
	}
	n = atol(argv[2]);
	t = calloc((size_t)n, sizeof(*t));
	if (!t) {
		perror("bench-busy");
		return 1;
	}
	end_time = seconds_now() + atof(argv[1]);
	for (i = 0; i < n; i++) {
		err = pthread_create(&t[i], NULL, worker, NULL);
		if (err) {
			fprintf(stderr, "bench-busy: thread %ld: error %d\n", i + 1, err);
			return 1;
		}
	}
	for (i = 0; i < n; i++)
		if (pthread_join(t[i], NULL) != 0)
			return 1;
	free(t);
	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 1;
	printf("busy: %lu rounds, cpu %.3f s\n", rounds_total,
	       (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
		       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
	return 0;
}
