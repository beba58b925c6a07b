// SPDX-License-Identifier: MIT
/*
 * The least a recorder can be, for measuring what the kernel spends a
 * sample taking a call chain (bench/guest/cost.sh): samples COMMAND and
 * its children on cpu-clock at HZ, asks the kernel for the user call
 * chain (MODE chain: from the GCS or the frame records, as
 * kernel.perf_callchain_gcs says), for a copy of BYTES of the user stack
 * with the registers DWARF unwinding needs (stack:BYTES, what perf record
 * --call-graph dwarf asks), or for neither (none), and throws every sample
 * away unread. The kernel's work a sample then differs between the modes
 * by the chain alone.
 *
 * Why not perf record: it asks for the SVE vector length register with
 * the stack (where the CPU has SVE), which only the CPU's PMU may give, so
 * its DWARF mode cannot sample on cpu-clock; and a timer is needed because
 * the PMU stops counting while it handles its own overflow, hiding the
 * chain's cost from the instructions counted in the target.
 *
 * Usage: bench-sampler HZ none|chain|stack:BYTES COMMAND [ARG...]
 * Prints "bench-sampler: N samples, L lost, B bytes" on stderr and exits
 * with COMMAND's status.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* 8 MB: 128 samples of a 64 KB stack copy, drained at a quarter full. */
#define RING_PAGES 2048

struct ring {
	struct perf_event_mmap_page *meta;
	unsigned char *data;
	uint64_t size;
	uint64_t samples, lost, bytes;
};

static int usage(void)
{
	fprintf(stderr, "usage: bench-sampler HZ none|chain|stack:BYTES COMMAND [ARG...]\n");
	return 2;
}

/* The sampling event's attributes for MODE; 0, or -1 for a bad MODE. */
static int set_mode(struct perf_event_attr *a, const char *mode)
{
	char *end;
	unsigned long bytes;

	if (strcmp(mode, "none") == 0)
		return 0;
	if (strcmp(mode, "chain") == 0) {
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
		a->exclude_callchain_kernel = 1;
		return 0;
	}
	if (strncmp(mode, "stack:", 6) != 0)
		return -1;
	errno = 0;
	bytes = strtoul(mode + 6, &end, 10);
	if (errno || *end || bytes == 0 || bytes > 65528 || bytes % 8)
		return -1;
	a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	/* x29, x30, sp and pc: what an unwinder starts from. */
	a->sample_regs_user = (1ULL << 29) | (1ULL << 30) | (1ULL << 31) | (1ULL << 32);
	a->sample_stack_user = (uint32_t)bytes;
	return 0;
}

/* Counts the records the kernel wrote since the last call and frees
 * their room, reading nothing but their headers. */
static void drain(struct ring *r)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->data_tail;

	while (tail < head) {
		struct perf_event_header *h = (void *)(r->data + tail % r->size);

		if (h->size == 0)
			break;
		if (h->type == PERF_RECORD_SAMPLE)
			r->samples++;
		else if (h->type == PERF_RECORD_LOST)
			r->lost += ((uint64_t *)(h + 1))[1];
		r->bytes += h->size;
		tail += h->size;
	}
	__atomic_store_n(&r->meta->data_tail, head, __ATOMIC_RELEASE);
}

/* Forks COMMAND held at a pipe until the event is open, so that the
 * event (enable_on_exec) starts at its exec. */
static pid_t start_held(char **argv, int *release)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe(p) != 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(126);
		execvp(argv[0], argv);
		perror("bench-sampler: exec");
		_exit(127);
	}
	close(p[0]);
	*release = p[1];
	return pid;
}

static int open_ring(struct ring *r, int fd)
{
	long page = sysconf(_SC_PAGESIZE);
	void *m = mmap(NULL, (size_t)page * (RING_PAGES + 1), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (m == MAP_FAILED)
		return -1;
	r->meta = m;
	r->data = (unsigned char *)m + page;
	r->size = (uint64_t)page * RING_PAGES;
	return 0;
}

/* One event and ring a CPU: the kernel maps no inherited per-task event
 * (its children would all write into one ring). */
static int open_rings(struct perf_event_attr *a, pid_t pid, struct ring *rings, int *fds, int ncpu)
{
	for (int cpu = 0; cpu < ncpu; cpu++) {
		fds[cpu] = (int)syscall(SYS_perf_event_open, a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fds[cpu] < 0 || open_ring(&rings[cpu], fds[cpu]) != 0) {
			fprintf(stderr, "bench-sampler: perf_event_open or mmap on CPU %d: %s\n", cpu,
				strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* Drains the rings until the command ends; its wait status. */
static int follow(pid_t pid, struct ring *rings, int *fds, int ncpu)
{
	struct pollfd *pf = calloc((size_t)ncpu, sizeof(*pf));
	int st = 0;

	if (!pf) {
		perror("bench-sampler");
		kill(pid, SIGKILL);
	}
	for (;;) {
		for (int i = 0; pf && i < ncpu; i++)
			pf[i] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
		if (pf && poll(pf, (nfds_t)ncpu, 50) < 0 && errno != EINTR) {
			perror("bench-sampler: poll");
			kill(pid, SIGKILL);
		}
		for (int i = 0; i < ncpu; i++)
			drain(&rings[i]);
		if (waitpid(pid, &st, pf ? WNOHANG : 0) == pid)
			break;
	}
	for (int i = 0; i < ncpu; i++)
		drain(&rings[i]);
	free(pf);
	return st;
}

int main(int argc, char **argv)
{
	struct perf_event_attr a;
	unsigned long long samples = 0, lost = 0, bytes = 0;
	int ncpu = (int)sysconf(_SC_NPROCESSORS_CONF);
	struct ring *rings;
	int *fds, release, st;
	long hz;
	pid_t pid;

	if (argc < 4 || (hz = atol(argv[1])) <= 0)
		return usage();
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.freq = 1;
	a.sample_freq = (uint64_t)hz;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
	a.disabled = 1;
	a.enable_on_exec = 1;
	a.inherit = 1;
	a.exclude_kernel = 1;
	/* Woken at a quarter full: room for the samples that come in before
	 * this process runs again. */
	a.watermark = 1;
	a.wakeup_watermark = (uint32_t)(sysconf(_SC_PAGESIZE) * RING_PAGES / 4);
	if (set_mode(&a, argv[2]) != 0 || ncpu < 1)
		return usage();
	rings = calloc((size_t)ncpu, sizeof(*rings));
	fds = calloc((size_t)ncpu, sizeof(*fds));
	pid = rings && fds ? start_held(argv + 3, &release) : -1;
	if (pid < 0) {
		perror("bench-sampler: starting the command");
		return 1;
	}
	if (open_rings(&a, pid, rings, fds, ncpu) != 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return 1;
	}
	if (write(release, "g", 1) != 1 || close(release) != 0) {
		perror("bench-sampler: starting the command");
		return 1;
	}
	st = follow(pid, rings, fds, ncpu);
	for (int i = 0; i < ncpu; i++) {
		samples += rings[i].samples;
		lost += rings[i].lost;
		bytes += rings[i].bytes;
	}
	fprintf(stderr, "bench-sampler: %llu samples, %llu lost, %llu bytes\n", samples, lost, bytes);
	free(rings);
	free(fds);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
