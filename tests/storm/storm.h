/* SPDX-License-Identifier: MIT */
/*
 * What the kernel fuzzer (storm-fuzz) and the sampling storm (storm-sample,
 * storm-window) share: a seeded random number generator, the GCS
 * instructions by encoding, and the per-system-call counters kept in
 * memory shared by every process of a run.
 */
#ifndef GCSPROF_STORM_H
#define GCSPROF_STORM_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <time.h>

#include "../gcs-abi.h"
#include "../gcs-inline.h"

/* splitmix64: small, good enough, and the same sequence for a seed. */
static inline uint64_t storm_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A number in [0, n), n > 0. */
static inline uint64_t storm_below(uint64_t *state, uint64_t n)
{
	return storm_next(state) % n;
}

/* The seed of a sub-stream (a worker, a thread, a child) of SEED. */
static inline uint64_t storm_derive(uint64_t seed, uint64_t a, uint64_t b)
{
	uint64_t s = seed ^ (a * 0xd6e8feb86659fd93ULL) ^ (b * 0xa0761d6478bd642fULL);

	return storm_next(&s);
}

static inline double storm_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* GCSSS1 Xt: begin a switch to the GCS whose cap token Xt points at. */
static inline __attribute__((always_inline)) void storm_gcsss1(uint64_t cap)
{
	__asm__ volatile("sys #3, c7, c7, #2, %0" : : "r"(cap) : "memory");
}

/* GCSSS2 Xt: complete it; Xt gets the outgoing GCS's new cap address. */
static inline __attribute__((always_inline)) uint64_t storm_gcsss2(void)
{
	uint64_t v;

	__asm__ volatile("sysl %0, #3, c7, c7, #3" : "=r"(v) : : "memory");
	return v;
}

/* GCSPUSHM Xt (needs PR_SHADOW_STACK_PUSH). */
static inline __attribute__((always_inline)) void storm_gcspushm(uint64_t v)
{
	__asm__ volatile("sys #3, c7, c7, #0, %0" : : "r"(v) : "memory");
}

/* GCSPOPM Xt (needs PR_SHADOW_STACK_PUSH). */
static inline __attribute__((always_inline)) uint64_t storm_gcspopm(void)
{
	uint64_t v = 0;

	__asm__ volatile("sysl %0, #3, c7, c7, #1" : "+r"(v) : : "memory");
	return v;
}

/* GCSSTR x1, [x0] (needs PR_SHADOW_STACK_WRITE). */
static inline __attribute__((always_inline)) void storm_gcsstr(uint64_t *addr, uint64_t val)
{
	register uint64_t *x0 __asm__("x0") = addr;
	register uint64_t x1 __asm__("x1") = val;

	__asm__ volatile(".inst 0xd91f0c01" : : "r"(x0), "r"(x1) : "memory");
}

/* A valid cap token for a switch to the GCS entry at ADDR. */
#define STORM_CAP(addr) (((uint64_t)(addr) & ~0xfffULL) | 1)

#endif /* GCSPROF_STORM_H */
