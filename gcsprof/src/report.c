// SPDX-License-Identifier: MIT
/*
 * gcsprof report: read a profile, symbolise it, slice it, write one
 * format. Everything a command line can get wrong is refused before the
 * profile is read: a format that the output's name contradicts, binary
 * output to a terminal, a sysroot that is not there, a bad filter.
 */
#include <errno.h>
#include <regex.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model.h"

struct report_opts {
	int format;               /* index into writers[]; -1: from -o's name, else text */
	const char *output;
	const char *sysroot;
	int per_thread;
	unsigned top, chains;
	int sort, children, no_children;
	const char *percent_limit;
	int graph;                /* enum gp_graph */
	const char *peek;
	const char *pids, *tids, *comms, *time, *focus, *ignore;
	int group;                /* 0: by function, 1: by object */
	int force;
};

/* The output formats: the --format choices and the dispatch, in one;
 * with the ends of output names that ask for each. */
static const struct writer {
	const char *name;         /* first: the option's choices are this table */
	int (*write)(const struct gp_model *, struct gp_out *, const struct gp_report_opts *);
	const char *suffixes[3];  /* longest first where one ends another */
	int binary;
	int graph;                /* -g callee has a meaning here */
} writers[] = {
	{ "text", gp_write_text, { ".txt", NULL, NULL }, 0, 1 },
	{ "folded", gp_write_folded, { ".folded", NULL, NULL }, 0, 1 },
	{ "pprof", gp_write_pprof, { ".pb.gz", ".pprof", NULL }, 1, 0 },
	{ "svg", gp_write_svg, { ".svg", NULL, NULL }, 0, 1 },
	{ "speedscope", gp_write_speedscope, { ".speedscope.json", NULL, NULL }, 0, 0 },
	{ "firefox", gp_write_firefox, { ".json", NULL, NULL }, 0, 0 },
	{ NULL, NULL, { NULL, NULL, NULL }, 0, 0 },
};

static const char *const sort_names[] = { "self", "total", NULL };
static const char *const graph_names[] = { "none", "caller", "callee", NULL };
static const char *const group_names[] = { "function", "object", NULL };

#define OPT(field) offsetof(struct report_opts, field)
static const struct gp_option report_options[] = {
	{ "format", 'f', GP_OPT_CHOICE, OPT(format), NULL,
	  "output format (default: from the name -o gives, else text)", 0, 0, writers,
	  sizeof(writers[0]) },
	{ "output", 'o', GP_OPT_STRING, OPT(output), "OUT",
	  "write here (default standard output); a name ending .svg, .pb.gz, .folded, "
	  ".speedscope.json, .json or .txt picks the format", 0, 0, NULL, 0 },
	{ "force", 0, GP_OPT_FLAG, OPT(force), NULL, "write binary output (pprof) to a terminal",
	  0, 0, NULL, 0 },
	{ "sysroot", 0, GP_OPT_STRING, OPT(sysroot), "DIR",
	  "look for the recorded programs and libraries under DIR (a copy of the recording "
	  "machine's root)", 0, 0, NULL, 0 },
	{ "sort", 's', GP_OPT_CHOICE, OPT(sort), NULL,
	  "text: order functions by self share (default) or total share", 0, 0,
	  GP_NAMES(sort_names) },
	{ "children", 0, GP_OPT_FLAG, OPT(children), NULL, "as perf: --sort total", 0, 0, NULL, 0 },
	{ "no-children", 0, GP_OPT_FLAG, OPT(no_children), NULL, "as perf: --sort self", 0, 0,
	  NULL, 0 },
	{ "top", 0, GP_OPT_UINT, OPT(top), "N", "text: functions listed (default 20)", 1, 1000000,
	  NULL, 0 },
	{ "chains", 0, GP_OPT_UINT, OPT(chains), "N",
	  "text: heaviest chains listed, and chains under each function with -g (default 5)", 0,
	  1000000, NULL, 0 },
	{ "percent-limit", 0, GP_OPT_STRING, OPT(percent_limit), "PCT",
	  "leave out what is under PCT% of the samples: text rows and chains, whole stacks in "
	  "the other formats", 0, 0, NULL, 0 },
	{ "call-graph", 'g', GP_OPT_CHOICE, OPT(graph), NULL,
	  "text: each function's callees (caller) or callers (callee); folded, svg: callee "
	  "puts the leaf at the root (an inverted flame graph)", 0, 0, GP_NAMES(graph_names) },
	{ "peek", 0, GP_OPT_STRING, OPT(peek), "REGEX",
	  "text: the direct callers and callees of the functions matching REGEX", 0, 0, NULL, 0 },
	{ "pid", 0, GP_OPT_STRING, OPT(pids), "PID[,PID...]", "only these processes", 0, 0, NULL,
	  0 },
	{ "tid", 0, GP_OPT_STRING, OPT(tids), "TID[,TID...]", "only these threads", 0, 0, NULL, 0 },
	{ "comm", 0, GP_OPT_STRING, OPT(comms), "NAME[,NAME...]",
	  "only threads of these names (as perf's comm)", 0, 0, NULL, 0 },
	{ "time", 0, GP_OPT_STRING, OPT(time), "START,END",
	  "only samples taken from START to END seconds into the recording (either may be "
	  "left out)", 0, 0, NULL, 0 },
	{ "focus", 0, GP_OPT_STRING, OPT(focus), "REGEX",
	  "only samples with a function matching REGEX on their chain", 0, 0, NULL, 0 },
	{ "ignore", 0, GP_OPT_STRING, OPT(ignore), "REGEX",
	  "leave out samples with a function matching REGEX on their chain", 0, 0, NULL, 0 },
	{ "group", 0, GP_OPT_CHOICE, OPT(group), NULL,
	  "name frames by function (default) or by the file they are in (program or library)",
	  0, 0, GP_NAMES(group_names) },
	{ "per-thread", 0, GP_OPT_FLAG, OPT(per_thread), NULL, "one report (or root frame) per thread",
	  0, 0, NULL, 0 },
};
#undef OPT

