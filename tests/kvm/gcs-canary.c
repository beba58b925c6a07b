// SPDX-License-Identifier: MIT
/*
 * The smallest use of GCS at EL0: enable it, make one call (a push and a
 * pop), return. tests/kvm/nested-test.sh runs it in the inner guest before
 * the probe and the kselftests, under a short timeout, to tell "GCS works
 * in this guest" from "the emulator cannot run GCS in a guest at all":
 * QEMU 11.1.3's TCG takes every GCS data access of a guest under stage 2
 * through a single-stage walk, so the first push faults as a translation
 * fault at the first level, for ever (docs/kernel.md, "GCS in KVM guests";
 * vm/qemu-patches fixes it).
 *
 * With --mismatch, after that call, a return to an address other than the
 * one the GCS holds, which must be refused: the process takes SIGSEGV with
 * si_code SEGV_CPERR before anything runs there.
 *
 * It first prints the GCS field of ID_AA64PFR1_EL1 as EL0 reads it and
 * whether HWCAP_GCS is set: a hypervisor that hides GCS shows 0 there.
 *
 * Exit status: 0 the call returned (and, with --mismatch, the bad return
 * was refused); 3 the bad return was not refused; 5 it was refused by
 * another kind of SIGSEGV; 4 no GCS here (the prctl failed); killed by the
 * caller's timeout: GCS accesses do not complete.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "../gcs-abi.h"
#include "../gcs-inline.h"


/* write(2) without a call: nothing may be pushed before the test call. */
static inline __attribute__((always_inline)) void raw_say(const char *s, long n)
{
	register long x8 __asm__("x8") = __NR_write;
	register long x0 __asm__("x0") = 1;
	register long x1 __asm__("x1") = (long)s;
	register long x2 __asm__("x2") = n;

	__asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
}

#ifndef SEGV_CPERR
#define SEGV_CPERR 10	/* the GCS check refused a return (Linux 6.13 uapi) */
#endif

static void refused(int sig, siginfo_t *info, void *ctx)
{
	static const char cperr[] = "gcs-canary: the mismatched return was refused (SEGV_CPERR)\n";
	static const char other[] = "gcs-canary: SIGSEGV, but not SEGV_CPERR\n";

	(void)sig;
	(void)ctx;
	if (info->si_code == SEGV_CPERR) {
		raw_say(cperr, sizeof(cperr) - 1);
		_exit(0);
	}
	raw_say(other, sizeof(other) - 1);
	_exit(5);
}

#ifndef HWCAP_CPUID
#define HWCAP_CPUID (1UL << 11)
#endif

/*
 * The GCS field of ID_AA64PFR1_EL1 as this guest's kernel shows it to EL0
 * (an MRS the kernel emulates, HWCAP_CPUID): what the guest's CPU, that is
 * the hypervisor's KVM, says about GCS, apart from whether the kernel
 * enabled it. -1 where EL0 cannot read the ID registers.
 */
static int id_gcs_field(void)
{
	unsigned long pfr1;

	if (!(getauxval(AT_HWCAP) & HWCAP_CPUID))
		return -1;
	__asm__ volatile("mrs %0, id_aa64pfr1_el1" : "=r"(pfr1));
	return (int)((pfr1 >> 44) & 0xf);
}

/*
 * Returns to the instruction after its own RET instead of to its caller:
 * with GCS on, that RET pops the caller's address from the GCS, finds it
 * differs from the link register, and faults. The x30 clobber makes the
 * compiler save and restore the real link register around the asm, so
 * without the check the function simply returns.
 */
static __attribute__((noinline)) void return_elsewhere(void)
{
	__asm__ volatile("adr x30, 1f\n\tret\n1:" ::: "x30", "memory");
}

static __attribute__((noinline)) int called(int x)
{
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

int main(int argc, char **argv)
{
	static const char enabled[] = "gcs-canary: GCS enabled, calling\n";
	int mismatch = argc == 2 && strcmp(argv[1], "--mismatch") == 0;
	struct sigaction sa;
	long ret;

	if (argc > 2 || (argc == 2 && !mismatch)) {
		fprintf(stderr, "usage: gcs-canary [--mismatch]\n");
		return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = refused;
	sa.sa_flags = SA_SIGINFO;
	if (mismatch && sigaction(SIGSEGV, &sa, NULL) != 0) {
		perror("gcs-canary: sigaction");
		return 1;
	}
	printf("gcs-canary: ID_AA64PFR1_EL1.GCS %d, HWCAP_GCS %s\n", id_gcs_field(),
	       getauxval(AT_HWCAP) & HWCAP_GCS ? "yes" : "no");
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
	if (mismatch) {
		return_elsewhere();
		printf("gcs-canary: the mismatched return was not refused\n");
		fflush(stdout);
		_exit(3);
	}
	/* main's own return address is not on the GCS: do not return. */
	_exit(0);
}
