/* SPDX-License-Identifier: MIT */
/*
 * Upstream Linux's final GCS ABI by number, for the guest test programs:
 * Debian bookworm's headers, which the cross build uses, predate it. One
 * copy, so that every test checks the same numbers.
 */
#ifndef GCSPROF_TESTS_GCS_ABI_H
#define GCSPROF_TESTS_GCS_ABI_H

#include <stdint.h>

#ifndef HWCAP_GCS
#define HWCAP_GCS (1UL << 32)             /* AT_HWCAP bit 32 */
#endif
#define PR_GET_SHADOW_STACK_STATUS 74
#define PR_SET_SHADOW_STACK_STATUS 75
#define PR_LOCK_SHADOW_STACK_STATUS 76
#define PR_SHADOW_STACK_ENABLE (1UL << 0)
#define PR_SHADOW_STACK_WRITE (1UL << 1)
#define PR_SHADOW_STACK_PUSH (1UL << 2)
#define NR_map_shadow_stack 453
#define SHADOW_STACK_SET_TOKEN (1UL << 0)
#define SHADOW_STACK_SET_MARKER (1UL << 1)
#define NT_ARM_GCS 0x410                  /* ptrace regset and core note */

/* The NT_ARM_GCS regset and note. */
struct user_gcs {
	uint64_t features_enabled;
	uint64_t features_locked;
	uint64_t gcspr_el0;
};

#endif
