// SPDX-License-Identifier: MIT
/*
 * storm-sample: a sampling storm (docs/storm.md).
 *
 *   storm-sample [SECONDS]     (default 30)
 *
 * With GCS on (from main()), threads that switch GCSs with GCSSS1/GCSSS2
 * between map_shadow_stack stacks in a tight loop (now and then spinning
 * between the two), a thread that takes signals nested six deep, one that
 * forks, execs (a GCS-marked Debian program, GCS enforced by glibc's
 * tunable) and makes short-lived threads, and one whose GCSPR_EL0 a tracer
 * process keeps re-pointing through ptrace while reading NT_ARM_GCS in a
 * loop (tracer.c); meanwhile one perf event, inherited by every thread and
 * child, samples at the highest rate the kernel allows
 * (perf_event_max_sample_rate) with user and kernel call chains.
 *
 * Every sample of this process is checked (chain-check.h) where the kernel
 * walks the GCS (kernel.perf_callchain_gcs), and the others (children)
 * for entries a GCS walk cannot give (0 or unaligned). Exit 0 if every
 * chain passed and every actor did its work, 1 otherwise, 4 without GCS.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../tap.h"
#include "chain-check.h"
#include "gcs-switch.h"
#include "sampler.h"
#include "tracer.h"

#define GCS_SIZE (64 * 1024)

static volatile int stop;
static uint64_t switches, signals, forks, execs, threads_made, victim_rounds;
static struct storm_tracer *tracer;

static void sample_me(void);

static __attribute__((noinline)) uint64_t work(int n)
{
	uint64_t v = n > 0 ? work(n - 1) + 1 : 0;

	for (volatile int i = 0; i < 200; i++)
		;
	return v;
}

static void work_fn(void *arg)
{
	work((int)(uintptr_t)arg);
}

static uint64_t *new_gcs(int token)
{
	long r = syscall(NR_map_shadow_stack, 0, GCS_SIZE,
			 token ? SHADOW_STACK_SET_TOKEN | SHADOW_STACK_SET_MARKER : 0);

	if (r == -1) {
		perror("storm-sample: map_shadow_stack");
		exit(1);
	}
	return (uint64_t *)(uintptr_t)r;
}

static void *switcher(void *arg)
{
	uint64_t *cap[2];
	unsigned int n = (unsigned int)(uintptr_t)arg;
	sample_me();

	for (int i = 0; i < 2; i++)
		cap[i] = new_gcs(1) + GCS_SIZE / 8 - 2;
	while (!stop) {
		storm_call_on_gcs(cap[n & 1], work_fn, (void *)(uintptr_t)(n % 40));
		if (n % 64 == 0)
			storm_window(cap[n & 1], 1000, 1000);
		n++;
		__atomic_fetch_add(&switches, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static __thread int nesting;

static void nested_handler(int sig)
{
	if (++nesting < 6)
		syscall(SYS_tgkill, getpid(), gettid(), sig);
	work(10);
	nesting--;
}

static void *signaler(void *arg)
{
	(void)arg;
	sample_me();
	while (!stop) {
		syscall(SYS_tgkill, getpid(), gettid(), SIGUSR1);
		__atomic_fetch_add(&signals, 6, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void *short_thread(void *arg)
{
	return (void *)(uintptr_t)work((int)(uintptr_t)arg);
}

/* vfork + execve of a GCS-marked Debian program, GCS enforced by glibc. */
static __attribute__((noinline)) pid_t spawn_true(void)
{
	char *argv[] = { (char *)"/usr/bin/true", NULL };
	char *env[] = { (char *)"GLIBC_TUNABLES=glibc.cpu.aarch64_gcs=1", NULL };
	pid_t pid = vfork();

	if (pid == 0) {
		execve(argv[0], argv, env);
		_exit(127);
	}
	return pid;
}

static void *forker(void *arg)
{
	sample_me();
	for (unsigned int n = (unsigned int)(uintptr_t)arg; !stop; n++) {
		pthread_t th;
		pid_t pid = n % 2 ? spawn_true() : fork();
		int st;

		if (pid == 0)
			_exit((int)work(20) == 20 ? 0 : 1);
		if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0)
			__atomic_fetch_add(n % 2 ? &execs : &forks, 1, __ATOMIC_RELAXED);
		if (pthread_create(&th, NULL, short_thread, (void *)(uintptr_t)(n % 30)) == 0) {
			pthread_join(th, NULL);
			__atomic_fetch_add(&threads_made, 1, __ATOMIC_RELAXED);
		}
	}
	return NULL;
}

