// SPDX-License-Identifier: MIT
/*
 * Harness: what `gcsprof report` does with a profile file. The input is
 * a profile; gp_profile_read() parses it, gp_model_build() symbolises it
 * into the model (through libgcswalk, with the mapped files the profile
 * names), gp_model_check_files() compares those files with the recorded
 * build-ids, and every writer (text, folded, pprof, svg, speedscope, firefox; per thread and
 * not; the text report's and the SVG's views) writes the model to /dev/null, then again
 * after gp_model_filter() slices it. Seeds: guest-made profiles
 * (fuzz/make-seeds) and small hand-written ones in fuzz/corpus/profile.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"
#include "model.h"

static int (*const writers[])(const struct gp_model *, struct gp_out *,
			      const struct gp_report_opts *) = {
	gp_write_text,
	gp_write_folded,
#ifdef GCSPROF_HAVE_PROTOBUF
	gp_write_pprof,
#endif
	gp_write_svg,
	gp_write_speedscope,
	gp_write_firefox,
};

static int harmless_files(const struct gp_rprofile *raw)
{
	size_t i;

	for (i = 0; i < raw->nmappings; i++)
		if (raw->mappings[i].path && !fz_path_is_harmless(raw->mappings[i].path))
			return 0;
	return 1;
}

/* Every writer, plain and per thread; the text report and the flame
 * graph with their views too. */
static void write_all(const struct gp_model *m)
{
	static const struct gp_report_opts views = { 1, 20, GP_SORT_TOTAL, 3, 5, GP_GRAPH_CALLEE,
						     "." };
	struct gp_out out;
	size_t i;
	int per_thread;

	for (per_thread = 0; per_thread <= 1; per_thread++) {
		for (i = 0; i < sizeof(writers) / sizeof(writers[0]); i++) {
			struct gp_report_opts o = { per_thread, 20, GP_SORT_SELF, 5, 0, GP_GRAPH_NONE, NULL };

			if (gp_out_open(&out, "/dev/null") != 0)
				return;
			(void)writers[i](m, &out, &o);
			(void)gp_out_close(&out);
		}
	}
	if (gp_out_open(&out, "/dev/null") != 0)
		return;
	(void)gp_write_text(m, &out, &views);
	(void)gp_write_svg(m, &out, &views);
	(void)gp_out_close(&out);
}

/* Slice the model as report does, then write it again. */
static void slice_and_write(struct gp_model *m)
{
	const struct gp_filter_spec spec = { NULL, "42,43", NULL, "0,1", ".", "zz", 1, 20 };
	struct gp_filter *f = NULL;

	if (gp_filter_new(&f, &spec) == 0 && gp_model_filter(m, f, 1) == 0)
		write_all(m);
	gp_filter_free(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fz_input_path(data, size);
	struct gp_rprofile raw;
	struct gp_model model;
	int ret;

	if (!path)
		return 0;
	ret = gp_profile_read(&raw, path);
	/* A truncated profile is read up to the cut and reported, as report
	 * does; after any other error there is nothing to free. */
	if (ret != 0 && ret != GP_EXIT_TRUNCATED)
		return 0;
	if (harmless_files(&raw) && gp_model_build(&model, &raw, NULL) == 0) {
		gp_model_check_files(&model, NULL);
		write_all(&model);
		slice_and_write(&model);
		gp_model_free(&model);
	}
	gp_profile_free(&raw);
	return 0;
}
