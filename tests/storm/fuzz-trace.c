// SPDX-License-Identifier: MIT
/*
 * storm-fuzz's operations on the paths that read or rewrite a GCS from
 * outside the code running on it: ptrace's NT_ARM_GCS regset with random
 * contents, perf_event_open with call chains (each chain read back and
 * checked), and rt_sigreturn through frames whose GCS record (or signal
 * cap) a handler forged, plus nested signals.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include "fuzz.h"
#include "sampler.h"

static __attribute__((noinline)) int nest(int n)
{
	int v = n ? nest(n - 1) + 1 : 0;

	__asm__ volatile("" ::: "memory");
	return v;
}

/* Random NT_ARM_GCS contents: mode, locks and a GCSPR worth trying. */
static void random_regset(struct fz_thread *t, struct user_gcs *g)
{
	switch (storm_below(&t->rng, 6)) {
	case 0: break; /* unchanged */
	case 1: g->gcspr_el0 += 8 * (storm_below(&t->rng, 5) - 2); break;
	case 2: g->gcspr_el0 += 4; break;
	default: g->gcspr_el0 = fz_random_addr(t); break;
	}
	if (storm_below(&t->rng, 3) == 0)
		g->features_enabled = storm_below(&t->rng, FZ_MODE_BITS + 1);
	if (storm_below(&t->rng, 16) == 0)
		g->features_enabled |= 1ULL << storm_below(&t->rng, 64);
	if (storm_below(&t->rng, 4) == 0)
		g->features_locked = storm_below(&t->rng, FZ_MODE_BITS + 1);
}

/* GETREGSET and SETREGSET on a stopped child; what is set must read back. */
static void regset_rounds(struct fz_thread *t, pid_t pid)
{
	static const size_t lens[] = { sizeof(struct user_gcs), sizeof(struct user_gcs),
				       sizeof(struct user_gcs), 16, 8, 0, 32 };
	int rounds = 1 + (int)storm_below(&t->rng, 6);

	for (int i = 0; i < rounds; i++) {
		struct user_gcs g = { 0 }, back = { 0 };
		struct iovec iov = { &g, sizeof(g) };
		long r;

		fz_count(FZ_PTRACE, ptrace(PTRACE_GETREGSET, pid, (void *)NT_ARM_GCS, &iov));
		if (storm_below(&t->rng, 3) == 0)
			continue;
		random_regset(t, &g);
		iov.iov_len = lens[storm_below(&t->rng, sizeof(lens) / sizeof(lens[0]))];
		r = fz_count(FZ_PTRACE, ptrace(PTRACE_SETREGSET, pid, (void *)NT_ARM_GCS, &iov));
		if (r != 0 || iov.iov_len != sizeof(g))
			continue;
		iov = (struct iovec){ &back, sizeof(back) };
		fz_count(FZ_PTRACE, ptrace(PTRACE_GETREGSET, pid, (void *)NT_ARM_GCS, &iov));
		if (memcmp(&g, &back, sizeof(g)) != 0)
			fz_problem(FZ_INV_REGSET_READBACK,
				   "NT_ARM_GCS set {%#llx %#llx %#llx}, reads {%#llx %#llx %#llx}",
				   (unsigned long long)g.features_enabled,
				   (unsigned long long)g.features_locked,
				   (unsigned long long)g.gcspr_el0,
				   (unsigned long long)back.features_enabled,
				   (unsigned long long)back.features_locked,
				   (unsigned long long)back.gcspr_el0);
	}
}

/*
 * A child stops itself; its tracer reads and writes its GCS regset (and
 * now and then a word of its GCS), then lets it run a few calls on
 * whatever GCS it was given, or kills it.
 */
