// SPDX-License-Identifier: MIT
/*
 * pprof: the model as a perftools.profiles.Profile (proto/profile.proto,
 * through protobuf-c), gzip-compressed with zlib, as `go tool pprof` and
 * continuous-profiling back ends read it. Two values per sample: samples
 * (count) and cpu or wall time (nanoseconds, count x period). Labels carry
 * the thread name, tid, pid and thread state; with --per-thread each stack
 * also gets its thread as the root frame, as folded stacks do. The
 * recording's provenance and caveats are the Profile's comments, and its
 * start its time_nanos.
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "model.h"

#ifdef GCSPROF_HAVE_PROTOBUF
#include "profile.pb-c.h"

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;
typedef Perftools__Profiles__Mapping Mapping;
typedef Perftools__Profiles__Label Label;
typedef Perftools__Profiles__ValueType ValueType;

/*
 * The message under construction: protobuf-c structs pointing into arrays
 * that the builders fill, one builder per part of the Profile, all freed
 * by pprof_free. Strings are the model's own table, whose ids are
 * pprof's string indexes (0 is "").
 */
struct pprof {
	const struct gp_model *m;
	int per_thread;
	Profile p;
	ValueType vt[2], *vtp[2], period;
	int64_t k_thread, k_tid, k_pid, k_state;   /* label keys */
	int64_t states[128];                       /* a thread state's string */
	/* --per-thread: one root function and location per thread name,
	 * after the model's own (ids nfunctions + k, nlocations + k). */
	struct gp_map roots;      /* thread name id -> k */
	const char **root_names;
	size_t nroots, roots_cap;
	Function *fns, **fnp;
	Location *locs, **locp;
	Line *lines, **linep;
	Mapping *maps, **mapp;
	Sample *samples, **sp;
	Label *labels, **lp;
	int64_t *values;
	uint64_t *stacks;         /* the samples' location ids */
	int64_t *comments;        /* the model's notes, as string ids */
};

enum { NLABELS = 4 };

static int64_t sid(const struct pprof *b, const char *s)
{
	const char *in = gp_model_intern(b->m, s);

	return in ? (int64_t)gp_string_id(in) : -1;
}

/* The value types, the period and the label keys. */
static int build_strings(struct pprof *b)
{
	const int is_wall = strcmp(b->m->mode, "wall") == 0;

	b->vt[0].type = sid(b, "samples");
	b->vt[0].unit = sid(b, "count");
	b->vt[1].type = sid(b, is_wall ? "wall" : "cpu");
	b->vt[1].unit = sid(b, "nanoseconds");
	b->k_thread = sid(b, "thread");
	b->k_tid = sid(b, "tid");
	b->k_pid = sid(b, "pid");
	b->k_state = sid(b, "state");
	if (b->vt[0].type < 0 || b->vt[0].unit < 0 || b->vt[1].type < 0 || b->vt[1].unit < 0 ||
	    b->k_thread < 0 || b->k_tid < 0 || b->k_pid < 0 || b->k_state < 0)
		return -1;
	b->period.type = b->vt[1].type;
	b->period.unit = b->vt[1].unit;
	b->vtp[0] = &b->vt[0];
	b->vtp[1] = &b->vt[1];
	b->p.n_sample_type = 2;
	b->p.sample_type = b->vtp;
	b->p.period_type = &b->period;
	b->p.period = b->m->period_ns;
	b->p.duration_nanos = (int64_t)b->m->duration_ns;
	b->p.time_nanos = (int64_t)(b->m->start_unix_ms * 1000000);   /* 0: not recorded */
	return 0;
}

/* With --per-thread, the distinct thread names, as roots. */
static int build_thread_roots(struct pprof *b)
{
	size_t i;

	if (!b->per_thread)
		return 0;
	for (i = 0; i < b->m->nsamples; i++) {
		const char *t = b->m->samples[i].thread;
		const char **v;

		if (gp_map_get(&b->roots, gp_string_id(t), 0, 0))
			continue;
		v = gp_grow(b->root_names, &b->roots_cap, b->nroots + 1, sizeof(*v));
		if (!v)
			return -1;
		b->root_names = v;
		b->root_names[b->nroots++] = t;
		if (gp_map_put(&b->roots, gp_string_id(t), 0, 0, b->nroots) != 0)
			return -1;
	}
	return 0;
}

static int build_functions(struct pprof *b)
{
	const struct gp_model *m = b->m;
	size_t i, n = m->nfunctions + b->nroots;

	b->fns = calloc(n + 1, sizeof(*b->fns));
	b->fnp = calloc(n + 1, sizeof(*b->fnp));
	if (!b->fns || !b->fnp)
		return -1;
	for (i = 0; i < n; i++) {
		Function *f = &b->fns[i];

		perftools__profiles__function__init(f);
		f->id = i + 1;
		if (i < m->nfunctions) {
			f->name = (int64_t)gp_string_id(m->functions[i].name);
			f->system_name = (int64_t)gp_string_id(m->functions[i].system_name);
			f->filename = (int64_t)gp_string_id(m->functions[i].filename);
		} else {
			f->name = (int64_t)gp_string_id(b->root_names[i - m->nfunctions]);
			f->system_name = f->name;
		}
		b->fnp[i] = f;
	}
	b->p.n_function = n;
	b->p.function = b->fnp;
	return 0;
}

