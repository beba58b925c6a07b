// SPDX-License-Identifier: MIT
/*
 * gcsprof record: the recorder's threads and processes, and the /proc
 * fields it reads about them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "record.h"

const char *const rec_lost_names[LOST_NLOST] = {
	"no-gcs", "thread-gone", "stop-timeout", "walk-error", "group-stopped", "ring-overrun",
};

uint64_t rec_now_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct thread *rec_find_thread(struct recorder *r, pid_t tid)
{
	size_t i;

	for (i = 0; i < r->nthreads; i++)
		if (r->threads[i].tid == tid && !r->threads[i].gone)
			return &r->threads[i];
	return NULL;
}

struct process *rec_find_process(struct recorder *r, pid_t pid)
{
	size_t i;

	for (i = 0; i < r->nprocs; i++)
		if (r->procs[i].pid == pid && !r->procs[i].gone)
			return &r->procs[i];
	return NULL;
}

struct process *rec_add_process(struct recorder *r, pid_t pid)
{
	struct process *p = rec_find_process(r, pid), *n;

	if (p)
		return p;
	n = gp_grow(r->procs, &r->procs_cap, r->nprocs + 1, sizeof(*n));
	if (!n)
		return NULL;
	r->procs = n;
	p = &r->procs[r->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->asid = r->next_asid++;
	return p;
}

/* /proc facts of a thread, through libgcswalk (NULL STAT_FD: one-off). */
static int thread_facts(pid_t pid, pid_t tid, struct gcswalk_proc_thread *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	return gcswalk_proc_thread((int)pid, (int)tid, NULL, info);
}

pid_t rec_tgid_of(pid_t tid)
{
	struct gcswalk_proc_thread info;

	/* /proc/TID/task/TID works for any thread id, not only a leader's. */
	return thread_facts(tid, tid, &info) == GCSWALK_OK ? (pid_t)info.tgid : 0;
}

pid_t rec_tracer_of(pid_t tid)
{
	struct gcswalk_proc_thread info;

	return thread_facts(tid, tid, &info) == GCSWALK_OK ? (pid_t)info.tracer_pid : 0;
}

struct thread *rec_add_thread(struct recorder *r, pid_t tid, pid_t pid)
{
	struct thread *t = rec_find_thread(r, tid), *n;

	if (t)
		return t;
	if (pid <= 0)
		pid = rec_tgid_of(tid);
	if (pid <= 0)
		pid = tid;
	if (!rec_add_process(r, pid))
		return NULL;
	n = gp_grow(r->threads, &r->threads_cap, r->nthreads + 1, sizeof(*n));
	if (!n)
		return NULL;
	r->threads = n;
	t = &r->threads[r->nthreads++];
	memset(t, 0, sizeof(*t));
	t->stat_fd = -1;
	t->tid = tid;
	t->pid = pid;
	return t;
}

size_t rec_live_threads(const struct recorder *r)
{
	size_t i, n = 0;

	for (i = 0; i < r->nthreads; i++)
		n += !r->threads[i].gone;
	return n;
}

/*
 * Descriptors of /proc/TID/stat files are kept open only below this
 * number, half the usual soft limit of 1024, so that thousands of threads
 * cannot starve gcsprof of descriptors: beyond it the file is opened for
 * each read.
 */
#define STAT_FD_LIMIT 512

/* A thread's scheduler state letter, '?' if unknown, 0 if the thread is
 * gone, and in *CPU_NS the CPU time it has used (user and system, in
 * clock ticks: 10 ms steps), left alone if unknown. libgcswalk keeps the
 * thread's stat file open in t->stat_fd (re-read with pread: no open and
 * close per thread per tick), for the first STAT_FD_LIMIT descriptors. */
char rec_thread_stat(struct thread *t, uint64_t *cpu_ns)
{
	struct gcswalk_proc_thread info;
	int ret;

	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	ret = gcswalk_proc_thread((int)t->pid, (int)t->tid, &t->stat_fd, &info);
	if (t->stat_fd >= STAT_FD_LIMIT) {
		close(t->stat_fd);
		t->stat_fd = -1;
	}
	if (ret == GCSWALK_E_NO_PROCESS)
		return 0;
	if (ret != GCSWALK_OK)
		return '?';
	*cpu_ns = info.cpu_time_ns;
	return info.state;
}

void rec_thread_release(struct thread *t)
{
	if (t->stat_fd >= 0)
		close(t->stat_fd);
	t->stat_fd = -1;
}

void rec_process_release(struct process *p)
{
	gcswalk_symbolizer_free(p->cfi_sym);
	p->cfi_sym = NULL;
	gcswalk_target_close(p->target);
	p->target = NULL;
	free(p->written);
	p->written = NULL;
	p->nwritten = p->written_cap = 0;
}
