// SPDX-License-Identifier: MIT
/* gcsprof report: read a profile, symbolise it, write one format. */
#include <stddef.h>
#include <string.h>

#include "model.h"

struct report_opts {
	const char *format;
	const char *output;
	const char *sysroot;
	int per_thread;
	unsigned top;
};

static const char *const formats[] = { "text", "folded", "pprof", "svg", NULL };

#define OPT(field) offsetof(struct report_opts, field)
static const struct gp_option report_options[] = {
	{ "format", 'f', GP_OPT_STRING, OPT(format), "text|folded|pprof|svg",
	  "output format (default text)", 0, 0, formats },
	{ "output", 'o', GP_OPT_STRING, OPT(output), "OUT", "write here (default standard output)",
	  0, 0, NULL },
	{ "sysroot", 0, GP_OPT_STRING, OPT(sysroot), "DIR",
	  "look for the recorded programs and libraries under DIR", 0, 0, NULL },
	{ "per-thread", 0, GP_OPT_FLAG, OPT(per_thread), NULL, "one report (or root frame) per thread",
	  0, 0, NULL },
	{ "top", 0, GP_OPT_UINT, OPT(top), "N", "functions in the text report (default 20)", 1,
	  1000000, NULL },
};
#undef OPT

static void report_init(void *p)
{
	struct report_opts *o = p;

	o->format = "text";
	o->top = 20;
}

static const struct {
	const char *name;
	int (*write)(const struct gp_model *, struct gp_out *, const struct gp_report_opts *);
} writers[] = {
	{ "text", gp_write_text },
	{ "folded", gp_write_folded },
	{ "pprof", gp_write_pprof },
	{ "svg", gp_write_svg },
};

static int report_run(void *p, int argc, char **argv)
{
	const struct report_opts *o = p;
	const char *path = argc > 0 ? argv[0] : "gcsprof.data";
	struct gp_report_opts ro = { o->per_thread, o->top };
	struct gp_rprofile raw;
	struct gp_model model;
	struct gp_out out;
	size_t i;
	int ret, wret;

	ret = gp_profile_read(&raw, path);
	if (ret)
		return ret;
	ret = gp_model_build(&model, &raw, o->sysroot);
	if (ret) {
		gp_profile_free(&raw);
		return ret;
	}
	ret = gp_out_open(&out, o->output);
	if (ret == 0) {
		for (i = 0; i < sizeof(writers) / sizeof(writers[0]); i++)
			if (strcmp(writers[i].name, o->format) == 0)
				ret = writers[i].write(&model, &out, &ro);
		wret = gp_out_close(&out);
		if (!ret)
			ret = wret;
	}
	gp_model_free(&model);
	gp_profile_free(&raw);
	return ret;
}

const struct gp_command gp_cmd_report = {
	.name = "report",
	.synopsis = "[FILE] [--format text|folded|pprof|svg] [-o OUT] [--sysroot DIR] [--per-thread]",
	.summary = "symbolise a profile and write top functions, folded stacks, pprof or SVG",
	.options = report_options,
	.noptions = sizeof(report_options) / sizeof(report_options[0]),
	.min_args = 0,
	.max_args = 1,
	.run = report_run,
	.opts_size = sizeof(struct report_opts),
	.init = report_init,
};
