/* SPDX-License-Identifier: MIT */
/*
 * riscv64 helpers for the riscv guest's test programs: inline system calls
 * (ecall), parking and signalling in place, and the shadow stack's own
 * instructions (ssp, ssamoswap) for switching stacks. The shadow stack is
 * turned on at start by gcsprof-shstk's constructor, linked into every
 * test program (gcsprof/shstk/shstk-enable.c; GCSPROF_SHADOW_STACK=0
 * leaves it off).
 */
#ifndef GCSPROF_RV_UTIL_H
#define GCSPROF_RV_UTIL_H

#include <stdint.h>
#include <sys/syscall.h>

/* After a call, so that the call is not a tail call. */
#define KEEP_FRAME() __asm__ volatile("" ::: "memory")
#define NOINLINE __attribute__((noinline))

#define RV_NR_map_shadow_stack 453
#define RV_SHADOW_STACK_SET_TOKEN 1UL
#define RV_PR_GET_SHADOW_STACK_STATUS 74
#define RV_PR_SET_SHADOW_STACK_STATUS 75

/* A system call made inline: the parking and signalling calls must leave
 * the PC in our own functions, and a leaf must stay a leaf. */
static inline __attribute__((always_inline)) long rv_syscall3(long nr, long a, long b, long c)
{
	register long a7 __asm__("a7") = nr;
	register long a0 __asm__("a0") = a;
	register long a1 __asm__("a1") = b;
	register long a2 __asm__("a2") = c;
	register long a3 __asm__("a3") = 0;
	register long a4 __asm__("a4") = 0;

	__asm__ volatile("ecall" : "+r"(a0) : "r"(a7), "r"(a1), "r"(a2), "r"(a3), "r"(a4)
			 : "memory");
	return a0;
}

/*
 * Sleep until the process dies: ppoll with no descriptors and no timeout.
 * The nop keeps the PC inside this statement whether a stop reports it at
 * the ecall (about to be restarted) or after it.
 */
#define PARK_FOREVER()                                                                    \
	do {                                                                              \
		register long a7 __asm__("a7") = __NR_ppoll;                              \
		register long a0 __asm__("a0") = 0;                                       \
		register long a1 __asm__("a1") = 0;                                       \
		register long a2 __asm__("a2") = 0;                                       \
		register long a3 __asm__("a3") = 0;                                       \
		register long a4 __asm__("a4") = 8;                                       \
		for (;;)                                                                  \
			__asm__ volatile("ecall\n\tnop" : "+r"(a0) : "r"(a7), "r"(a1), "r"(a2), \
					 "r"(a3), "r"(a4) : "memory");                    \
	} while (0)

/* Signal thread TID of process PID with SIG, inline: the PC the signal
 * interrupts (after the ecall: the nop) stays in this statement. */
#define TGKILL_HERE(pid, tid, sig)                                                     \
	do {                                                                           \
		/* Calls first: they would clobber the registers below. */            \
		long pid_ = (pid), tid_ = (tid), sig_ = (sig);                         \
		register long a7 __asm__("a7") = __NR_tgkill;                          \
		register long a0 __asm__("a0") = pid_;                                 \
		register long a1 __asm__("a1") = tid_;                                 \
		register long a2 __asm__("a2") = sig_;                                 \
		__asm__ volatile("ecall\n\tnop" : "+r"(a0) : "r"(a7), "r"(a1), "r"(a2)  \
				 : "memory");                                          \
	} while (0)

/* ssp: the newest entry's slot, 0 while the shadow stack is off. */
static inline __attribute__((always_inline)) uint64_t rv_ssp(void)
{
	uint64_t v;

	__asm__ volatile("ssrdp %0" : "=r"(v) : : "memory");
	return v;
}

/*
 * Switch the shadow stack to the one whose restore token is at TOKEN_SLOT
 * (map_shadow_stack's SHADOW_STACK_SET_TOKEN puts one in its top slot),
 * as zicfiss.rst describes: leave a restore token on the stack we leave
 * (its slot in *SAVED, for switching back), take the target's token
 * (swapping 0 in, so that it is used once), check it names its own slot,
 * and move ssp there. Returns 0, or -1 when the target holds no token
 * (nothing switched). The caller must not return until it switches back:
 * its own return address is on the stack it left.
 */
static inline __attribute__((always_inline)) int rv_ss_switch(uint64_t token_slot,
								uint64_t *saved)
{
	uint64_t cur = rv_ssp(), mine = cur - 8, old, token;

	__asm__ volatile("csrw ssp, %1\n\tssamoswap.d %0, %2, (%1)"
			 : "=&r"(old) : "r"(mine), "r"(cur) : "memory");
	__asm__ volatile("ssamoswap.d %0, zero, (%1)" : "=&r"(token) : "r"(token_slot) : "memory");
	if (token != token_slot + 8) {
		/* Not a token: put back what was there, and our own stack. */
		__asm__ volatile("ssamoswap.d %0, %1, (%2)\n\tcsrw ssp, %3"
				 : "=&r"(old) : "r"(token), "r"(token_slot), "r"(cur) : "memory");
		return -1;
	}
	*saved = mine;
	__asm__ volatile("csrw ssp, %0" : : "r"(token) : "memory");
	return 0;
}

#endif
