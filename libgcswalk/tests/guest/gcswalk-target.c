// SPDX-License-Identifier: MIT
/*
 * gcswalk-target: a process with known call chains for the guest tests to
 * walk live and through its core. Six threads park in known chains of
 * noinline functions:
 *  - main: main -> main_a -> main_park;
 *  - plain: plain_thread -> plain_a -> plain_b -> (inlined plain_inl) ->
 *    plain_c -> plain_park;
 *  - signal: sig_thread -> sig_a -> sig_b -> sig_raise, which signals its
 *    own thread; the handler on_usr1 -> hnd_a -> hnd_park parks inside it;
 *  - switch: sw_thread maps a GCS with map_shadow_stack, switches onto it
 *    (GCSSS1/GCSSS2), then sw_a -> sw_b -> sw_park;
 *  - smash: smash_thread -> smash_a -> smash_b -> smash_park, where smash_b
 *    has overwritten the return address in its own frame record first;
 *  - deep: deep_thread -> deep (1501 times, recursively) -> deep_park.
 * Each call is written as "r->line = __LINE__, call()" so that the line of
 * every call is recorded where it is made. When all threads are parked,
 * main prints the chains a walker must find (innermost first) (chain-text.h's canonical form)
 * then "ready", and parks too. It never exits by itself: kill it, or send
 * SIGQUIT for a core.
 *
 * Usage: gcswalk-target [--no-gcs] [--dir DIR]   (DIR: where a core goes)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "gcs-util.h"

#define NTHREADS 6
/* Calls deep on the deep thread: deeper than the default walk limit. */
#define DEEP 1500
/* What smash_b writes over its own saved return address. */
#define SMASHED_RETURN 0xdead0

struct rec {
	int tid;
	int lines[8];
};

static struct rec recs[NTHREADS];
static atomic_int parked;
static int gcs_on;

static NOINLINE void note_parked(void)
{
	atomic_fetch_add(&parked, 1);
}

/* ---- plain ---- */
static NOINLINE void plain_park(struct rec *r)
{
	note_parked();
	r->lines[0] = __LINE__; PARK_FOREVER();
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
	prctl(PR_SET_NAME, "gw-plain");
	r->lines[5] = __LINE__, plain_a(r);
	KEEP_FRAME();
	return NULL;
}

/* ---- signal ---- */
static struct rec *sig_rec;

static NOINLINE void hnd_park(struct rec *r)
{
	note_parked();
	r->lines[0] = __LINE__; PARK_FOREVER();
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
	r->lines[6] = __LINE__; TGKILL_HERE(r->tid, SIGUSR1);
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
	prctl(PR_SET_NAME, "gw-signal");
	r->lines[5] = __LINE__, sig_a(r);
	KEEP_FRAME();
	return NULL;
}

/* ---- switch ---- */
static NOINLINE void sw_park(struct rec *r)
{
	note_parked();
	r->lines[0] = __LINE__; PARK_FOREVER();
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

#define SW_GCS_SIZE (4 * 4096)

static void *sw_thread(void *arg)
{
	struct rec *r = arg;
	long gcs;

	r->tid = gettid();
	prctl(PR_SET_NAME, "gw-switch");
	if (gcs_on) {
		gcs = raw_syscall3(NR_map_shadow_stack, 0, SW_GCS_SIZE, SHADOW_STACK_SET_TOKEN);
		if (gcs < 0 && gcs > -4096) {
			fprintf(stderr, "map_shadow_stack: %ld\n", gcs);
			exit(3);
		}
		/* The cap token is the top entry; after the switch this
		 * function must never return (its return is on the old GCS). */
		gcsss1((uint64_t)gcs + SW_GCS_SIZE - 8);
		(void)gcsss2();
	}
	r->lines[3] = __LINE__, sw_a(r);
	KEEP_FRAME();
	exit(3);
}

/* ---- smash: a frame record overwritten, as a stack overflow would ---- */
static NOINLINE void smash_park(struct rec *r)
{
	note_parked();
	r->lines[0] = __LINE__; PARK_FOREVER();
}

static NOINLINE void smash_b(struct rec *r)
{
	/* Our frame record {x29, x30}: the saved return into smash_a. We
	 * never return, so nothing trips over it; the GCS still has the
	 * true return address. */
	uint64_t *record = __builtin_frame_address(0);

	*(volatile uint64_t *)&record[1] = SMASHED_RETURN;
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
	prctl(PR_SET_NAME, "gw-smash");
	r->lines[3] = __LINE__, smash_a(r);
	KEEP_FRAME();
	return NULL;
}

/* ---- deep: a recursion deeper than the default limit of 1024 frames ---- */
static NOINLINE void deep_park(struct rec *r)
{
	note_parked();
	r->lines[0] = __LINE__; PARK_FOREVER();
}

/* GCC sees that deep_park() never returns and so calls this recursion
 * infinite; it ends at n == 0, where the thread parks. */
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
	prctl(PR_SET_NAME, "gw-deep");
	r->lines[3] = __LINE__, deep(r, DEEP);
	KEEP_FRAME();
	return NULL;
}

