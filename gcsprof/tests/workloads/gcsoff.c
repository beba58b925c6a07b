// SPDX-License-Identifier: MIT
/*
 * A program that turns its GCS on, then off part-way: SECONDS in
 * with_gcs(), then prctl(PR_SET_SHADOW_STACK_STATUS, 0), then SECONDS in
 * without_gcs(). A recorder must count the second half as samples without
 * GCS, or label them as fallback chains. It enables GCS itself, since
 * glibc locks the GCS it enables: run it with glibc.cpu.aarch64_gcs=0.
 * Usage: gcsprof-gcsoff [SECONDS] (default 1).
 */
#include <stdio.h>
#include <sys/prctl.h>

#include "../../../tests/gcs-abi.h"
#include "common.h"

volatile uint64_t sink;

NOINLINE void with_gcs(double seconds)
{
	sink += spin_for(seconds);
	KEEP_FRAME();
}

NOINLINE void without_gcs(double seconds)
{
	sink += spin_for(seconds);
	KEEP_FRAME();
}

/* prctl() made inline: a call into libc would return to an address the
 * new GCS never had. */
static inline __attribute__((always_inline)) long enable_gcs(void)
{
	register long x8 __asm__("x8") = 167;        /* __NR_prctl */
	register long x0 __asm__("x0") = PR_SET_SHADOW_STACK_STATUS;
	register long x1 __asm__("x1") = (long)PR_SHADOW_STACK_ENABLE;
	register long x2 __asm__("x2") = 0, x3 __asm__("x3") = 0, x4 __asm__("x4") = 0;

	__asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4)
			 : "memory");
	return x0;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	unsigned long mode = 1;

	/* From here main() must not return: its return address is not on
	 * the GCS. */
	if (enable_gcs() != 0) {
		fprintf(stderr, "gcsoff: cannot enable GCS\n");
		exit(1);
	}
	with_gcs(seconds);
	/* Turning GCS off is safe through libc: nothing checks the returns
	 * that follow. */
	if (prctl(PR_SET_SHADOW_STACK_STATUS, 0UL, 0UL, 0UL, 0UL) != 0) {
		perror("gcsoff: PR_SET_SHADOW_STACK_STATUS");
		exit(1);
	}
	if (prctl(PR_GET_SHADOW_STACK_STATUS, &mode, 0UL, 0UL, 0UL) != 0 || mode != 0) {
		fprintf(stderr, "gcsoff: GCS is still on\n");
		exit(1);
	}
	without_gcs(seconds);
	printf("gcsoff: done\n");
	exit(0);
}
