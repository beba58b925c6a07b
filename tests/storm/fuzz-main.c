// SPDX-License-Identifier: MIT
/*
 * storm-fuzz: a system-call fuzzer aimed at the GCS series (docs/storm.md).
 *
 *   storm-fuzz [--seed N] [--calls N] [--seconds S] [--procs P] [--threads T]
 *              [--no-sample]
 *
 * GCS is turned on in main() before anything else, so every worker
 * process (forked from main) and every thread and child they make starts
 * with GCS on; each worker checks that with PR_GET_SHADOW_STACK_STATUS.
 * P worker processes of T threads each make random operations (fuzz.h
 * lists them) until N calls were made in all or S seconds passed; a worker
 * that an operation killed (a GCS it broke, a forged frame) is replaced by
 * the next generation. While they run, each thread samples itself with
 * perf call chains, so the kernel walks GCSs in every state the fuzzing
 * leaves them in, and every chain read back is checked. --no-sample: none.
 *
 * Seeds: every thread's stream is derived from (seed, worker, generation,
 * thread), so one seed replays the same operations and arguments in each
 * thread; how the threads and processes interleave is the scheduler's.
 * --procs 1 --threads 1 replays one sequence exactly.
 *
 * Exit: 0 when every invariant held and every chain was well formed, 1
 * otherwise (the first problem is printed), 2 for bad usage, 4 without GCS.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz.h"
#include "sampler.h"

struct fz_shared *fz;
const char *fz_self = "/proc/self/exe";
__thread const char *fz_op_name = "";

const struct fz_op fz_ops[] = {
	{ "prctl-get", fz_op_prctl_get, 6 },
	{ "prctl-set", fz_op_prctl_set, 5 },
	{ "prctl-lock", fz_op_prctl_lock, 1 },
	{ "map-shadow-stack", fz_op_map_shadow_stack, 8 },
	{ "mmap", fz_op_mmap, 4 },
	{ "mprotect", fz_op_mprotect, 5 },
	{ "munmap", fz_op_munmap, 4 },
	{ "mremap", fz_op_mremap, 4 },
	{ "madvise", fz_op_madvise, 6 },
	{ "process-vm", fz_op_process_vm, 3 },
	{ "proc-mem", fz_op_proc_mem, 2 },
	{ "gcs-switch", fz_op_gcs_switch, 2 },
	{ "gcs-insn", fz_op_gcs_insn, 1 },
	{ "fork", fz_op_fork, 2 },
	{ "vfork-exec", fz_op_vfork_exec, 1 },
	{ "clone-vm", fz_op_clone_vm, 1 },
	{ "thread", fz_op_thread, 2 },
	{ "ptrace-gcs", fz_op_ptrace_gcs, 3 },
	{ "perf", fz_op_perf, 2 },
	{ "sigreturn", fz_op_sigreturn, 2 },
	{ "signal-nest", fz_op_signal_nest, 3 },
};
const unsigned int fz_nops = sizeof(fz_ops) / sizeof(fz_ops[0]);

static const char *const call_names[FZ_NCALLS] = {
	"prctl", "map_shadow_stack", "mmap", "mprotect", "munmap", "mremap", "madvise",
	"clone", "fork", "vfork", "execve", "ptrace", "perf_event_open", "rt_sigreturn",
	"kill/tgkill", "wait4", "process_vm_*", "/proc/self/mem", "(GCS instructions)",
};

static const char *const invariant_names[FZ_NINVARIANTS] = {
	"PR_SET accepted but PR_GET differs", "forked child without its parent's GCS mode",
	"exec'd child without GCS", "NT_ARM_GCS set accepted but reads back differently",
	"child hung or unkillable", "worker started without GCS",
};

struct options {
	uint64_t seed;
	uint64_t calls;
	double seconds;
	int procs, threads, sample;
};

static struct options opt = { 0, 20000, 90, 2, 3, 1 };
static double deadline;

void fz_problem(enum fz_invariant inv, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* The first few of each kind, each on one line. */
	if (__atomic_fetch_add(&fz->invariant[inv], 1, __ATOMIC_RELAXED) < 8)
		fprintf(stderr, "storm-fuzz: %s (%s)\n", line, invariant_names[inv]);
	if (!fz->first_problem[0])
		snprintf(fz->first_problem, sizeof(fz->first_problem), "%.250s", line);
}

void fz_one(struct fz_thread *t)
{
	static unsigned int total_weight;
	unsigned int w, i;

	if (!total_weight)
		for (i = 0; i < fz_nops; i++)
			total_weight += fz_ops[i].weight;
	w = (unsigned int)storm_below(&t->rng, total_weight);
	for (i = 0; w >= fz_ops[i].weight; i++)
		w -= fz_ops[i].weight;
	fz_op_name = fz_ops[i].name;
	fz_ops[i].fn(t);
}

static int budget_left(void)
{
	return __atomic_load_n(&fz->total, __ATOMIC_RELAXED) < opt.calls && storm_now() < deadline;
}

