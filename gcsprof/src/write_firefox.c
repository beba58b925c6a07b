// SPDX-License-Identifier: MIT
/*
 * The Firefox Profiler's Gecko profile format (version 31; the profiler's
 * docs-developer/gecko-profile-format.md and src/types/gecko-profile.ts),
 * which profiler.firefox.com loads and upgrades itself. One thread per
 * recorded thread, named by its name, with its own string, frame and stack
 * tables as the format has them, and its samples at their times on the
 * timeline (ms since the recording started). Frames are symbolised
 * already ("presymbolicated"): a frame's location is its function's name,
 * "NAME (in FILE)" when it is in a mapped file, which the profiler's
 * importer reads as a native function of that library.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "write_json.h"

#define GECKO_VERSION 31

/* Categories (meta.categories): the first grey one is the default. */
enum { CAT_OTHER, CAT_USER };

/* One thread's tables, built as its samples are read. */
struct thread_tables {
	struct gp_map strings;    /* (function id, mapping id, 0) -> string index + 1 */
	struct gp_map frames;     /* (string index, line, 0) -> frame index + 1 */
	struct gp_map stacks;     /* (prefix + 1, frame, 0) -> stack index + 1 */
	struct frame {
		size_t location;
		int64_t line;
		int category;
	} *frame;
	size_t nframes, frames_cap;
	size_t (*stack)[2];       /* prefix + 1 (0: root), frame */
	size_t nstacks, stacks_cap;
	const char **string;      /* malloc'd texts, "NAME (in FILE)" */
	size_t nstrings, strings_cap;
	long *sample_stack;       /* -1: no frames */
};

