// SPDX-License-Identifier: MIT
/* Folded stacks (FlameGraph's stackcollapse output, speedscope input): one
 * line per distinct stack, root first, frames joined by ';', then a space
 * and the count. A ';' in a name becomes ':'; with --per-thread the
 * thread name is the root frame; with -g callee the leaf is the root. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

struct line {
	char *text;
	uint64_t count;
};

static int by_text(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->text, ((const struct line *)b)->text);
}

/* The folded text of sample S (malloc'd), or NULL; leaf first with
 * -g callee. */
static char *folded_stack(const struct gp_model *m, const struct gp_sample *s,
			  const struct gp_report_opts *o)
{
	const char **names;
	size_t n = o->graph == GP_GRAPH_CALLEE ?
			   gp_sample_stack_inverted(m, s, o->per_thread, &names) :
			   gp_sample_stack(m, s, o->per_thread, &names),
	       i, len = 1;
	char *t, *p;

	if (n == (size_t)-1)
		return NULL;
	for (i = 0; i < n; i++)
		len += strlen(names[i]) + 1;
	if (n == 0) {
		free(names);
		return strdup("[no frames]");
	}
	t = malloc(len);
	if (!t) {
		free(names);
		return NULL;
	}
	p = t;
	for (i = 0; i < n; i++) {
		const char *c;

		if (i)
			*p++ = ';';
		for (c = names[i]; *c; c++)
			*p++ = (*c == ';' || *c == '\n') ? ':' : *c;
	}
	*p = '\0';
	free(names);
	return t;
}

int gp_write_folded(const struct gp_model *m, struct gp_out *out, const struct gp_report_opts *o)
{
	struct line *lines = calloc(m->nsamples + 1, sizeof(*lines));
	size_t i, n = 0;
	int ret = 0;

	if (!lines)
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	for (i = 0; i < m->nsamples; i++) {
		lines[n].text = folded_stack(m, &m->samples[i], o);
		if (!lines[n].text) {
			ret = gp_error(GP_EXIT_SYSTEM, "out of memory");
			goto out;
		}
		lines[n++].count = (uint64_t)m->samples[i].count;
	}
	qsort(lines, n, sizeof(*lines), by_text);
	for (i = 0; i < n; i++) {
		uint64_t c = lines[i].count;

		while (i + 1 < n && strcmp(lines[i + 1].text, lines[i].text) == 0)
			c += lines[++i].count;
		if (fprintf(out->fp, "%s %" PRIu64 "\n", lines[i].text, c) < 0)
			break;          /* gp_out_close reports it */
	}
out:
	for (i = 0; i < n; i++)
		free(lines[i].text);
	free(lines);
	return ret;
}
