// SPDX-License-Identifier: MIT
/*
 * The calling thread's own chain. Async-signal-safe and allocation-free:
 * GCS pages are readable with ordinary loads, so the entries are copied
 * directly; before the first load from each page, mincore() (a system call
 * that fails with ENOMEM for unmapped memory instead of faulting) checks
 * that the page exists, since a stack made by map_shadow_stack without a
 * marker has no terminator and ends at the end of its mapping.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

#define GCS_PAGE 4096u

/* mincore through syscall(): no libc wrapper state, no errno games. */
static int page_mapped(uint64_t addr)
{
	unsigned char vec;

	return syscall(SYS_mincore, (void *)(uintptr_t)(addr & ~(uint64_t)(GCS_PAGE - 1)),
		       (size_t)GCS_PAGE, &vec) == 0;
}

int gcswalk_self(struct gcswalk_frame *frames, size_t max, size_t *count)
{
	const struct gw_arch *arch = gw_arch_native();
	uint64_t slot;
	size_t k = 0;
	int saved_errno = errno, ret = GCSWALK_END;

	if (!frames || !count)
		return GCSWALK_E_INVALID;
	*count = 0;
	if (!arch)
		return GCSWALK_E_UNSUPPORTED;
	if (!gw_arch_self_supported())
		return GCSWALK_E_NO_GCS_CPU;
	slot = gw_arch_self_gcspr();
	if (!slot)
		return GCSWALK_E_GCS_DISABLED;
	for (;; slot += arch->entry_size) {
		enum gcswalk_frame_kind kind;
		uint64_t entry;

		if (k == max) {
			ret = GCSWALK_CUT;
			break;
		}
		if ((k == 0 || slot % GCS_PAGE == 0) && !page_mapped(slot)) {
			/* The end of the GCS mapping: the chain is complete. */
			break;
		}
		entry = *(const volatile uint64_t *)(uintptr_t)slot;
		kind = arch->classify(entry, slot);
		frames[k++] = (struct gcswalk_frame){ kind, GCSWALK_SOURCE_GCS,
						      kind == GCSWALK_FRAME_TERMINATOR ? 0 : entry,
						      slot };
		if (kind == GCSWALK_FRAME_TERMINATOR)
			break;
	}
	gw_mark_sigreturn(frames, k);
	*count = k;
	errno = saved_errno;
	return ret;
}
