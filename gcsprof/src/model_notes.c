// SPDX-License-Identifier: MIT
/*
 * The recording's caveats, said once for every writer that has room for
 * prose: what a reader of the profile must know before trusting its
 * shares. Samples the recorder could not take (by reason), the kernel's
 * throttling of perf sampling (samples missing from whole ticks), and
 * chains cut at the depth limit (their outer frames missing, so the
 * functions there are under-counted), with what to change to avoid it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

struct notes {
	char **v;
	size_t n, cap;
};

/* Add one note from an asprintf-made string (NULL: out of memory). */
static int add(struct notes *ns, char *s)
{
	char **g;

	if (!s)
		return -1;
	g = gp_grow(ns->v, &ns->cap, ns->n + 1, sizeof(*g));
	if (!g) {
		free(s);
		return -1;
	}
	ns->v = g;
	ns->v[ns->n++] = s;
	return 0;
}

static char *lost_note(const struct gp_model *m)
{
	size_t i, len = 0;
	char *s, *p;

	for (i = 0; i < m->nlost; i++)
		len += strlen(m->lost[i].reason) + 24;
	s = malloc(len + sizeof("not sampled:"));
	if (!s)
		return NULL;
	p = s + sprintf(s, "not sampled:");
	for (i = 0; i < m->nlost; i++)
		if (m->lost[i].count)
			p += sprintf(p, " %s %" PRIu64, m->lost[i].reason, m->lost[i].count);
	return s;
}

static char *throttle_note(const struct gp_model *m)
{
	char *s;

	if (asprintf(&s, "throttled: the kernel paused sampling %" PRIu64 " times (and resumed it "
		     "%" PRIu64 " times) for the rest of a tick, when an event took more samples in "
		     "one than kernel.perf_event_max_sample_rate allows; a few at the start are usual "
		     "(while the kernel finds the period for -F), more mean samples missing from "
		     "those ticks: a lower -F avoids it", m->throttles, m->unthrottles) < 0)
		return NULL;
	return s;
}

static char *cut_note(const struct gp_model *m)
{
	size_t depth = m->max_stack ? m->max_stack : m->cut_depth;
	const char *how;
	char *s;

	if (strcmp(m->max_stack_by, "sysctl") == 0)
		how = "kernel.perf_event_max_stack: raise it (sysctl -w kernel.perf_event_max_stack=N, "
		      "N above the deepest chain) and record again";
	else if (strcmp(m->max_stack_by, "record-size") == 0)
		how = "the most a perf sample holds: --method ptrace records chains whole";
	else
		how = "the recorder's";
	if (asprintf(&s, "cut: %" PRIu64 " of %" PRIu64 " samples (%.1f%%) have chains that reached "
		     "the limit of %zu frames and lack their outermost frames; the limit is %s",
		     m->ncut, m->total,
		     m->total ? 100.0 * (double)m->ncut / (double)m->total : 0.0, depth, how) < 0)
		return NULL;
	return s;
}

size_t gp_model_notes(const struct gp_model *m, char ***notes)
{
	struct notes ns = { NULL, 0, 0 };
	int ret = 0;

	if (m->nlost_total)
		ret = add(&ns, lost_note(m));
	if (!ret && m->throttles)
		ret = add(&ns, throttle_note(m));
	if (!ret && m->ncut)
		ret = add(&ns, cut_note(m));
	if (ret) {
		gp_model_notes_free(ns.v, ns.n);
		return (size_t)-1;
	}
	*notes = ns.v;
	return ns.n;
}

void gp_model_notes_free(char **notes, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(notes[i]);
	free(notes);
}
