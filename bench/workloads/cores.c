// SPDX-License-Identifier: MIT
/*
 * Healthy cores of a known shape, for the post-mortem benchmark
 * (bench/guest/postmortem.sh): every thread's true chain is known by
 * construction, and nothing is corrupt.
 *
 *   bench-cores deep DEPTH   main recurses DEPTH + 1 levels of recurse()
 *                            (recurse(DEPTH) down to recurse(0)) and aborts
 *                            there; three other threads are blocked:
 *                              deep_cond_entry -> deep_cond_wait (pthread_cond_wait)
 *                              deep_pause_entry -> deep_pause_wait (pause)
 *                              deep_read_entry -> deep_read_wait (read of a pipe)
 *   bench-cores threads N    N threads blocked, even ones in
 *                              pool_worker -> pool_fetch -> pool_wait_cond
 *                            (pthread_cond_wait), odd ones in
 *                              pool_worker -> pool_drain -> pool_wait_pipe
 *                            (read of a pipe); main aborts in
 *                              main -> pool_dump
 *                            once all are ready.
 *
 * Every thread says it is ready from inside its innermost function, so the
 * chain is the same whether the core catches it before or inside the
 * blocking call. abort() is called through a pointer, so that the compiler
 * neither treats the call as the end of the function nor tail-calls it.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

#define STACK_SIZE (256 * 1024)
#define MAX_THREADS 1024

volatile unsigned sink;
/* Never set: the blocking loops can end as far as the compiler knows, so
 * that it infers no noreturn function and every call keeps its frame. */
volatile int released;
static void (*volatile die)(void) = abort;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready_cond = PTHREAD_COND_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static int ready;
static int pipe_fd[2];

static NOINLINE void say_ready(void)
{
	pthread_mutex_lock(&lock);
	ready++;
	pthread_cond_broadcast(&ready_cond);
	pthread_mutex_unlock(&lock);
}

static void wait_ready(int n)
{
	pthread_mutex_lock(&lock);
	while (ready < n)
		pthread_cond_wait(&ready_cond, &lock);
	pthread_mutex_unlock(&lock);
	/* Time for the last ones to enter their blocking call. */
	usleep(200000);
}

/* Block on a condition nobody signals, the mutex held; inlined, so that
 * the caller is the innermost named frame. */
static inline __attribute__((always_inline)) void block_cond(void)
{
	pthread_mutex_lock(&lock);
	ready++;
	pthread_cond_broadcast(&ready_cond);
	while (!released)
		pthread_cond_wait(&never, &lock);
	pthread_mutex_unlock(&lock);
}

/* Block reading a pipe nobody writes. */
static inline __attribute__((always_inline)) void block_read(void)
{
	char c;

	say_ready();
	while (!released)
		if (read(pipe_fd[0], &c, 1) == 1)
			sink += (unsigned)c;
}

/* deep: three blocked threads and a deep recursion. */

NOINLINE void deep_cond_wait(void)
{
	block_cond();
	KEEP_FRAME();
}

NOINLINE void *deep_cond_entry(void *arg)
{
	(void)arg;
	deep_cond_wait();
	KEEP_FRAME();
	return NULL;
}

NOINLINE void deep_pause_wait(void)
{
	say_ready();
	while (!released)
		pause();
}

NOINLINE void *deep_pause_entry(void *arg)
{
	(void)arg;
	deep_pause_wait();
	KEEP_FRAME();
	return NULL;
}

NOINLINE void deep_read_wait(void)
{
	block_read();
	KEEP_FRAME();
}

NOINLINE void *deep_read_entry(void *arg)
{
	(void)arg;
	deep_read_wait();
	KEEP_FRAME();
	return NULL;
}

NOINLINE void recurse(unsigned n)
{
	if (n)
		recurse(n - 1);
	else
		die();
	KEEP_FRAME();
	sink++;
}

/* threads: N threads in two known chains. */

NOINLINE void pool_wait_cond(void)
{
	block_cond();
	KEEP_FRAME();
}

NOINLINE void pool_wait_pipe(void)
{
	block_read();
	KEEP_FRAME();
}

NOINLINE void pool_fetch(void)
{
	pool_wait_cond();
	KEEP_FRAME();
}

NOINLINE void pool_drain(void)
{
	pool_wait_pipe();
	KEEP_FRAME();
}

NOINLINE void *pool_worker(void *arg)
{
	if ((uintptr_t)arg % 2 == 0)
		pool_fetch();
	else
		pool_drain();
	KEEP_FRAME();
	return NULL;
}

NOINLINE void pool_dump(void)
{
	die();
	KEEP_FRAME();
}

static int start(void *(*fn)(void *), uintptr_t arg)
{
	pthread_attr_t attr;
	pthread_t t;
	int err;

	if (pthread_attr_init(&attr) != 0 ||
	    pthread_attr_setstacksize(&attr, STACK_SIZE) != 0)
		return -1;
	err = pthread_create(&t, &attr, fn, (void *)arg);
	pthread_attr_destroy(&attr);
	return err ? -1 : 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: bench-cores deep DEPTH | threads N\n");
	return 2;
}

int main(int argc, char **argv)
{
	int i, n;

	if (argc != 3)
		return usage();
	n = atoi(argv[2]);
	if (pipe(pipe_fd) != 0) {
		perror("bench-cores: pipe");
		return 1;
	}
	if (strcmp(argv[1], "deep") == 0 && n >= 0) {
		if (start(deep_cond_entry, 0) || start(deep_pause_entry, 0) ||
		    start(deep_read_entry, 0)) {
			fprintf(stderr, "bench-cores: cannot start threads\n");
			return 1;
		}
		wait_ready(3);
		recurse((unsigned)n);
	} else if (strcmp(argv[1], "threads") == 0 && n >= 1 && n <= MAX_THREADS) {
		for (i = 0; i < n; i++)
			if (start(pool_worker, (uintptr_t)i)) {
				fprintf(stderr, "bench-cores: cannot start thread %d\n", i);
				return 1;
			}
		wait_ready(n);
		pool_dump();
	} else {
		return usage();
	}
	return 1;
}
