// SPDX-License-Identifier: MIT
/* The text report: top functions with self and total shares, then the
 * heaviest chains; with --per-thread, the same for each thread. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

struct fn_count {
	uint64_t id;
	uint64_t self, total;
};

static int by_total(const void *a, const void *b)
{
	const struct fn_count *x = a, *y = b;

	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

struct chain {
	char *text;
	uint64_t count;
};

static int by_text(const void *a, const void *b)
{
	return strcmp(((const struct chain *)a)->text, ((const struct chain *)b)->text);
}

static int by_count(const void *a, const void *b)
{
	const struct chain *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->text, y->text);
}

static double pct(uint64_t n, uint64_t total)
{
	return total ? 100.0 * (double)n / (double)total : 0.0;
}

/*
 * One chain as "a -> b -> c", root first. A run of the same function
 * (recursion) is written once with its count, "f [x2000, recursion]", so
 * that every frame is accounted for on a line a reader can take in.
 */
static char *chain_text(const char **names, size_t n)
{
	size_t i, run, len = 1;
	char *t, *p;

	for (i = 0; i < n; i++)
		len += strlen(names[i]) + 4 + 40;
	t = malloc(len);
	if (!t)
		return NULL;
	p = t;
	*p = '\0';
	for (i = 0; i < n; i += run) {
		for (run = 1; i + run < n && strcmp(names[i + run], names[i]) == 0; run++)
			;
		p += sprintf(p, "%s%s", i ? " -> " : "", names[i]);
		if (run > 1)
			p += sprintf(p, " [x%zu, recursion]", run);
	}
	return t;
}

/* Sample number I's share of each function: self for its leaf, total
 * once for each function anywhere in its chain (LAST remembers which
 * sample counted a function last, so that recursion counts once). */
static void count_functions(const struct gp_model *m, size_t i, struct fn_count *fc,
			    uint64_t *last)
{
	const struct gp_sample *s = &m->samples[i];
	size_t j, k;

	for (j = 0; j < s->nlocations; j++) {
		const struct gp_location *l = &m->locations[s->location_ids[j] - 1];

		for (k = 0; k < l->nlines; k++) {
			uint64_t fid = l->lines[k].function_id;

			if (j == 0 && k == 0)
				fc[fid - 1].self += (uint64_t)s->count;
			if (last[fid - 1] != i + 1) {
				last[fid - 1] = i + 1;
				fc[fid - 1].total += (uint64_t)s->count;
			}
		}
	}
}

/* The top functions of FC, heaviest first. */
static void print_functions(const struct gp_model *m, FILE *f, const struct gp_report_opts *o,
			    struct fn_count *fc, uint64_t total)
{
	size_t i, shown;

	qsort(fc, m->nfunctions, sizeof(*fc), by_total);
	fprintf(f, "%8s %8s %8s  %s\n", "self%", "total%", "samples", "function");
	for (i = 0, shown = 0; i < m->nfunctions && shown < o->top; i++) {
		const struct gp_function *fn = gp_model_function(m, fc[i].id);

		if (!fc[i].total)
			continue;
		shown++;
		fprintf(f, "%7.2f%% %7.2f%% %8" PRIu64 "  %s%s%s%s\n", pct(fc[i].self, total),
			pct(fc[i].total, total), fc[i].total, fn->name, fn->filename[0] ? " (" : "",
			fn->filename, fn->filename[0] ? ")" : "");
	}
}

/* Identical chains merged into one with their counts added; the number left. */
static size_t merge_chains(struct chain *chains, size_t nchains)
{
	size_t i, j;

	qsort(chains, nchains, sizeof(*chains), by_text);
	for (i = 0, j = 0; i < nchains; i++) {
		if (j && strcmp(chains[j - 1].text, chains[i].text) == 0) {
			chains[j - 1].count += chains[i].count;
			free(chains[i].text);
		} else
			chains[j++] = chains[i];
	}
	return j;
}

