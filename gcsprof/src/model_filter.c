// SPDX-License-Identifier: MIT
/*
 * Slicing the model before any writer sees it, so that every format
 * shows the same slice: samples of some processes, threads or commands,
 * of a time range, through (or not through) functions matching a regular
 * expression; frames grouped by the file they are in; stacks under a share
 * left out. What is no longer used is dropped (a function filtered away
 * is in no output), and the model says in words what it keeps, for the
 * writers' headers and comments.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

struct gp_filter {
	long *pids, *tids;
	size_t npids, ntids;
	char **comms;
	size_t ncomms;
	int has_time;
	uint64_t from_ns, to_ns;
	regex_t focus, ignore;
	int has_focus, has_ignore;
	int by_object;
	double percent_limit;
	char *words;              /* what is kept, for the note */
};

/* A comma-separated list of numbers. */
static int parse_numbers(const char *opt, const char *s, long **out, size_t *n)
{
	const char *p = s;

	*n = 0;
	*out = calloc(strlen(s) / 2 + 2, sizeof(**out));
	if (!*out)
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	for (;;) {
		char *end;
		long v;

		errno = 0;
		v = strtol(p, &end, 10);
		if (errno || end == p || v < 0 || (*end && *end != ','))
			return gp_error(GP_EXIT_USAGE, "report: --%s: '%s' is not a list of numbers "
					"(such as 42 or 42,43)", opt, s);
		(*out)[(*n)++] = v;
		if (!*end)
			return 0;
		p = end + 1;
	}
}

/* A comma-separated list of names, split in a copy. */
static int parse_names(const char *s, char ***out, size_t *n)
{
	char *copy = strdup(s), *p, *save = NULL;

	*n = 0;
	*out = calloc(strlen(s) + 2, sizeof(**out));
	if (!copy || !*out) {
		free(copy);
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	}
	for (p = strtok_r(copy, ",", &save); p; p = strtok_r(NULL, ",", &save))
		(*out)[(*n)++] = p;
	if (!*n)
		free(copy);     /* else the first name is the copy */
	return 0;
}

/* START,END in seconds since the recording started; either may be empty. */
static int parse_time(struct gp_filter *f, const char *s)
{
	const char *comma = strchr(s, ',');
	char *end;
	double a = 0, b = INFINITY;

	if (!comma)
		goto bad;
	if (comma != s) {
		a = strtod(s, &end);
		if (end != comma || !(a >= 0))
			goto bad;
	}
	if (comma[1]) {
		b = strtod(comma + 1, &end);
		if (*end || !(b >= a))
			goto bad;
	}
	f->has_time = 1;
	f->from_ns = (uint64_t)(a * 1e9);
	f->to_ns = isinf(b) || b * 1e9 >= (double)UINT64_MAX ? UINT64_MAX : (uint64_t)(b * 1e9);
	return 0;
bad:
	return gp_error(GP_EXIT_USAGE, "report: --time: '%s' is not START,END in seconds since the "
			"recording started (such as 1.5,3 or 2, or ,0.5)", s);
}

static int compile(regex_t *re, const char *opt, const char *pattern)
{
	char msg[256];
	int ret = regcomp(re, pattern, REG_EXTENDED | REG_NOSUB);

	if (ret == 0)
		return 0;
	regerror(ret, re, msg, sizeof(msg));
	return gp_error(GP_EXIT_USAGE, "report: --%s: '%s' is not a regular expression: %s", opt,
			pattern, msg);
}

/* Append "; TEXT" (or TEXT first) to the words. */
static int say(struct gp_filter *f, const char *fmt, const char *arg)
{
	char *part, *all;
	int ok;

	if (asprintf(&part, fmt, arg) < 0)
		return -1;
	ok = asprintf(&all, "%s%s%s", f->words ? f->words : "", f->words ? "; " : "", part);
	free(part);
	if (ok < 0)
		return -1;
	free(f->words);
	f->words = all;
	return 0;
}

