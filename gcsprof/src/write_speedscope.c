// SPDX-License-Identifier: MIT
/*
 * speedscope's JSON file format (https://www.speedscope.app, its
 * file-format-spec.ts): the functions once, as shared frames (frame i is
 * function i + 1), then one "sampled" profile per thread, named by thread
 * name and tid, whose samples are root-first lists of frames in order of
 * time, each weighing its share of time in nanoseconds. Always
 * one profile per thread: speedscope shows them one at a time.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "write_json.h"

/* Which thread (index into LAST) each sample belongs to. */
static size_t *thread_of_samples(const struct gp_model *m, const size_t *last, size_t nthreads)
{
	struct gp_map tids = { 0 };
	size_t *v = calloc(m->nsamples + 1, sizeof(*v)), i;

	if (!v)
		return NULL;
	for (i = 0; i < nthreads; i++) {
		const struct gp_sample *s = &m->samples[last[i]];

		if (gp_map_put(&tids, (uint32_t)s->pid, (uint32_t)s->tid, 0, i + 1) != 0)
			goto nomem;
	}
	for (i = 0; i < m->nsamples; i++)
		v[i] = gp_map_get(&tids, (uint32_t)m->samples[i].pid, (uint32_t)m->samples[i].tid, 0) - 1;
	gp_map_free(&tids);
	return v;
nomem:
	gp_map_free(&tids);
	free(v);
	return NULL;
}

static void write_frames(const struct gp_model *m, FILE *f)
{
	size_t i;

	fputs("\"shared\":{\"frames\":[", f);
	for (i = 0; i < m->nfunctions; i++) {
		const struct gp_function *fn = &m->functions[i];

		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", f);
		gp_json_string(f, fn->name);
		if (*fn->filename) {
			fputs(",\"file\":", f);
			gp_json_string(f, fn->filename);
		}
		fputc('}', f);
	}
	fputs("]},\n", f);
}

/* Thread T's profile: its samples, then their weights. */
static int write_profile(const struct gp_model *m, FILE *f, const struct gp_sample *t,
			 const size_t *thread, size_t ti, const size_t *order)
{
	uint64_t total = 0;
	size_t i, j, n = 0;
	char *name;

	for (i = 0; i < m->nsamples; i++)
		if (thread[i] == ti)
			total += (uint64_t)(m->samples[i].count * m->period_ns);
	if (asprintf(&name, "%s (tid %d)", t->thread, t->tid) < 0)
		return -1;
	fputs("{\"type\":\"sampled\",\"name\":", f);
	gp_json_string(f, name);
	free(name);
	fprintf(f, ",\"unit\":\"nanoseconds\",\"startValue\":0,\"endValue\":%" PRIu64
		   ",\n\"samples\":[",
		total);
	for (i = 0; i < m->nsamples; i++) {
		const struct gp_sample *s = &m->samples[order[i]];
		uint64_t *ids;
		size_t k;

		if (thread[order[i]] != ti)
			continue;
		k = gp_sample_frames(m, s, &ids);
		if (k == (size_t)-1)
			return -1;
		fputs(n++ ? ",\n[" : "\n[", f);
		for (j = 0; j < k; j++)
			fprintf(f, j ? ",%" PRIu64 : "%" PRIu64, ids[j] - 1);
		fputc(']', f);
		free(ids);
	}
	fputs("],\n\"weights\":[", f);
	for (i = 0, n = 0; i < m->nsamples; i++)
		if (thread[order[i]] == ti)
			fprintf(f, n++ ? ",%" PRId64 : "%" PRId64,
				m->samples[order[i]].count * m->period_ns);
	fputs("]}", f);
	return 0;
}

int gp_write_speedscope(const struct gp_model *m, struct gp_out *out, const struct gp_report_opts *o)
{
	FILE *f = out->fp;
	size_t *last = NULL, *thread = NULL, *count = NULL, *order = NULL, nthreads, i, busiest = 0;
	char *title = NULL;
	int ret = 0;

	(void)o;   /* one profile per thread, always */
	nthreads = gp_model_threads(m, &last);
	if (nthreads == (size_t)-1)
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	thread = thread_of_samples(m, last, nthreads);
	count = calloc(nthreads + 1, sizeof(*count));
	order = gp_model_by_time(m);
	if (!thread || !count || !order || asprintf(&title, "%s (gcsprof, %s)", m->command, m->mode) < 0) {
		title = NULL;
		ret = gp_error(GP_EXIT_SYSTEM, "out of memory");
		goto out;
	}
	/* Open on the busiest thread. */
	for (i = 0; i < m->nsamples; i++)
		if (++count[thread[i]] > count[busiest])
			busiest = thread[i];
	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n"
	      "\"exporter\":\"gcsprof\",\"name\":", f);
	gp_json_string(f, title);
	fprintf(f, ",\"activeProfileIndex\":%zu,\n", busiest);
	write_frames(m, f);
	fputs("\"profiles\":[", f);
	for (i = 0; i < nthreads; i++) {
		fputs(i ? ",\n" : "\n", f);
		if (write_profile(m, f, &m->samples[last[i]], thread, i, order) != 0) {
			ret = gp_error(GP_EXIT_SYSTEM, "out of memory");
			goto out;
		}
	}
	fputs("]}\n", f);
out:
	free(title);
	free(order);
	free(count);
	free(thread);
	free(last);
	return ret;
}