static void tables_free(struct thread_tables *t)
{
	size_t i;

	gp_map_free(&t->strings);
	gp_map_free(&t->frames);
	gp_map_free(&t->stacks);
	for (i = 0; i < t->nstrings; i++)
		free((char *)t->string[i]);
	free(t->string);
	free(t->frame);
	free(t->stack);
	free(t->sample_stack);
	memset(t, 0, sizeof(*t));
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* The string index of function FID as seen in mapping MID. */
static long location_string(const struct gp_model *m, struct thread_tables *t, uint64_t fid,
			    uint64_t mid)
{
	uint64_t id = gp_map_get(&t->strings, fid, mid, 0);
	const char *name = gp_model_function(m, fid)->name, **v;
	char *s;
	int ok;

	if (id)
		return (long)id - 1;
	/* Frames named by their file already ([prog+0x10]) need no "(in)",
	 * nor do frames in no file ([vdso]): they are no library. */
	if (mid && name[0] != '[' && m->mappings[mid - 1].file[0] != '[')
		ok = asprintf(&s, "%s (in %s)", name, base_name(m->mappings[mid - 1].file));
	else
		ok = (s = strdup(name)) ? 0 : -1;
	if (ok < 0)
		return -1;
	v = gp_grow(t->string, &t->strings_cap, t->nstrings + 1, sizeof(*v));
	if (!v || gp_map_put(&t->strings, fid, mid, 0, t->nstrings + 1) != 0) {
		free(s);
		if (v)
			t->string = v;
		return -1;
	}
	t->string = v;
	t->string[t->nstrings++] = s;
	return (long)t->nstrings - 1;
}

static long frame_index(const struct gp_model *m, struct thread_tables *t, uint64_t fid,
			uint64_t mid, int64_t line)
{
	long loc = location_string(m, t, fid, mid);
	uint64_t id;
	struct frame *v;

	if (loc < 0)
		return -1;
	id = gp_map_get(&t->frames, (uint64_t)loc, (uint64_t)line, 0);
	if (id)
		return (long)id - 1;
	v = gp_grow(t->frame, &t->frames_cap, t->nframes + 1, sizeof(*v));
	if (!v)
		return -1;
	t->frame = v;
	t->frame[t->nframes] = (struct frame){ (size_t)loc, line, mid ? CAT_USER : CAT_OTHER };
	if (gp_map_put(&t->frames, (uint64_t)loc, (uint64_t)line, 0, ++t->nframes) != 0)
		return -1;
	return (long)t->nframes - 1;
}

/* The stack of PREFIX (-1: none) with FRAME on top. */
static long stack_index(struct thread_tables *t, long prefix, long frame)
{
	uint64_t id = gp_map_get(&t->stacks, (uint64_t)(prefix + 1), (uint64_t)frame, 0);
	size_t(*v)[2];

	if (id)
		return (long)id - 1;
	v = gp_grow(t->stack, &t->stacks_cap, t->nstacks + 1, sizeof(*v));
	if (!v)
		return -1;
	t->stack = v;
	t->stack[t->nstacks][0] = (size_t)(prefix + 1);
	t->stack[t->nstacks][1] = (size_t)frame;
	if (gp_map_put(&t->stacks, (uint64_t)(prefix + 1), (uint64_t)frame, 0, ++t->nstacks) != 0)
		return -1;
	return (long)t->nstacks - 1;
}

/* The tables of the thread of sample T: each of its samples'
 * stacks, root first, inlined functions above the one they are in. */
static int build_thread(const struct gp_model *m, const struct gp_sample *t,
			struct thread_tables *tt)
{
	size_t i, j, k;

	tt->sample_stack = calloc(m->nsamples + 1, sizeof(*tt->sample_stack));
	if (!tt->sample_stack)
		return -1;
	for (i = 0; i < m->nsamples; i++) {
		const struct gp_sample *s = &m->samples[i];
		long stack = -1;

		if (s->tid != t->tid || s->pid != t->pid)
			continue;
		for (j = s->nlocations; j-- > 0;) {
			const struct gp_location *l = &m->locations[s->location_ids[j] - 1];

			for (k = l->nlines; k-- > 0;) {
				long f = frame_index(m, tt, l->lines[k].function_id, l->mapping_id,
						     l->lines[k].line);

				if (f < 0)
					return -1;
				stack = stack_index(tt, stack, f);
				if (stack < 0)
					return -1;
			}
		}
		tt->sample_stack[i] = stack;
	}
	return 0;
}

static void write_thread(const struct gp_model *m, FILE *f, const struct gp_sample *t,
			 const struct thread_tables *tt, const size_t *order)
{
	size_t i, n = 0;

	fputs("{\"name\":", f);
	gp_json_string(f, t->thread);
	fputs(",\"processType\":\"default\",\"processName\":", f);
	gp_json_string(f, m->command);
	fprintf(f, ",\"tid\":%d,\"pid\":%d,\"registerTime\":0,\"unregisterTime\":null,\n", t->tid,
		t->pid);
	fputs("\"markers\":{\"schema\":{\"name\":0,\"startTime\":1,\"endTime\":2,\"phase\":3,"
	      "\"category\":4,\"data\":5},\"data\":[]},\n", f);
	fputs("\"samples\":{\"schema\":{\"stack\":0,\"time\":1,\"eventDelay\":2},\"data\":[", f);
	for (i = 0; i < m->nsamples; i++) {
		const struct gp_sample *s = &m->samples[order[i]];

		if (s->tid != t->tid || s->pid != t->pid)
			continue;
		fputs(n++ ? ",\n[" : "\n[", f);
		if (tt->sample_stack[order[i]] < 0)
			fputs("null", f);
		else
			fprintf(f, "%ld", tt->sample_stack[order[i]]);
		fprintf(f, ",%.6f,0]", (double)s->time_ns / 1e6);
	}
	fputs("]},\n\"frameTable\":{\"schema\":{\"location\":0,\"relevantForJS\":1,"
	      "\"innerWindowID\":2,\"implementation\":3,\"line\":4,\"column\":5,\"category\":6,"
	      "\"subcategory\":7},\"data\":[", f);
	for (i = 0; i < tt->nframes; i++) {
		fprintf(f, "%s[%zu,false,0,null,", i ? ",\n" : "\n", tt->frame[i].location);
		if (tt->frame[i].line > 0)
			fprintf(f, "%" PRId64, tt->frame[i].line);
		else
			fputs("null", f);
		fprintf(f, ",null,%d,0]", tt->frame[i].category);
	}
	fputs("]},\n\"stackTable\":{\"schema\":{\"prefix\":0,\"frame\":1},\"data\":[", f);
	for (i = 0; i < tt->nstacks; i++) {
		fputs(i ? ",\n[" : "\n[", f);
		if (tt->stack[i][0])
			fprintf(f, "%zu", tt->stack[i][0] - 1);
		else
			fputs("null", f);
		fprintf(f, ",%zu]", tt->stack[i][1]);
	}
	fputs("]},\n\"stringTable\":[", f);
	for (i = 0; i < tt->nstrings; i++) {
		fputs(i ? ",\n" : "\n", f);
		gp_json_string(f, tt->string[i]);
	}
	fputs("]}", f);
}

static void write_meta(const struct gp_model *m, FILE *f)
{
	/* startTime: when the recording began, in ms since the epoch (0 for
	 * files that do not say); sample times are ms after it. */
	fprintf(f, "{\"meta\":{\"version\":%d,\"startTime\":%" PRIu64 ",\"shutdownTime\":null,"
		   "\"interval\":%.6f,\"stackwalk\":1,\"debug\":0,\"gcpoison\":0,\"asyncstack\":0,"
		   "\"processType\":0,\"presymbolicated\":true,\"profilingStartTime\":0,"
		   "\"profilingEndTime\":%.6f,\"product\":",
		GECKO_VERSION, m->start_unix_ms, (double)m->period_ns / 1e6,
		(double)m->duration_ns / 1e6);
	gp_json_string(f, m->command);
	fputs(",\"categories\":[{\"name\":\"Other\",\"color\":\"grey\",\"subcategories\":"
	      "[\"Other\"]},{\"name\":\"User\",\"color\":\"yellow\",\"subcategories\":[\"Other\"]}],"
	      "\"markerSchema\":[]},\n\"libs\":[],\"pausedRanges\":[],\"processes\":[],\n", f);
}

int gp_write_firefox(const struct gp_model *m, struct gp_out *out, const struct gp_report_opts *o)
{
	FILE *f = out->fp;
	size_t *last, *order, n, i;
	int ret = 0;

	(void)o;   /* one thread per thread, always */
	n = gp_model_threads(m, &last);
	if (n == (size_t)-1)
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	order = gp_model_by_time(m);
	if (!order) {
		free(last);
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	}
	write_meta(m, f);
	fputs("\"threads\":[", f);
	for (i = 0; i < n && !ret; i++) {
		struct thread_tables tt;

		memset(&tt, 0, sizeof(tt));
		if (build_thread(m, &m->samples[last[i]], &tt) != 0) {
			ret = gp_error(GP_EXIT_SYSTEM, "out of memory");
		} else {
			fputs(i ? ",\n" : "\n", f);
			write_thread(m, f, &m->samples[last[i]], &tt, order);
		}
		tables_free(&tt);
	}
	if (!ret)
		fputs("]}\n", f);
	free(order);
	free(last);
	return ret;
}
