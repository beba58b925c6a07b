// SPDX-License-Identifier: MIT
/* gcsprof: the table of subcommands and the dispatcher. */
#include <stdlib.h>
#include <string.h>

#include <gcswalk.h>

#include "gcsprof.h"
#include "profile.h"

static const struct gp_command *const commands[] = {
	&gp_cmd_record,
	&gp_cmd_report,
	&gp_cmd_inspect,
	&gp_cmd_status,
	&gp_cmd_archive,
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *out)
{
	size_t i;

	fprintf(out, "usage: gcsprof COMMAND [OPTIONS] [ARGS]\n\n"
		     "Profile and inspect arm64 programs through the Guarded Control Stack.\n\n");
	for (i = 0; i < NCOMMANDS; i++)
		fprintf(out, "  %-8s %s\n", commands[i]->name, commands[i]->summary);
	fprintf(out, "\n'gcsprof help COMMAND' (or 'gcsprof COMMAND --help') describes a command;\n"
		     "'gcsprof -V' prints the version; see also gcsprof(1).\n");
}

static int version(void)
{
	/* One version for the project: CMake's, through libgcswalk's header;
	 * the library's own at run time, which may be newer. */
	printf("gcsprof %s (libgcswalk %s, profile format %d)\n", GCSWALK_VERSION_STRING,
	       gcswalk_version(), GP_PROFILE_VERSION);
	return fflush(stdout) == 0 ? 0 : GP_EXIT_OUTPUT;
}

static const struct gp_command *find(const char *name)
{
	size_t i;

	for (i = 0; i < NCOMMANDS; i++)
		if (strcmp(name, commands[i]->name) == 0)
			return commands[i];
	return NULL;
}

/*
 * gcsprof help [COMMAND]: the overview, or a command's --help. "help
 * --roff" prints the man page's generated part, its SYNOPSIS lines and
 * OPTIONS section, from the same tables as --help (docs/gcsprof.1 holds
 * it; the gcsprof.help test checks that it is current).
 */
static int help(int argc, char **argv)
{
	const struct gp_command *cmd;
	size_t i;

	if (argc < 3) {
		usage(stdout);
	} else if (strcmp(argv[2], "--roff") == 0) {
		printf(".\\\" generated: gcsprof help --roff\n.SH SYNOPSIS\n");
		for (i = 0; i < NCOMMANDS; i++)
			gp_roff_synopsis(commands[i], stdout);
		printf(".SH OPTIONS\n");
		for (i = 0; i < NCOMMANDS; i++)
			gp_roff_options(commands[i], stdout);
		printf(".\\\" end of the generated part\n");
	} else if ((cmd = find(argv[2])) != NULL) {
		gp_usage(cmd, stdout);
	} else {
		return gp_error(GP_EXIT_USAGE, "help: unknown command '%s' (try 'gcsprof help')",
				argv[2]);
	}
	return fflush(stdout) == 0 ? 0 : GP_EXIT_OUTPUT;
}

int main(int argc, char **argv)
{
	const struct gp_command *cmd;
	void *opts;
	int first, ret;

	if (argc < 2)
		return usage(stderr), GP_EXIT_USAGE;
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0)
		return help(argc, argv);
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0)
		return version();
	cmd = find(argv[1]);
	if (!cmd)
		return gp_error(GP_EXIT_USAGE, "unknown command '%s' (try 'gcsprof --help')", argv[1]);
	opts = calloc(1, cmd->opts_size);
	if (!opts)
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	if (cmd->init)
		cmd->init(opts);
	ret = gp_parse_options(cmd, opts, argc - 1, argv + 1, &first);
	if (ret == -1)
		ret = fflush(stdout) == 0 ? 0 : GP_EXIT_OUTPUT;
	else if (ret == 0)
		ret = cmd->run(opts, first, argv + 2);
	free(opts);
	return ret;
}
