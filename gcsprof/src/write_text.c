// SPDX-License-Identifier: MIT
/*
 * The text report: what the recording was, then the functions, hottest
 * first (by self share, or by total with --sort total), each named with
 * its source file (relative to the common folder of its file's sources)
 * and, outside the program, the library it is in; optionally each one's
 * callers or callees (write_text_graph.c); then the heaviest chains. With
 * --per-thread, the same for each thread.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "write_text.h"

struct fn_count {
	uint64_t id;
	uint64_t self, total;
};

static int by_key(const void *a, const void *b, void *sort)
{
	const struct fn_count *x = a, *y = b;
	const int self = *(const enum gp_sort *)sort == GP_SORT_SELF;
	uint64_t kx = self ? x->self : x->total, ky = self ? y->self : y->total;

	if (kx != ky)
		return kx < ky ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Self and total samples of each function in section T. */
static struct fn_count *count_functions(struct text_section *t)
{
	const struct gp_model *m = t->m;
	struct fn_count *fc = calloc(m->nfunctions + 1, sizeof(*fc));
	uint64_t *last = calloc(m->nfunctions + 1, sizeof(*last));
	size_t i, j, k;

	if (!fc || !last) {
		free(fc);
		free(last);
		return NULL;
	}
	for (i = 0; i < m->nfunctions; i++)
		fc[i].id = i + 1;
	for (i = 0; i < m->nsamples; i++) {
		const struct gp_sample *s = &m->samples[i];

		if (!text_in_section(t, s))
			continue;
		t->total += (uint64_t)s->count;
		for (j = 0; j < s->nlocations; j++) {
			const struct gp_location *l = &m->locations[s->location_ids[j] - 1];

			for (k = 0; k < l->nlines; k++) {
				uint64_t fid = l->lines[k].function_id;

				if (j == 0 && k == 0)
					fc[fid - 1].self += (uint64_t)s->count;
				if (last[fid - 1] != i + 1) {   /* once a sample */
					last[fid - 1] = i + 1;
					fc[fid - 1].total += (uint64_t)s->count;
				}
			}
		}
	}
	free(last);
	return fc;
}

/* The functions, hottest first by the sort key; rows under the percent
 * limit left out. */
static int print_functions(struct text_section *t, struct fn_count *fc)
{
	const struct gp_report_opts *o = t->o;
	size_t i, shown = 0;

	qsort_r(fc, t->m->nfunctions, sizeof(*fc), by_key, (void *)&o->sort);
	fprintf(t->f, "%8s %8s %8s  %s\n", "self%", "total%", "samples", "function");
	for (i = 0; i < t->m->nfunctions && shown < o->top; i++) {
		uint64_t key = o->sort == GP_SORT_SELF ? fc[i].self : fc[i].total;

		if (!fc[i].total || text_pct(key, t->total) < o->percent_limit)
			continue;
		shown++;
		fprintf(t->f, "%7.2f%% %7.2f%% %8" PRIu64 "  %s\n", text_pct(fc[i].self, t->total),
			text_pct(fc[i].total, t->total), fc[i].total, t->label[fc[i].id - 1]);
		if (o->graph != GP_GRAPH_NONE && text_graph(t, fc[i].id) != 0)
			return -1;
	}
	if (!shown)
		fprintf(t->f, "%27s  (no function%s)\n", "",
			o->percent_limit > 0 ? " at or above the percent limit" : "");
	return 0;
}

/* The heaviest chains, identical ones merged, root first. */
static int print_chains(struct text_section *t)
{
	const struct gp_model *m = t->m;
	struct text_count *chains = calloc(m->nsamples + 1, sizeof(*chains));
	size_t i, n = 0, shown = 0;
	int ret = -1;

	if (!chains)
		return -1;
	for (i = 0; i < m->nsamples; i++) {
		const struct gp_sample *s = &m->samples[i];
		const char **names;
		size_t k;

		if (!text_in_section(t, s))
			continue;
		k = text_frames(t, s, &names);
		if (k == (size_t)-1)
			goto out;
		chains[n].text = text_chain(names, k, " -> ");
		free(names);
		if (!chains[n].text)
			goto out;
		chains[n++].count = (uint64_t)s->count;
	}
	n = text_merge(chains, n);
	fprintf(t->f, "\nHeaviest call chains (root first; %zu distinct):\n", n);
	for (i = 0; i < n && shown < t->o->chains; i++) {
		if (text_pct(chains[i].count, t->total) < t->o->percent_limit)
			break;
		shown++;
		fprintf(t->f, "%7.2f%% %8" PRIu64 "  %s\n", text_pct(chains[i].count, t->total),
			chains[i].count, chains[i].text);
	}
	ret = 0;
out:
	for (i = 0; i < n; i++)
		free(chains[i].text);
	free(chains);
	return ret;
}

static int section(struct text_section *t)
{
	struct fn_count *fc = count_functions(t);
	int ret = -1;

	if (!fc)
		return -1;
	if (print_functions(t, fc) == 0 && print_chains(t) == 0 &&
	    (!t->o->peek || text_peek(t) == 0))
		ret = 0;
	free(fc);
	return ret;
}

/* A header of the system's (inlined from /usr/include, say), which is not
 * the program's tree: it would make the common folder "/". */
static int is_system_header(const char *path)
{
	return strncmp(path, "/usr/", 5) == 0 && strstr(path, "/include/") != NULL;
}

/* The length of the longest common folder of A and B ("/x/y/"). */
static size_t common_folder(const char *a, size_t alen, const char *b)
{
	size_t i, slash = 0;

	for (i = 0; i < alen && a[i] && a[i] == b[i]; i++)
		if (a[i] == '/')
			slash = i + 1;
	return slash;
}

