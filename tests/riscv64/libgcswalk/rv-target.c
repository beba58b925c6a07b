// SPDX-License-Identifier: MIT
/*
 * rv-target: a riscv64 process with known call chains for the riscv guest
 * tests to walk live and through its core (the riscv twin of
 * gcswalk-target.c). Built -O2 -fomit-frame-pointer with
 * -fcf-protection=return: a function pushes its own return address in its
 * prologue, except leaves, which push nothing. Every *_park function is
 * such a leaf, so its caller is only in ra: the walk's LR frame. Six
 * threads park:
 *  - main: main -> main_a -> main_park;
 *  - plain: plain_thread -> plain_a -> plain_b -> (inlined plain_inl) ->
 *    plain_c -> plain_park;
 *  - signal: sig_thread -> sig_a -> sig_b -> sig_raise, which signals its
 *    own thread; the handler on_usr1 -> hnd_a -> hnd_park parks inside it;
 *  - switch: sw_thread maps a shadow stack with map_shadow_stack, switches
 *    onto it (its restore token), then sw_a -> sw_b -> sw_park;
 *  - smash: smash_thread -> smash_a -> smash_b -> smash_park, where smash_b
 *    has overwritten the return address in its own frame record first;
 *  - deep: deep_thread -> deep (1500 times, recursively) -> deep_park.
 * Each call is written as "r->line = __LINE__, call()" so that the line of
 * every call is recorded where it is made. When all threads are parked,
 * main prints the chains a walker must find (chain-text.h's canonical
 * form), then "ready", and parks too. Kill it, or SIGQUIT it for a core.
 * With GCSPROF_SHADOW_STACK=0 it runs without a shadow stack.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "rv-util.h"

#define NTHREADS 6
#define DEEP 1500
#define SMASHED_RETURN 0xdead0
#define SW_SIZE (4 * 4096)

struct rec {
	int tid;
	int lines[8];
};

static struct rec recs[NTHREADS];
static atomic_int parked;

/* A leaf: no call, so nothing pushed and ra kept. */
#define PARK_LEAF(r)                                                   \
	do {                                                           \
		atomic_fetch_add(&parked, 1);                          \
		(r)->lines[0] = __LINE__; PARK_FOREVER();              \
	} while (0)

/* ---- plain ---- */
static NOINLINE void plain_park(struct rec *r)
{
	PARK_LEAF(r);
}

static NOINLINE void plain_c(struct rec *r)
{
	r->lines[1] = __LINE__, plain_park(r);
	KEEP_FRAME();
}

static inline __attribute__((always_inline)) void plain_inl(struct rec *r)
{
	r->lines[2] = __LINE__, plain_c(r);
	KEEP_FRAME();
}

static NOINLINE void plain_b(struct rec *r)
{
	r->lines[3] = __LINE__, plain_inl(r);
	KEEP_FRAME();
}

static NOINLINE void plain_a(struct rec *r)
{
	r->lines[4] = __LINE__, plain_b(r);
	KEEP_FRAME();
}

static void *plain_thread(void *arg)
{
	struct rec *r = arg;

	r->tid = gettid();
	prctl(PR_SET_NAME, "rv-plain");
	r->lines[5] = __LINE__, plain_a(r);
	KEEP_FRAME();
	return NULL;
}

/* ---- signal ---- */
static struct rec *sig_rec;

static NOINLINE void hnd_park(struct rec *r)
{
	PARK_LEAF(r);
}

static NOINLINE void hnd_a(struct rec *r)
{
	r->lines[1] = __LINE__, hnd_park(r);
	KEEP_FRAME();
}

static void on_usr1(int sig)
{
	(void)sig;
	sig_rec->lines[2] = __LINE__, hnd_a(sig_rec);
	KEEP_FRAME();
}

static NOINLINE void sig_raise(struct rec *r)
{
	long pid = getpid();

	r->lines[6] = __LINE__; TGKILL_HERE(pid, r->tid, SIGUSR1);
	KEEP_FRAME();
}

static NOINLINE void sig_b(struct rec *r)
{
	r->lines[3] = __LINE__, sig_raise(r);
	KEEP_FRAME();
}

static NOINLINE void sig_a(struct rec *r)
{
	r->lines[4] = __LINE__, sig_b(r);
	KEEP_FRAME();
}

static void *sig_thread(void *arg)
{
	struct rec *r = arg;

	r->tid = gettid();
	prctl(PR_SET_NAME, "rv-signal");
	r->lines[5] = __LINE__, sig_a(r);
	KEEP_FRAME();
	return NULL;
}

/* ---- switch ---- */
static NOINLINE void sw_park(struct rec *r)
{
	PARK_LEAF(r);
}

static NOINLINE void sw_b(struct rec *r)
{
	r->lines[1] = __LINE__, sw_park(r);
	KEEP_FRAME();
}

static NOINLINE void sw_a(struct rec *r)
{
	r->lines[2] = __LINE__, sw_b(r);
	KEEP_FRAME();
}

static void *sw_thread(void *arg)
{
	struct rec *r = arg;
	uint64_t saved = 0;
	long ss;

	r->tid = gettid();
	prctl(PR_SET_NAME, "rv-switch");
	if (rv_ssp()) {
		ss = rv_syscall3(RV_NR_map_shadow_stack, 0, SW_SIZE, RV_SHADOW_STACK_SET_TOKEN);
		if (ss < 0 && ss > -4096) {
			fprintf(stderr, "map_shadow_stack: %ld\n", ss);
			exit(3);
		}
		/* The token is the top entry; from here this function must
		 * never return (its return is on the stack it left). */
		if (rv_ss_switch((uint64_t)ss + SW_SIZE - 8, &saved) != 0) {
			fprintf(stderr, "no restore token at the top of the new stack\n");
			exit(3);
		}
	}
	r->lines[3] = __LINE__, sw_a(r);
	KEEP_FRAME();
	exit(3);
}

