// SPDX-License-Identifier: MIT
/*
 * abuse-churn: many threads, then many processes, created and ended with
 * GCS on, and no GCS memory left behind: the process's own figures
 * (VmSize, the number and size of its "ss" mappings) must come back to
 * what they were, and the kernel's (MemAvailable, Slab, SUnreclaim,
 * PageTables, KernelStack, vm_area_struct objects) must not grow by more
 * than noise allows. Every figure is printed before and after.
 *
 * Usage: abuse-churn [THREADS [PROCESSES]]   (defaults 2000 and 300:
 * what fits in TCG's time; the `slow` CTest runs 10000 and 1000)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <time.h>

#include "abuse.h"
#include "../debug-kernel.h"

#define BATCH 16          /* threads alive at once */
#define WARMUP 64         /* threads first, so that glibc's stack cache is full */

/* What we measure; kB unless said otherwise. -1: not available. */
struct figures {
	long mem_available, slab, sunreclaim, page_tables, kernel_stack;
	long vma_objects;  /* active vm_area_struct objects, from /proc/slabinfo */
	long vm_size;
	long ss_count, ss_kb;
};

static long meminfo(const char *file, const char *key)
{
	char *line = NULL;
	size_t cap = 0, n = strlen(key);
	long v = -1;
	FILE *f = fopen(file, "r");

	if (!f)
		return -1;
	while (getline(&line, &cap, f) > 0)
		if (strncmp(line, key, n) == 0 && line[n] == ':') {
			v = strtol(line + n + 1, NULL, 10);
			break;
		}
	free(line);
	fclose(f);
	return v;
}

static long slab_objects(const char *cache)
{
	char *line = NULL;
	size_t cap = 0, n = strlen(cache);
	long v = -1;
	FILE *f = fopen("/proc/slabinfo", "r");

	if (!f)
		return -1;
	while (getline(&line, &cap, f) > 0)
		if (strncmp(line, cache, n) == 0 && line[n] == ' ') {
			v = strtol(line + n, NULL, 10);
			break;
		}
	free(line);
	fclose(f);
	return v;
}

/* Quiet the page cache first, so that what is left is what we did. */
static void settle(void)
{
	int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);

	sync();
	if (fd >= 0) {
		if (write(fd, "3\n", 2) != 2)
			tap_diag("drop_caches: %s", strerror(errno));
		close(fd);
	}
}

static int measure(struct figures *f)
{
	struct abuse_ss ss;

	settle();
	f->mem_available = meminfo("/proc/meminfo", "MemAvailable");
	f->slab = meminfo("/proc/meminfo", "Slab");
	f->sunreclaim = meminfo("/proc/meminfo", "SUnreclaim");
	f->page_tables = meminfo("/proc/meminfo", "PageTables");
	f->kernel_stack = meminfo("/proc/meminfo", "KernelStack");
	f->vma_objects = slab_objects("vm_area_struct");
	f->vm_size = meminfo("/proc/self/status", "VmSize");
	if (abuse_smaps(getpid(), 0, &ss))
		return -1;
	f->ss_count = ss.count;
	f->ss_kb = ss.kb;
	return f->mem_available < 0 ? -1 : 0;
}

static void print_figures(const char *what, const struct figures *a, const struct figures *b)
{
	tap_diag("%s: MemAvailable %ld -> %ld kB (%+ld), Slab %ld -> %ld kB (%+ld), "
		 "SUnreclaim %ld -> %ld kB (%+ld)", what, a->mem_available, b->mem_available,
		 b->mem_available - a->mem_available, a->slab, b->slab, b->slab - a->slab,
		 a->sunreclaim, b->sunreclaim, b->sunreclaim - a->sunreclaim);
	tap_diag("%s: PageTables %ld -> %ld kB, KernelStack %ld -> %ld kB, vm_area_struct %ld -> %ld",
		 what, a->page_tables, b->page_tables, a->kernel_stack, b->kernel_stack,
		 a->vma_objects, b->vma_objects);
	tap_diag("%s: process VmSize %ld -> %ld kB, ss mappings %ld (%ld kB) -> %ld (%ld kB)", what,
		 a->vm_size, b->vm_size, a->ss_count, a->ss_kb, b->ss_count, b->ss_kb);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Each thread checks that it runs on a GCS of its own, not main's. */
static uint64_t main_gcs_lo, main_gcs_hi;
static long bad_threads;

static void *worker(void *arg)
{
	uint64_t g = abuse_gcspr();

	(void)arg;
	if (g == 0 || (g >= main_gcs_lo && g < main_gcs_hi) || abuse_recurse(64) != 64)
		__atomic_add_fetch(&bad_threads, 1, __ATOMIC_RELAXED);
	return NULL;
}

static long run_threads(long n)
{
	pthread_t t[BATCH];
	long done = 0;
	int i, k;

	while (done < n) {
		k = n - done < BATCH ? (int)(n - done) : BATCH;
		for (i = 0; i < k; i++)
			if (pthread_create(&t[i], NULL, worker, NULL))
				return -1;
		for (i = 0; i < k; i++)
			pthread_join(t[i], NULL);
		done += k;
	}
	return done;
}

static long run_processes(long n)
{
	long i, bad = 0;
	int status;

	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return -1;
		if (pid == 0) {
			/* Write the copied GCS (breaking CoW), and have a thread too. */
			pthread_t t;

			if (abuse_recurse(256) != 256 || pthread_create(&t, NULL, worker, NULL) ||
			    pthread_join(t, NULL) || bad_threads)
				_exit(1);
			_exit(0);
		}
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
	}
	return bad;
}

