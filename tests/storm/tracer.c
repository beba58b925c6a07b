// SPDX-License-Identifier: MIT
/*
 * The sampling storm's tracer (tracer.h): a child process that keeps
 * stopping one thread of its parent, reads its NT_ARM_GCS regset over and
 * over, copies the live part of its GCS (GCSPR_EL0 up to the 0 at the
 * top) to the top of the other of two spare GCSs through /proc/TID/mem,
 * points GCSPR_EL0 there with SETREGSET, and lets it run on. Every return
 * the thread makes afterwards is checked by the hardware against the copy.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tracer.h"

/* Deeper than any chain the victim makes. */
#define MAX_ENTRIES 1024

static int stop_victim(pid_t tid)
{
	int st;

	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) != 0)
		return -1;
	return waitpid(tid, &st, __WALL) == tid && WIFSTOPPED(st) ? 0 : -1;
}

/* Move the victim's live GCS to spare K: 0, or -1. */
static int repoint(struct storm_tracer *c, int memfd, int k, struct user_gcs *g)
{
	static uint64_t words[MAX_ENTRIES];
	struct iovec local = { words, sizeof(words) }, remote = { (void *)(uintptr_t)g->gcspr_el0,
								  sizeof(words) };
	ssize_t got = process_vm_readv(c->victim, &local, 1, &remote, 1, 0);
	size_t n = 0;
	uint64_t to;
	struct iovec iov = { g, sizeof(*g) };

	if (got < 8)
		return -1;
	while (n < (size_t)got / 8 && words[n] != 0)
		n++;
	if (n == (size_t)got / 8)
		return -1; /* no 0 on top within reach */
	n++;
	to = c->spare[k] + c->spare_size - n * 8;
	if (pwrite(memfd, words, n * 8, (off_t)to) != (ssize_t)(n * 8))
		return -1;
	g->gcspr_el0 = to;
	return ptrace(PTRACE_SETREGSET, c->victim, (void *)NT_ARM_GCS, &iov);
}

static int one_round(struct storm_tracer *c, int memfd, int round)
{
	struct user_gcs g;
	struct iovec iov = { &g, sizeof(g) };

	if (stop_victim(c->victim) != 0)
		return -1;
	for (int i = 0; i < 16; i++) {
		if (ptrace(PTRACE_GETREGSET, c->victim, (void *)NT_ARM_GCS, &iov) != 0)
			return -1;
		__atomic_fetch_add(&c->regset_reads, 1, __ATOMIC_RELAXED);
	}
	if (repoint(c, memfd, round & 1, &g) != 0)
		return -1;
	__atomic_fetch_add(&c->repoints, 1, __ATOMIC_RELAXED);
	return ptrace(PTRACE_CONT, c->victim, NULL, NULL);
}

void storm_tracer_run(struct storm_tracer *c)
{
	char path[64];
	int memfd, st;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)c->victim);
	memfd = open(path, O_RDWR | O_CLOEXEC);
	if (memfd < 0 || ptrace(PTRACE_SEIZE, c->victim, NULL, NULL) != 0) {
		snprintf(c->error, sizeof(c->error), "cannot trace thread %d: %m", (int)c->victim);
		_exit(1);
	}
	for (int round = 0; !__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE); round++) {
		if (one_round(c, memfd, round) != 0) {
			snprintf(c->error, sizeof(c->error), "round %d: %m", round);
			_exit(1);
		}
		usleep(2000);
	}
	if (stop_victim(c->victim) == 0)
		ptrace(PTRACE_DETACH, c->victim, NULL, NULL);
	(void)st;
	_exit(0);
}
