// SPDX-License-Identifier: MIT
/*
 * The option parser: each subcommand declares its options as a table
 * (struct gp_option) of names, types and offsets into its own options
 * struct; this file turns the table into parsing and usage text.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gcsprof.h"

void gp_usage(const struct gp_command *cmd, FILE *out)
{
	size_t i;

	fprintf(out, "usage: gcsprof %s %s\n\n%s\n\n", cmd->name, cmd->synopsis, cmd->summary);
	for (i = 0; i < cmd->noptions; i++) {
		const struct gp_option *o = &cmd->options[i];
		char arg[64] = "", left[96];
		size_t k, len = 0;

		/* The argument's name, or its choices as a|b|c. */
		if (o->arg_name)
			snprintf(arg, sizeof(arg), " %s", o->arg_name);
		else if (o->choices)
			for (k = 0; gp_choice_name(o, k) && len < sizeof(arg); k++)
				len += (size_t)snprintf(arg + len, sizeof(arg) - len, "%c%s",
							k ? '|' : ' ', gp_choice_name(o, k));
		if (o->short_name)
			snprintf(left, sizeof(left), "-%c, --%s%s", o->short_name, o->long_name, arg);
		else
			snprintf(left, sizeof(left), "    --%s%s", o->long_name, arg);
		fprintf(out, "  %-26s %s\n", left, o->help);
	}
	fprintf(out, "  %-26s %s\n", "-h, --help", "this text");
}

const char *gp_choice_name(const struct gp_option *o, size_t i)
{
	const char *const *name = (const void *)((const char *)o->choices + i * o->choice_size);

	return *name;
}

static int set_value(const struct gp_command *cmd, const struct gp_option *o, void *opts,
		     const char *arg)
{
	char *base = opts;

	switch (o->type) {
	case GP_OPT_FLAG:
		*(int *)(base + o->offset) = 1;
		return 0;
	case GP_OPT_STRING:
	case GP_OPT_CHOICE:
		if (o->choices) {
			size_t k;

			for (k = 0; gp_choice_name(o, k); k++)
				if (strcmp(gp_choice_name(o, k), arg) == 0)
					break;
			if (!gp_choice_name(o, k))
				return gp_error(GP_EXIT_USAGE, "%s: --%s: unknown value '%s'",
						cmd->name, o->long_name, arg);
			if (o->type == GP_OPT_CHOICE) {
				*(int *)(base + o->offset) = (int)k;
				return 0;
			}
		}
		*(const char **)(base + o->offset) = arg;
		return 0;
	case GP_OPT_UINT: {
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(arg, &end, 10);
		if (errno || end == arg || *end || arg[0] == '-' || v < o->min || v > o->max)
			return gp_error(GP_EXIT_USAGE, "%s: --%s: '%s' is not a number from %u to %u",
					cmd->name, o->long_name, arg, o->min, o->max);
		*(unsigned *)(base + o->offset) = (unsigned)v;
		return 0;
	}
	}
	return GP_EXIT_USAGE;
}

int gp_parse_options(const struct gp_command *cmd, void *opts, int argc, char **argv, int *first)
{
	char **operands;
	int i, n = 0;

	operands = calloc((size_t)argc + 1, sizeof(*operands));
	if (!operands)
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *val = NULL;
		const struct gp_option *o = NULL;
		size_t k;

		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (a[0] != '-' || a[1] == '\0') {
			if (cmd->stop_at_operand)
				break;
			operands[n++] = argv[i];   /* options and operands may mix */
			continue;
		}
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			free(operands);
			gp_usage(cmd, stdout);
			return -1;
		}
		if (a[1] == '-') {
			const char *name = a + 2, *eq = strchr(name, '=');
			size_t len = eq ? (size_t)(eq - name) : strlen(name);

			for (k = 0; k < cmd->noptions; k++)
				if (strlen(cmd->options[k].long_name) == len &&
				    strncmp(cmd->options[k].long_name, name, len) == 0)
					o = &cmd->options[k];
			if (o && eq)
				val = eq + 1;
		} else {
			for (k = 0; k < cmd->noptions; k++)
				if (cmd->options[k].short_name == a[1])
					o = &cmd->options[k];
			if (o && a[2])
				val = a + 2;
		}
		if (!o) {
			free(operands);
			return gp_error(GP_EXIT_USAGE, "%s: unknown option '%s' (try 'gcsprof %s --help')",
					cmd->name, a, cmd->name);
		}
		if (o->type == GP_OPT_FLAG && val) {
			free(operands);
			return gp_error(GP_EXIT_USAGE, "%s: --%s takes no value", cmd->name,
					o->long_name);
		}
		if (o->type != GP_OPT_FLAG && !val) {
			if (i + 1 >= argc) {
				free(operands);
				return gp_error(GP_EXIT_USAGE, "%s: %s needs a value", cmd->name, a);
			}
			val = argv[++i];
		}
		if (set_value(cmd, o, opts, val) != 0) {
			free(operands);
			return GP_EXIT_USAGE;
		}
	}
	for (; i < argc; i++)
		operands[n++] = argv[i];
	memcpy(&argv[1], operands, (size_t)n * sizeof(*argv));
	/* The operands may be a command for execvp(): end the list. */
	argv[n + 1] = NULL;
	free(operands);
	if (n < cmd->min_args || (cmd->max_args >= 0 && n > cmd->max_args))
		return gp_error(GP_EXIT_USAGE, "%s: wrong number of arguments (usage: gcsprof %s %s)",
				cmd->name, cmd->name, cmd->synopsis);
	*first = n;
	return 0;
}
