// SPDX-License-Identifier: MIT
/*
 * Healthy: four threads blocked in system calls (read on a pipe,
 * nanosleep, a condition variable's futex, poll) when the main thread
 * calls abort(). Each thread's innermost frame is a system call wrapper
 * that may not have made a frame record: no corruption claimed.
 */
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "../corpus.h"

static int fds[2];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t ready;

NOINLINE static void *in_read(void *arg)
{
	char c;

	(void)arg;
	pthread_barrier_wait(&ready);
	if (read(fds[0], &c, 1) < 0)
		abort();
	return NULL;
}

NOINLINE static void *in_sleep(void *arg)
{
	struct timespec ts = { 3600, 0 };

	(void)arg;
	pthread_barrier_wait(&ready);
	nanosleep(&ts, NULL);
	return NULL;
}

NOINLINE static void *in_futex(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	pthread_barrier_wait(&ready);
	pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	return NULL;
}

NOINLINE static void *in_poll(void *arg)
{
	struct pollfd p = { fds[0], POLLPRI, 0 };

	(void)arg;
	pthread_barrier_wait(&ready);
	poll(&p, 1, -1);
	return NULL;
}

int main(void)
{
	void *(*fn[])(void *) = { in_read, in_sleep, in_futex, in_poll };
	struct timespec settle = { 0, 200 * 1000 * 1000 };
	pthread_t t;
	unsigned i;

	if (pipe(fds) != 0 || pthread_barrier_init(&ready, NULL, 5) != 0)
		return 1;
	for (i = 0; i < 4; i++)
		if (pthread_create(&t, NULL, fn[i], NULL) != 0)
			return 1;
	pthread_barrier_wait(&ready);
	/* Long enough for every thread to enter its system call. */
	nanosleep(&settle, NULL);
	abort();
}
