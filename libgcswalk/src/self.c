// SPDX-License-Identifier: MIT
/*
 * The calling thread's own chain. Async-signal-safe and allocation-free:
 * GCS pages are readable with ordinary loads, so the entries are copied
 * directly from GCSPR_EL0 up. Within the page GCSPR_EL0 points into, that
 * is all. A chain that goes on into the next page may be leaving its GCS
 * mapping (a stack made by map_shadow_stack without a marker has no
 * terminator and ends with its mapping, and the next mapping may be
 * readable): the first time a walk crosses a page, it looks up the GCS
 * mapping's end in /proc/self/maps with open/read/close only (all
 * async-signal-safe), parsing as it reads (maps-scan.c, the head parser
 * proc.c's maps reader uses too), with no buffer but one small chunk on
 * the stack.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "internal.h"
#include "proc.h"

#define GCS_PAGE 4096u

/* The end of the mapping containing ADDR, from /proc/self/maps; 0 if
 * unknown. Parsed as it is read (maps-scan.c), a chunk at a time. */
static uint64_t mapping_end(uint64_t addr)
{
	char chunk[256];
	struct gw_maps_find f = { addr, 0, GW_MAPS_HEAD_INIT };
	ssize_t n;
	int fd;

	do
		fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return 0;
	for (;;) {
		n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || gw_maps_find_feed(&f, chunk, (size_t)n))
			break;
	}
	close(fd);
	return f.end;
}

/* Whether SLOT is past the end of FIRST's GCS mapping (*END, looked up
 * once), or unreadable (-1), when SLOT starts a page: within a page there
 * is nothing to look up. A first slot at a page boundary may itself be the
 * end of an empty shadow stack (riscv's, before anything was pushed). */
static int past_end(uint64_t first, uint64_t slot, uint64_t *end)
{
	if (slot % GCS_PAGE)
		return 0;
	if (!*end)
		*end = mapping_end(first % GCS_PAGE ? first : first - 1);
	if (!*end)
		return -1;
	return slot >= *end;
}

/*
 * The walk from FIRST, the slot of the newest entry that belongs to the
 * exported function's caller (arm64: its return into the caller). With
 * UCONTEXT (a signal handler's third argument), the interrupted PC it
 * holds goes after the signal cap its GCS record names. Where callees
 * push (riscv), the caller's return is RA, the exported function's own
 * (the library pushes nothing): an LR frame first, unless FIRST holds it.
 */
static int walk_from(const struct gw_arch *arch, uint64_t first, uint64_t ra,
		     const void *ucontext, struct gcswalk_frame *frames, size_t max, size_t *count)
{
	uint64_t slot, end = 0;
	size_t k = 0;
	int ret = GCSWALK_END, past;

	for (slot = first;; slot += arch->entry_size) {
		enum gcswalk_frame_kind kind;
		uint64_t entry = 0, pc, at;

		past = past_end(first, slot, &end);
		if (past == 0)
			entry = *(const volatile uint64_t *)(uintptr_t)slot;
		if (slot == first && arch->callee_pushes && ra && (past || entry != ra) && k < max)
			frames[k++] = (struct gcswalk_frame){ GCSWALK_FRAME_LR, GCSWALK_SOURCE_GCS,
							      ra, 0 };
		if (k == max) {
			ret = GCSWALK_CUT;
			break;
		}
		if (past < 0)
			frames[k++] = (struct gcswalk_frame){ GCSWALK_FRAME_UNREADABLE,
							      GCSWALK_SOURCE_GCS, 0, slot };
		if (past)
			break;          /* the end of the GCS mapping, or unreadable */
		kind = arch->classify(entry, slot);
		frames[k++] = (struct gcswalk_frame){ kind, GCSWALK_SOURCE_GCS,
						      kind == GCSWALK_FRAME_TERMINATOR ? 0 : entry,
						      slot };
		if (kind == GCSWALK_FRAME_TERMINATOR)
			break;
		if (kind == GCSWALK_FRAME_SIGNAL_CAP && ucontext &&
		    arch->self_signal_pc(ucontext, slot, &pc, &at) == 0) {
			if (k == max) {
				ret = GCSWALK_CUT;
				break;
			}
			frames[k++] = (struct gcswalk_frame){ GCSWALK_FRAME_INTERRUPTED_PC,
							      GCSWALK_SOURCE_GCS, pc, at };
		}
	}
	gw_mark_sigreturn(frames, k);
	*count = k;
	return ret;
}

/* The checks both entry points make, in the entry point itself, so that
 * gw_arch_self_gcspr() is called from it directly. */
#define SELF_WALK(ucontext)                                                             \
	do {                                                                            \
		const struct gw_arch *arch = gw_arch_native();                          \
		uint64_t first, ra = (uint64_t)(uintptr_t)__builtin_return_address(0);  \
		int saved_errno = errno, ret;                                           \
                                                                                        \
		if (!frames || !count)                                                  \
			return GCSWALK_E_INVALID;                                       \
		*count = 0;                                                             \
		if (!arch)                                                              \
			return GCSWALK_E_UNSUPPORTED;                                   \
		if (!gw_arch_self_supported())                                          \
			return GCSWALK_E_NO_GCS_CPU;                                    \
		first = gw_arch_self_gcspr();                                           \
		if (!first)                                                             \
			return GCSWALK_E_GCS_DISABLED;                                  \
		ret = walk_from(arch, first, ra, (ucontext), frames, max, count);       \
		errno = saved_errno;                                                    \
		return ret;                                                             \
	} while (0)

int gcswalk_self(struct gcswalk_frame *frames, size_t max, size_t *count)
{
	SELF_WALK(NULL);
}

int gcswalk_self_signal(const void *ucontext, struct gcswalk_frame *frames, size_t max,
			size_t *count)
{
	if (!ucontext)
		return GCSWALK_E_INVALID;
	SELF_WALK(ucontext);
}