static void print_chains(FILE *f, struct chain *chains, size_t nchains, uint64_t total)
{
	size_t i;

	qsort(chains, nchains, sizeof(*chains), by_count);
	fprintf(f, "\nHeaviest call chains (root first):\n");
	for (i = 0; i < nchains && i < 5; i++)
		fprintf(f, "%7.2f%% %8" PRIu64 "  %s\n", pct(chains[i].count, total), chains[i].count,
			chains[i].text);
}

/* The table for samples of thread TID (0: all). */
static int section(const struct gp_model *m, FILE *f, const struct gp_report_opts *o, int tid)
{
	struct fn_count *fc = calloc(m->nfunctions + 1, sizeof(*fc));
	uint64_t *last = calloc(m->nfunctions + 1, sizeof(*last));
	struct chain *chains = calloc(m->nsamples + 1, sizeof(*chains));
	size_t i, nchains = 0;
	uint64_t total = 0;
	int ret = -1;

	if (!fc || !last || !chains)
		goto out;
	for (i = 0; i < m->nfunctions; i++)
		fc[i].id = i + 1;
	for (i = 0; i < m->nsamples; i++) {
		const struct gp_sample *s = &m->samples[i];
		const char **names;
		size_t n;
		char *t;

		if (tid && s->tid != tid)
			continue;
		total += (uint64_t)s->count;
		count_functions(m, i, fc, last);
		n = gp_sample_stack(m, s, 0, &names);
		if (n == (size_t)-1)
			goto out;
		t = chain_text(names, n);
		free(names);
		if (!t)
			goto out;
		chains[nchains].text = t;
		chains[nchains++].count = (uint64_t)s->count;
	}
	print_functions(m, f, o, fc, total);
	nchains = merge_chains(chains, nchains);
	print_chains(f, chains, nchains, total);
	ret = 0;
out:
	for (i = 0; chains && i < nchains; i++)
		free(chains[i].text);
	free(chains);
	free(fc);
	free(last);
	return ret;
}

int gp_write_text(const struct gp_model *m, struct gp_out *out, const struct gp_report_opts *o)
{
	FILE *f = out->fp;
	char **notes;
	size_t i, nnotes;

	fprintf(f, "# gcsprof report: %" PRIu64 " samples, %s profile at %u Hz over %.2f s\n",
		m->total, m->mode, m->hz, (double)m->duration_ns / 1e9);
	fprintf(f, "# command: %s\n", m->command);
	if (strcmp(m->method, "perf") == 0) {
		fprintf(f, "# method: perf (%s event; the kernel took the chains, the target never "
			   "stopped", *m->event ? m->event : "?");
		if (m->max_stack)
			fprintf(f, "; chains of up to %u frames", m->max_stack);
		fprintf(f, ")\n");
	} else if (*m->method) {
		fprintf(f, "# method: %s (every sample stopped the target)\n", m->method);
	}
	nnotes = gp_model_notes(m, &notes);
	if (nnotes == (size_t)-1)
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	for (i = 0; i < nnotes; i++)
		fprintf(f, "# %s\n", notes[i]);
	gp_model_notes_free(notes, nnotes);
	fprintf(f, "\n");
	if (section(m, f, o, 0) != 0)
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	if (o->per_thread) {
		size_t *last, n = gp_model_threads(m, &last);

		if (n == (size_t)-1)
			return gp_error(GP_EXIT_SYSTEM, "out of memory");
		for (i = 0; i < n; i++) {
			const struct gp_sample *t = &m->samples[last[i]];
			size_t k, cnt = 0;

			for (k = 0; k < m->nsamples; k++)
				if (m->samples[k].tid == t->tid)
					cnt++;
			fprintf(f, "\n## thread %d (%s) of process %d: %zu samples\n\n", t->tid,
				t->thread, t->pid, cnt);
			if (section(m, f, o, t->tid) != 0) {
				free(last);
				return gp_error(GP_EXIT_SYSTEM, "out of memory");
			}
		}
		free(last);
	}
	return 0;
}