/* Samples of a thread's own event: checked, counted. */
static void thread_sample(void *arg, const struct storm_sample *s)
{
	int gcs_walk = *(int *)arg;

	__atomic_fetch_add(&fz->samples, 1, __ATOMIC_RELAXED);
	for (uint64_t i = 1; gcs_walk && i < s->nr_user; i++)
		if (s->user[i] == 0 || (s->user[i] & 3)) {
			__atomic_fetch_add(&fz->bad_chains, 1, __ATOMIC_RELAXED);
			return;
		}
}

/*
 * The event each fuzzing thread samples itself with, at the highest rate
 * the kernel allows, so that the kernel walks its GCS in whatever state
 * the operations leave it. (perf maps no ring buffer of an inherited
 * event, hence one per thread.)
 */
static int thread_sampler(struct storm_sampler *s)
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
	a.exclude_hv = 1;
	return fz_count(FZ_PERF_EVENT_OPEN, storm_sampler_open(s, &a, 0, -1, 16)) == 0 ? 0 : -1;
}

static void *worker_thread(void *arg)
{
	struct fz_thread *t = arg;
	struct storm_sampler s;
	int sampling = opt.sample && thread_sampler(&s) == 0, gcs_walk = storm_gcs_callchains();

	for (unsigned int n = 1; budget_left(); n++) {
		fz_one(t);
		if (sampling && n % 16 == 0)
			storm_sampler_drain(&s, thread_sample, &gcs_walk);
	}
	if (sampling) {
		storm_sampler_drain(&s, thread_sample, &gcs_walk);
		storm_sampler_close(&s);
	}
	return NULL;
}

static struct fz_pool pool = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* A child forked while another thread held the pool must find it free. */
static void pool_lock(void) { pthread_mutex_lock(&pool.lock); }
static void pool_unlock(void) { pthread_mutex_unlock(&pool.lock); }

static void __attribute__((noreturn)) worker(int index, int generation)
{
	struct fz_thread t[16];
	pthread_t th[16];

	setpgid(0, 0);
	if (!(fz_gcs_status() & PR_SHADOW_STACK_ENABLE))
		fz_problem(FZ_INV_WORKER_NO_GCS, "worker %d: GCS mode %#lx", index, fz_gcs_status());
	pthread_atfork(pool_lock, pool_unlock, pool_unlock);
	fz_signals_init();
	for (int i = 0; i < opt.threads; i++) {
		t[i].rng = storm_derive(storm_derive(opt.seed, (uint64_t)index, (uint64_t)generation),
					(uint64_t)i, 0);
		t[i].pool = &pool;
		t[i].depth = 0;
		if (pthread_create(&th[i], NULL, worker_thread, &t[i]) != 0)
			_exit(3);
	}
	for (int i = 0; i < opt.threads; i++)
		pthread_join(th[i], NULL);
	_exit(0);
}

static void report(const int *deaths, double secs)
{
	printf("storm-fuzz: %llu calls in %.0f s (seed %#llx)\n",
	       (unsigned long long)fz->total, secs, (unsigned long long)opt.seed);
	printf("%-20s %10s %10s\n", "call", "made", "failed");
	for (int c = 0; c < FZ_NCALLS; c++)
		printf("%-20s %10llu %10llu\n", call_names[c], (unsigned long long)fz->calls[c],
		       (unsigned long long)fz->failed[c]);
	printf("perf samples read back: %llu, malformed chains: %llu\n",
	       (unsigned long long)fz->samples, (unsigned long long)fz->bad_chains);
	printf("children killed by a signal:");
	for (int s = 1; s < 65; s++)
		if (fz->child_signals[s])
			printf(" %s %llu", strsignal(s), (unsigned long long)fz->child_signals[s]);
	printf("\nworkers that ended by a fatal signal:");
	for (int s = 1; s < 64; s++)
		if (deaths[s])
			printf(" %s %d", strsignal(s), deaths[s]);
	printf("; after exiting non-zero: %d\n", deaths[64]);
	for (int i = 0; i < FZ_NINVARIANTS; i++)
		printf("invariant broken %llu times: %s\n", (unsigned long long)fz->invariant[i],
		       invariant_names[i]);
	fflush(stdout);
}

/* Every task of process group PGID, with its state: why a worker is stuck. */
static void dump_group(pid_t pgid)
{
	DIR *proc = opendir("/proc");
	struct dirent *d;

	while (proc && (d = readdir(proc))) {
		char path[64], state[320];
		int pid = atoi(d->d_name);
		DIR *task;
		struct dirent *t;

		if (pid <= 0 || getpgid(pid) != pgid)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task", pid);
		task = opendir(path);
		while (task && (t = readdir(task))) {
			int tid = atoi(t->d_name);

			if (tid <= 0)
				continue;
			fz_describe_task(pid, tid, state, sizeof(state));
			fprintf(stderr, "storm-fuzz: stuck worker %d: task %d/%d: %s\n", (int)pgid, pid,
				tid, state);
		}
		if (task)
			closedir(task);
	}
	if (proc)
		closedir(proc);
}