int gp_filter_new(struct gp_filter **out, const struct gp_filter_spec *spec)
{
	struct gp_filter *f = calloc(1, sizeof(*f));
	int ret = 0;

	*out = f;
	if (!f)
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	if (spec->pids)
		ret = parse_numbers("pid", spec->pids, &f->pids, &f->npids);
	if (!ret && spec->tids)
		ret = parse_numbers("tid", spec->tids, &f->tids, &f->ntids);
	if (!ret && spec->comms)
		ret = parse_names(spec->comms, &f->comms, &f->ncomms);
	if (!ret && spec->time)
		ret = parse_time(f, spec->time);
	if (!ret && spec->focus && (ret = compile(&f->focus, "focus", spec->focus)) == 0)
		f->has_focus = 1;
	if (!ret && spec->ignore && (ret = compile(&f->ignore, "ignore", spec->ignore)) == 0)
		f->has_ignore = 1;
	f->by_object = spec->by_object;
	f->percent_limit = spec->percent_limit;
	if (ret)
		return ret;
	if ((spec->pids && say(f, "process %s", spec->pids)) ||
	    (spec->tids && say(f, "thread %s", spec->tids)) ||
	    (spec->comms && say(f, "command %s", spec->comms)) ||
	    (spec->time && say(f, "time %s s", spec->time)) ||
	    (spec->focus && say(f, "through functions matching '%s'", spec->focus)) ||
	    (spec->ignore && say(f, "none through functions matching '%s'", spec->ignore)) ||
	    (spec->by_object && say(f, "%s", "frames grouped by the file they are in")))
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	return 0;
}

void gp_filter_free(struct gp_filter *f)
{
	if (!f)
		return;
	if (f->has_focus)
		regfree(&f->focus);
	if (f->has_ignore)
		regfree(&f->ignore);
	if (f->ncomms)
		free(f->comms[0]);
	free(f->comms);
	free(f->pids);
	free(f->tids);
	free(f->words);
	free(f);
}

static int in_list(const long *v, size_t n, long x)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i] == x)
			return 1;
	return 0;
}

/* Whether any frame of S is a function marked in MATCH. */
static int passes_through(const struct gp_model *m, const struct gp_sample *s,
			  const unsigned char *match)
{
	size_t i, k;

	for (i = 0; i < s->nlocations; i++) {
		const struct gp_location *l = &m->locations[s->location_ids[i] - 1];

		for (k = 0; k < l->nlines; k++)
			if (match[l->lines[k].function_id - 1])
				return 1;
	}
	return 0;
}

/* The functions whose name RE matches, as a byte per function. */
static unsigned char *matching(const struct gp_model *m, const regex_t *re)
{
	unsigned char *v = calloc(m->nfunctions + 1, 1);
	size_t i;

	for (i = 0; v && i < m->nfunctions; i++)
		v[i] = regexec(re, m->functions[i].name, 0, NULL, 0) == 0;
	return v;
}

static int keep(const struct gp_filter *f, const struct gp_model *m, const struct gp_sample *s,
		const unsigned char *focus, const unsigned char *ignore)
{
	size_t i;

	if (f->npids && !in_list(f->pids, f->npids, s->pid))
		return 0;
	if (f->ntids && !in_list(f->tids, f->ntids, s->tid))
		return 0;
	if (f->ncomms) {
		for (i = 0; i < f->ncomms && strcmp(f->comms[i], s->thread) != 0; i++)
			;
		if (i == f->ncomms)
			return 0;
	}
	if (f->has_time && (s->time_ns < f->from_ns || s->time_ns > f->to_ns))
		return 0;
	if (focus && !passes_through(m, s, focus))
		return 0;
	if (ignore && passes_through(m, s, ignore))
		return 0;
	return 1;
}

/* Leave out the samples marked in DROP. */
static void remove_samples(struct gp_model *m, const unsigned char *drop)
{
	size_t i, n = 0;

	for (i = 0; i < m->nsamples; i++) {
		if (!drop[i])
			m->samples[n++] = m->samples[i];
		else
			free(m->samples[i].location_ids);
	}
	m->nsamples = n;
}

