// SPDX-License-Identifier: MIT
/*
 * uprobe-target: a program to put uprobes on while its GCS is enabled and
 * locked (WRITE and PUSH off), built -O2 -fomit-frame-pointer. Each round
 * calls, in this order:
 *
 *   by_bl       reached by BL; calls leaf
 *   by_blr      reached by BLR (a function pointer); calls leaf
 *   deep1       -> deep2 -> deep3 -> deep_target, which calls leaf
 *   recurse     DEPTH + 1 nested calls, the innermost tail-calls leaf
 *   site_call_bl, site_call_blr   (sites.S) BL and BLR at labels site_bl,
 *               site_blr, and a RET at site_ret; both call leaf
 *   with_signal sends itself SIGUSR1, handled before it returns
 *
 * so that per round: by_bl, by_blr, deep_target, with_signal, site_bl,
 * site_blr, site_ret 1 each, recurse DEPTH + 1, leaf 6. The output is the
 * same whatever is probed.
 *
 * Usage: uprobe-target [--no-gcs] run ROUNDS
 *          prints "rounds=N result=X signals=N", exits 0
 *        uprobe-target mismatch | mismatch-pending
 *          returns where the GCS says it must not (bad_return, or
 *          hijacked_bad_return for a uretprobe to be pending on): exits 0
 *          if that raised SIGSEGV with SEGV_CPERR at the RET, 1 if it
 *          raised anything else, 2 if it returned.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../gcs-abi.h"
#include "../gcs-inline.h"

#define NOINLINE __attribute__((noinline, noclone, used))
/* After a call, so that it is not a tail call and stays on the GCS. */
#define KEEP_FRAME() __asm__ volatile("" ::: "memory")
#define DEPTH 8

#ifndef SEGV_CPERR
#define SEGV_CPERR 10
#endif

/* sites.S */
unsigned long site_call_bl(unsigned long x);
unsigned long site_call_blr(unsigned long x, unsigned long (*f)(unsigned long));
void bad_return(void (*to)(void));
void hijacked_bad_return(void (*to)(void));
extern const char site_bad_ret[], site_hijacked_ret[];

static volatile sig_atomic_t signals;

NOINLINE unsigned long leaf(unsigned long x)
{
	return x * 3 + 1;
}

NOINLINE unsigned long by_bl(unsigned long x)
{
	unsigned long r = leaf(x) + 1;

	KEEP_FRAME();
	return r;
}

NOINLINE unsigned long by_blr(unsigned long x)
{
	unsigned long r = leaf(x) + 2;

	KEEP_FRAME();
	return r;
}

/* volatile, so that the call through it stays a BLR. */
static unsigned long (*volatile by_blr_ptr)(unsigned long) = by_blr;

NOINLINE unsigned long deep_target(unsigned long x)
{
	unsigned long r = leaf(x) + 5;

	KEEP_FRAME();
	return r;
}

NOINLINE unsigned long deep3(unsigned long x)
{
	unsigned long r = deep_target(x) ^ 3;

	KEEP_FRAME();
	return r;
}

NOINLINE unsigned long deep2(unsigned long x)
{
	unsigned long r = deep3(x) ^ 2;

	KEEP_FRAME();
	return r;
}

NOINLINE unsigned long deep1(unsigned long x)
{
	unsigned long r = deep2(x) ^ 1;

	KEEP_FRAME();
	return r;
}

NOINLINE unsigned long recurse(unsigned n, unsigned long x)
{
	unsigned long r;

	if (n == 0)
		return leaf(x);
	r = recurse(n - 1, x + n);
	KEEP_FRAME();
	return r ^ n;
}

static void on_usr1(int sig)
{
	(void)sig;
	signals++;
}

NOINLINE unsigned long with_signal(unsigned long x)
{
	if (kill(getpid(), SIGUSR1) != 0)
		abort();
	KEEP_FRAME();
	return x ^ 0x5a;
}

/* GCS on and locked, WRITE and PUSH off: only the kernel may write it.
 * Inline (no call to return from); main must then never return. */
static inline __attribute__((always_inline)) void gcs_on_and_locked(void)
{
	uint64_t mode = 0;

	if (gcs_raw_prctl(PR_SET_SHADOW_STACK_STATUS, PR_SHADOW_STACK_ENABLE) != 0) {
		fputs("uprobe-target: cannot enable GCS\n", stderr);
		exit(4);
	}
	if (gcs_raw_prctl(PR_LOCK_SHADOW_STACK_STATUS,
			  PR_SHADOW_STACK_ENABLE | PR_SHADOW_STACK_WRITE | PR_SHADOW_STACK_PUSH) != 0 ||
	    gcs_raw_prctl(PR_GET_SHADOW_STACK_STATUS, (long)&mode) != 0 ||
	    mode != PR_SHADOW_STACK_ENABLE) {
		fputs("uprobe-target: cannot lock GCS\n", stderr);
		exit(3);
	}
}

static void run(unsigned long rounds)
{
	struct sigaction sa;
	unsigned long i, acc = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	if (sigaction(SIGUSR1, &sa, NULL) != 0)
		abort();
	for (i = 0; i < rounds; i++) {
		acc += by_bl(i);
		acc += by_blr_ptr(i);
		acc += deep1(i);
		acc += recurse(DEPTH, i);
		acc += site_call_bl(i);
		acc += site_call_blr(i, leaf);
		acc += with_signal(i);
		acc = (acc << 7) ^ (acc >> 57);
	}
	printf("rounds=%lu result=%lx signals=%d\n", rounds, acc, (int)signals);
	fflush(stdout);
}

static const char *want_at;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	char msg[160];
	int ok = si->si_code == SEGV_CPERR && si->si_addr == (void *)want_at;
	int n;

	(void)sig;
	(void)uc;
	n = snprintf(msg, sizeof(msg), "SIGSEGV si_code=%d at %p, %s SEGV_CPERR at %p\n",
		     si->si_code, si->si_addr, ok ? "as expected:" : "expected", (void *)want_at);
	if (n > 0 && write(STDOUT_FILENO, msg, (size_t)n) < 0)
		_exit(3);
	_exit(ok ? 0 : 1);
}

/* Where a return the GCS does not hold would land without GCS. */
static void landing(void)
{
	puts("returned without a fault");
	exit(2);
}

static void mismatch(int pending)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	if (sigaction(SIGSEGV, &sa, NULL) != 0)
		abort();
	want_at = pending ? site_hijacked_ret : site_bad_ret;
	if (pending)
		hijacked_bad_return(landing);
	else
		bad_return(landing);
	KEEP_FRAME();
	puts("returned past the bad return");
	exit(2);
}

static void usage(void)
{
	fputs("usage: uprobe-target [--no-gcs] run ROUNDS | mismatch | mismatch-pending\n", stderr);
	exit(64);
}

int main(int argc, char **argv)
{
	int gcs = 1;

	if (argc > 1 && strcmp(argv[1], "--no-gcs") == 0) {
		gcs = 0;
		argv++;
		argc--;
	}
	if (argc < 2)
		usage();
	if (gcs)
		gcs_on_and_locked();
	if (strcmp(argv[1], "run") == 0 && argc == 3)
		run(strtoul(argv[2], NULL, 0));
	else if (strcmp(argv[1], "mismatch") == 0 && argc == 2)
		mismatch(0);
	else if (strcmp(argv[1], "mismatch-pending") == 0 && argc == 2)
		mismatch(1);
	else
		usage();
	exit(0);
}
