/* SPDX-License-Identifier: MIT */
/*
 * gcsprof inspect's parts: inspect.c is the command (the core, its fatal
 * signal, each thread, the verdict); inspect_chain.c prints a thread's
 * chain; inspect_verify.c cross-checks the thread's stack with its GCS and
 * says where they disagree. The shadow stack and the register a refused
 * return used go by their architecture's names (arm64: GCS, the link
 * register; riscv64: Zicfiss, t0).
 */
#ifndef GCSPROF_INSPECT_H
#define GCSPROF_INSPECT_H

#include <stddef.h>
#include <stdio.h>

#include <gcswalk.h>

/* Every frame is walked, however deep: none is hidden unless asked. */
#define INSPECT_ALL_FRAMES ((size_t)1 << 30)

/* A thread's chain as printed: the frames, and the number each code
 * frame is shown with (#0 the PC; gcswalk_frame_is_code() says which are
 * code). */
struct inspect_chain {
	struct gcswalk_frame *frames;
	size_t *numbers;
	size_t n, frames_cap, numbers_cap;
	/* The words for its architecture (arm64's, riscv64's). */
	const char *ss;          /* the shadow stack: "GCS", "shadow stack" */
	const char *feature;     /* what the CPU calls it: "GCS", "Zicfiss" */
	const char *ret_reg;     /* the register a checked return used */
};

/* inspect_chain.c */
/* Walk thread I of T (every frame, however deep) into C, with *STATUS
 * the walk's (GCSWALK_END, GCSWALK_CUT, or an error). SYM, the walk's
 * symboliser too: where a leaf's caller is only in a register (riscv),
 * its CFI says so. 0, or -1 when out of memory. */
int inspect_walk(gcswalk_target *t, size_t i, gcswalk_symbolizer *sym, struct inspect_chain *c,
		 int *status);
/* Print C's frames, numbered from #0 (at most MAX code frames; 0: all). */
void inspect_print_chain(FILE *f, gcswalk_symbolizer *sym, const struct inspect_chain *c,
			 size_t max);
/* The name of the function at ADDRESS ("??" if none). */
const char *inspect_short_name(gcswalk_symbolizer *sym, uint64_t address, int is_return);
void inspect_chain_free(struct inspect_chain *c);

/* inspect_verify.c: compare thread I's stack with its GCS (C) and print
 * the verdicts. 1 if corruption was found. */
int inspect_check_thread(FILE *f, gcswalk_target *t, size_t i, gcswalk_symbolizer *sym,
			 const struct inspect_chain *c);

#endif