/* Leave out the samples F does not keep. */
static int select_samples(struct gp_model *m, const struct gp_filter *f)
{
	unsigned char *focus = f->has_focus ? matching(m, &f->focus) : NULL;
	unsigned char *ignore = f->has_ignore ? matching(m, &f->ignore) : NULL;
	unsigned char *drop = calloc(m->nsamples + 1, 1);
	size_t i;
	int ret = -1;

	if (drop && (!f->has_focus || focus) && (!f->has_ignore || ignore)) {
		for (i = 0; i < m->nsamples; i++)
			drop[i] = !keep(f, m, &m->samples[i], focus, ignore);
		remove_samples(m, drop);
		ret = 0;
	}
	free(focus);
	free(ignore);
	free(drop);
	return ret;
}

static int by_stack(const void *a, const void *b, void *arg)
{
	const struct gp_model *m = arg;
	const struct gp_sample *x = &m->samples[*(const size_t *)a];
	const struct gp_sample *y = &m->samples[*(const size_t *)b];
	size_t i;

	for (i = 0; i < x->nlocations && i < y->nlocations; i++)
		if (x->location_ids[i] != y->location_ids[i])
			return x->location_ids[i] < y->location_ids[i] ? -1 : 1;
	return (x->nlocations > y->nlocations) - (x->nlocations < y->nlocations);
}

/* Leave out the samples whose stack (as a whole) is under LIMIT percent
 * of them: what a flame graph would draw as slivers. */
