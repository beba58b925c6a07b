/* SPDX-License-Identifier: MIT */
/*
 * The two GCS primitives a guest test must have inline, shared by the
 * programs that turn GCS on in main() (tests/probe, tests/abuse).
 */
#ifndef GCSPROF_TESTS_GCS_INLINE_H
#define GCSPROF_TESTS_GCS_INLINE_H

#include <stdint.h>
#include <sys/syscall.h>

/*
 * The prctl that enables GCS must not be made through a libc function:
 * that function's return address was pushed before GCS was on, so its
 * RET would fail the check. Inline, there is no return.
 */
static inline __attribute__((always_inline)) long gcs_raw_prctl(long option, long arg)
{
	register long x8 __asm__("x8") = __NR_prctl;
	register long x0 __asm__("x0") = option;
	register long x1 __asm__("x1") = arg;
	/* The shadow stack prctls insist that the unused arguments are 0. */
	register long x2 __asm__("x2") = 0;
	register long x3 __asm__("x3") = 0;
	register long x4 __asm__("x4") = 0;

	__asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4)
			 : "memory");
	return x0;
}

/* GCSPR_EL0 by its encoding: binutils 2.40 has no mnemonic for it. */
static inline __attribute__((always_inline)) uint64_t gcs_read_gcspr(void)
{
	uint64_t v;

	__asm__ volatile("mrs %0, S3_3_C2_C5_1" : "=r"(v));
	return v;
}

#endif