static int build_locations(struct pprof *b)
{
	const struct gp_model *m = b->m;
	size_t i, j, k = 0, nlines = b->nroots, n = m->nlocations + b->nroots;

	for (i = 0; i < m->nlocations; i++)
		nlines += m->locations[i].nlines;
	b->locs = calloc(n + 1, sizeof(*b->locs));
	b->locp = calloc(n + 1, sizeof(*b->locp));
	b->lines = calloc(nlines + 1, sizeof(*b->lines));
	b->linep = calloc(nlines + 1, sizeof(*b->linep));
	if (!b->locs || !b->locp || !b->lines || !b->linep)
		return -1;
	for (i = 0; i < n; i++) {
		Location *l = &b->locs[i];

		perftools__profiles__location__init(l);
		l->id = i + 1;
		l->line = &b->linep[k];
		if (i < m->nlocations) {
			const struct gp_location *ml = &m->locations[i];

			l->mapping_id = ml->mapping_id;
			l->address = ml->address;
			for (j = 0; j < ml->nlines; j++, k++) {
				perftools__profiles__line__init(&b->lines[k]);
				b->lines[k].function_id = ml->lines[j].function_id;
				b->lines[k].line = ml->lines[j].line;
				b->linep[k] = &b->lines[k];
			}
			l->n_line = ml->nlines;
		} else {
			/* A thread's root: no address, its own function. */
			perftools__profiles__line__init(&b->lines[k]);
			b->lines[k].function_id = m->nfunctions + (i - m->nlocations) + 1;
			b->linep[k] = &b->lines[k];
			k++;
			l->n_line = 1;
		}
		b->locp[i] = l;
	}
	b->p.n_location = n;
	b->p.location = b->locp;
	return 0;
}

static int build_mappings(struct pprof *b)
{
	const struct gp_model *m = b->m;
	size_t i;

	b->maps = calloc(m->nmappings + 1, sizeof(*b->maps));
	b->mapp = calloc(m->nmappings + 1, sizeof(*b->mapp));
	if (!b->maps || !b->mapp)
		return -1;
	for (i = 0; i < m->nmappings; i++) {
		const struct gp_mapping *mm = &m->mappings[i];
		Mapping *p = &b->maps[i];

		perftools__profiles__mapping__init(p);
		p->id = i + 1;
		p->memory_start = mm->start;
		p->memory_limit = mm->limit;
		p->file_offset = mm->offset;
		p->filename = (int64_t)gp_string_id(mm->file);
		p->build_id = (int64_t)gp_string_id(mm->build_id);
		p->has_functions = mm->has_functions;
		p->has_filenames = mm->has_functions;
		p->has_line_numbers = mm->has_functions;
		p->has_inline_frames = mm->has_functions;
		b->mapp[i] = p;
	}
	b->p.n_mapping = m->nmappings;
	b->p.mapping = b->mapp;
	return 0;
}

/* The string of a thread state letter, once per letter. */
static int64_t state_id(struct pprof *b, char state)
{
	unsigned char c = (unsigned char)state;
	char name[2] = { (char)c, 0 };

	if (c >= 128 || c < ' ')
		c = '?', name[0] = '?';
	if (!b->states[c])
		b->states[c] = sid(b, name);
	return b->states[c];
}

/* One pprof sample per model sample: its stack (with the thread's root
 * last, outermost, with --per-thread), its two values, its labels. */
static int build_samples(struct pprof *b)
{
	const struct gp_model *m = b->m;
	size_t i, nstack = 0, k = 0;

	for (i = 0; i < m->nsamples; i++)
		nstack += m->samples[i].nlocations + (b->per_thread ? 1 : 0);
	b->samples = calloc(m->nsamples + 1, sizeof(*b->samples));
	b->sp = calloc(m->nsamples + 1, sizeof(*b->sp));
	b->labels = calloc(NLABELS * m->nsamples + 1, sizeof(*b->labels));
	b->lp = calloc(NLABELS * m->nsamples + 1, sizeof(*b->lp));
	b->values = calloc(2 * m->nsamples + 1, sizeof(*b->values));
	b->stacks = calloc(nstack + 1, sizeof(*b->stacks));
	if (!b->samples || !b->sp || !b->labels || !b->lp || !b->values || !b->stacks)
		return -1;
	for (i = 0; i < m->nsamples; i++) {
		const struct gp_sample *s = &m->samples[i];
		Sample *p = &b->samples[i];
		Label *l = &b->labels[NLABELS * i];
		size_t j;

		perftools__profiles__sample__init(p);
		p->location_id = &b->stacks[k];
		for (j = 0; j < s->nlocations; j++)
			b->stacks[k++] = s->location_ids[j];
		if (b->per_thread)
			b->stacks[k++] = m->nlocations +
					 gp_map_get(&b->roots, gp_string_id(s->thread), 0, 0);
		p->n_location_id = (size_t)(&b->stacks[k] - p->location_id);
		b->values[2 * i] = s->count;
		b->values[2 * i + 1] = s->count * m->period_ns;
		p->n_value = 2;
		p->value = &b->values[2 * i];
		for (j = 0; j < NLABELS; j++) {
			perftools__profiles__label__init(&l[j]);
			b->lp[NLABELS * i + j] = &l[j];
		}
		l[0].key = b->k_thread;
		l[0].str = (int64_t)gp_string_id(s->thread);
		l[1].key = b->k_tid;
		l[1].num = s->tid;
		l[2].key = b->k_pid;
		l[2].num = s->pid;
		l[3].key = b->k_state;
		l[3].str = state_id(b, s->state);
		if (l[3].str < 0)
			return -1;
		p->n_label = NLABELS;
		p->label = &b->lp[NLABELS * i];
		b->sp[i] = p;
	}
	b->p.n_sample = m->nsamples;
	b->p.sample = b->sp;
	return 0;
}