static int drop_rare_stacks(struct gp_model *m, double limit)
{
	size_t *order = calloc(m->nsamples + 1, sizeof(*order));
	unsigned char *drop = calloc(m->nsamples + 1, 1);
	uint64_t total = 0;
	size_t i, j;

	if (!order || !drop) {
		free(order);
		free(drop);
		return -1;
	}
	for (i = 0; i < m->nsamples; i++) {
		order[i] = i;
		total += (uint64_t)m->samples[i].count;
	}
	qsort_r(order, m->nsamples, sizeof(*order), by_stack, m);
	for (i = 0; i < m->nsamples; i = j) {
		uint64_t c = 0;
		size_t k;

		for (j = i; j < m->nsamples && by_stack(&order[i], &order[j], m) == 0; j++)
			c += (uint64_t)m->samples[order[j]].count;
		if (100.0 * (double)c < limit * (double)total)
			for (k = i; k < j; k++)
				drop[order[k]] = 1;
	}
	remove_samples(m, drop);
	free(order);
	free(drop);
	return 0;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* The function standing for a whole file (OBJECT; "" for no file). */
static uint64_t object_function(struct gp_model *m, struct gp_map *made, const char *object,
				int in_program)
{
	uint64_t id = gp_map_get(made, gp_string_id(object), 0, 0);
	const char *name = gp_model_intern(m, *object ? base_name(object) : "[unknown]");
	struct gp_function *fn;

	if (id)
		return id;
	fn = gp_grow(m->functions, &m->functions_cap, m->nfunctions + 1, sizeof(*fn));
	if (!fn || !name)
		return 0;
	m->functions = fn;
	m->functions[m->nfunctions] = (struct gp_function){ name, name, m->strings->text[0], object,
							     in_program, 0 };
	id = ++m->nfunctions;
	return gp_map_put(made, gp_string_id(object), 0, 0, id) == 0 ? id : 0;
}

/* Every frame as the file it is in; a run of frames in one file, one. */
static int group_by_object(struct gp_model *m)
{
	struct gp_map made = { 0 };
	size_t i, j, n;

	for (i = 0; i < m->nlocations; i++) {
		struct gp_location *l = &m->locations[i];
		const struct gp_function *fn = gp_model_function(m, l->lines[l->nlines - 1].function_id);
		uint64_t id = object_function(m, &made, fn->object, fn->in_program);

		if (!id) {
			gp_map_free(&made);
			return -1;
		}
		l->lines[0] = (struct gp_line){ id, 0 };
		l->nlines = 1;
	}
	gp_map_free(&made);
	for (i = 0; i < m->nsamples; i++) {
		struct gp_sample *s = &m->samples[i];

		for (j = 0, n = 0; j < s->nlocations; j++)
			if (!n || m->locations[s->location_ids[j] - 1].lines[0].function_id !=
					  m->locations[s->location_ids[n - 1] - 1].lines[0].function_id)
				s->location_ids[n++] = s->location_ids[j];
		s->nlocations = n;
	}
	return 0;
}

/*
 * Drop the locations and functions no sample uses any more, renumbering
 * the rest in order, so that what was filtered away is in no output.
 */
static int compact(struct gp_model *m)
{
	uint64_t *loc_new = calloc(m->nlocations + 1, sizeof(*loc_new));
	uint64_t *fn_new = calloc(m->nfunctions + 1, sizeof(*fn_new));
	size_t i, j, nl = 0, nf = 0;

	if (!loc_new || !fn_new) {
		free(loc_new);
		free(fn_new);
		return -1;
	}
	for (i = 0; i < m->nsamples; i++)
		for (j = 0; j < m->samples[i].nlocations; j++)
			loc_new[m->samples[i].location_ids[j] - 1] = 1;
	for (i = 0; i < m->nlocations; i++) {
		if (!loc_new[i]) {
			free(m->locations[i].lines);
			continue;
		}
		for (j = 0; j < m->locations[i].nlines; j++)
			fn_new[m->locations[i].lines[j].function_id - 1] = 1;
		m->locations[nl] = m->locations[i];
		loc_new[i] = ++nl;
	}
	for (i = 0; i < m->nfunctions; i++)
		if (fn_new[i]) {
			m->functions[nf] = m->functions[i];
			fn_new[i] = ++nf;
		}
	for (i = 0; i < nl; i++)
		for (j = 0; j < m->locations[i].nlines; j++)
			m->locations[i].lines[j].function_id =
				fn_new[m->locations[i].lines[j].function_id - 1];
	for (i = 0; i < m->nsamples; i++)
		for (j = 0; j < m->samples[i].nlocations; j++)
			m->samples[i].location_ids[j] = loc_new[m->samples[i].location_ids[j] - 1];
	m->nlocations = nl;
	m->nfunctions = nf;
	free(loc_new);
	free(fn_new);
	return 0;
}

/* The totals that depend on which samples are kept. */
static void recount(struct gp_model *m)
{
	size_t i;

	m->total = 0;
	m->ncut = 0;
	m->cut_depth = 0;
	for (i = 0; i < m->nsamples; i++) {
		const struct gp_sample *s = &m->samples[i];

		m->total += (uint64_t)s->count;
		if (s->cut) {
			m->ncut++;
			if (s->nlocations > m->cut_depth)
				m->cut_depth = s->nlocations;
		}
	}
}

int gp_model_filter(struct gp_model *m, const struct gp_filter *f, int drop_rare)
{
	char *note = NULL;
	int ret;

	ret = select_samples(m, f);
	if (!ret && drop_rare && f->percent_limit > 0)
		ret = drop_rare_stacks(m, f->percent_limit);
	if (!ret && f->by_object)
		ret = group_by_object(m);
	if (!ret)
		ret = compact(m);
	if (ret)
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	recount(m);
	if (drop_rare && f->percent_limit > 0) {
		char limit[64];

		snprintf(limit, sizeof(limit), "stacks under %g%% of the samples left out",
			 f->percent_limit);
		if (asprintf(&note, "%s%s%s", f->words ? f->words : "", f->words ? "; " : "",
			     limit) < 0)
			note = NULL;
	} else if (f->words)
		note = strdup(f->words);
	else
		return 0;
	if (!note)
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	m->filter_note = gp_model_intern(m, note);
	free(note);
	return m->filter_note ? 0 : gp_error(GP_EXIT_SYSTEM, "out of memory");
}
