// SPDX-License-Identifier: MIT
/*
 * Building the model from a raw profile: each distinct (address space,
 * address, kind) becomes a Location, symbolised once through libgcswalk.
 * One symboliser per address space, over a libgcswalk target made of that
 * address space's mappings as the profile recorded them. Look-ups go
 * through the model's one map and string table (model_map.c). Then the
 * views writers share: a sample's stack, the threads, time order.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <gcswalk.h>

#include "model.h"

const char *gp_model_intern(const struct gp_model *m, const char *s)
{
	return gp_strtab_intern(m->strings, s);
}

/* ---- Building ------------------------------------------------------- */

struct space {
	unsigned asid;
	gcswalk_target *target;
	gcswalk_symbolizer *sym;
	int failed;
};

struct index {
	const struct gp_rprofile *raw;  /* while the model is built */
	struct gp_map locations; /* (asid, address, return) -> location id */
	struct gp_map functions; /* (name id, file id, 0) -> function id */
	struct space *spaces;
	size_t nspaces;
	const char *sysroot;
};

/* The build-ids the profile recorded, so that a file missing here is
 * looked up by its build-id (a .build-id folder, debuginfod). */
static int set_build_ids(gcswalk_target *t, const struct gp_rmapping *const *raws, size_t n)
{
	size_t i;
	int ret;

	for (i = 0; i < n; i++) {
		if (!raws[i]->build_id_size)
			continue;
		ret = gcswalk_target_set_mapping_build_id(t, i, raws[i]->build_id,
							  raws[i]->build_id_size);
		if (ret != GCSWALK_OK)
			return ret;
	}
	return GCSWALK_OK;
}

static struct space *space_for(struct gp_model *m, unsigned asid)
{
	struct index *ix = m->index;
	struct gcswalk_symbolizer_options so = GCSWALK_SYMBOLIZER_OPTIONS_INIT;
	struct gcswalk_mapping *maps;
	const struct gp_rmapping **raws;
	struct space *s;
	size_t i, n = 0;
	char *msg = NULL;
	int pid = 0;

	for (i = 0; i < ix->nspaces; i++)
		if (ix->spaces[i].asid == asid)
			return &ix->spaces[i];
	s = realloc(ix->spaces, (ix->nspaces + 1) * sizeof(*s));
	if (!s)
		return NULL;
	ix->spaces = s;
	s = &ix->spaces[ix->nspaces++];
	memset(s, 0, sizeof(*s));
	s->asid = asid;
	maps = calloc(ix->raw->nmappings + 1, sizeof(*maps));
	raws = calloc(ix->raw->nmappings + 1, sizeof(*raws));
	if (!maps || !raws) {
		free(maps);
		free(raws);
		return NULL;
	}
	for (i = 0; i < ix->raw->nmappings; i++) {
		const struct gp_rmapping *r = &ix->raw->mappings[i];

		/* The vDSO is in no file: its names come from the profile. */
		if (r->asid != asid || strcmp(r->path, GP_VDSO_PATH) == 0)
			continue;
		maps[n].start = r->start;
		maps[n].end = r->end;
		maps[n].offset = r->offset;
		maps[n].path = r->path;
		raws[n] = r;
		pid = r->pid;
		n++;
	}
	so.sysroot = ix->sysroot;
	if (gcswalk_target_open_mappings(&s->target, pid, maps, n, &msg) != GCSWALK_OK ||
	    set_build_ids(s->target, raws, n) != GCSWALK_OK ||
	    gcswalk_symbolizer_new(&s->sym, s->target, &so) != GCSWALK_OK) {
		if (!s->failed)
			gp_warn("cannot symbolise address space %u: %s", asid,
				msg ? msg : s->target ? gcswalk_target_errmsg(s->target) : "?");
		s->failed = 1;
	}
	free(msg);
	free(maps);
	free(raws);
	return s;
}

/* The function NAME (ELF symbol SYSTEM_NAME, source FILE) of mapping
 * MID (0: none), made once. */
