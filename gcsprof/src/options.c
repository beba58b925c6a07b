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

/* Option O's argument as usage shows it: " HZ", " a|b|c", or "". */
static void arg_text(const struct gp_option *o, char *arg, size_t size)
{
	size_t k, len = 0;

	arg[0] = '\0';
	if (o->arg_name)
		snprintf(arg, size, " %s", o->arg_name);
	else if (o->choices)
		for (k = 0; gp_choice_name(o, k) && len < size; k++)
			len += (size_t)snprintf(arg + len, size - len, "%c%s", k ? '|' : ' ',
						gp_choice_name(o, k));
}

/* Option O as written on a command line: "-F HZ" or "--wall". */
static void option_text(const struct gp_option *o, char *buf, size_t size)
{
	char arg[160];

	arg_text(o, arg, sizeof(arg));
	if (o->short_name)
		snprintf(buf, size, "-%c%s", o->short_name, arg);
	else
		snprintf(buf, size, "--%s%s", o->long_name, arg);
}

/* The synopsis, from the table: every option, then the operands,
 * wrapped at WIDTH under LEAD. */
static void synopsis(const struct gp_command *cmd, FILE *out, const char *lead, size_t width)
{
	size_t i, indent = strlen(lead), col = indent;

	fputs(lead, out);
	for (i = 0; i <= cmd->noptions; i++) {
		char buf[200];

		if (i < cmd->noptions) {
			buf[0] = '[';
			option_text(&cmd->options[i], buf + 1, sizeof(buf) - 2);
			strcat(buf, "]");
		} else
			snprintf(buf, sizeof(buf), "%s", cmd->synopsis);
		if (!*buf)
			continue;
		if (col + 1 + strlen(buf) > width && col > indent) {
			fprintf(out, "\n%*s", (int)indent, "");
			col = indent;
		}
		fprintf(out, " %s", buf);
		col += 1 + strlen(buf);
	}
	fputc('\n', out);
}

/* TEXT in words, lines up to WIDTH, each after the first indented by
 * INDENT (the cursor is at INDENT already). */
static void wrapped(FILE *out, const char *text, size_t indent, size_t width)
{
	size_t col = indent;

	while (*text) {
		size_t len = strcspn(text, " ");

		if (col > indent && col + 1 + len > width) {
			fprintf(out, "\n%*s", (int)indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', out);
			col++;
		}
		fwrite(text, 1, len, out);
		col += len;
		text += len;
		text += strspn(text, " ");
	}
	fputc('\n', out);
}

void gp_usage(const struct gp_command *cmd, FILE *out)
{
	char lead[64];
	size_t i;

	snprintf(lead, sizeof(lead), "usage: gcsprof %s", cmd->name);
	synopsis(cmd, out, lead, 100);
	fputc('\n', out);
	wrapped(out, cmd->summary, 0, 100);
	fputc('\n', out);
	for (i = 0; i < cmd->noptions; i++) {
		const struct gp_option *o = &cmd->options[i];
		char arg[160], left[200];

		arg_text(o, arg, sizeof(arg));
		if (o->short_name)
			snprintf(left, sizeof(left), "-%c, --%s%s", o->short_name, o->long_name, arg);
		else
			snprintf(left, sizeof(left), "    --%s%s", o->long_name, arg);
		if (strlen(left) > 26)
			fprintf(out, "  %s\n  %-26s ", left, "");
		else
			fprintf(out, "  %-26s ", left);
		wrapped(out, o->help, 29, 100);
	}
	fprintf(out, "  %-26s %s\n", "-h, --help", "this text");
}

/* S for roff: '-' as \-, a backslash doubled, a leading '.' or '\'' kept
 * from being a request. */
static void roff(FILE *out, const char *s)
{
	if (*s == '.' || *s == '\'')
		fputs("\\&", out);
	for (; *s; s++) {
		if (*s == '-')
			fputs("\\-", out);
		else if (*s == '\\')
			fputs("\\e", out);
		else
			fputc(*s, out);
	}
}

void gp_roff_synopsis(const struct gp_command *cmd, FILE *out)
{
	size_t i;

	fprintf(out, ".B gcsprof %s\n", cmd->name);
	for (i = 0; i < cmd->noptions; i++) {
		char buf[200];

		option_text(&cmd->options[i], buf, sizeof(buf));
		fputc('[', out);
		roff(out, buf);
		fputs("]\n", out);
	}
	if (*cmd->synopsis) {
		roff(out, cmd->synopsis);
		fputc('\n', out);
	}
	fputs(".br\n", out);
}

void gp_roff_options(const struct gp_command *cmd, FILE *out)
{
	size_t i;

	fprintf(out, ".SS %s\n", cmd->name);
	for (i = 0; i < cmd->noptions; i++) {
		const struct gp_option *o = &cmd->options[i];
		char arg[160];

		arg_text(o, arg, sizeof(arg));
		fputs(".TP\n.B ", out);
		if (o->short_name)
			fprintf(out, "\\-%c, ", o->short_name);
		fputs("\\-\\-", out);
		roff(out, o->long_name);
		if (*arg) {
			fputs(" \\fI", out);
			roff(out, arg + 1);
			fputs("\\fR", out);
		}
		fputc('\n', out);
		roff(out, o->help);
		fputc('\n', out);
	}
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
		return gp_error(GP_EXIT_USAGE, "%s: wrong number of arguments (usage: gcsprof %s "
				"[OPTIONS] %s; see gcsprof %s --help)",
				cmd->name, cmd->name, cmd->synopsis, cmd->name);
	*first = n;
	return 0;
}