/* The recording's caveats (lost samples, throttling, cut chains) as the
 * Profile's comments, which `go tool pprof -comments` prints. */
static int build_comments(struct pprof *b)
{
	char **notes;
	size_t i, n = gp_model_notes(b->m, &notes);
	int ret = 0;

	if (n == (size_t)-1)
		return -1;
	b->comments = calloc(n + 1, sizeof(*b->comments));
	if (!b->comments)
		ret = -1;
	for (i = 0; i < n && !ret; i++)
		ret = (b->comments[i] = sid(b, notes[i])) < 0 ? -1 : 0;
	gp_model_notes_free(notes, n);
	if (ret)
		return -1;
	b->p.n_comment = n;
	b->p.comment = b->comments;
	return 0;
}

static void pprof_free(struct pprof *b)
{
	gp_map_free(&b->roots);
	free(b->root_names);
	free(b->fns);
	free(b->fnp);
	free(b->locs);
	free(b->locp);
	free(b->lines);
	free(b->linep);
	free(b->maps);
	free(b->mapp);
	free(b->samples);
	free(b->sp);
	free(b->labels);
	free(b->lp);
	free(b->values);
	free(b->stacks);
	free(b->comments);
}

/* Compress BUF with a gzip header and write it. */
static int write_gzip(struct gp_out *out, const uint8_t *buf, size_t len)
{
	unsigned char chunk[65536];
	z_stream z;
	int ret;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return gp_error(GP_EXIT_SYSTEM, "zlib: deflateInit2 failed");
	z.next_in = (Bytef *)buf;
	z.avail_in = (uInt)len;
	do {
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		ret = deflate(&z, Z_FINISH);
		if (ret == Z_STREAM_ERROR) {
			deflateEnd(&z);
			return gp_error(GP_EXIT_SYSTEM, "zlib: deflate failed");
		}
		if (fwrite(chunk, 1, sizeof(chunk) - z.avail_out, out->fp) !=
		    sizeof(chunk) - z.avail_out)
			break;  /* gp_out_close reports it */
	} while (ret != Z_STREAM_END);
	deflateEnd(&z);
	return 0;
}

int gp_write_pprof(const struct gp_model *m, struct gp_out *out, const struct gp_report_opts *o)
{
	struct pprof b;
	uint8_t *buf = NULL;
	size_t len;
	int ret;

	memset(&b, 0, sizeof(b));
	b.m = m;
	b.per_thread = o->per_thread;
	perftools__profiles__profile__init(&b.p);
	perftools__profiles__value_type__init(&b.vt[0]);
	perftools__profiles__value_type__init(&b.vt[1]);
	perftools__profiles__value_type__init(&b.period);
	if (build_strings(&b) != 0 || build_thread_roots(&b) != 0 || build_functions(&b) != 0 ||
	    build_locations(&b) != 0 || build_mappings(&b) != 0 || build_samples(&b) != 0 ||
	    build_comments(&b) != 0) {
		ret = gp_error(GP_EXIT_SYSTEM, "out of memory");
		goto out;
	}
	/* Last: every string the builders used is in the table by now. */
	b.p.n_string_table = m->strings->n;
	b.p.string_table = m->strings->text;
	len = perftools__profiles__profile__get_packed_size(&b.p);
	buf = malloc(len ? len : 1);
	if (!buf)
		ret = gp_error(GP_EXIT_SYSTEM, "out of memory");
	else if (perftools__profiles__profile__pack(&b.p, buf) != len)
		ret = gp_error(GP_EXIT_SYSTEM, "protobuf-c: packing the profile failed");
	else
		ret = write_gzip(out, buf, len);
out:
	free(buf);
	pprof_free(&b);
	return ret;
}

#else

int gp_write_pprof(const struct gp_model *m, struct gp_out *out, const struct gp_report_opts *o)
{
	(void)m;
	(void)out;
	(void)o;
	return gp_error(GP_EXIT_UNSUPPORTED,
			"pprof output needs protobuf-c, which this build was made without "
			"(write folded stacks, or run report on a build with libprotobuf-c-dev)");
}

#endif
