// SPDX-License-Identifier: MIT
/* The frame vocabulary every walk shares: names, which frames are code and
 * which of those hold return addresses (the one answer every tool prints
 * chains by), and the SIGRETURN relabelling. */
#include "internal.h"

void gw_mark_sigreturn(struct gcswalk_frame *f, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n; i++)
		if (f[i].kind == GCSWALK_FRAME_RETURN && f[i + 1].kind == GCSWALK_FRAME_SIGNAL_CAP)
			f[i].kind = GCSWALK_FRAME_SIGRETURN;
}

static const char *const kind_names[] = {
	[GCSWALK_FRAME_PC] = "pc",
	[GCSWALK_FRAME_LR] = "lr",
	[GCSWALK_FRAME_RETURN] = "return",
	[GCSWALK_FRAME_SIGRETURN] = "sigreturn",
	[GCSWALK_FRAME_SIGNAL_CAP] = "signal-cap",
	[GCSWALK_FRAME_SWITCH_CAP] = "switch-cap",
	[GCSWALK_FRAME_TERMINATOR] = "terminator",
	[GCSWALK_FRAME_UNREADABLE] = "unreadable",
	[GCSWALK_FRAME_INVALID] = "invalid",
	[GCSWALK_FRAME_INTERRUPTED_PC] = "interrupted-pc",
};

const char *gcswalk_frame_kind_name(enum gcswalk_frame_kind kind)
{
	if ((unsigned)kind < sizeof(kind_names) / sizeof(kind_names[0]) && kind_names[kind])
		return kind_names[kind];
	return "?";
}

const char *gcswalk_source_name(enum gcswalk_frame_source source)
{
	switch (source) {
	case GCSWALK_SOURCE_GCS:
		return "gcs";
	case GCSWALK_SOURCE_FP:
		return "fp";
	case GCSWALK_SOURCE_CFI:
		return "cfi";
	}
	return "?";
}

int gcswalk_frame_is_code(const struct gcswalk_frame *f)
{
	if (!f)
		return 0;
	switch (f->kind) {
	case GCSWALK_FRAME_PC:
	case GCSWALK_FRAME_LR:
	case GCSWALK_FRAME_RETURN:
	case GCSWALK_FRAME_SIGRETURN:
	case GCSWALK_FRAME_INTERRUPTED_PC:
		return 1;
	default:
		return 0;         /* caps, the terminator, unreadable and invalid entries */
	}
}

int gcswalk_frame_is_return(const struct gcswalk_frame *f)
{
	return gcswalk_frame_is_code(f) && f->kind != GCSWALK_FRAME_PC &&
	       f->kind != GCSWALK_FRAME_INTERRUPTED_PC;
}