static pid_t spawn(int index, int generation)
{
	pid_t pid = fork();

	if (pid == 0)
		worker(index, generation);
	return pid;
}

/* Keep opt.procs workers going until the budget is spent; reap orphans. */
static int supervise(int *deaths)
{
	pid_t slot[64];
	int gen[64], live = 0, st;
	double hard = deadline + 120;

	for (int i = 0; i < opt.procs; i++) {
		gen[i] = 0;
		slot[i] = spawn(i, 0);
		live += slot[i] > 0;
	}
	while (live > 0) {
		pid_t pid = waitpid(-1, &st, WNOHANG | __WALL);

		if (pid == 0) {
			if (storm_now() > hard) {
				fprintf(stderr, "storm-fuzz: workers still running %.0f s after the deadline\n",
					hard - deadline);
				for (int i = 0; i < opt.procs; i++)
					if (slot[i] > 0) {
						dump_group(slot[i]);
						kill(-slot[i], SIGKILL);
					}
				return -1;
			}
			usleep(50000);
			continue;
		}
		if (pid < 0)
			break;
		for (int i = 0; i < opt.procs; i++) {
			if (slot[i] != pid)
				continue;
			kill(-pid, SIGKILL); /* what it left behind (stopped tracees too) */
			slot[i] = -1;
			live--;
			if (WIFSIGNALED(st))
				deaths[WTERMSIG(st) & 63]++;
			else if (WEXITSTATUS(st) != 0)
				deaths[64]++;
			/* Killed, or left early (its threads ended): the next one. */
			if (budget_left()) {
				slot[i] = spawn(i, ++gen[i]);
				live += slot[i] > 0;
			}
		}
	}
	/* Every orphan the workers left, reaped (we are their subreaper). */
	while (waitpid(-1, &st, __WALL) > 0)
		;
	return 0;
}

static int parse(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		char *end = NULL;

		if (!strcmp(a, "--no-sample")) {
			opt.sample = 0;
			continue;
		}
		if (!v)
			return -1;
		i++;
		errno = 0;
		if (!strcmp(a, "--seed"))
			opt.seed = strtoull(v, &end, 0);
		else if (!strcmp(a, "--calls"))
			opt.calls = strtoull(v, &end, 0);
		else if (!strcmp(a, "--seconds"))
			opt.seconds = strtod(v, &end);
		else if (!strcmp(a, "--procs"))
			opt.procs = (int)strtol(v, &end, 0);
		else if (!strcmp(a, "--threads"))
			opt.threads = (int)strtol(v, &end, 0);
		else
			return -1;
		if (errno || !end || *end)
			return -1;
	}
	if (opt.procs < 1 || opt.procs > 64 || opt.threads < 1 || opt.threads > 16 ||
	    opt.seconds <= 0)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	int deaths[65] = { 0 };
	double start;
	int bad;

	/* First, in main itself: nothing called before has to return. */
	if (getauxval(AT_HWCAP) & HWCAP_GCS)
		gcs_raw_prctl(PR_SET_SHADOW_STACK_STATUS, PR_SHADOW_STACK_ENABLE);
	if (argc == 2 && !strcmp(argv[1], "--exec-child"))
		exit(fz_gcs_status() == PR_SHADOW_STACK_ENABLE ? 0 : 5);
	if (parse(argc, argv) != 0) {
		fprintf(stderr, "usage: storm-fuzz [--seed N] [--calls N] [--seconds S] [--procs 1-64] "
				"[--threads 1-16] [--no-sample]\n");
		exit(2);
	}
	if (!(fz_gcs_status() & PR_SHADOW_STACK_ENABLE)) {
		printf("storm-fuzz: SKIP: no GCS on this CPU or kernel\n");
		exit(4);
	}
	if (!opt.seed)
		opt.seed = ((uint64_t)getpid() << 32) ^ (uint64_t)(storm_now() * 1e9);
	fz = mmap(NULL, sizeof(*fz), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (fz == MAP_FAILED || prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
		perror("storm-fuzz: setting up");
		exit(1);
	}
	printf("storm-fuzz: seed %#llx, %llu calls or %.0f s, %d processes x %d threads%s\n"
	       "storm-fuzz: replay: storm-fuzz --seed %#llx --calls %llu --procs %d --threads %d\n",
	       (unsigned long long)opt.seed, (unsigned long long)opt.calls, opt.seconds, opt.procs,
	       opt.threads, opt.sample ? ", sampled" : "", (unsigned long long)opt.seed,
	       (unsigned long long)opt.calls, opt.procs, opt.threads);
	fflush(stdout);
	start = storm_now();
	deadline = start + opt.seconds;
	bad = supervise(deaths) != 0;
	report(deaths, storm_now() - start);
	for (int i = 0; i < FZ_NINVARIANTS; i++)
		bad |= fz->invariant[i] != 0;
	bad |= fz->bad_chains != 0 || fz->total == 0;
	printf("storm-fuzz: %s%s%s\n", bad ? "FAILED" : "passed", fz->first_problem[0] ? ": " : "",
	       fz->first_problem);
	exit(bad);
}
