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

/* Numeric field NAME ("Tgid:", "TracerPid:") of /proc/TID/status, 0 if
 * the thread is gone or the field is missing. */
long rec_status_field(pid_t tid, const char *name)
{
	char path[64], *line = NULL;
	size_t cap = 0, len = strlen(name);
	long value = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (getline(&line, &cap, f) > 0)
		if (strncmp(line, name, len) == 0) {
			value = strtol(line + len, NULL, 10);
			break;
		}
	free(line);
	fclose(f);
	return value;
}

pid_t rec_tgid_of(pid_t tid)
{
	return (pid_t)rec_status_field(tid, "Tgid:");
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

/* A thread's scheduler state letter from /proc/TID/stat, '?' if unknown,
 * 0 if the thread is gone, and in *CPU_NS the CPU time it has used (user
 * and system, in clock ticks: 10 ms steps), left alone if unknown. The
 * line is "tid (comm) S ppid ...": comm may hold anything, so the fields
 * are counted from the last ')'. Only a prefix is read: the fields we
 * want are near the start. The file stays open: a pread from offset 0
 * makes procfs generate it again, which saves an open and a close per
 * thread per tick. */
char rec_thread_stat(struct thread *t, uint64_t *cpu_ns)
{
	static long tick_ns;
	char path[64], buf[512], *p, *end;
	unsigned long long utime, stime;
	ssize_t n;
	int fd = t->stat_fd, err, field;

	if (fd < 0) {
		/* The task/ entry: /proc/TID/stat would count the CPU time
		 * of the whole thread group. */
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)t->pid, (int)t->tid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return errno == ENOENT || errno == ESRCH ? 0 : '?';
	}
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	err = errno;
	if (t->stat_fd < 0) {
		if (n > 0 && fd < STAT_FD_LIMIT)
			t->stat_fd = fd;
		else
			close(fd);
	}
	if (n <= 0)
		return n < 0 && err == ESRCH ? 0 : '?';
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2])
		return '?';
	/* utime and stime are fields 14 and 15; the state is field 3. */
	end = p + 2;
	for (field = 3; field < 14 && end; field++) {
		end = strchr(end, ' ');
		if (end)
			end++;
	}
	if (end && sscanf(end, "%llu %llu", &utime, &stime) == 2) {
		if (!tick_ns) {
			long hz = sysconf(_SC_CLK_TCK);

			tick_ns = 1000000000L / (hz > 0 ? hz : 100);
		}
		*cpu_ns = (uint64_t)(utime + stime) * (uint64_t)tick_ns;
	}
	return p[2];
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
