/* SPDX-License-Identifier: MIT */
/*
 * Chains as text, for tests that compare chains between walkers (live,
 * core, self; guest and host):
 *  - canonical: only what a test program knows about itself: frames in the
 *    module named EXE (function:line of every symbol, inlined ones first)
 *    and every frame that is not an address (caps, terminator, ...);
 *  - full: every frame, symbolised, module by base name.
 */
#ifndef GCSWALK_CHAIN_TEXT_H
#define GCSWALK_CHAIN_TEXT_H

#include <stdio.h>

#include "gcswalk.h"

struct text {
	char *s;
	size_t len, cap;
};

void text_free(struct text *t);
void text_printf(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Append the frames (and then "end" or "cut" for FINAL) to OUT. */
void chain_text(struct text *out, gcswalk_symbolizer *sym, const struct gcswalk_frame *frames,
		size_t n, int final, const char *exe, int full);

/* Walk thread TID of T with OPTS (NULL: the defaults with room for 8192
 * frames) into OUT (header "thread TID" first).
 * Returns the walk's status (GCSWALK_OK or an error, also written). */
int walk_text(struct text *out, gcswalk_target *t, gcswalk_symbolizer *sym, int tid,
	      const struct gcswalk_walk_options *opts, const char *exe, int full);

/* Whether every thread of EXPECT walked in T (symbolised by SYM, frames
 * of module EXE) equals its block of EXPECT. For those that differ, WHY
 * gets "WHAT: thread N differs; expected: ... got: ..." lines. */
int chains_match_text(gcswalk_target *t, gcswalk_symbolizer *sym, const char *expect,
		      const char *exe, const char *what, struct text *why);

/* What a test target prints on FD up to "ready\n" (its expected chains),
 * malloc'd without that line; NULL if FD ends first (ALL then gets what
 * came, if not NULL: the caller frees it). */
char *read_until_ready(int fd, char **all);

/* The block of EXPECT that starts with "thread TID\n", up to the next
 * "thread " line or the end: a malloc'd string, or NULL. */
char *text_block(const char *expect, int tid);

/* The tids of the "thread N" lines of EXPECT, in order; count in *N. */
int *text_tids(const char *expect, size_t *n);

/* The number of open file descriptors of this process (-1 if unknown),
 * to catch leaks. */
int count_open_fds(void);

/* Whole file as a string (NULL on error). */
char *read_text_file(const char *path);

/* The number a file (a sysctl) starts with, or -1 (no such file, not a
 * number). */
long read_number_file(const char *path);

#endif