static uint64_t function_id(struct gp_model *m, const char *name, const char *system_name,
			    const char *file, uint64_t mid)
{
	struct index *ix = m->index;
	const char *n = gp_model_intern(m, name), *sn = gp_model_intern(m, system_name ? system_name : name);
	const char *f = gp_model_intern(m, file ? file : "");
	/* Interned too: gp_string_id() reads the id in front of the text. */
	const char *obj = mid ? m->mappings[mid - 1].file : gp_model_intern(m, "");
	struct gp_function *fn;
	uint64_t id;

	if (!n || !f || !sn || !obj)
		return 0;
	id = gp_map_get(&ix->functions, gp_string_id(n), gp_string_id(f), gp_string_id(obj));
	if (id)
		return id;
	fn = gp_grow(m->functions, &m->functions_cap, m->nfunctions + 1, sizeof(*fn));
	if (!fn)
		return 0;
	m->functions = fn;
	m->functions[m->nfunctions] = (struct gp_function){
		n, sn, f, obj, mid ? m->mappings[mid - 1].is_program : 0, 0
	};
	id = ++m->nfunctions;
	if (gp_map_put(&ix->functions, gp_string_id(n), gp_string_id(f), gp_string_id(obj), id) != 0)
		return 0;
	return id;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* The mapping (1-based id) of ADDRESS in address space ASID, 0 if none. */
static uint64_t mapping_of(const struct gp_model *m, unsigned asid, uint64_t address)
{
	const struct index *ix = m->index;
	size_t i;

	for (i = 0; i < ix->raw->nmappings; i++) {
		const struct gp_rmapping *r = &ix->raw->mappings[i];

		if (r->asid == asid && address >= r->start && address < r->end)
			return i + 1;
	}
	return 0;
}

/* The vDSO function at OFFSET, or NULL. */
static const struct gp_rsymbol *vdso_symbol(const struct gp_rprofile *raw, uint64_t offset)
{
	size_t i;

	for (i = 0; i < raw->nvdso_symbols; i++) {
		const struct gp_rsymbol *s = &raw->vdso_symbols[i];

		if (offset >= s->offset && (offset < s->offset + s->size ||
					    (!s->size && offset == s->offset)))
			return s;
	}
	return NULL;
}

/* L's lines from libgcswalk's symbols, innermost first. */
static int symbolised_lines(struct gp_model *m, struct gp_location *l,
			    const struct gcswalk_location *loc)
{
	char buf[64];
	size_t i;

	l->lines = calloc(loc->nsymbols, sizeof(*l->lines));
	if (!l->lines)
		return -1;
	for (i = 0; i < loc->nsymbols; i++) {
		const struct gcswalk_symbol *sy = &loc->symbols[i];
		const char *name = sy->function ? sy->function : sy->symbol;
		uint64_t fid;

		if (!name) {
			snprintf(buf, sizeof(buf), "0x%" PRIx64, l->address);
			name = buf;
		}
		fid = function_id(m, name, sy->symbol, sy->file, l->mapping_id);
		if (!fid)
			return -1;
		l->lines[l->nlines++] = (struct gp_line){ fid, sy->line };
	}
	if (l->mapping_id)
		m->mappings[l->mapping_id - 1].has_functions = 1;
	return 0;
}

/*
 * A frame without a symbol: named by the vDSO's symbols (which the
 * profile carries, the vDSO being in no file), by its file and offset,
 * or by its address. The signal trampoline is named for what it is, as
 * gdb's <signal handler called>.
 */
static int unknown_line(struct gp_model *m, struct gp_location *l, const struct gp_frame *f)
{
	const struct index *ix = m->index;
	uint64_t mid = l->mapping_id, fid;
	const struct gp_rmapping *rm = mid ? &ix->raw->mappings[mid - 1] : NULL;
	const struct gp_rsymbol *vs = NULL;
	char *name = NULL;
	int ok;

	/* A return address is looked up at its call. */
	if (rm && strcmp(rm->path, GP_VDSO_PATH) == 0 && f->address - rm->start >= 4)
		vs = vdso_symbol(ix->raw, f->address - rm->start - (f->kind != GP_FRAME_PC ? 4 : 0));
	if (f->kind == GP_FRAME_SIGRETURN)
		ok = asprintf(&name, "[signal handler called]");
	else if (vs)
		ok = asprintf(&name, "%s [vdso]", vs->name);   /* as perf names it */
	else if (rm)
		ok = asprintf(&name, "[%s+0x%" PRIx64 "]", base_name(rm->path),
			      f->address - rm->start + rm->offset);
	else
		ok = asprintf(&name, "[0x%" PRIx64 "]", f->address);
	if (ok < 0)
		return -1;
	fid = function_id(m, name, vs ? vs->name : name, "", mid);
	free(name);
	if (!fid)
		return -1;
	m->functions[fid - 1].unnamed = !vs && f->kind != GP_FRAME_SIGRETURN;
	l->lines = calloc(1, sizeof(*l->lines));
	if (!l->lines)
		return -1;
	l->lines[l->nlines++] = (struct gp_line){ fid, 0 };
	return 0;
}

/* The location of frame F of address space ASID, symbolised once. */
static uint64_t location_id(struct gp_model *m, unsigned asid, const struct gp_frame *f)
{
	struct index *ix = m->index;
	int is_return = f->kind != GP_FRAME_PC;
	const struct gcswalk_location *loc = NULL;
	struct gp_location *l;
	struct space *s;
	uint64_t id = gp_map_get(&ix->locations, asid, f->address, (uint64_t)is_return);

	if (id)
		return id;
	l = gp_grow(m->locations, &m->locations_cap, m->nlocations + 1, sizeof(*l));
	if (!l)
		return 0;
	m->locations = l;
	l = &m->locations[m->nlocations];
	memset(l, 0, sizeof(*l));
	l->mapping_id = mapping_of(m, asid, f->address);
	l->address = f->address;
	s = space_for(m, asid);
	if (!s)
		return 0;
	if (s->sym)
		(void)gcswalk_symbolize(s->sym, f->address, is_return, &loc);
	if (loc && loc->nsymbols ? symbolised_lines(m, l, loc) : unknown_line(m, l, f))
		return 0;
	id = ++m->nlocations;
	if (gp_map_put(&ix->locations, asid, f->address, (uint64_t)is_return, id) != 0)
		return 0;
	return id;
}

/* The recording's facts, as the model keeps them. */
static int copy_facts(struct gp_model *m, const struct gp_rprofile *raw)
{
	size_t i;

	m->hz = raw->hz;
	m->period_ns = raw->hz ? 1000000000 / raw->hz : 10101010;
	m->duration_ns = raw->duration_ns;
	m->mode = gp_model_intern(m, raw->mode ? raw->mode : "cpu");
	m->command = gp_model_intern(m, raw->command ? raw->command : "?");
	m->method = gp_model_intern(m, raw->method ? raw->method : "");
	m->event = gp_model_intern(m, raw->event ? raw->event : "");
	m->max_stack_by = gp_model_intern(m, raw->max_stack_by ? raw->max_stack_by : "");
	m->date = gp_model_intern(m, raw->date);
	m->host = gp_model_intern(m, raw->host);
	m->kernel = gp_model_intern(m, raw->kernel);
	/* Files before the arch record were all recorded on arm64. */
	m->arch = gp_model_intern(m, raw->arch ? raw->arch : "arm64");
	m->shadow_stack = gp_model_intern(m, raw->shadow_stack ? raw->shadow_stack : "GCS");
	m->filter_note = gp_model_intern(m, "");
	if (!m->mode || !m->command || !m->method || !m->event || !m->max_stack_by || !m->date ||
	    !m->host || !m->kernel || !m->arch || !m->shadow_stack || !m->filter_note)
		return -1;
	m->start_unix_ms = raw->start_unix_ms;
	m->cpus = raw->cpus;
	m->max_stack = raw->max_stack;
	m->has_throttle = raw->has_throttle;
	m->throttles = raw->throttles;
	m->unthrottles = raw->unthrottles;
	for (i = 0; i < raw->nlost; i++) {
		m->lost[i].reason = gp_model_intern(m, raw->lost[i].reason);
		m->lost[i].count = raw->lost[i].count;
		m->nlost_total += raw->lost[i].count;
		if (!m->lost[i].reason)
			return -1;
		m->nlost++;
	}
	return 0;
}

/* Each address space's program: its lowest file mapping, and every
 * mapping of that file. */
static int mark_programs(struct gp_model *m, const struct gp_rprofile *raw)
{
	struct gp_map lowest = { 0 };   /* asid -> mapping index + 1 */
	size_t i;

	for (i = 0; i < raw->nmappings; i++) {
		const struct gp_rmapping *r = &raw->mappings[i];
		uint64_t low = gp_map_get(&lowest, r->asid, 0, 0);

		if (r->path[0] != '/' || (low && raw->mappings[low - 1].start <= r->start))
			continue;
		if (gp_map_put(&lowest, r->asid, 0, 0, i + 1) != 0) {
			gp_map_free(&lowest);
			return -1;
		}
	}
	for (i = 0; i < raw->nmappings; i++) {
		uint64_t low = gp_map_get(&lowest, raw->mappings[i].asid, 0, 0);

		m->mappings[i].is_program = low && m->mappings[i].file == m->mappings[low - 1].file;
	}
	gp_map_free(&lowest);
	return 0;
}

/* The mappings, build-ids in hex; each address space's program marked. */
static int copy_mappings(struct gp_model *m, const struct gp_rprofile *raw)
{
	size_t i, j;

	for (i = 0; i < raw->nmappings; i++) {
		const struct gp_rmapping *r = &raw->mappings[i];
		char *hex = calloc(r->build_id_size * 2 + 1, 1);

		if (!hex)
			return -1;
		for (j = 0; j < r->build_id_size; j++)
			snprintf(hex + 2 * j, 3, "%02x", r->build_id[j]);
		m->mappings[i].start = r->start;
		m->mappings[i].limit = r->end;
		m->mappings[i].offset = r->offset;
		m->mappings[i].file = gp_model_intern(m, r->path);
		m->mappings[i].build_id = gp_model_intern(m, hex);
		free(hex);
		if (!m->mappings[i].file || !m->mappings[i].build_id)
			return -1;
	}
	m->nmappings = raw->nmappings;
	return mark_programs(m, raw);
}

/* Sample I of RAW, its frames as locations. */
static int copy_sample(struct gp_model *m, const struct gp_rprofile *raw, size_t i)
{
	const struct gp_rsample *r = &raw->samples[i];
	struct gp_sample *s = &m->samples[i];
	uint32_t node;

	s->location_ids = calloc(r->nframes + 1, sizeof(*s->location_ids));
	s->thread = gp_model_intern(m, r->thread);
	if (!s->location_ids || !s->thread)
		return -1;
	m->nsamples++;
	/* The chain from its innermost frame's node out to the outermost. */
	for (node = r->stack; node; node = raw->stacks.nodes[node].parent) {
		uint64_t id = location_id(m, r->asid, &raw->stacks.nodes[node].frame);

		if (!id || s->nlocations >= r->nframes)
			return -1;
		s->location_ids[s->nlocations++] = id;
	}
	s->count = 1;
	s->time_ns = r->time_ns;
	s->pid = r->pid;
	s->tid = r->tid;
	s->state = r->state;
	s->fallback = r->fallback;
	s->cut = r->cut;
	if (r->cut) {
		m->ncut++;
		if (r->nframes > m->cut_depth)
			m->cut_depth = r->nframes;
	}
	m->total++;
	return 0;
}

/* Frames with no name in a file that named others: a stripped library's
 * local functions, which its debug file would name. */
static void count_stripped(struct gp_model *m)
{
	size_t i, j;

	for (i = 0; i < m->nlocations; i++) {
		const struct gp_location *l = &m->locations[i];
		const struct gp_function *fn = gp_model_function(m, l->lines[0].function_id);

		if (!fn->unnamed || !l->mapping_id)
			continue;
		for (j = 0; j < m->nmappings; j++)
			if (m->mappings[j].file == fn->object && m->mappings[j].has_functions)
				break;
		if (j == m->nmappings)
			continue;
		if (!m->nstripped++)
			m->stripped_eg = fn->object;
	}
}

int gp_model_build(struct gp_model *m, const struct gp_rprofile *raw, const char *sysroot)
{
	struct index *ix;
	size_t i;

	memset(m, 0, sizeof(*m));
	m->strings = calloc(1, sizeof(*m->strings));
	m->index = ix = calloc(1, sizeof(*ix));
	m->mappings = calloc(raw->nmappings + 1, sizeof(*m->mappings));
	m->samples = calloc(raw->nsamples + 1, sizeof(*m->samples));
	m->lost = calloc(raw->nlost + 1, sizeof(*m->lost));
	if (!m->strings || !ix || !m->mappings || !m->samples || !m->lost)
		goto nomem;
	ix->raw = raw;
	ix->sysroot = sysroot;
	if (copy_facts(m, raw) != 0 || copy_mappings(m, raw) != 0)
		goto nomem;
	for (i = 0; i < raw->nsamples; i++)
		if (copy_sample(m, raw, i) != 0)
			goto nomem;
	count_stripped(m);
	m->total_before_filter = m->total;
	ix->raw = NULL;      /* the model stands on its own from here */
	return 0;
nomem:
	gp_model_free(m);
	return gp_error(GP_EXIT_SYSTEM, "out of memory while symbolising");
}

void gp_model_free(struct gp_model *m)
{
	struct index *ix = m->index;
	size_t i;

	if (ix) {
		for (i = 0; i < ix->nspaces; i++) {
			gcswalk_symbolizer_free(ix->spaces[i].sym);
			gcswalk_target_close(ix->spaces[i].target);
		}
		free(ix->spaces);
		gp_map_free(&ix->locations);
		gp_map_free(&ix->functions);
		free(ix);
	}
	for (i = 0; i < m->nlocations; i++)
		free(m->locations[i].lines);
	for (i = 0; i < m->nsamples; i++)
		free(m->samples[i].location_ids);
	if (m->strings) {
		gp_strtab_free(m->strings);
		free(m->strings);
	}
	free(m->locations);
	free(m->functions);
	free(m->mappings);
	free(m->samples);
	free(m->lost);
	memset(m, 0, sizeof(*m));
}

size_t gp_sample_frames(const struct gp_model *m, const struct gp_sample *s, uint64_t **function_ids)
{
	size_t n = 0, i, k = 0;
	uint64_t *v;

	for (i = 0; i < s->nlocations; i++)
		n += m->locations[s->location_ids[i] - 1].nlines;
	v = calloc(n + 1, sizeof(*v));
	if (!v)
		return (size_t)-1;
	/* Root first: the outermost location, and within one location the
	 * real function before the functions inlined into it. */
	for (i = s->nlocations; i-- > 0;) {
		const struct gp_location *l = &m->locations[s->location_ids[i] - 1];
		size_t j;

		for (j = l->nlines; j-- > 0;)
			v[k++] = l->lines[j].function_id;
	}
	*function_ids = v;
	return k;
}

size_t gp_sample_stack(const struct gp_model *m, const struct gp_sample *s, int per_thread,
		       const char ***names)
{
	uint64_t *ids;
	size_t n = gp_sample_frames(m, s, &ids), i, k = 0;
	const char **v;

	if (n == (size_t)-1)
		return n;
	v = calloc(n + 2, sizeof(*v));
	if (!v) {
		free(ids);
		return (size_t)-1;
	}
	if (per_thread)
		v[k++] = s->thread;
	for (i = 0; i < n; i++)
		v[k++] = gp_model_function(m, ids[i])->name;
	free(ids);
	*names = v;
	return k;
}

size_t gp_sample_stack_inverted(const struct gp_model *m, const struct gp_sample *s,
				int per_thread, const char ***names)
{
	size_t n = gp_sample_stack(m, s, per_thread, names), i, first = per_thread ? 1 : 0;

	for (i = first; n != (size_t)-1 && i < first + (n - first) / 2; i++) {
		const char *t = (*names)[i];

		(*names)[i] = (*names)[n - 1 - (i - first)];
		(*names)[n - 1 - (i - first)] = t;
	}
	return n;
}

struct thread_key {
	int tid, pid;
	size_t last;
};

static int by_thread(const void *a, const void *b)
{
	const struct thread_key *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

size_t gp_model_threads(const struct gp_model *m, size_t **last)
{
	struct gp_map seen = { 0 };
	struct thread_key *k = calloc(m->nsamples + 1, sizeof(*k));
	size_t *v = calloc(m->nsamples + 1, sizeof(*v)), n = 0, i;

	if (!k || !v)
		goto nomem;
	for (i = 0; i < m->nsamples; i++) {
		const struct gp_sample *s = &m->samples[i];

		uint64_t at = gp_map_get(&seen, (uint32_t)s->pid, (uint32_t)s->tid, 0);

		if (at) {
			k[at - 1].last = i;   /* a thread may rename itself */
			continue;
		}
		if (gp_map_put(&seen, (uint32_t)s->pid, (uint32_t)s->tid, 0, n + 1) != 0)
			goto nomem;
		k[n++] = (struct thread_key){ s->tid, s->pid, i };
	}
	qsort(k, n, sizeof(*k), by_thread);
	for (i = 0; i < n; i++)
		v[i] = k[i].last;
	gp_map_free(&seen);
	free(k);
	*last = v;
	return n;
nomem:
	gp_map_free(&seen);
	free(k);
	free(v);
	return (size_t)-1;
}

struct timed {
	uint64_t time_ns;
	size_t index;
};

static int by_time(const void *a, const void *b)
{
	const struct timed *x = a, *y = b;

	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	return (x->index > y->index) - (x->index < y->index);
}

size_t *gp_model_by_time(const struct gp_model *m)
{
	struct timed *t = calloc(m->nsamples + 1, sizeof(*t));
	size_t *v = calloc(m->nsamples + 1, sizeof(*v)), i;

	if (!t || !v) {
		free(t);
		free(v);
		return NULL;
	}
	for (i = 0; i < m->nsamples; i++)
		t[i] = (struct timed){ m->samples[i].time_ns, i };
	qsort(t, m->nsamples, sizeof(*t), by_time);
	for (i = 0; i < m->nsamples; i++)
		v[i] = t[i].index;
	free(t);
	return v;
}
