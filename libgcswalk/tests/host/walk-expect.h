/* SPDX-License-Identifier: MIT */
/*
 * Host tests' walk checks: a walk of a thread gives exactly these frames
 * (kind and address) and ends with this status; or its start fails with
 * this error. And the hand-made stacks the synthetic core and the
 * caller-supplied source share. Header-only; include after tap.h.
 */
#ifndef GCSWALK_WALK_EXPECT_H
#define GCSWALK_WALK_EXPECT_H

#include <stddef.h>
#include <stdint.h>

#include "gcswalk.h"

struct expect {
	enum gcswalk_frame_kind kind;
	uint64_t address;
};

static int walk_matches(gcswalk_target *t, size_t idx, const struct gcswalk_walk_options *o,
			const struct expect *exp, size_t n, int final)
{
	struct gcswalk_frame f;
	gcswalk_walk *w;
	size_t i;
	int ret, ok = 1;

	ret = gcswalk_walk_begin(&w, t, idx, o);
	if (ret != GCSWALK_OK) {
		tap_diag("walk of thread %zu: %s (%s)", idx, gcswalk_strerror(ret),
			 gcswalk_target_errmsg(t));
		return 0;
	}
	for (i = 0; (ret = gcswalk_walk_next(w, &f)) == GCSWALK_OK; i++) {
		if (i >= n || f.kind != exp[i].kind || f.address != exp[i].address) {
			tap_diag("frame %zu: %s %#llx, expected %s %#llx", i,
				 gcswalk_frame_kind_name(f.kind), (unsigned long long)f.address,
				 i < n ? gcswalk_frame_kind_name(exp[i].kind) : "(none)",
				 i < n ? (unsigned long long)exp[i].address : 0ULL);
			ok = 0;
		}
	}
	if (i != n || ret != final) {
		tap_diag("%zu frames ending in %s, expected %zu ending in %s", i,
			 gcswalk_strerror(ret), n, gcswalk_strerror(final));
		ok = 0;
	}
	if (gcswalk_walk_next(w, &f) != ret) {
		tap_diag("the final status is not repeated");
		ok = 0;
	}
	gcswalk_walk_free(w);
	return ok;
}

static int walk_error(gcswalk_target *t, size_t idx, int expected)
{
	gcswalk_walk *w = NULL;
	int ret = gcswalk_walk_begin(&w, t, idx, NULL);

	if (ret != expected)
		tap_diag("thread %zu: %s (%s), expected %s", idx, gcswalk_strerror(ret),
			 gcswalk_target_errmsg(t), gcswalk_strerror(expected));
	gcswalk_walk_free(w);
	return ret == expected && w == NULL;
}

/* A kernel signal frame at STACK (64-bit words): the sigcontext's pc
 * (the interrupted PC), an fpsimd record, then the GCS record naming the
 * signal cap at CAP_SLOT. */
static void put_signal_frame(uint64_t *stack, uint64_t pc, uint64_t cap_slot)
{
	stack[264 / 8] = pc;
	stack[288 / 8] = 0x46508001 | (528ULL << 32);
	stack[(288 + 528) / 8] = 0x47435300 | (32ULL << 32);
	stack[(288 + 528) / 8 + 1] = cap_slot;
}

/* Four returns and a terminator at GCS; on the stack at STACK (mapped at
 * STACK_BASE), the frame records of the three callers at words 16, 20
 * and 24 (the leaf's return has none), the middle one overwritten with
 * 0x666664: gcswalk_verify() must report it, and only it. */
static void put_smashed_records(uint64_t *gcs, uint64_t *stack, uint64_t stack_base)
{
	gcs[0] = 0x401004;
	gcs[1] = 0x401104;
	gcs[2] = 0x401204;
	gcs[3] = 0x401304;
	gcs[4] = 0;
	stack[16] = stack_base + 0xa0;
	stack[17] = 0x401104;
	stack[20] = stack_base + 0xc0;
	stack[21] = 0x666664;           /* was 0x401204 */
	stack[24] = 0;
	stack[25] = 0x401304;
}

#endif