void fz_op_ptrace_gcs(struct fz_thread *t)
{
	int depth = (int)storm_below(&t->rng, 64), st;
	pid_t pid = (pid_t)fz_count(FZ_FORK, fork());

	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
			_exit(120);
		kill(getpid(), SIGSTOP);
		_exit(nest(depth) == depth ? 0 : 1);
	}
	if (pid < 0)
		return;
	if (fz_count(FZ_WAIT4, waitpid(pid, &st, __WALL)) == pid && WIFSTOPPED(st)) {
		regset_rounds(t, pid);
		if (storm_below(&t->rng, 4) == 0)
			fz_count(FZ_PTRACE, ptrace(PTRACE_POKEDATA, pid,
						   (void *)(uintptr_t)fz_random_addr(t),
						   (void *)(uintptr_t)storm_next(&t->rng)));
		if (storm_below(&t->rng, 8) == 0)
			fz_count(FZ_KILL, kill(pid, SIGKILL));
		fz_count(FZ_PTRACE, ptrace(storm_below(&t->rng, 4) ? PTRACE_CONT : PTRACE_DETACH, pid,
					   NULL, NULL));
	}
	/* Later stops (the fault of a broken GCS) end it. */
	for (int i = 0; i < 4; i++) {
		if (fz_count(FZ_WAIT4, waitpid(pid, &st, __WALL)) != pid || !WIFSTOPPED(st))
			return;
		fz_count(FZ_KILL, kill(pid, SIGKILL));
		ptrace(PTRACE_CONT, pid, NULL, NULL);
	}
	fz_reap(pid, &st);
}

/* Each user chain the kernel gives: entries of a GCS walk are never 0 or
 * unaligned (those end the walk), and never more than were asked for. */
struct chain_rules {
	int gcs_walk;
	uint64_t max;
};

static void check_sample(void *arg, const struct storm_sample *s)
{
	const struct chain_rules *rules = arg;

	__atomic_fetch_add(&fz->samples, 1, __ATOMIC_RELAXED);
	if (s->nr_user > rules->max + 1)
		goto bad;
	for (uint64_t i = 1; rules->gcs_walk && i < s->nr_user; i++)
		if (s->user[i] == 0 || (s->user[i] & 3))
			goto bad;
	return;
bad:
	__atomic_fetch_add(&fz->bad_chains, 1, __ATOMIC_RELAXED);
}

static void random_attr(struct fz_thread *t, struct perf_event_attr *a)
{
	static const uint16_t stacks[] = { 0, 1, 4, 16, 127, 200, 1000 };

	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = storm_below(&t->rng, 3) ? PERF_TYPE_HARDWARE : PERF_TYPE_SOFTWARE;
	a->config = a->type == PERF_TYPE_HARDWARE ? PERF_COUNT_HW_CPU_CYCLES
						  : PERF_COUNT_SW_TASK_CLOCK;
	a->sample_period = 2000 + storm_below(&t->rng, 50000);
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN;
	if (storm_below(&t->rng, 2)) {
		a->sample_type |= PERF_SAMPLE_REGS_USER;
		a->sample_regs_user = (1ULL << STORM_PERF_REG_GCSPR) | (1ULL << 30) | (1ULL << 32);
	}
	a->sample_max_stack = stacks[storm_below(&t->rng, sizeof(stacks) / sizeof(stacks[0]))];
	a->exclude_kernel = storm_below(&t->rng, 2);
	a->exclude_callchain_kernel = storm_below(&t->rng, 2);
	a->exclude_callchain_user = storm_below(&t->rng, 8) == 0;
	a->inherit = storm_below(&t->rng, 2);
	a->exclude_hv = 1;
}

/* Sample this thread through a random event while it calls and switches. */
void fz_op_perf(struct fz_thread *t)
{
	struct perf_event_attr a;
	struct storm_sampler s;
	struct chain_rules rules;

	random_attr(t, &a);
	rules.gcs_walk = storm_gcs_callchains() && (fz_gcs_status() & PR_SHADOW_STACK_ENABLE);
	rules.max = a.sample_max_stack ? a.sample_max_stack : 127;
	/* perf maps no ring buffer of an inherited event: that one only counts. */
	if (fz_count(FZ_PERF_EVENT_OPEN, storm_sampler_open(&s, &a, 0, -1, a.inherit ? 0 : 4)) != 0)
		return;
	for (int i = 0; i < 4; i++) {
		fz_one(t); /* whatever it does, under sampling */
		nest((int)storm_below(&t->rng, 300));
	}
	storm_sampler_drain(&s, check_sample, &rules);
	storm_sampler_close(&s);
}

