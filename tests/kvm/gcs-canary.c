// SPDX-License-Identifier: MIT
/*
 * The smallest use of GCS at EL0: enable it, make one call (a push and a
 * pop), return. tests/kvm/nested-test.sh runs it in the inner guest before
 * the probe and the kselftests, under a short timeout, to tell "GCS works
 * in this guest" from "the emulator cannot run GCS in a guest at all":
 * QEMU 11.1.3's TCG takes every GCS data access of a guest under stage 2
 * through a single-stage walk, so the first push faults as a translation
 * fault at the first level, for ever (docs/kernel.md, "GCS in KVM guests").
 *
 * Exit status: 0 the call returned; 4 no GCS here (the prctl failed);
 * killed by the caller's timeout: GCS accesses do not complete.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../gcs-inline.h"

#define PR_SET_SHADOW_STACK_STATUS	75
#define PR_SHADOW_STACK_ENABLE		(1UL << 0)

/* write(2) without a call: nothing may be pushed before the test call. */
static inline __attribute__((always_inline)) void raw_say(const char *s, long n)
{
	register long x8 __asm__("x8") = __NR_write;
	register long x0 __asm__("x0") = 1;
	register long x1 __asm__("x1") = (long)s;
	register long x2 __asm__("x2") = n;

	__asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
}

static __attribute__((noinline)) int called(int x)
{
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

int main(void)
{
	static const char enabled[] = "gcs-canary: GCS enabled, calling\n";
	long ret;

	if (fflush(stdout) != 0)
		return 1;
	ret = gcs_raw_prctl(PR_SET_SHADOW_STACK_STATUS, PR_SHADOW_STACK_ENABLE);
	if (ret != 0) {
		printf("gcs-canary: no GCS here (prctl: %s)\n", strerror((int)-ret));
		fflush(stdout);
		_exit(4);
	}
	raw_say(enabled, sizeof(enabled) - 1);
	if (called(1) != 2)
		_exit(1);
	printf("gcs-canary: the call returned, GCSPR_EL0 %#lx\n",
	       (unsigned long)gcs_read_gcspr());
	fflush(stdout);
	/* main's own return address is not on the GCS: do not return. */
	_exit(0);
}