static void report_init(void *p)
{
	struct report_opts *o = p;

	o->format = -1;
	o->top = 20;
	o->chains = 5;
}

/* The format a name asks for, or -1. */
static int format_of_name(const char *path)
{
	size_t len = strlen(path), i, k;

	for (i = 0; writers[i].name; i++)
		for (k = 0; k < 3 && writers[i].suffixes[k]; k++) {
			size_t n = strlen(writers[i].suffixes[k]);

			if (len > n && strcmp(path + len - n, writers[i].suffixes[k]) == 0)
				return (int)i;
		}
	return -1;
}

/* The format: -f, else the output's name, else text; a name that asks
 * for another format than -f is refused (an SVG name holding text is
 * a trap). Binary output to a terminal is refused, as gzip does. */
static int choose_format(const struct report_opts *o, int *format)
{
	int named = o->output && strcmp(o->output, "-") != 0 ? format_of_name(o->output) : -1;

	*format = o->format >= 0 ? o->format : named >= 0 ? named : 0;
	if (o->format >= 0 && named >= 0 && named != o->format &&
	    !(named == 5 && o->format == 4))   /* .json fits speedscope too */
		return gp_error(GP_EXIT_USAGE, "report: -o %s names %s output, but -f %s was asked "
				"(drop -f, or give a name that fits)", o->output, writers[named].name,
				writers[o->format].name);
	if (writers[*format].binary && !o->force && (!o->output || strcmp(o->output, "-") == 0) &&
	    isatty(STDOUT_FILENO))
		return gp_error(GP_EXIT_USAGE, "report: %s output is binary: not written to a "
				"terminal (give -o FILE, redirect it, or --force)",
				writers[*format].name);
	return 0;
}

/* The options that only some formats have. */
static int check_views(const struct report_opts *o, int format, struct gp_report_opts *ro)
{
	char *end;

	if (o->children && o->no_children)
		return gp_error(GP_EXIT_USAGE, "report: --children and --no-children contradict");
	ro->sort = o->children ? GP_SORT_TOTAL : o->no_children ? GP_SORT_SELF : o->sort;
	if (o->percent_limit) {
		ro->percent_limit = strtod(o->percent_limit, &end);
		if (end == o->percent_limit || *end || !(ro->percent_limit >= 0) ||
		    ro->percent_limit > 100)
			return gp_error(GP_EXIT_USAGE, "report: --percent-limit: '%s' is not a "
					"percentage from 0 to 100", o->percent_limit);
	}
	if (o->graph == GP_GRAPH_CALLEE && !writers[format].graph)
		return gp_error(GP_EXIT_USAGE, "report: -g callee: %s output keeps stacks root first "
				"(its viewer inverts them: pprof -peek, speedscope's sandwich, the Firefox "
				"Profiler's 'Invert call stack')", writers[format].name);
	if (o->peek) {
		regex_t re;
		char msg[256];
		int ret;

		if (format != 0)
			return gp_error(GP_EXIT_USAGE, "report: --peek is a view of the text report "
					"(pprof has its own -peek)");
		ret = regcomp(&re, o->peek, REG_EXTENDED | REG_NOSUB);
		if (ret) {
			regerror(ret, &re, msg, sizeof(msg));
			return gp_error(GP_EXIT_USAGE, "report: --peek: '%s' is not a regular "
					"expression: %s", o->peek, msg);
		}
		regfree(&re);
	}
	ro->graph = (enum gp_graph)o->graph;
	ro->peek = o->peek;
	return 0;
}