/*
 * Each function's label: "name (file) [object]". Source paths are cut to
 * what follows the common folder of the sources of their file (a program's
 * own sources by their names in its tree, not the build machine's
 * absolute paths), system headers to what follows their include folder
 * (bits/stdlib-float.h); the object is said for functions outside the
 * program (those named [file+offset] say it already).
 */
static int make_labels(const struct gp_model *m, char **label, char **short_label)
{
	struct gp_map roots = { 0 };   /* object id -> function id + 1 of its first source */
	size_t *cut = calloc(m->nfunctions + 1, sizeof(*cut)), i;

	for (i = 0; cut && i < m->nfunctions; i++) {
		const struct gp_function *fn = &m->functions[i];
		uint64_t first;

		if (fn->filename[0] != '/' || is_system_header(fn->filename))
			continue;
		first = gp_map_get(&roots, gp_string_id(fn->object), 0, 0);
		if (!first) {
			cut[i] = (size_t)(strrchr(fn->filename, '/') - fn->filename) + 1;
			if (gp_map_put(&roots, gp_string_id(fn->object), 0, 0, i + 1) != 0)
				break;
			continue;
		}
		cut[first - 1] = common_folder(m->functions[first - 1].filename, cut[first - 1],
					       fn->filename);
	}
	for (i = 0; cut && i < m->nfunctions; i++) {
		const struct gp_function *fn = &m->functions[i];
		const char *inc = strstr(fn->filename, "/include/");
		uint64_t first = fn->filename[0] == '/' && !is_system_header(fn->filename) ?
					 gp_map_get(&roots, gp_string_id(fn->object), 0, 0) : 0;
		const char *file = fn->filename + (first ? cut[first - 1] : 0);

		if (is_system_header(fn->filename) && inc)   /* as #include names it */
			file = inc + strlen("/include/");
		const char *obj = strrchr(fn->object, '/');
		char tail[300] = "";

		obj = obj ? obj + 1 : fn->object;
		/* Grouped by file, the name is the file already. */
		if (fn->object[0] == '/' && !fn->in_program && fn->name[0] != '[' && strcmp(fn->name, obj))
			snprintf(tail, sizeof(tail), " [%s]", obj);
		if (asprintf(&label[i], "%s%s%s%s%s", fn->name, *file ? " (" : "", file,
			     *file ? ")" : "", tail) < 0 ||
		    asprintf(&short_label[i], "%s%s", fn->name, tail) < 0)
			break;
	}
	gp_map_free(&roots);
	free(cut);
	return cut && i == m->nfunctions ? 0 : -1;
}

static void header(const struct gp_model *m, FILE *f)
{
	char **notes;
	size_t i, nnotes;

	fprintf(f, "# gcsprof report: %" PRIu64 " samples, %s profile at %u Hz over %.2f s\n",
		m->total, m->mode, m->hz, (double)m->duration_ns / 1e9);
	fprintf(f, "# command: %s\n", m->command);
	if (strcmp(m->method, "perf") == 0) {
		fprintf(f, "# method: perf (%s event; the kernel took the chains, the target never "
			   "stopped", *m->event ? m->event : "?");
		if (m->max_stack)
			fprintf(f, "; chains of up to %u frames", m->max_stack);
		fprintf(f, ")\n");
	} else if (*m->method) {
		fprintf(f, "# method: %s (every sample stopped the target)\n", m->method);
	}
	nnotes = gp_model_notes(m, &notes);
	for (i = 0; nnotes != (size_t)-1 && i < nnotes; i++)
		fprintf(f, "# %s\n", notes[i]);
	if (nnotes != (size_t)-1)
		gp_model_notes_free(notes, nnotes);
	fprintf(f, "\n");
}

/* A section per thread, by tid. */
static int per_thread(struct text_section *t)
{
	const struct gp_model *m = t->m;
	size_t *last, n = gp_model_threads(m, &last), i, k;

	if (n == (size_t)-1)
		return -1;
	for (i = 0; i < n; i++) {
		const struct gp_sample *s = &m->samples[last[i]];
		size_t cnt = 0;

		for (k = 0; k < m->nsamples; k++)
			if (m->samples[k].tid == s->tid)
				cnt++;
		fprintf(t->f, "\n## thread %d (%s) of process %d: %zu samples\n\n", s->tid, s->thread,
			s->pid, cnt);
		t->tid = s->tid;
		t->total = 0;
		if (section(t) != 0) {
			free(last);
			return -1;
		}
	}
	free(last);
	return 0;
}

int gp_write_text(const struct gp_model *m, struct gp_out *out, const struct gp_report_opts *o)
{
	struct text_section t = { m, o, out->fp, 0, 0, NULL, NULL };
	int ret = 0;
	size_t i;

	t.label = calloc(m->nfunctions + 1, sizeof(*t.label));
	t.short_label = calloc(m->nfunctions + 1, sizeof(*t.short_label));
	if (!t.label || !t.short_label || make_labels(m, t.label, t.short_label) != 0) {
		ret = gp_error(GP_EXIT_SYSTEM, "out of memory");
		goto out;
	}
	header(m, out->fp);
	if (section(&t) != 0 || (o->per_thread && per_thread(&t) != 0))
		ret = gp_error(GP_EXIT_SYSTEM, "out of memory");
out:
	for (i = 0; i < m->nfunctions; i++) {
		free(t.label ? t.label[i] : NULL);
		free(t.short_label ? t.short_label[i] : NULL);
	}
	free(t.label);
	free(t.short_label);
	return ret;
}
