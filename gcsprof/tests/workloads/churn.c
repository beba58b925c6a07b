/* SPDX-License-Identifier: MIT */
/*
 * A target that keeps a recorder busy with its process tree: it forks
 * NPROC children (each spins for 50 ms, long enough for a CPU-time
 * sampler to see it, and exits with status i % 100) and
 * creates NTHREADS short-lived threads, BATCH at a time, while its main
 * thread spins too. It checks every child's status and every thread's
 * result, prints one summary line and exits 0 only when all were right,
 * so a recorder that disturbed any of them shows.
 *
 * Usage: gcsprof-churn NPROC NTHREADS
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

#define BATCH 16

static NOINLINE uint64_t thread_work(unsigned n)
{
	uint64_t x = spin(1 + n % 3);

	KEEP_FRAME();
	return x | 1;
}

static void *thread_main(void *arg)
{
	uintptr_t n = (uintptr_t)arg;

	return (void *)(uintptr_t)(thread_work((unsigned)n) ? n + 1 : 0);
}

static NOINLINE int child_work(int i)
{
	spin_for(0.05);
	KEEP_FRAME();
	return i % 100;
}

/* Fork NPROC children; 0 when each exited with its own status. */
static int run_children(int nproc)
{
	int i, bad = 0;

	for (i = 0; i < nproc; i++) {
		pid_t pid = fork();
		int st;

		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0)
			_exit(child_work(i));
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != i % 100) {
			fprintf(stderr, "churn: child %d: status %#x\n", i, st);
			bad++;
		}
	}
	return bad;
}

/* Create NTHREADS threads, BATCH at a time; 0 when each gave its result. */
static int run_threads(int nthreads)
{
	pthread_t t[BATCH];
	int done = 0, bad = 0;

	while (done < nthreads) {
		int k, n = nthreads - done < BATCH ? nthreads - done : BATCH;

		for (k = 0; k < n; k++)
			if (pthread_create(&t[k], NULL, thread_main,
					   (void *)(uintptr_t)(done + k)) != 0) {
				fprintf(stderr, "churn: pthread_create failed\n");
				return bad + 1;
			}
		for (k = 0; k < n; k++) {
			void *res;

			if (pthread_join(t[k], &res) != 0 ||
			    (uintptr_t)res != (uintptr_t)(done + k) + 1)
				bad++;
		}
		done += n;
	}
	return bad;
}

int main(int argc, char **argv)
{
	int nproc, nthreads, bad;

	if (argc != 3) {
		fprintf(stderr, "usage: %s NPROC NTHREADS\n", argv[0]);
		return 2;
	}
	nproc = atoi(argv[1]);
	nthreads = atoi(argv[2]);
	bad = run_children(nproc);
	bad += run_threads(nthreads);
	printf("churn: %d processes, %d threads, %d wrong\n", nproc, nthreads, bad);
	return bad ? 1 : 0;
}