/* The thread the tracer re-points: calls, and takes no signal. */
static void *victim(void *arg)
{
	sigset_t all;

	(void)arg;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	sample_me();
	__atomic_store_n(&tracer->victim, gettid(), __ATOMIC_RELEASE);
	while (!stop) {
		if (work(30) != 30)
			abort();
		__atomic_fetch_add(&victim_rounds, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

struct tally {
	pid_t self;
	int gcs_walk;
	uint64_t limit;
	uint64_t ours, children, bad, victim_samples;
	char first_bad[200];
};

static void check(void *arg, const struct storm_sample *s)
{
	struct tally *t = arg;
	const char *why = NULL;
	uint64_t kernel_entries = s->nr - s->nr_user - 1 - (s->nr_user < s->nr - 1);

	if ((pid_t)s->pid != t->self && !s->user)
		return; /* a kernel thread */
	if (!s->user) {
		why = "no user chain";
	} else if ((pid_t)s->pid == t->self) {
		t->ours++;
		if ((pid_t)s->tid == tracer->victim)
			t->victim_samples++;
		if (t->gcs_walk)
			why = storm_chain_check(s->user, s->nr_user, t->limit - kernel_entries);
	} else {
		t->children++;
		for (uint64_t i = 1; t->gcs_walk && i < s->nr_user && !why; i++)
			if (s->user[i] == 0 || (s->user[i] & 3))
				why = "a 0 or unaligned entry in a child's chain";
	}
	if (why && !t->bad++)
		snprintf(t->first_bad, sizeof(t->first_bad), "pid %u tid %u pc %#llx, %llu entries: %s",
			 s->pid, s->tid, (unsigned long long)s->ip, (unsigned long long)s->nr_user,
			 why);
}

/*
 * One event per thread, opened by the thread itself: perf maps no ring
 * buffer of an inherited event, so the short-lived threads and the
 * children are not sampled, every long-lived thread is.
 */
#define MAX_SAMPLERS 16
static struct storm_sampler samplers[MAX_SAMPLERS];
static int nsamplers, sampler_errno;
static pthread_mutex_t samplers_lock = PTHREAD_MUTEX_INITIALIZER;

static void sample_me(void)
{
	struct perf_event_attr a;
	long rate = storm_max_sample_rate();

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_CPU_CYCLES;
	a.freq = 1;
	a.sample_freq = rate > 0 ? (uint64_t)rate : 1000;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN;
	if (storm_gcs_callchains()) {
		/* Only the series has GCSPR as a user register. */
		a.sample_type |= PERF_SAMPLE_REGS_USER;
		a.sample_regs_user = 1ULL << STORM_PERF_REG_GCSPR;
	}
	a.exclude_hv = 1;
	pthread_mutex_lock(&samplers_lock);
	/* The kernel lowers perf_event_max_sample_rate while the storm runs
	 * (each sample takes long under TCG), so the rate just read may be
	 * too high by the time of the open (EINVAL): read it again, lower. */
	for (int tries = 0; nsamplers < MAX_SAMPLERS && tries < 8; tries++) {
		if (storm_sampler_open(&samplers[nsamplers], &a, 0, -1, 32) == 0) {
			__atomic_store_n(&nsamplers, nsamplers + 1, __ATOMIC_RELEASE);
			break;
		}
		sampler_errno = errno;
		if (errno != EINVAL)
			break;
		rate = storm_max_sample_rate();
		a.sample_freq = rate > 0 && (uint64_t)rate < a.sample_freq / 2 ? (uint64_t)rate :
										 a.sample_freq / 2;
		if (!a.sample_freq)
			break;
	}
	pthread_mutex_unlock(&samplers_lock);
}

static void drain_all(struct tally *t)
{
	int n = __atomic_load_n(&nsamplers, __ATOMIC_ACQUIRE);

	for (int i = 0; i < n; i++)
		storm_sampler_drain(&samplers[i], check, t);
}

static long read_max_stack(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_stack", "r");
	long v = 127;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = 127;
		fclose(f);
	}
	return v;
}

static pid_t start_tracer(void)
{
	pid_t pid;

	tracer->spare[0] = (uint64_t)(uintptr_t)new_gcs(0);
	tracer->spare[1] = (uint64_t)(uintptr_t)new_gcs(0);
	tracer->spare_size = GCS_SIZE;
	while (!__atomic_load_n(&tracer->victim, __ATOMIC_ACQUIRE))
		usleep(1000);
	pid = fork();
	if (pid == 0)
		storm_tracer_run(tracer);
	return pid;
}

/* Everything but the drain loop: started, in the order that matters. */
static int run_storm(double seconds, struct tally *t)
{
	void *(*const actors[])(void *) = { switcher, switcher, signaler, forker, victim };
	const int nactors = (int)(sizeof(actors) / sizeof(actors[0]));
	pthread_t th[8];
	struct sigaction sa;
	pid_t tracer_pid;
	double end;
	int st = -1;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = nested_handler;
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGUSR1, &sa, NULL);
	for (int i = 0; i < nactors; i++)
		if (pthread_create(&th[i], NULL, actors[i], (void *)(uintptr_t)i) != 0)
			return -1;
	tracer_pid = start_tracer();
	end = storm_now() + seconds;
	while (storm_now() < end) {
		drain_all(t);
		usleep(10000);
	}
	__atomic_store_n(&tracer->stop, 1, __ATOMIC_RELEASE);
	if (tracer_pid > 0)
		waitpid(tracer_pid, &st, 0);
	stop = 1;
	for (int i = 0; i < nactors; i++)
		pthread_join(th[i], NULL);
	drain_all(t);
	return tracer_pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static __attribute__((noinline)) void storm_main(double seconds)
{
	struct tally t;
	uint64_t ra = (uint64_t)(uintptr_t)__builtin_return_address(0), lost = 0;
	int traced;

	memset(&t, 0, sizeof(t));
	t.self = getpid();
	t.gcs_walk = storm_gcs_callchains();
	t.limit = (uint64_t)read_max_stack();
	tracer = mmap(NULL, sizeof(*tracer), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (tracer == MAP_FAILED || storm_maps_load() != 0) {
		perror("storm-sample: mmap or /proc/self/maps");
		exit(1);
	}
	sample_me();
	if (nsamplers == 0) {
		fprintf(stderr, "storm-sample: perf_event_open: %s\n", strerror(sampler_errno));
		exit(1);
	}
	/* The main thread's GCS starts in main(); the switched-to GCSs in the
	 * switch routine; a walk in the window stops at its in-progress cap. */
	storm_chain_add_root(ra, ra + 4);
	storm_chain_add_root((uint64_t)(uintptr_t)storm_call_on_gcs,
			     (uint64_t)(uintptr_t)storm_call_on_gcs_end);
	storm_chain_add_root((uint64_t)(uintptr_t)storm_window_ret,
			     (uint64_t)(uintptr_t)storm_window_ret + 4);
	tap_plan(3);
	traced = run_storm(seconds, &t) == 0;
	for (int i = 0; i < nsamplers; i++) {
		lost += samplers[i].lost;
		storm_sampler_close(&samplers[i]);
	}
	tap_diag("%.0f s: %llu switches, %llu signals, %llu forks, %llu execs, %llu threads made; "
		 "victim: %llu rounds, %llu re-points, %llu NT_ARM_GCS reads",
		 seconds, (unsigned long long)switches, (unsigned long long)signals,
		 (unsigned long long)forks, (unsigned long long)execs,
		 (unsigned long long)threads_made, (unsigned long long)victim_rounds,
		 (unsigned long long)tracer->repoints, (unsigned long long)tracer->regset_reads);
	tap_diag("%d threads sampled at %ld Hz (perf_event_max_sample_rate)", nsamplers,
		 storm_max_sample_rate());
	tap_diag("samples: %llu of this process (%llu of the re-pointed thread), %llu of others, "
		 "%llu lost; chains checked %s", (unsigned long long)t.ours,
		 (unsigned long long)t.victim_samples, (unsigned long long)t.children,
		 (unsigned long long)lost, t.gcs_walk ? "as GCS walks" : "loosely (frame records)");
	if (tracer->error[0])
		tap_diag("tracer: %s", tracer->error);
	tap_result(traced && tracer->repoints > 0 && victim_rounds > 0,
		   "the tracer re-pointed the running thread's GCS and it ran on");
	tap_result(switches > 0 && signals > 0 && forks > 0 && execs > 0 && threads_made > 0,
		   "every actor made progress");
	if (t.bad)
		tap_diag("%llu bad chains; first: %s", (unsigned long long)t.bad, t.first_bad);
	if (nsamplers != 6)
		tap_diag("%d of the 6 threads could not sample themselves: %s", 6 - nsamplers,
			 strerror(sampler_errno));
	tap_result(t.ours > 0 && t.bad == 0 && nsamplers == 6, "every sampled call chain is well formed");
	tap_finish();
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 30;

	if (!(getauxval(AT_HWCAP) & HWCAP_GCS))
		tap_skip_all("no HWCAP_GCS: this CPU or kernel has no GCS");
	if (gcs_raw_prctl(PR_SET_SHADOW_STACK_STATUS, PR_SHADOW_STACK_ENABLE) != 0)
		tap_skip_all("PR_SET_SHADOW_STACK_STATUS(ENABLE) failed");
	if (argc > 2 || seconds <= 0) {
		fprintf(stderr, "usage: storm-sample [SECONDS]\n");
		exit(2);
	}
	storm_main(seconds);
}