/* ---- main ---- */
static void print_expected(void)
{
	const struct rec *p = &recs[0], *pl = &recs[1], *sg = &recs[2], *sw = &recs[3];
	const struct rec *sm = &recs[4];
	const char *end_of_gcs = gcs_on ? "terminator\n" : "";

	printf("thread %d\npc main_park:%d\nreturn main_a:%d\nreturn main:%d\n%send\n",
	       p->tid, p->lines[0], p->lines[1], p->lines[2], end_of_gcs);
	printf("thread %d\npc plain_park:%d\nreturn plain_c:%d\nreturn plain_inl:%d plain_b:%d\n"
	       "return plain_a:%d\nreturn plain_thread:%d\n%send\n",
	       pl->tid, pl->lines[0], pl->lines[1], pl->lines[2], pl->lines[3], pl->lines[4],
	       pl->lines[5], end_of_gcs);
	printf("thread %d\npc hnd_park:%d\nreturn hnd_a:%d\nreturn on_usr1:%d\nsigreturn\n"
	       "signal-cap\ninterrupted-pc sig_raise:%d\nreturn sig_b:%d\nreturn sig_a:%d\n"
	       "return sig_thread:%d\n%send\n",
	       sg->tid, sg->lines[0], sg->lines[1], sg->lines[2], sg->lines[6], sg->lines[3],
	       sg->lines[4], sg->lines[5], end_of_gcs);
	/* The switched-to GCS has no terminator: it ends with its mapping. */
	printf("thread %d\npc sw_park:%d\nreturn sw_b:%d\nreturn sw_a:%d\nreturn sw_thread:%d\nend\n",
	       sw->tid, sw->lines[0], sw->lines[1], sw->lines[2], sw->lines[3]);
	printf("thread %d\npc smash_park:%d\nreturn smash_b:%d\nreturn smash_a:%d\n"
	       "return smash_thread:%d\n%send\n",
	       sm->tid, sm->lines[0], sm->lines[1], sm->lines[2], sm->lines[3], end_of_gcs);
	{
		const struct rec *d = &recs[5];
		int i;

		printf("thread %d\npc deep_park:%d\nreturn deep:%d\n", d->tid, d->lines[0],
		       d->lines[1]);
		for (i = 0; i < DEEP; i++)
			printf("return deep:%d\n", d->lines[2]);
		printf("return deep_thread:%d\n%send\n", d->lines[3], end_of_gcs);
	}
	printf("ready\n");
	fflush(stdout);
}

static NOINLINE void main_park(struct rec *r)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	while (atomic_load(&parked) < NTHREADS - 1)
		nanosleep(&ts, NULL);
	r->lines[0] = __LINE__ + 2;
	print_expected();
	PARK_FOREVER();
}

static NOINLINE void main_a(struct rec *r)
{
	r->lines[1] = __LINE__, main_park(r);
	KEEP_FRAME();
}

int main(int argc, char **argv)
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
	void *(*fns[])(void *) = { plain_thread, sig_thread, sw_thread, smash_thread, deep_thread };
	struct sigaction sa;
	pthread_attr_t attr;
	pthread_t t;
	int i, want_gcs = 1;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--no-gcs") == 0)
			want_gcs = 0;
		else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc) {
			if (chdir(argv[++i]) != 0) {
				perror(argv[i]);
				return 2;
			}
		} else {
			fprintf(stderr, "usage: gcswalk-target [--no-gcs] [--dir DIR]\n");
			return 2;
		}
	}
	if (setrlimit(RLIMIT_CORE, &rl) != 0)
		perror("setrlimit");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sig_rec = &recs[2];
	if (sigaction(SIGUSR1, &sa, NULL) != 0) {
		perror("sigaction");
		return 2;
	}
	/* From here on main() must not return when GCS is on: its return
	 * address is not on the GCS. */
	if (want_gcs && (getauxval(AT_HWCAP) & HWCAP_GCS)) {
		long ret = raw_syscall3(__NR_prctl, PR_SET_SHADOW_STACK_STATUS,
					PR_SHADOW_STACK_ENABLE, 0);

		if (ret != 0) {
			fprintf(stderr, "enabling GCS: %ld\n", ret);
			exit(2);
		}
		gcs_on = 1;
	}
	recs[0].tid = getpid();
	/* Small stacks (and so small thread GCSs) keep the core small. */
	if (pthread_attr_init(&attr) != 0 || pthread_attr_setstacksize(&attr, 256 * 1024) != 0) {
		fprintf(stderr, "pthread attributes failed\n");
		exit(2);
	}
	for (i = 0; i < NTHREADS - 1; i++) {
		if (pthread_create(&t, &attr, fns[i], &recs[i + 1]) != 0) {
			fprintf(stderr, "pthread_create failed\n");
			exit(2);
		}
	}
	recs[0].lines[2] = __LINE__, main_a(&recs[0]);
	KEEP_FRAME();
	exit(0);
}
