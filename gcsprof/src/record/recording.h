/* SPDX-License-Identifier: MIT */
/*
 * gcsprof record: one recording, what both methods share, and the table
 * of calls each method answers (struct rec_method).
 *
 * command.c (the subcommand: options, choice of method, exit status)
 * calls a method through the table; a method's files (perf_*.c,
 * ptrace_*.c) keep their state private, in rec->priv and in the structs
 * that extend the target's threads and processes; both use the shared
 * files below them: target (processes and threads), maps (a process's
 * code map), profile_out (every write into the profile), vdso, signals,
 * child (the launched command), status_line, clock. Nothing below calls
 * up, and no method calls into the other (the test gcsprof.layering).
 */
#ifndef GCSPROF_RECORD_RECORDING_H
#define GCSPROF_RECORD_RECORDING_H

#include <stdint.h>
#include <sys/types.h>

#include "child.h"
#include "profile_out.h"
#include "signals.h"
#include "status_line.h"
#include "target.h"
#include "vdso.h"

/* The option values (command.c's table). */
enum rec_fallback { REC_FALLBACK_NONE, REC_FALLBACK_FP, REC_FALLBACK_CFI };
enum rec_method_ask { REC_ASK_AUTO, REC_ASK_PERF, REC_ASK_PTRACE };

struct record_opts {
	unsigned hz;
	const char *output;
	int wall;
	const char *pid;
	int fallback;             /* enum rec_fallback */
	const char *gcs_tunable;  /* value for glibc.cpu.aarch64_gcs */
	int method;               /* enum rec_method_ask */
	unsigned mmap_pages;      /* perf: ring pages per CPU, 0: the default */
	int defer;                /* perf: hold the records, write them at the end */
	int quiet;
};

/* The name of a --fallback value (as the option spells it), NULL for none. */
static inline const char *rec_fallback_name(int fallback)
{
	static const char *const names[] = { NULL, "fp", "cfi" };

	return names[fallback];
}

struct recording {
	const struct record_opts *o;
	pid_t pid;                 /* -p: the process; 0 with a command */
	char **argv;               /* the command, NULL with -p */
	unsigned hz;               /* sampling frequency in effect */
	const char *event;         /* perf: the event sampled on */
	uint64_t start_ns;         /* rec_now_ns() when sampling began */
	int started;               /* sampling began: what fails now still ends the file */
	struct rec_out out;
	struct rec_target target;
	struct rec_vdso vdso;
	struct rec_signals sigs;
	struct rec_child child;
	struct rec_status status;
	void *priv;                /* the method's own state */
};

/*
 * A way of taking the samples. Called in this order: usable (for the
 * method asked for, or each in turn for auto), rate if not NULL, run,
 * release (always, once run was called).
 */
struct rec_method {
	const char *name;          /* for --method and the profile's header */
	const char *cost;          /* what sampling costs the target, for auto's warning */
	/* Can it record O here? 0, with *EVENT the event it samples on (or
	 * NULL); else the exit status for asking for it, *WHY (a static
	 * string) saying why not, and *QUIET set when the reason is a
	 * documented choice of options (auto then takes the next method
	 * without a warning). */
	int (*usable)(const struct record_opts *o, const char **event, const char **why, int *quiet);
	/* The sampling frequency it will use for -F HZ (saying why when it
	 * is not HZ). May be NULL: HZ. */
	unsigned (*rate)(unsigned hz);
	/* Start the command or attach to the process, sample until a stop
	 * signal, the end of the target or a write failure, and leave the
	 * target as it found it. 0, or an exit status (one line said); sets
	 * REC->started once the target is being sampled. */
	int (*run)(struct recording *rec);
	/* Free REC->priv and what the method added to REC->target. */
	void (*release)(struct recording *rec);
};

extern const struct rec_method rec_method_perf, rec_method_ptrace;

/*
 * The stop conditions both methods share: a write failed, a stop signal
 * came, or the target is done (the command exited; with -p, ALIVE, the
 * method's own view of the process, is 0).
 */
static inline int rec_should_stop(const struct recording *rec, int alive)
{
	if (rec->out.failed || rec->sigs.stop_sig)
		return 1;
	return rec->child.pid ? rec->child.done : !alive;
}

#endif