/* ---- smash: a frame record overwritten, as a stack overflow would ---- */
static NOINLINE void smash_park(struct rec *r)
{
	PARK_LEAF(r);
}

static NOINLINE void smash_b(struct rec *r)
{
	/* Our frame record {previous s0, ra} lies below s0, which this
	 * builtin makes us keep: ra, the saved return into smash_a, at s0 - 8.
	 * We never return, so nothing trips over it; the shadow stack still
	 * has the true return address. */
	uint64_t *fp = __builtin_frame_address(0);

	*(volatile uint64_t *)&fp[-1] = SMASHED_RETURN;
	r->lines[1] = __LINE__, smash_park(r);
	KEEP_FRAME();
}

static NOINLINE void smash_a(struct rec *r)
{
	r->lines[2] = __LINE__, smash_b(r);
	KEEP_FRAME();
}

static void *smash_thread(void *arg)
{
	struct rec *r = arg;

	r->tid = gettid();
	prctl(PR_SET_NAME, "rv-smash");
	r->lines[3] = __LINE__, smash_a(r);
	KEEP_FRAME();
	return NULL;
}

/* ---- deep: a recursion deeper than the default limit of 1024 frames ---- */
static NOINLINE void deep_park(struct rec *r)
{
	PARK_LEAF(r);
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winfinite-recursion"
static NOINLINE void deep(struct rec *r, int n)
{
	if (n == 0) {
		r->lines[1] = __LINE__, deep_park(r);
		KEEP_FRAME();
		return;
	}
	r->lines[2] = __LINE__, deep(r, n - 1);
	KEEP_FRAME();
}
#pragma GCC diagnostic pop

static void *deep_thread(void *arg)
{
	struct rec *r = arg;

	r->tid = gettid();
	prctl(PR_SET_NAME, "rv-deep");
	r->lines[3] = __LINE__, deep(r, DEEP);
	KEEP_FRAME();
	return NULL;
}

/* ---- main ---- */
static void print_expected(void)
{
	const struct rec *p = &recs[0], *pl = &recs[1], *sg = &recs[2], *sw = &recs[3];
	const struct rec *sm = &recs[4], *d = &recs[5];
	int i;

	printf("thread %d\npc main_park:%d\nlr main_a:%d\nreturn main:%d\nend\n", p->tid,
	       p->lines[0], p->lines[1], p->lines[2]);
	printf("thread %d\npc plain_park:%d\nlr plain_c:%d\nreturn plain_inl:%d plain_b:%d\n"
	       "return plain_a:%d\nreturn plain_thread:%d\nend\n",
	       pl->tid, pl->lines[0], pl->lines[1], pl->lines[2], pl->lines[3], pl->lines[4],
	       pl->lines[5]);
	printf("thread %d\npc hnd_park:%d\nlr hnd_a:%d\nreturn on_usr1:%d\nsigreturn\n"
	       "signal-cap\ninterrupted-pc sig_raise:%d\nreturn sig_b:%d\nreturn sig_a:%d\n"
	       "return sig_thread:%d\nend\n",
	       sg->tid, sg->lines[0], sg->lines[1], sg->lines[2], sg->lines[6], sg->lines[3],
	       sg->lines[4], sg->lines[5]);
	printf("thread %d\npc sw_park:%d\nlr sw_b:%d\nreturn sw_a:%d\nreturn sw_thread:%d\nend\n",
	       sw->tid, sw->lines[0], sw->lines[1], sw->lines[2], sw->lines[3]);
	printf("thread %d\npc smash_park:%d\nlr smash_b:%d\nreturn smash_a:%d\n"
	       "return smash_thread:%d\nend\n",
	       sm->tid, sm->lines[0], sm->lines[1], sm->lines[2], sm->lines[3]);
	printf("thread %d\npc deep_park:%d\nlr deep:%d\n", d->tid, d->lines[0], d->lines[1]);
	for (i = 0; i < DEEP; i++)
		printf("return deep:%d\n", d->lines[2]);
	printf("return deep_thread:%d\nend\n", d->lines[3]);
}

/* main prints its own chain before it parks: the lines are known here. */
static const int main_park_line = __LINE__ + 3;
static NOINLINE void main_park(struct rec *r)
{
	PARK_LEAF(r);
}

static NOINLINE void main_a(struct rec *r)
{
	r->lines[0] = main_park_line;
	r->lines[1] = __LINE__ + 4;
	print_expected();
	printf("ready\n");
	fflush(stdout);
	main_park(r);
	KEEP_FRAME();
}

int main(void)
{
	void *(*fns[NTHREADS])(void *) = { NULL, plain_thread, sig_thread, sw_thread,
					    smash_thread, deep_thread };
	struct rlimit core = { RLIM_INFINITY, RLIM_INFINITY };
	pthread_attr_t attr;
	pthread_t th;
	int i;

	(void)setrlimit(RLIMIT_CORE, &core);
	signal(SIGUSR1, on_usr1);
	sig_rec = &recs[2];
	recs[0].tid = gettid();
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 1 << 20);
	for (i = 1; i < NTHREADS; i++)
		if (pthread_create(&th, &attr, fns[i], &recs[i]) != 0)
			return 2;
	while (atomic_load(&parked) < NTHREADS - 1)
		usleep(10000);
	recs[0].lines[2] = __LINE__, main_a(&recs[0]);
	KEEP_FRAME();
	return 0;
}
