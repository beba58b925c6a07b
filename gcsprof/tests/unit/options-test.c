// SPDX-License-Identifier: MIT
/*
 * Unit tests of gcsprof's option parser (options.c): every option type,
 * the spellings of a value (--name=v, --name v, -xv, -x v), choices by
 * name and by index, ranges, "--", operands moved to the front and the
 * list ended with NULL (a launched command is exec'd from it), and the
 * usage errors. TAP.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "../../../tests/tap.h"
#include "gcsprof.h"

struct opts {
	int flag;
	const char *str;
	unsigned num;
	int choice;
	const char *picky;
};

static const struct {
	const char *name;
	int value;
} kinds[] = { { "alpha", 1 }, { "beta", 2 }, { "gamma", 3 }, { NULL, 0 } };
static const char *const colours[] = { "red", "green", NULL };

#define OPT(f) offsetof(struct opts, f)
static const struct gp_option options[] = {
	{ "flag", 'f', GP_OPT_FLAG, OPT(flag), NULL, "a flag", 0, 0, NULL, 0 },
	{ "str", 's', GP_OPT_STRING, OPT(str), "S", "a string", 0, 0, NULL, 0 },
	{ "num", 'n', GP_OPT_UINT, OPT(num), "N", "a number", 2, 50, NULL, 0 },
	{ "kind", 'k', GP_OPT_CHOICE, OPT(choice), NULL, "a choice", 0, 0, kinds, sizeof(kinds[0]) },
	{ "colour", 0, GP_OPT_STRING, OPT(picky), NULL, "a checked string", 0, 0,
	  GP_NAMES(colours) },
};
#undef OPT

static struct gp_command cmd = {
	.name = "test",
	.synopsis = "[OPTIONS] ARGS",
	.summary = "a command for the tests",
	.options = options,
	.noptions = sizeof(options) / sizeof(options[0]),
	.min_args = 0,
	.max_args = -1,
};

/* Parse the words of LINE (space separated; at most 31) as argv. */
static int parse(const char *line, struct opts *o, int *nargs, char **argv, char *buf,
		 size_t bufsize)
{
	int argc = 0;
	char *p;

	memset(o, 0, sizeof(*o));
	snprintf(buf, bufsize, "test %s", line);
	for (p = strtok(buf, " "); p && argc < 31; p = strtok(NULL, " "))
		argv[argc++] = p;
	argv[argc] = NULL;
	return gp_parse_options(&cmd, o, argc, argv, nargs);
}

int main(void)
{
	char buf[512], *argv[32];
	struct opts o;
	int n = -1, ret;

	ret = parse("-f --str hello -n 7 --kind=beta a b", &o, &n, argv, buf, sizeof(buf));
	tap_result(ret == 0 && o.flag == 1 && o.str && strcmp(o.str, "hello") == 0 && o.num == 7 &&
		   o.choice == 1, "each type, long and short, --name=value");
	tap_result(n == 2 && strcmp(argv[1], "a") == 0 && strcmp(argv[2], "b") == 0,
		   "operands moved to the front");
	tap_result(argv[3] == NULL, "and the list ends after them");

	ret = parse("-shi -n9 -k gamma", &o, &n, argv, buf, sizeof(buf));
	tap_result(ret == 0 && strcmp(o.str, "hi") == 0 && o.num == 9 && o.choice == 2,
		   "-xVALUE and -x VALUE");
	tap_result(kinds[o.choice].value == 3, "a choice is an index into its table");

	ret = parse("a --flag b -- --str c", &o, &n, argv, buf, sizeof(buf));
	tap_result(ret == 0 && o.flag && !o.str && n == 4 && strcmp(argv[3], "--str") == 0 &&
		   argv[5] == NULL, "options and operands mix; after -- all are operands");

	cmd.stop_at_operand = 1;
	ret = parse("-f cmd --str x", &o, &n, argv, buf, sizeof(buf));
	tap_result(ret == 0 && !o.str && n == 3 && strcmp(argv[1], "cmd") == 0 &&
		   strcmp(argv[2], "--str") == 0 && argv[4] == NULL,
		   "stop at the first operand: the rest is a command line, NULL-ended");
	cmd.stop_at_operand = 0;

	tap_result(parse("--colour green", &o, &n, argv, buf, sizeof(buf)) == 0 && o.picky &&
		   strcmp(o.picky, "green") == 0, "a checked string keeps its text");
	tap_result(parse("--colour blue", &o, &n, argv, buf, sizeof(buf)) == GP_EXIT_USAGE,
		   "a string not among its choices");
	tap_result(parse("--kind delta", &o, &n, argv, buf, sizeof(buf)) == GP_EXIT_USAGE,
		   "a choice not in the table");
	tap_result(parse("-n 1", &o, &n, argv, buf, sizeof(buf)) == GP_EXIT_USAGE &&
		   parse("-n 51", &o, &n, argv, buf, sizeof(buf)) == GP_EXIT_USAGE &&
		   parse("-n 5x", &o, &n, argv, buf, sizeof(buf)) == GP_EXIT_USAGE &&
		   parse("-n -3", &o, &n, argv, buf, sizeof(buf)) == GP_EXIT_USAGE &&
		   parse("-n 99999999999999999999", &o, &n, argv, buf, sizeof(buf)) == GP_EXIT_USAGE,
		   "numbers out of range or malformed");
	tap_result(parse("--frob", &o, &n, argv, buf, sizeof(buf)) == GP_EXIT_USAGE &&
		   parse("-z", &o, &n, argv, buf, sizeof(buf)) == GP_EXIT_USAGE,
		   "unknown options");
	tap_result(parse("--str", &o, &n, argv, buf, sizeof(buf)) == GP_EXIT_USAGE,
		   "a value missing at the end");
	tap_result(parse("--flag=1", &o, &n, argv, buf, sizeof(buf)) == GP_EXIT_USAGE,
		   "a flag given a value");
	cmd.max_args = 1;
	tap_result(parse("a b", &o, &n, argv, buf, sizeof(buf)) == GP_EXIT_USAGE,
		   "too many operands");
	cmd.max_args = -1;
	cmd.min_args = 1;
	tap_result(parse("-f", &o, &n, argv, buf, sizeof(buf)) == GP_EXIT_USAGE,
		   "too few operands");
	cmd.min_args = 0;
	tap_result(parse("--help", &o, &n, argv, buf, sizeof(buf)) == -1, "--help");
	tap_result(strcmp(gp_choice_name(&options[3], 2), "gamma") == 0 &&
		   gp_choice_name(&options[3], 3) == NULL, "gp_choice_name walks the table");
	tap_finish();
}