/*
 * Kernel memory moves by noise: free pages parked on per-CPU lists do not
 * count as available (MemAvailable moved by 1 to 3 MB over 2,000 threads
 * with no leak), proc inodes and dentries come and go. A leaked GCS is at
 * least one page per thread or process. So: Slab may grow by a quarter of
 * a page per unit (at least 2 MB), MemAvailable drop by half a page per
 * unit (at least 6 MB).
 */
static int kernel_ok(const struct figures *a, const struct figures *b, long units)
{
	long allow_slab = units > 2048 ? units : 2048;
	long allow_used = 2 * units > 6144 ? 2 * units : 6144;
	long used = a->mem_available - b->mem_available;
	long slab = b->slab - a->slab;

	tap_diag("kernel: %ld kB less available (allowed %ld), Slab %+ld kB (allowed %ld)", used,
		 allow_used, slab, allow_slab);
	/* The debug kernel (vm/run says so on the command line) keeps freed
	 * objects in KASAN's quarantine, megabytes of Slab that are no leak:
	 * kmemleak, which vm/run's guest runs after the test, judges there. */
	if (on_debug_kernel()) {
		tap_diag("debug kernel: Slab holds KASAN's quarantine; kmemleak's scan judges leaks");
		return used <= allow_used;
	}
	return used <= allow_used && slab <= allow_slab;
}

static void check_group(const char *name, const struct figures *a, const struct figures *b,
			long units)
{
	int process_ok = b->ss_count == a->ss_count && b->ss_kb == a->ss_kb &&
			 b->vm_size == a->vm_size;

	print_figures(name, a, b);
	if (!process_ok)
		tap_diag("%s: the process's GCS mappings or VmSize did not come back", name);
	tap_result(process_ok && kernel_ok(a, b, units), name);
}

int main(int argc, char **argv)
{
	long threads = argc > 1 ? strtol(argv[1], NULL, 10) : 2000;
	long procs = argc > 2 ? strtol(argv[2], NULL, 10) : 300;
	struct figures a, b;
	double t0;
	long r;

	if (threads <= 0 || procs <= 0) {
		fprintf(stderr, "usage: abuse-churn [THREADS [PROCESSES]] (positive numbers)\n");
		exit(2);
	}
	ABUSE_ENABLE_GCS_OR_SKIP();
	if (abuse_mapping(getpid(), abuse_gcspr(), &main_gcs_lo, &main_gcs_hi))
		tap_skip_all("the main thread's GCS is not in /proc/self/maps");
	tap_plan(4);

	if (run_threads(WARMUP) != WARMUP || measure(&a)) {
		tap_print("Bail out! could not start threads or read /proc\n");
		exit(TAP_EXIT_FAIL);
	}
	t0 = now();
	r = run_threads(threads);
	tap_diag("%ld threads created and joined in %.1f s", r, now() - t0);
	tap_result(r == threads && bad_threads == 0,
		   "every thread ran on a GCS of its own and made nested calls");
	if (measure(&b))
		tap_result(0, "threads: no GCS memory left behind");
	else
		check_group("threads: no GCS memory left behind", &a, &b, threads);

	/* A warm-up as long as half the run: the first forks fill per-CPU
	 * page lists and the pid and proc caches (7 MB less available after
	 * 1,000 processes with Slab unchanged, when the warm-up was 8). */
	if (run_processes(procs / 2 > 8 ? procs / 2 : 8) != 0 || measure(&a)) {
		tap_print("Bail out! could not fork or read /proc\n");
		exit(TAP_EXIT_FAIL);
	}
	t0 = now();
	r = run_processes(procs);
	tap_diag("%ld processes forked and reaped in %.1f s (%ld failed)", procs, now() - t0, r);
	tap_result(r == 0, "every child wrote its copied GCS, ran a GCS thread and exited 0");
	if (measure(&b))
		tap_result(0, "processes: no GCS memory left behind");
	else
		check_group("processes: no GCS memory left behind", &a, &b, procs);
	tap_finish();
}
