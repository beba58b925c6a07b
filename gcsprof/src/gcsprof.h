/* SPDX-License-Identifier: MIT */
/*
 * gcsprof: what every subcommand shares. The exit statuses (one per kind
 * of failure, documented in docs/gcsprof.1), the one-line error reporter,
 * and the declarative option parser.
 */
#ifndef GCSPROF_H
#define GCSPROF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Exit statuses. `record` passes a launched command's own status through
 * instead (128 + N when it was killed by signal N), so these are chosen
 * away from the small numbers most programs use.
 */
enum gp_exit {
	GP_EXIT_OK = 0,
	GP_EXIT_USAGE = 64,          /* bad command line */
	GP_EXIT_NO_PROCESS = 65,     /* no such process */
	GP_EXIT_PERMISSION = 66,     /* not permitted to trace or read the target */
	GP_EXIT_TARGET_NO_GCS = 67,  /* the target runs without GCS */
	GP_EXIT_KERNEL_NO_GCS = 68,  /* the CPU or kernel has no GCS */
	GP_EXIT_BAD_PROFILE = 69,    /* not a gcsprof profile, or a corrupt one */
	GP_EXIT_TRUNCATED = 70,      /* a profile or core that ends early */
	GP_EXIT_BAD_CORE = 71,       /* not a usable core file */
	GP_EXIT_OUTPUT = 72,         /* the output cannot be written */
	GP_EXIT_BUSY = 73,           /* the target is traced by someone else */
	GP_EXIT_UNSUPPORTED = 74,    /* not possible on this host or build */
	GP_EXIT_INPUT = 75,          /* an input file cannot be read */
	GP_EXIT_SYSTEM = 76,         /* another system failure (out of memory, ...) */
	GP_EXIT_EXEC = 127,          /* the command could not be run (as the shell) */
};

/* Print "gcsprof: <message>" as one line on stderr. Returns STATUS. */
int gp_error(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Print "gcsprof: warning: <message>" as one line on stderr. */
void gp_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The exit status for a libgcswalk error. */
int gp_exit_for_gcswalk(int gcswalk_status);
/* --sysroot DIR of command CMD: an existing folder, made absolute in
 * *abs (free it); 0, or the exit status after one line on stderr. */
int gp_sysroot_resolve(const char *cmd, const char *dir, char **abs);

/* ---- Options, declared as data ------------------------------------- */

enum gp_opt_type {
	GP_OPT_FLAG,      /* int: set to 1 */
	GP_OPT_STRING,    /* const char *: the argument */
	GP_OPT_UINT,      /* unsigned: a decimal number in [min, max] */
	GP_OPT_CHOICE,    /* int: the index of the argument in choices */
};

struct gp_option {
	const char *long_name;
	char short_name;          /* 0: none */
	enum gp_opt_type type;
	size_t offset;            /* where in the subcommand's options struct */
	const char *arg_name;     /* for usage: "HZ", "FILE"; NULL for flags */
	const char *help;
	unsigned min, max;        /* GP_OPT_UINT range */
	/*
	 * GP_OPT_STRING (allowed values, or NULL for any) and GP_OPT_CHOICE:
	 * a table of entries choice_size bytes apart, each starting with its
	 * name (const char *), ended by a NULL name. A plain NULL-terminated
	 * array of names is such a table (GP_NAMES); so is a table of
	 * writers whose first member is the name, so that one table serves
	 * the option and the dispatch.
	 */
	const void *choices;
	size_t choice_size;
};

#define GP_NAMES(array) (array), sizeof((array)[0])
/* The name of entry I of option O's choices. */
const char *gp_choice_name(const struct gp_option *o, size_t i);

struct gp_command {
	const char *name;
	/* The operands, after the options in the synopsis ("[FILE]"); the
	 * options' part of it comes from the table. */
	const char *synopsis;
	const char *summary;
	const struct gp_option *options;
	size_t noptions;
	/* Operands: at least min_args, at most max_args (-1: any; the rest
	 * after "--" or the first operand when stop_at_operand). */
	int min_args, max_args;
	int stop_at_operand;
	int (*run)(void *opts, int argc, char **argv);
	size_t opts_size;
	void (*init)(void *opts);
};

/*
 * Parse ARGV (ARGV[0] is the subcommand name) into OPTS following CMD's
 * table. On success the operands are moved to ARGV[1..*NARGS]. Prints one
 * line and returns GP_EXIT_USAGE on a bad command line; returns -1 after
 * printing help for --help.
 */
int gp_parse_options(const struct gp_command *cmd, void *opts, int argc, char **argv,
		     int *nargs);
void gp_usage(const struct gp_command *cmd, FILE *out);
/* The same table as the man page's roff: its SYNOPSIS lines and its
 * OPTIONS subsection (docs/gcsprof.1 holds what these print, and a test
 * checks that it still does). */
void gp_roff_synopsis(const struct gp_command *cmd, FILE *out);
void gp_roff_options(const struct gp_command *cmd, FILE *out);

extern const struct gp_command gp_cmd_record, gp_cmd_report, gp_cmd_inspect, gp_cmd_status,
	gp_cmd_archive;

/* ---- Small helpers ------------------------------------------------- */

/* Output that reports its first write failure: writes go to FP; gp_out_close
 * flushes and closes (unless it is stdout, which is only flushed) and
 * returns GP_EXIT_OUTPUT with one line on stderr if anything failed. */
struct gp_out {
	FILE *fp;
	const char *name;         /* for messages: the path, or "standard output" */
	int is_stdout;
};
int gp_out_open(struct gp_out *out, const char *path);
int gp_out_close(struct gp_out *out);

/* Whether PATH starts as a gcsprof profile does (for the hint that a
 * command other than report was given one). */
int gp_looks_like_profile(const char *path);

/* A growable array of bytes with a length. */
void *gp_grow(void *ptr, size_t *cap, size_t need, size_t elem);

#endif