/* ---- rt_sigreturn through forged frames ---- */

#define GCS_CONTEXT_MAGIC 0x47435300

struct gcs_context_rec {
	struct _aarch64_ctx head;
	uint64_t gcspr;
	uint64_t features_enabled;
	uint64_t reserved;
};

static uint64_t forge_rng; /* the sacrificial child's, set before raise() */

static struct gcs_context_rec *find_gcs_record(ucontext_t *uc)
{
	char *p = (char *)uc->uc_mcontext.__reserved;
	char *end = p + sizeof(uc->uc_mcontext.__reserved);

	while (p + sizeof(struct _aarch64_ctx) <= end) {
		struct _aarch64_ctx *h = (struct _aarch64_ctx *)p;

		if (h->magic == 0 || h->size < sizeof(*h))
			return NULL;
		if (h->magic == GCS_CONTEXT_MAGIC)
			return (struct gcs_context_rec *)p;
		p += h->size;
	}
	return NULL;
}

static void forge_handler(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	struct gcs_context_rec *g = find_gcs_record(uc);
	uint64_t *r = &forge_rng;

	(void)sig;
	(void)si;
	if (g) {
		switch (storm_below(r, 8)) {
		case 0: g->gcspr += 8 * (storm_below(r, 5) - 2); break;
		case 1: g->gcspr += 4; break;
		case 2: g->features_enabled = storm_below(r, FZ_MODE_BITS + 1); break;
		case 3: g->features_enabled |= 1ULL << storm_below(r, 64); break;
		case 4: g->reserved = storm_next(r); break;
		case 5: g->head.size = (uint32_t)(8 * storm_below(r, 8)); break;
		case 6:
			/* The cap itself, where the mode allows GCSSTR. */
			if (fz_gcs_status() & PR_SHADOW_STACK_WRITE)
				storm_gcsstr((uint64_t *)(uintptr_t)g->gcspr,
					     storm_below(r, 2) ? STORM_CAP(g->gcspr) : storm_next(r));
			break;
		default: break; /* untouched: must be accepted */
		}
	}
	if (storm_below(r, 16) == 0)
		uc->uc_mcontext.pstate ^= 1ULL << storm_below(r, 32);
	fz_count(FZ_RT_SIGRETURN, 0);
}

void fz_op_sigreturn(struct fz_thread *t)
{
	struct sigaction sa;
	int depth = (int)storm_below(&t->rng, 32), st;
	pid_t pid;

	pid = (pid_t)fz_count(FZ_FORK, fork());
	if (pid == 0) {
		forge_rng = storm_next(&t->rng);
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = forge_handler;
		sa.sa_flags = SA_SIGINFO;
		sigaction(SIGUSR1, &sa, NULL);
		if (storm_below(&t->rng, 2))
			gcs_raw_prctl(PR_SET_SHADOW_STACK_STATUS,
				      (long)(PR_SHADOW_STACK_ENABLE | PR_SHADOW_STACK_WRITE));
		fz_count(FZ_KILL, raise(SIGUSR1));
		_exit(nest(depth) == depth ? 0 : 1);
	}
	if (pid > 0)
		fz_reap(pid, &st);
}

static __thread int nest_left;

/* SIGUSR2's handler raises it again from inside itself (SA_NODEFER). */
static void nest_handler(int sig)
{
	if (nest_left-- > 0)
		fz_count(FZ_KILL, (long)syscall(SYS_tgkill, getpid(), gettid(), sig));
	nest(8);
	fz_count(FZ_RT_SIGRETURN, 0);
}

/* Before the worker's threads start: SIGUSR2 nests into itself. */
void fz_signals_init(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = nest_handler;
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGUSR2, &sa, NULL);
}

void fz_op_signal_nest(struct fz_thread *t)
{
	nest_left = (int)storm_below(&t->rng, 16);
	fz_count(FZ_KILL, (long)syscall(SYS_tgkill, getpid(), gettid(), SIGUSR2));
}
