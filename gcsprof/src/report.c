// SPDX-License-Identifier: MIT
/* gcsprof report: read a profile, symbolise it, write one format. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model.h"

struct report_opts {
	int format;               /* index into writers[] */
	const char *output;
	const char *sysroot;
	int per_thread;
	unsigned top;
};

/* The output formats: the --format choices and the dispatch, in one. */
static const struct writer {
	const char *name;         /* first: the option's choices are this table */
	int (*write)(const struct gp_model *, struct gp_out *, const struct gp_report_opts *);
} writers[] = {
	{ "text", gp_write_text },
	{ "folded", gp_write_folded },
	{ "pprof", gp_write_pprof },
	{ "svg", gp_write_svg },
	{ NULL, NULL },
};

#define OPT(field) offsetof(struct report_opts, field)
static const struct gp_option report_options[] = {
	{ "format", 'f', GP_OPT_CHOICE, OPT(format), NULL, "output format (default text)", 0, 0,
	  writers, sizeof(writers[0]) },
	{ "output", 'o', GP_OPT_STRING, OPT(output), "OUT", "write here (default standard output)",
	  0, 0, NULL, 0 },
	{ "sysroot", 0, GP_OPT_STRING, OPT(sysroot), "DIR",
	  "look for the recorded programs and libraries under DIR", 0, 0, NULL, 0 },
	{ "per-thread", 0, GP_OPT_FLAG, OPT(per_thread), NULL, "one report (or root frame) per thread",
	  0, 0, NULL, 0 },
	{ "top", 0, GP_OPT_UINT, OPT(top), "N", "functions in the text report (default 20)", 1,
	  1000000, NULL, 0 },
};
#undef OPT

static void report_init(void *p)
{
	struct report_opts *o = p;

	o->format = 0;
	o->top = 20;
}

static int report_run(void *p, int argc, char **argv)
{
	const struct report_opts *o = p;
	const char *path = argc > 0 ? argv[0] : "gcsprof.data", *sysroot = o->sysroot;
	char *bundle_profile = NULL, *bundle_root = NULL;
	struct stat st;
	struct gp_report_opts ro = { o->per_thread, o->top };
	struct gp_rprofile raw;
	struct gp_model model;
	struct gp_out out;
	int ret, wret, truncated = 0;

	/* A bundle from gcsprof archive: its profile, its files. */
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		if (asprintf(&bundle_profile, "%s/profile", path) < 0 ||
		    asprintf(&bundle_root, "%s/root", path) < 0) {
			free(bundle_profile);
			return gp_error(GP_EXIT_SYSTEM, "out of memory");
		}
		path = bundle_profile;
		if (!sysroot)
			sysroot = bundle_root;
	}
	/* A truncated profile is reported as far as it goes (the reader said
	 * so), and the status still tells that it was cut short. */
	ret = gp_profile_read(&raw, path);
	if (ret == GP_EXIT_TRUNCATED) {
		truncated = 1;
		ret = 0;
	}
	if (ret)
		goto done;
	ret = gp_model_build(&model, &raw, sysroot);
	if (ret) {
		gp_profile_free(&raw);
		goto done;
	}
	ret = gp_out_open(&out, o->output);
	if (ret == 0) {
		gp_model_check_files(&model, sysroot);
		ret = writers[o->format].write(&model, &out, &ro);
		wret = gp_out_close(&out);
		if (!ret)
			ret = wret;
	}
	gp_model_free(&model);
	gp_profile_free(&raw);
	if (!ret && truncated)
		ret = GP_EXIT_TRUNCATED;
done:
	free(bundle_profile);
	free(bundle_root);
	return ret;
}

const struct gp_command gp_cmd_report = {
	.name = "report",
	.synopsis = "[FILE] [--format FORMAT] [-o OUT] [--sysroot DIR] [--per-thread]",
	.summary = "symbolise a profile and write top functions, folded stacks, pprof or SVG",
	.options = report_options,
	.noptions = sizeof(report_options) / sizeof(report_options[0]),
	.min_args = 0,
	.max_args = 1,
	.run = report_run,
	.opts_size = sizeof(struct report_opts),
	.init = report_init,
};
