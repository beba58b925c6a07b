// SPDX-License-Identifier: MIT
/*
 * Frame records against the GCS. The GCS cannot be written by ordinary
 * stores, the stack can: a frame record whose return address is not on
 * the GCS, in order, was overwritten (or is no frame record).
 */
#include <stdlib.h>

#include "internal.h"

#define VERIFY_GCS_FRAMES 65536

int gcswalk_verify(gcswalk_target *t, size_t index, struct gcswalk_record_check *checks,
		   size_t max, size_t *count)
{
	struct gcswalk_walk_options o = GCSWALK_WALK_OPTIONS_INIT;
	struct gcswalk_frame *gcs = NULL, *fp = NULL, f;
	size_t ng = 0, nfp = 0, i, k, pos = 0, n = 0;
	int ret, fp_final, after_sigreturn = 0;
	gcswalk_walk *w;

	if (count)
		*count = 0;
	if (!t || !count || (!checks && max))
		return GCSWALK_E_INVALID;
	o.max_frames = VERIFY_GCS_FRAMES;
	ret = gcswalk_walk_begin(&w, t, index, &o);
	if (ret < 0)
		return ret;
	gcs = malloc(VERIFY_GCS_FRAMES * sizeof(*gcs));
	fp = malloc((max + 1) * sizeof(*fp));
	if (!gcs || !fp) {
		ret = gw_fail(t, GCSWALK_E_NOMEM, "out of memory");
		goto out;
	}
	while (ng < VERIFY_GCS_FRAMES && gcswalk_walk_next(w, &f) == GCSWALK_OK)
		gcs[ng++] = f;
	/* One more record than fits, to know whether there were more. */
	fp_final = gw_unwind_fp(t, &t->threads[index], fp, max + 1, &nfp);
	for (i = 0; i < nfp && n < max; i++) {
		struct gcswalk_record_check *c;

		if (fp[i].kind != GCSWALK_FRAME_RETURN)
			continue;       /* the PC */
		c = &checks[n++];
		c->record = fp[i].slot;
		c->return_address = fp[i].address;
		c->gcs_slot = 0;
		if (after_sigreturn) {
			/* The signal frame's record: the interrupted LR. */
			c->verdict = GCSWALK_RECORD_UNCHECKED;
			after_sigreturn = 0;
			continue;
		}
		for (k = pos; k < ng; k++) {
			if ((gcs[k].kind == GCSWALK_FRAME_RETURN ||
			     gcs[k].kind == GCSWALK_FRAME_SIGRETURN) &&
			    gcs[k].address == fp[i].address)
				break;
		}
		if (k < ng) {
			c->verdict = GCSWALK_RECORD_MATCHES;
			c->gcs_slot = gcs[k].slot;
			after_sigreturn = gcs[k].kind == GCSWALK_FRAME_SIGRETURN;
			pos = k + 1;
		} else {
			c->verdict = GCSWALK_RECORD_MISMATCH;
		}
	}
	*count = n;
	ret = i < nfp || fp_final == GCSWALK_CUT ? GCSWALK_CUT : GCSWALK_END;
out:
	gcswalk_walk_free(w);
	free(gcs);
	free(fp);
	return ret;
}
