/* SPDX-License-Identifier: MIT */
/*
 * Host tests' walk checks: a walk of a thread gives exactly these frames
 * (kind and address) and ends with this status; or its start fails with
 * this error. Header-only; include after tap.h.
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

#endif
