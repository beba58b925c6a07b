/* SPDX-License-Identifier: MIT */
/*
 * Helpers for the inspect corpus: programs whose cores gcsprof inspect must
 * judge right. Each program is one scenario; its first comment says what
 * it does and what inspect must say.
 */
#ifndef GCSPROF_CORPUS_H
#define GCSPROF_CORPUS_H

#include <stdint.h>

#define NOINLINE __attribute__((noinline))
/* After a call, so that it is not a tail call and its frame stays. */
#define KEEP() __asm__ volatile("" ::: "memory")

#ifndef PR_SET_SHADOW_STACK_STATUS
#define PR_SET_SHADOW_STACK_STATUS 75
#endif
#ifndef PR_SHADOW_STACK_ENABLE
#define PR_SHADOW_STACK_ENABLE (1UL << 0)
#endif
#ifndef __NR_map_shadow_stack
#define __NR_map_shadow_stack 453
#endif
#ifndef SHADOW_STACK_SET_TOKEN
#define SHADOW_STACK_SET_TOKEN (1ULL << 0)
#endif
#ifndef SHADOW_STACK_SET_MARKER
#define SHADOW_STACK_SET_MARKER (1ULL << 1)
#endif

/*
 * Enable GCS for the calling thread with an inline system call: no
 * function may return after this into a frame made before it (its return
 * address is on no GCS), so the caller must never return. Returns the
 * prctl result. (On riscv64: its shadow stack, the same prctl, by ecall.)
 */
#if defined(__riscv)
static inline __attribute__((always_inline)) long enable_gcs_inline(void)
{
	register long a0 __asm__("a0") = PR_SET_SHADOW_STACK_STATUS;
	register long a1 __asm__("a1") = PR_SHADOW_STACK_ENABLE;
	register long a2 __asm__("a2") = 0;
	register long a3 __asm__("a3") = 0;
	register long a4 __asm__("a4") = 0;
	register long a7 __asm__("a7") = 167; /* __NR_prctl */

	__asm__ volatile("ecall"
			 : "+r"(a0)
			 : "r"(a1), "r"(a2), "r"(a3), "r"(a4), "r"(a7)
			 : "memory");
	return a0;
}
#else
static inline __attribute__((always_inline)) long enable_gcs_inline(void)
{
	register long x0 __asm__("x0") = PR_SET_SHADOW_STACK_STATUS;
	register long x1 __asm__("x1") = PR_SHADOW_STACK_ENABLE;
	register long x2 __asm__("x2") = 0;
	register long x3 __asm__("x3") = 0;
	register long x4 __asm__("x4") = 0;
	register long x8 __asm__("x8") = 167; /* __NR_prctl */

	__asm__ volatile("svc #0"
			 : "+r"(x0)
			 : "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x8)
			 : "memory");
	return x0;
}
#endif

#endif
