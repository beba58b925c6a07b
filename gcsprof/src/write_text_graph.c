// SPDX-License-Identifier: MIT
/*
 * The text report's views of who calls what. Under a function's row,
 * -g callee lists the chains that lead to it (its callers, nearest
 * first: "path_a <- main <- _start" under spin), -g caller the chains it
 * leads to (its callees: "path_a -> spin" under main), each with its share of the
 * function's samples, as perf report's call graphs do in a line each.
 * --peek REGEX is pprof's -peek: for each matching function, its direct
 * callers and callees with their counts.
 */
#include <inttypes.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "write_text.h"

/* The path of sample S through FID: from its innermost call's caller up
 * to the root (callers), or from its outermost call's callee down to the
 * leaf (callees).
 * NULL text when S does not pass through FID. */
static int sample_path(const struct text_section *t, const struct gp_sample *s, uint64_t fid,
		       struct text_count *p)
{
	const struct gp_model *m = t->m;
	const int callers = t->o->graph == GP_GRAPH_CALLEE;
	uint64_t *ids;
	size_t n = gp_sample_frames(m, s, &ids), i, k = 0, at = (size_t)-1;
	const char **names;

	p->text = NULL;
	if (n == (size_t)-1)
		return -1;
	for (i = 0; i < n; i++)   /* root first: the last match is the innermost */
		if (ids[i] == fid && (callers || at == (size_t)-1))
			at = i;
	names = calloc(n + 1, sizeof(*names));
	if (!names) {
		free(ids);
		return -1;
	}
	if (at != (size_t)-1) {
		if (callers)
			for (i = at; i-- > 0;)
				names[k++] = t->short_label[ids[i] - 1];
		else
			for (i = at + 1; i < n; i++)
				names[k++] = t->short_label[ids[i] - 1];
		if (!k)         /* nothing beyond it: the root, or the leaf */
			names[k++] = callers ? "[root: no caller]" : "[self: no callee]";
		p->text = text_chain(names, k, callers ? " <- " : " -> ");
	}
	free(ids);
	free(names);
	if (at != (size_t)-1 && !p->text)
		return -1;
	p->count = (uint64_t)s->count;
	return 0;
}

int text_graph(const struct text_section *t, uint64_t fid)
{
	const struct gp_model *m = t->m;
	struct text_count *paths = calloc(m->nsamples + 1, sizeof(*paths));
	uint64_t total = 0;
	size_t i, n = 0, shown = 0;
	int ret = -1;

	if (!paths)
		return -1;
	for (i = 0; i < m->nsamples; i++) {
		if (!text_in_section(t, &m->samples[i]))
			continue;
		if (sample_path(t, &m->samples[i], fid, &paths[n]) != 0)
			goto out;
		if (paths[n].text)
			total += paths[n++].count;
	}
	n = text_merge(paths, n);
	for (i = 0; i < n && shown < t->o->chains; i++) {
		if (text_pct(paths[i].count, total) < t->o->percent_limit)
			break;
		fprintf(t->f, "%27s  %s %6.2f%%  %s\n", "", shown++ ? "          " :
			t->o->graph == GP_GRAPH_CALLEE ? "callers:  " : "callees:  ",
			text_pct(paths[i].count, total), paths[i].text);
	}
	if (shown < n)
		fprintf(t->f, "%27s  %10s (%zu more chain%s)\n", "", "", n - shown,
			n - shown == 1 ? "" : "s");
	ret = 0;
out:
	for (i = 0; i < n; i++)
		free(paths[i].text);
	free(paths);
	return ret;
}

struct neighbour {
	uint64_t id, count, last;  /* last: the sample that counted it */
};

static int by_neighbour_count(const void *a, const void *b)
{
	const struct neighbour *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Direct callers (or callees) of FID, each counted once a sample;
 * *SELF gets the samples where FID is the leaf, *TOTAL where it is. */
static int neighbours(const struct text_section *t, uint64_t fid, struct neighbour *callers,
		      struct neighbour *callees, uint64_t *self, uint64_t *total)
{
	const struct gp_model *m = t->m;
	size_t i, k;

	for (i = 0; i < m->nsamples; i++) {
		const struct gp_sample *s = &m->samples[i];
		uint64_t *ids, c = (uint64_t)s->count;
		size_t n;
		int in = 0;

		if (!text_in_section(t, s))
			continue;
		n = gp_sample_frames(m, s, &ids);
		if (n == (size_t)-1)
			return -1;
		for (k = 0; k < n; k++) {
			if (ids[k] != fid)
				continue;
			in = 1;
			if (k > 0 && callers[ids[k - 1] - 1].last != i + 1) {
				callers[ids[k - 1] - 1].last = i + 1;
				callers[ids[k - 1] - 1].count += c;
			}
			if (k + 1 < n && callees[ids[k + 1] - 1].last != i + 1) {
				callees[ids[k + 1] - 1].last = i + 1;
				callees[ids[k + 1] - 1].count += c;
			}
		}
		if (in)
			*total += c;
		if (n && ids[n - 1] == fid)
			*self += c;
		free(ids);
	}
	return 0;
}

static void print_neighbours(const struct text_section *t, const char *what,
			     struct neighbour *v)
{
	size_t i, shown = 0;

	qsort(v, t->m->nfunctions, sizeof(*v), by_neighbour_count);
	for (i = 0; i < t->m->nfunctions && v[i].count; i++)
		fprintf(t->f, "    %-9s %7.2f%% %8" PRIu64 "  %s\n", shown++ ? "" : what,
			text_pct(v[i].count, t->total), v[i].count, t->label[v[i].id - 1]);
	if (!shown)
		fprintf(t->f, "    %-9s (none)\n", what);
}

static int peek_one(const struct text_section *t, uint64_t fid)
{
	struct neighbour *callers = calloc(t->m->nfunctions + 1, sizeof(*callers));
	struct neighbour *callees = calloc(t->m->nfunctions + 1, sizeof(*callees));
	uint64_t self = 0, total = 0;
	size_t i;
	int ret = -1;

	if (!callers || !callees)
		goto out;
	for (i = 0; i < t->m->nfunctions; i++)
		callers[i].id = callees[i].id = i + 1;
	if (neighbours(t, fid, callers, callees, &self, &total) != 0)
		goto out;
	ret = 0;
	if (!total)
		goto out;
	fprintf(t->f, "\n%s: self %.2f%%, total %.2f%% (%" PRIu64 " samples)\n",
		t->label[fid - 1], text_pct(self, t->total), text_pct(total, t->total), total);
	print_neighbours(t, "callers:", callers);
	print_neighbours(t, "callees:", callees);
out:
	free(callers);
	free(callees);
	return ret;
}

int text_peek(const struct text_section *t)
{
	regex_t re;
	size_t i;
	int ret = 0;

	if (regcomp(&re, t->o->peek, REG_EXTENDED | REG_NOSUB) != 0)
		return -1;      /* report checked it before reading anything */
	fprintf(t->f, "\nCallers and callees of the functions matching '%s':\n", t->o->peek);
	for (i = 0; i < t->m->nfunctions && !ret; i++)
		if (regexec(&re, t->m->functions[i].name, 0, NULL, 0) == 0)
			ret = peek_one(t, i + 1);
	regfree(&re);
	return ret;
}
