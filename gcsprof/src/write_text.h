/* SPDX-License-Identifier: MIT */
/* The text report's pieces: its tables (write_text.c), its views of
 * callers and callees (write_text_graph.c) and the chains both print
 * (write_text_chains.c). */
#ifndef GCSPROF_WRITE_TEXT_H
#define GCSPROF_WRITE_TEXT_H

#include <stdio.h>

#include "model.h"

/* One section of the report: the samples of thread TID (0: all). */
struct text_section {
	const struct gp_model *m;
	const struct gp_report_opts *o;
	FILE *f;
	int tid;
	uint64_t total;            /* the section's samples */
	char **label;              /* per function: "name (file) [object]" */
	char **short_label;        /* in chains: "name [object]" */
};

/* The frames of sample S as short labels, root first: *NAMES gets a
 * malloc'd array. Returns the count, or (size_t)-1 for no memory. */
size_t text_frames(const struct text_section *t, const struct gp_sample *s, const char ***names);

/* Whether sample S is in section T. */
static inline int text_in_section(const struct text_section *t, const struct gp_sample *s)
{
	return !t->tid || s->tid == t->tid;
}

static inline double text_pct(uint64_t n, uint64_t total)
{
	return total ? 100.0 * (double)n / (double)total : 0.0;
}

/* A chain as text and the samples it stands for. */
struct text_count {
	char *text;
	uint64_t count;
};

/* Merge the identical texts of V[0..N) (counts added, texts freed), then
 * order them heaviest first. Returns the new count. */
size_t text_merge(struct text_count *v, size_t n);

/* NAMES[0..N) as one line joined by SEP, a run of one name (recursion)
 * written once with its count: "f [x2000, recursion]". Malloc'd. */
char *text_chain(const char *const *names, size_t n, const char *sep);

/* Under function FID's row: its callers (GP_GRAPH_CALLEE) or callees
 * (GP_GRAPH_CALLER) as chains, heaviest first. 0, or -1 for no memory. */
int text_graph(const struct text_section *t, uint64_t fid);

/* pprof's -peek: for each function whose name matches the --peek
 * expression, its callers and callees with their counts. */
int text_peek(const struct text_section *t);

#endif