/* The profile to read and the sysroot: a bundle from gcsprof archive is
 * a folder with its profile and its files; any other folder is no profile. */
static int locate_input(const char *path, const char **sysroot, char **abs_sysroot,
			char **bundle_profile, char **bundle_root)
{
	struct stat st;

	if (*sysroot) {
		int ret = gp_sysroot_resolve("report", *sysroot, abs_sysroot);

		if (ret)
			return ret;
		*sysroot = *abs_sysroot;
	}
	if (strcmp(path, "-") == 0 || stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
		return 0;
	if (asprintf(bundle_profile, "%s/profile", path) < 0 ||
	    asprintf(bundle_root, "%s/root", path) < 0)
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	if (access(*bundle_profile, F_OK) != 0)
		return gp_error(GP_EXIT_INPUT, "report: %s is a folder, not a profile (nor a bundle "
				"from gcsprof archive, which would hold %s)", path, *bundle_profile);
	/* A bundle of the profile alone has no root: its files are missing. */
	if (!*sysroot) {
		*abs_sysroot = realpath(*bundle_root, NULL);
		*sysroot = *abs_sysroot ? *abs_sysroot : *bundle_root;
	}
	return 0;
}

/* Build, slice and write: what follows a read profile. */
static int report_model(const struct report_opts *o, const struct gp_rprofile *raw,
			const char *sysroot, const struct gp_filter *filter, int format,
			const struct gp_report_opts *ro)
{
	struct gp_model model;
	struct gp_out out;
	int ret, wret;

	ret = gp_model_build(&model, raw, sysroot);
	if (ret)
		return ret;
	ret = gp_out_open(&out, o->output);
	if (!ret) {
		gp_model_check_files(&model, sysroot);
		ret = gp_model_filter(&model, filter, format != 0);
	}
	if (!ret)
		ret = writers[format].write(&model, &out, ro);
	wret = gp_out_close(&out);
	if (!ret)
		ret = wret;
	gp_model_free(&model);
	return ret;
}

static int report_run(void *p, int argc, char **argv)
{
	const struct report_opts *o = p;
	const char *path = argc > 0 ? argv[0] : "gcsprof.data", *sysroot = o->sysroot;
	char *bundle_profile = NULL, *bundle_root = NULL, *abs_sysroot = NULL;
	struct gp_report_opts ro = { o->per_thread, o->top, GP_SORT_SELF, o->chains, 0,
				     GP_GRAPH_NONE, NULL };
	struct gp_filter_spec spec = { o->pids, o->tids, o->comms, o->time, o->focus, o->ignore,
				       o->group == 1, 0 };
	struct gp_filter *filter = NULL;
	struct gp_rprofile raw;
	int ret, format, truncated = 0;

	ret = choose_format(o, &format);
	if (!ret)
		ret = check_views(o, format, &ro);
	spec.percent_limit = ro.percent_limit;
	if (!ret)
		ret = gp_filter_new(&filter, &spec);
	if (!ret)
		ret = locate_input(path, &sysroot, &abs_sysroot, &bundle_profile, &bundle_root);
	if (ret)
		goto done;
	/* A truncated profile is reported as far as it goes (the reader said
	 * so), and the status still tells that it was cut short. */
	ret = gp_profile_read(&raw, bundle_profile ? bundle_profile : path);
	if (ret == GP_EXIT_TRUNCATED) {
		truncated = 1;
		ret = 0;
	}
	if (ret)
		goto done;
	ret = report_model(o, &raw, sysroot, filter, format, &ro);
	gp_profile_free(&raw);
	if (!ret && truncated)
		ret = GP_EXIT_TRUNCATED;
done:
	gp_filter_free(filter);
	free(abs_sysroot);
	free(bundle_profile);
	free(bundle_root);
	return ret;
}

const struct gp_command gp_cmd_report = {
	.name = "report",
	.synopsis = "[FILE|BUNDLE|-]",
	.summary = "symbolise a profile and write top functions and chains, folded stacks, pprof, "
		   "SVG, speedscope or Firefox Profiler JSON",
	.options = report_options,
	.noptions = sizeof(report_options) / sizeof(report_options[0]),
	.min_args = 0,
	.max_args = 1,
	.run = report_run,
	.opts_size = sizeof(struct report_opts),
	.init = report_init,
};
