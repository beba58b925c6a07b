// SPDX-License-Identifier: MIT
/*
 * gcsprof record, perf method: the events. One event per CPU for each
 * task we are given (the launched command, or every thread of a process
 * with -p), with inherit set, so that every thread and process the target
 * creates later is sampled too. Each CPU's events share one ring buffer
 * (PERF_EVENT_IOC_SET_OUTPUT). A launched command's events start at its
 * exec (enable_on_exec): the profile begins with the program, as with the
 * ptrace method. Sampling is by frequency, on CPU cycles where there is a
 * PMU and on cpu-clock otherwise, so that a sample stands for an equal
 * share of CPU time whatever the number of threads.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "gcsprof.h"
#include "perf.h"

/* Ring size per CPU in pages (--mmap-pages, else room for RING_MS of
 * the deepest samples asked, at least the default), halved while the
 * kernel refuses (an unprivileged user's perf_event_mlock_kb), down to the
 * least. */
#define RING_PAGES_DEFAULT 128
#define RING_PAGES_MAX 4096
/* And all CPUs' rings together at most this much (beyond the default
 * each): a large machine's CPUs do not each need a deep ring's worth. */
#define RING_TOTAL_MAX_BYTES ((size_t)64 << 20)
#define RING_PAGES_MIN 8
/* What a ring holds before the recorder must have read it: the longest
 * the recorder may be kept from running (a busy host) without a loss.
 * Its poll() wakes at a quarter of the ring, and every 100 ms anyway. */
#define RING_MS 400

struct event_kind {
	const char *name;
	uint32_t type;
	uint64_t config;
};

/* In order of preference: cycles count only while a thread runs, and
 * work under QEMU's TCG too; cpu-clock is there without a PMU. */
static const struct event_kind event_kinds[] = {
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
};
#define NKINDS (sizeof(event_kinds) / sizeof(event_kinds[0]))

static int sys_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static void fill_attr(struct perf_event_attr *a, const struct event_kind *k, unsigned hz,
		      int at_exec, unsigned max_stack, size_t ring_bytes)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = k->type;
	a->config = k->config;
	a->freq = 1;
	a->sample_freq = hz;
	/* perf_records.c parses the fields in this order (struct
	 * perf_sample), and perf_limits.c counts their size. */
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
			 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN |
			 PERF_SAMPLE_REGS_USER;
	a->sample_max_stack = (uint16_t)max_stack;
	/* The shadow stack pointer, 0 when the chain came from frame
	 * records; on riscv64 ra too, where a leaf's caller is. */
	a->sample_regs_user = perf_user_regs()->mask;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	a->exclude_callchain_kernel = 1;
	a->inherit = 1;
	a->mmap = 1;
	a->mmap2 = 1;
	a->build_id = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->sample_id_all = 1;
	/* Time stamps on gcsprof's own clock. */
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->watermark = 1;
	/* Wake up at a quarter of the ring: one poll() and one drain for
	 * many samples, with three quarters left for the time it takes.
	 * (The kernel caps it at a ring smaller than asked.) */
	a->wakeup_watermark = (uint32_t)(ring_bytes / 4);
	a->disabled = at_exec;
	a->enable_on_exec = at_exec;
}

static const struct event_kind *kind_named(const char *name)
{
	size_t i;

	for (i = 0; i < NKINDS; i++)
		if (name && strcmp(event_kinds[i].name, name) == 0)
			return &event_kinds[i];
	return &event_kinds[0];
}

int perf_probe_event(const char **event, const char **why)
{
	static char msg[160];
	struct perf_event_attr a;
	size_t i;
	int fd, err = 0;

	/* The same event on ourselves: permission, PMU, the GCSPR register. */
	for (i = 0; i < NKINDS; i++) {
		fill_attr(&a, &event_kinds[i], 99, 1, 0, (size_t)RING_PAGES_MIN * 4096);
		a.inherit = 0;
		fd = sys_perf_event_open(&a, 0, -1);
		if (fd >= 0) {
			close(fd);
			*event = event_kinds[i].name;
			return 0;
		}
		if (!err || err == ENOENT || err == EOPNOTSUPP || err == ENODEV)
			err = errno;
	}
	snprintf(msg, sizeof(msg), "perf_event_open: %s%s", strerror(err),
		 err == EACCES || err == EPERM ?
		 " (see /proc/sys/kernel/perf_event_paranoid, or run as root)" : "");
	*why = msg;
	return err == EACCES || err == EPERM ? GP_EXIT_PERMISSION : GP_EXIT_UNSUPPORTED;
}

/* The ring's pages: --mmap-pages, or room for RING_MS of samples of the
 * deepest chain asked at the rate asked (a 2000-frame chain is 16 KB a
 * sample: 499 Hz of them fill the default 512 KB in 64 ms), a power of two
 * from the default up to RING_PAGES_MAX, and NCPUS rings within
 * RING_TOTAL_MAX_BYTES. */
static size_t ring_pages(const struct recording *rec, unsigned max_stack, size_t ncpus,
			 long page)
{
	size_t want = (size_t)rec->hz * RING_MS / 1000 * perf_sample_bytes(max_stack) / (size_t)page;
	size_t most = RING_TOTAL_MAX_BYTES / (size_t)page / (ncpus ? ncpus : 1);
	size_t pages = RING_PAGES_DEFAULT;

	if (rec->o->mmap_pages)
		return rec->o->mmap_pages;
	while (pages < want && pages < RING_PAGES_MAX && pages * 2 <= most)
		pages *= 2;
	return pages;
}

