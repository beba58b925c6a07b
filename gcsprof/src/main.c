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
	fprintf(out, "\n'gcsprof COMMAND --help' describes a command; see also gcsprof(1).\n");
}

int main(int argc, char **argv)
{
	const struct gp_command *cmd = NULL;
	void *opts;
	size_t i;
	int first, ret;

	if (argc < 2)
		return usage(stderr), GP_EXIT_USAGE;
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return fflush(stdout) == 0 ? 0 : GP_EXIT_OUTPUT;
	}
	if (strcmp(argv[1], "--version") == 0) {
		/* One version for the project: CMake's, through libgcswalk's
		 * header; the library's own at run time, which may be newer. */
		printf("gcsprof %s (libgcswalk %s, profile format %d)\n", GCSWALK_VERSION_STRING,
		       gcswalk_version(), GP_PROFILE_VERSION);
		return fflush(stdout) == 0 ? 0 : GP_EXIT_OUTPUT;
	}
	for (i = 0; i < NCOMMANDS; i++)
		if (strcmp(argv[1], commands[i]->name) == 0)
			cmd = commands[i];
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
