// SPDX-License-Identifier: MIT
/*
 * pprof: the model as a perftools.profiles.Profile (proto/profile.proto,
 * through protobuf-c), gzip-compressed with zlib, as `go tool pprof` and
 * continuous-profiling back ends read it. Two values per sample: samples
 * (count) and cpu or wall time (nanoseconds, count x period). Labels carry
 * the thread name, tid, pid and thread state.
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

/* The string table: interned model strings get indexes on first use. */
struct strings {
	char **v;
	size_t n, cap;
	const char **keys;     /* open addressing by pointer */
	size_t *ids;
	size_t kcap;
};

static int64_t str_id(struct strings *s, const char *str)
{
	size_t h, i;

	if (!str || !*str)
		return 0;
	if ((s->n + 1) * 2 > s->kcap) {
		size_t ncap = s->kcap ? s->kcap * 2 : 1024, j;
		const char **nk = calloc(ncap, sizeof(*nk));
		size_t *ni = calloc(ncap, sizeof(*ni));

		if (!nk || !ni) {
			free(nk);
			free(ni);
			return -1;
		}
		for (j = 0; j < s->kcap; j++) {
			if (!s->keys[j])
				continue;
			for (h = ((uintptr_t)s->keys[j] >> 3) & (ncap - 1); nk[h]; h = (h + 1) & (ncap - 1))
				;
			nk[h] = s->keys[j];
			ni[h] = s->ids[j];
		}
		free(s->keys);
		free(s->ids);
		s->keys = nk;
		s->ids = ni;
		s->kcap = ncap;
	}
	for (h = ((uintptr_t)str >> 3) & (s->kcap - 1); s->keys[h]; h = (h + 1) & (s->kcap - 1))
		if (s->keys[h] == str)
			return (int64_t)s->ids[h];
	{
		void *nv = gp_grow(s->v, &s->cap, s->n + 1, sizeof(*s->v));

		if (!nv)
			return -1;
		s->v = nv;
	}
	i = s->n++;
	s->v[i] = (char *)str;
	s->keys[h] = str;
	s->ids[h] = i;
	return (int64_t)i;
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
	const int is_wall = strcmp(m->mode, "wall") == 0;
	struct gp_model *mm = (struct gp_model *)m;   /* for interning the fixed strings */
	Profile p = PERFTOOLS__PROFILES__PROFILE__INIT;
	ValueType vt[2] = { PERFTOOLS__PROFILES__VALUE_TYPE__INIT,
			    PERFTOOLS__PROFILES__VALUE_TYPE__INIT };
	ValueType period = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	ValueType *vtp[2] = { &vt[0], &vt[1] };
	struct strings st = { 0 };
	Sample *samples = NULL, **sp = NULL;
	Label *labels = NULL, **lp = NULL;
	int64_t *values = NULL;
	Location *locs = NULL, **locp = NULL;
	Line *lines = NULL;
	Function *fns = NULL, **fnp = NULL;
	Mapping *maps = NULL, **mapp = NULL;
	uint8_t *buf = NULL;
	size_t i, j, nlines = 0, len;
	int ret = GP_EXIT_SYSTEM;
	const char *k_thread, *k_tid, *k_pid, *k_state, *states[128] = { 0 };

	(void)o;
	st.v = gp_grow(NULL, &st.cap, 1, sizeof(*st.v));
	if (!st.v)
		goto nomem;
	st.v[st.n++] = (char *)"";         /* string_table[0] is always "" */
	k_thread = gp_model_intern(mm, "thread");
	k_tid = gp_model_intern(mm, "tid");
	k_pid = gp_model_intern(mm, "pid");
	k_state = gp_model_intern(mm, "state");
	if (!k_thread || !k_tid || !k_pid || !k_state)
		goto nomem;
	vt[0].type = str_id(&st, gp_model_intern(mm, "samples"));
	vt[0].unit = str_id(&st, gp_model_intern(mm, "count"));
	vt[1].type = str_id(&st, gp_model_intern(mm, is_wall ? "wall" : "cpu"));
	vt[1].unit = str_id(&st, gp_model_intern(mm, "nanoseconds"));
	period.type = vt[1].type;
	period.unit = vt[1].unit;
	if (vt[0].type < 0 || vt[0].unit < 0 || vt[1].type < 0 || vt[1].unit < 0)
		goto nomem;
	p.n_sample_type = 2;
	p.sample_type = vtp;
	p.period_type = &period;
	p.period = m->period_ns;
	p.duration_nanos = (int64_t)m->duration_ns;

	samples = calloc(m->nsamples + 1, sizeof(*samples));
	sp = calloc(m->nsamples + 1, sizeof(*sp));
	labels = calloc(4 * m->nsamples + 1, sizeof(*labels));
	lp = calloc(4 * m->nsamples + 1, sizeof(*lp));
	values = calloc(2 * m->nsamples + 1, sizeof(*values));
	if (!samples || !sp || !labels || !lp || !values)
		goto nomem;
	for (i = 0; i < m->nsamples; i++) {
		const struct gp_sample *s = &m->samples[i];
		Label *l = &labels[4 * i];
		char st_name[2] = { s->state, 0 };
		unsigned char sc = (unsigned char)s->state;

		perftools__profiles__sample__init(&samples[i]);
		samples[i].n_location_id = s->nlocations;
		samples[i].location_id = (uint64_t *)s->location_ids;
		values[2 * i] = s->count;
		values[2 * i + 1] = s->count * m->period_ns;
		samples[i].n_value = 2;
		samples[i].value = &values[2 * i];
		for (j = 0; j < 4; j++) {
			perftools__profiles__label__init(&l[j]);
			lp[4 * i + j] = &l[j];
		}
		if (sc >= 128)
			sc = '?';
		if (!states[sc])
			states[sc] = gp_model_intern(mm, st_name);
		l[0].key = str_id(&st, k_thread);
		l[0].str = str_id(&st, s->thread);
		l[1].key = str_id(&st, k_tid);
		l[1].num = s->tid;
		l[2].key = str_id(&st, k_pid);
		l[2].num = s->pid;
		l[3].key = str_id(&st, k_state);
		l[3].str = str_id(&st, states[sc]);
		if (l[0].key < 0 || l[0].str < 0 || l[1].key < 0 || l[2].key < 0 || l[3].key < 0 ||
		    l[3].str < 0)
			goto nomem;
		samples[i].n_label = 4;
		samples[i].label = &lp[4 * i];
		sp[i] = &samples[i];
	}
	p.n_sample = m->nsamples;
	p.sample = sp;

	maps = calloc(m->nmappings + 1, sizeof(*maps));
	mapp = calloc(m->nmappings + 1, sizeof(*mapp));
	if (!maps || !mapp)
		goto nomem;
	for (i = 0; i < m->nmappings; i++) {
		perftools__profiles__mapping__init(&maps[i]);
		maps[i].id = i + 1;
		maps[i].memory_start = m->mappings[i].start;
		maps[i].memory_limit = m->mappings[i].limit;
		maps[i].file_offset = m->mappings[i].offset;
		maps[i].filename = str_id(&st, m->mappings[i].file);
		maps[i].build_id = str_id(&st, m->mappings[i].build_id);
		maps[i].has_functions = m->mappings[i].has_functions;
		maps[i].has_filenames = m->mappings[i].has_functions;
		maps[i].has_line_numbers = m->mappings[i].has_functions;
		maps[i].has_inline_frames = m->mappings[i].has_functions;
		if (maps[i].filename < 0 || maps[i].build_id < 0)
			goto nomem;
		mapp[i] = &maps[i];
	}
	p.n_mapping = m->nmappings;
	p.mapping = mapp;

	for (i = 0; i < m->nlocations; i++)
		nlines += m->locations[i].nlines;
	locs = calloc(m->nlocations + 1, sizeof(*locs));
	locp = calloc(m->nlocations + 1, sizeof(*locp));
	lines = calloc(nlines + 1, sizeof(*lines));
	if (!locs || !locp || !lines)
		goto nomem;
	{
		Line **linep = calloc(nlines + 1, sizeof(*linep));
		size_t k = 0;

		if (!linep)
			goto nomem;
		for (i = 0; i < m->nlocations; i++) {
			const struct gp_location *l = &m->locations[i];

			perftools__profiles__location__init(&locs[i]);
			locs[i].id = i + 1;
			locs[i].mapping_id = l->mapping_id;
			locs[i].address = l->address;
			locs[i].n_line = l->nlines;
			locs[i].line = &linep[k];
			for (j = 0; j < l->nlines; j++, k++) {
				perftools__profiles__line__init(&lines[k]);
				lines[k].function_id = l->lines[j].function_id;
				lines[k].line = l->lines[j].line;
				linep[k] = &lines[k];
			}
			locp[i] = &locs[i];
		}
		p.n_location = m->nlocations;
		p.location = locp;

		fns = calloc(m->nfunctions + 1, sizeof(*fns));
		fnp = calloc(m->nfunctions + 1, sizeof(*fnp));
		if (!fns || !fnp) {
			free(linep);
			goto nomem;
		}
		for (i = 0; i < m->nfunctions; i++) {
			perftools__profiles__function__init(&fns[i]);
			fns[i].id = i + 1;
			fns[i].name = str_id(&st, m->functions[i].name);
			fns[i].system_name = str_id(&st, m->functions[i].system_name);
			fns[i].filename = str_id(&st, m->functions[i].filename);
			if (fns[i].name < 0 || fns[i].system_name < 0 || fns[i].filename < 0) {
				free(linep);
				goto nomem;
			}
			fnp[i] = &fns[i];
		}
		p.n_function = m->nfunctions;
		p.function = fnp;
		p.n_string_table = st.n;
		p.string_table = st.v;

		len = perftools__profiles__profile__get_packed_size(&p);
		buf = malloc(len ? len : 1);
		if (!buf) {
			free(linep);
			goto nomem;
		}
		if (perftools__profiles__profile__pack(&p, buf) != len) {
			free(linep);
			ret = gp_error(GP_EXIT_SYSTEM, "protobuf-c: packing the profile failed");
			goto out;
		}
		free(linep);
	}
	ret = write_gzip(out, buf, len);
	goto out;
nomem:
	ret = gp_error(GP_EXIT_SYSTEM, "out of memory");
out:
	free(buf);
	free(samples);
	free(sp);
	free(labels);
	free(lp);
	free(values);
	free(locs);
	free(locp);
	free(lines);
	free(fns);
	free(fnp);
	free(maps);
	free(mapp);
	free(st.v);
	free(st.keys);
	free(st.ids);
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
