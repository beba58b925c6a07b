/* SPDX-License-Identifier: MIT */
/*
 * GCS helpers for libgcswalk's guest test programs: inline system calls,
 * parking and signalling in place (binutils 2.40 has no GCS mnemonics).
 * The ABI numbers are in tests/gcs-abi.h.
 */
#ifndef GCSWALK_GCS_UTIL_H
#define GCSWALK_GCS_UTIL_H

#include <stdint.h>
#include <sys/syscall.h>

#include "gcs-abi.h"

/* After a call, so that the call is not a tail call and stays on the GCS. */
#define KEEP_FRAME() __asm__ volatile("" ::: "memory")
#define NOINLINE __attribute__((noinline))

/*
 * A system call made inline: enabling GCS must not go through a libc
 * function (its return address was pushed before GCS was on), and the
 * parking and signalling calls must leave the PC in our own functions.
 */
static inline __attribute__((always_inline)) long raw_syscall3(long nr, long a, long b, long c)
{
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = 0;
	register long x4 __asm__("x4") = 0;

	__asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4)
			 : "memory");
	return x0;
}

/*
 * Sleep until the process dies: ppoll with no descriptors and no timeout.
 * The nop keeps the PC inside this statement whether a stop reports it at
 * the svc (about to be restarted) or after it.
 */
#define PARK_FOREVER()                                                                    \
	do {                                                                              \
		register long x8 __asm__("x8") = __NR_ppoll;                              \
		register long x0 __asm__("x0") = 0;                                       \
		register long x1 __asm__("x1") = 0;                                       \
		register long x2 __asm__("x2") = 0;                                       \
		register long x3 __asm__("x3") = 0;                                       \
		register long x4 __asm__("x4") = 8;                                       \
		for (;;)                                                                  \
			__asm__ volatile("svc #0\n\tnop" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), \
					 "r"(x3), "r"(x4) : "memory");                    \
	} while (0)

/*
 * Signal thread TID of this process with SIG, inline: the PC the signal
 * interrupts (after the svc: the nop) stays in this statement, so in the
 * function and on the line that uses the macro.
 */
#define TGKILL_HERE(tid, sig)                                                          \
	do {                                                                           \
		/* Calls first: they would clobber the registers below. */            \
		long pid_ = getpid(), tid_ = (tid), sig_ = (sig);                      \
		register long x8 __asm__("x8") = __NR_tgkill;                          \
		register long x0 __asm__("x0") = pid_;                                 \
		register long x1 __asm__("x1") = tid_;                                 \
		register long x2 __asm__("x2") = sig_;                                 \
		__asm__ volatile("svc #0\n\tnop" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2)  \
				 : "memory");                                          \
	} while (0)

/* GCSSS1 and GCSSS2 by their SYS/SYSL encodings (no mnemonics in 2.40). */
static inline __attribute__((always_inline)) void gcsss1(uint64_t xt)
{
	__asm__ volatile("sys #3, C7, C7, #2, %0" : : "r"(xt) : "memory");
}

static inline __attribute__((always_inline)) uint64_t gcsss2(void)
{
	uint64_t xt;

	__asm__ volatile("sysl %0, #3, C7, C7, #3" : "=r"(xt) : : "memory");
	return xt;
}

#endif
