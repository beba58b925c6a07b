// SPDX-License-Identifier: MIT
/*
 * gcsprof record, perf method: the user registers every sample carries
 * (perf.h), as libgcswalk's architecture table names them.
 */
#include "perf.h"

const struct perf_regs *perf_user_regs(void)
{
	static struct perf_regs r;
	struct gcswalk_arch_info a = { .size = sizeof(a) };

	if (r.mask)
		return &r;
	/* A host without a back end records nothing: arm64's, as before. */
	r.ss = 47;
	r.lr = -1;
	if (gcswalk_system_arch(&a) == GCSWALK_OK) {
		r.ss = a.perf_reg_shadow_stack;
		r.lr = a.perf_reg_leaf_caller;
	}
	r.mask = 1ULL << r.ss | (r.lr >= 0 ? 1ULL << r.lr : 0);
	return &r;
}