void perf_events_attr(struct recording *rec)
{
	struct perf_state *ps = perf_state(rec);

	fill_attr(&ps->attr, kind_named(rec->event), rec->hz, !rec->o->pid, ps->max_stack,
		  (size_t)RING_PAGES_DEFAULT * 4096);
}

/* The online CPUs, from /sys (ranges like "0-3,6"), else 0..N-1. */
static int online_cpus(int **cpus, size_t *n)
{
	char buf[512], *p;
	size_t cap = 0;
	ssize_t len = -1;
	int fd = open("/sys/devices/system/cpu/online", O_RDONLY | O_CLOEXEC);

	*cpus = NULL;
	*n = 0;
	if (fd >= 0) {
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	if (len <= 0) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);

		snprintf(buf, sizeof(buf), "0-%ld", c > 0 ? c - 1 : 0);
	} else {
		buf[len] = '\0';
	}
	for (p = buf; *p && *p != '\n';) {
		char *end;
		long lo = strtol(p, &end, 10), hi = lo, c;

		if (end == p || lo < 0)
			break;
		if (*end == '-')
			hi = strtol(end + 1, &end, 10);
		for (c = lo; c <= hi && c < 4096; c++) {
			int *g = gp_grow(*cpus, &cap, *n + 1, sizeof(**cpus));

			if (!g)
				return -1;
			*cpus = g;
			(*cpus)[(*n)++] = (int)c;
		}
		p = *end == ',' ? end + 1 : end;
		if (*end != ',')
			break;
	}
	return *n ? 0 : -1;
}

/* Thousands of threads with -p take an event per CPU each. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int perf_events_rings(struct recording *rec)
{
	struct perf_state *ps = perf_state(rec);
	int *cpus = NULL;
	size_t i, ncpus = 0;

	raise_fd_limit();
	if (online_cpus(&cpus, &ncpus) != 0) {
		free(cpus);
		return gp_error(GP_EXIT_SYSTEM, "cannot list the online CPUs");
	}
	ps->rings = calloc(ncpus, sizeof(*ps->rings));
	if (!ps->rings) {
		free(cpus);
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	}
	for (i = 0; i < ncpus; i++) {
		ps->rings[i].fd = -1;
		ps->rings[i].cpu = cpus[i];
	}
	ps->nrings = ncpus;
	/* Now that the CPUs are known: the rings' size, and the wake-up at a
	 * quarter of it (the events are opened after this). */
	ps->ring_pages = ring_pages(rec, ps->max_stack, ncpus, sysconf(_SC_PAGESIZE));
	ps->attr.wakeup_watermark = (uint32_t)(ps->ring_pages * (size_t)sysconf(_SC_PAGESIZE) / 4);
	free(cpus);
	return 0;
}

static int map_ring(struct perf_ring *rg, int fd, size_t asked)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t pages, least = asked < RING_PAGES_MIN ? asked : RING_PAGES_MIN;

	for (pages = asked; pages >= least && pages; pages /= 2) {
		void *m = mmap(NULL, (pages + 1) * (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED,
			       fd, 0);

		if (m != MAP_FAILED) {
			rg->fd = fd;
			rg->meta = m;
			rg->data = (unsigned char *)m + page;
			rg->size = pages * (uint64_t)page;
			return 0;
		}
		if (errno != EPERM && errno != ENOMEM)
			break;
	}
	return -1;
}

int perf_open_task_events(struct recording *rec, pid_t tid)
{
	struct perf_state *ps = perf_state(rec);
	size_t i;

	for (i = 0; i < ps->nrings; i++) {
		struct perf_ring *rg = &ps->rings[i];
		int fd = sys_perf_event_open(&ps->attr, tid, rg->cpu), *g;

		if (fd < 0)
			return -errno;
		g = gp_grow(ps->fds, &ps->fds_cap, ps->nfds + 1, sizeof(*g));
		if (!g) {
			close(fd);
			return -ENOMEM;
		}
		ps->fds = g;
		ps->fds[ps->nfds++] = fd;
		if (rg->fd < 0) {
			if (map_ring(rg, fd, ps->ring_pages) != 0)
				return -errno;
		} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, rg->fd) != 0) {
			return -errno;
		}
	}
	return 0;
}

void perf_disable_events(struct perf_state *ps)
{
	size_t i;

	for (i = 0; i < ps->nfds; i++)
		(void)ioctl(ps->fds[i], PERF_EVENT_IOC_DISABLE, 0);
}

void perf_events_close(struct perf_state *ps)
{
	size_t i;

	for (i = 0; i < ps->nrings; i++)
		if (ps->rings[i].meta)
			munmap(ps->rings[i].meta, ps->rings[i].size + (size_t)sysconf(_SC_PAGESIZE));
	for (i = 0; i < ps->nfds; i++)
		close(ps->fds[i]);
	free(ps->rings);
	free(ps->fds);
	ps->rings = NULL;
	ps->fds = NULL;
	ps->nrings = ps->nfds = 0;
}
