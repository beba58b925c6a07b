// SPDX-License-Identifier: MIT
/*
 * The recording's caveats, said once for every writer that has room for
 * prose: what a reader of the profile must know before trusting its
 * shares. What a filter kept, samples the recorder could not take (by
 * reason, in words, with what avoids it), frames a debug file would name,
 * the kernel's
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

/* Each reason the recorder gives for a sample not taken: what happened,
 * and what would avoid it ("" when nothing need be done); names_feature
 * when the shadow stack's name (the profile's: GCS on arm64, Zicfiss on
 * riscv64) follows the why in brackets. */
static const struct lost_reason {
	const char *reason;
	const char *why;
	const char *fix;
	int names_feature;
} lost_reasons[] = {
	{ "no-gcs", "from threads running without a shadow stack",
	  "record with --gcs-tunable 3 to force it on, or with --fallback fp or cfi to sample "
	  "them by frame records or DWARF CFI", 1 },
	{ "thread-gone", "from threads that exited as they were sampled", "", 0 },
	{ "stop-timeout", "from threads that did not stop in time for their chain to be read",
	  "a lower -F, or --method perf where the kernel has it", 0 },
	{ "walk-error", "whose chain could not be read (perf: samples without a user-space chain)",
	  "", 0 },
	{ "group-stopped", "from threads stopped by job control (wall-clock profile)", "", 0 },
	{ "ring-overrun", "that the kernel could not write because the ring buffer was full",
	  "a larger -m (ring buffer pages per CPU) or a lower -F", 0 },
};

static const struct lost_reason *reason_of(const char *reason)
{
	size_t i;

	for (i = 0; i < sizeof(lost_reasons) / sizeof(lost_reasons[0]); i++)
		if (strcmp(lost_reasons[i].reason, reason) == 0)
			return &lost_reasons[i];
	return NULL;
}

/*
 * "not sampled: 14 samples (4.1% of the 340 due) were not taken: 14 from
 * threads running without a shadow stack (GCS) (no-gcs; to avoid it,
 * record with ...)."
 */
static char *lost_note(const struct gp_model *m)
{
	uint64_t due = m->total_before_filter + m->nlost_total;
	char *s = NULL, *t;
	size_t i;
	int n = 0;

	if (asprintf(&s, "not sampled: %" PRIu64 " sample%s (%.1f%% of the %" PRIu64 " due) %s "
		     "not taken:", m->nlost_total, m->nlost_total == 1 ? "" : "s",
		     100.0 * (double)m->nlost_total / (double)due, due,
		     m->nlost_total == 1 ? "was" : "were") < 0)
		return NULL;
	for (i = 0; i < m->nlost; i++) {
		const struct lost_reason *r = reason_of(m->lost[i].reason);
		const int named = r && r->names_feature;

		if (!m->lost[i].count)
			continue;
		if (asprintf(&t, "%s%s %" PRIu64 " %s%s%s%s (%s%s%s)", s, n++ ? ";" : "",
			     m->lost[i].count, r ? r->why : "for a reason this gcsprof does not know",
			     named ? " (" : "", named ? m->shadow_stack : "", named ? ")" : "",
			     m->lost[i].reason, r && *r->fix ? "; to avoid it, " : "",
			     r ? r->fix : "") < 0) {
			free(s);
			return NULL;
		}
		free(s);
		s = t;
	}
	if (asprintf(&t, "%s.", s) < 0)
		t = NULL;
	free(s);
	return t;
}

/* When, where, on what: "recorded: 2026-12-07 10:11:12 UTC on gcsprof-guest
 * (Linux 7.2.13, 2 CPUs)", from what the file has. */
static char *provenance_note(const struct gp_model *m)
{
	const int paren = *m->kernel || m->cpus;
	char when[48] = "", cpus[32] = "", *s;

	/* The reader checked the date's form: 24 characters. */
	if (*m->date)
		snprintf(when, sizeof(when), " %.10s %.8s UTC", m->date, m->date + 11);
	if (m->cpus)
		snprintf(cpus, sizeof(cpus), "%s%u CPU%s", *m->kernel ? ", " : "", m->cpus,
			 m->cpus == 1 ? "" : "s");
	if (asprintf(&s, "recorded:%s%s%s%s%s%s%s%s", when, *m->host ? " on " : "", m->host,
		     paren ? " (" : "", *m->kernel ? "Linux " : "", m->kernel, cpus,
		     paren ? ")" : "") < 0)
		return NULL;
	return s;
}

/* What was filtered, and what the shares are of. */
static char *filter_note(const struct gp_model *m)
{
	char *s;

	if (asprintf(&s, "shown: %" PRIu64 " of %" PRIu64 " samples (%s); shares are of these",
		     m->total, m->total_before_filter, m->filter_note) < 0)
		return NULL;
	return s;
}

/* Frames a stripped library's debug file would name. */
static char *stripped_note(const struct gp_model *m)
{
	const char *base = strrchr(m->stripped_eg, '/');
	char *s;

	if (asprintf(&s, "unnamed: %" PRIu64 " frame%s in libraries that have only their exported "
		     "symbols (e.g. [%s+0x...]): their local functions are named by the library's "
		     "debug file: install its debug package (e.g. libc6-dbg) in the sysroot, where "
		     "it lands in usr/lib/debug, or set DEBUGINFOD_URLS",
		     m->nstripped, m->nstripped == 1 ? "" : "s", base ? base + 1 : m->stripped_eg) < 0)
		return NULL;
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

	if (*m->date || *m->host || *m->kernel || m->cpus)
		ret = add(&ns, provenance_note(m));
	if (!ret && *m->filter_note)
		ret = add(&ns, filter_note(m));
	if (!ret && m->nlost_total)
		ret = add(&ns, lost_note(m));
	if (!ret && m->nstripped)
		ret = add(&ns, stripped_note(m));
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
