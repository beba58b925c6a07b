// SPDX-License-Identifier: MIT
/*
 * The chains of the text report, which both its tables (write_text.c)
 * and its caller and callee views (write_text_graph.c) print: a sample's
 * frames as labels, a chain as one line, identical chains merged. Apart
 * from both, so that neither calls back into the other.
 */
#include <stdlib.h>
#include <string.h>

#include "write_text.h"

static int by_text(const void *a, const void *b)
{
	return strcmp(((const struct text_count *)a)->text, ((const struct text_count *)b)->text);
}

static int by_count(const void *a, const void *b)
{
	const struct text_count *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->text, y->text);
}

size_t text_merge(struct text_count *v, size_t n)
{
	size_t i, j;

	qsort(v, n, sizeof(*v), by_text);
	for (i = 0, j = 0; i < n; i++) {
		if (j && strcmp(v[j - 1].text, v[i].text) == 0) {
			v[j - 1].count += v[i].count;
			free(v[i].text);
		} else
			v[j++] = v[i];
	}
	qsort(v, j, sizeof(*v), by_count);
	return j;
}

char *text_chain(const char *const *names, size_t n, const char *sep)
{
	size_t i, run, len = 1;
	char *t, *p;

	for (i = 0; i < n; i++)
		len += strlen(names[i]) + strlen(sep) + 40;
	t = malloc(len);
	if (!t)
		return NULL;
	p = t;
	*p = '\0';
	for (i = 0; i < n; i += run) {
		for (run = 1; i + run < n && strcmp(names[i + run], names[i]) == 0; run++)
			;
		p += sprintf(p, "%s%s", i ? sep : "", names[i]);
		if (run > 1)
			p += sprintf(p, " [x%zu, recursion]", run);
	}
	return t;
}

size_t text_frames(const struct text_section *t, const struct gp_sample *s, const char ***names)
{
	uint64_t *ids;
	size_t n = gp_sample_frames(t->m, s, &ids), i;

	if (n == (size_t)-1)
		return n;
	*names = calloc(n + 1, sizeof(**names));
	for (i = 0; *names && i < n; i++)
		(*names)[i] = t->short_label[ids[i] - 1];
	free(ids);
	return *names ? n : (size_t)-1;
}
