/* SPDX-License-Identifier: MIT */
/*
 * The profile file (docs/profile-format.md): what `record` writes and
 * `report` reads. Raw, unsymbolised: each sample is a chain of addresses
 * with their kinds, and the mappings it needs to be symbolised later,
 * elsewhere. A line-oriented text format, versioned, ending with a
 * trailer that makes truncation detectable; version 2 stores each
 * distinct chain once (stack_table.h) and is written gzip-compressed.
 * Writers here (profile.c), the reader of both versions in
 * profile_read.c.
 */
#ifndef GCSPROF_PROFILE_H
#define GCSPROF_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "stack_table.h"

#define GP_PROFILE_MAGIC "gcsprof-profile"
/* The version written; version 1 (the chains as text in each sample)
 * is still read. */
#define GP_PROFILE_VERSION 2

struct gp_rsample {
	uint64_t time_ns;          /* since the recording started */
	int pid, tid;
	char state;                /* /proc state letter: R, S, D, T, ... */
	unsigned asid;             /* address space: which mappings apply */
	char *thread;              /* thread name */
	uint32_t stack;            /* its chain: a node of gp_rprofile.stacks (0: none) */
	size_t nframes;            /* the chain's depth */
	int cpu;                   /* the CPU it ran on; -1: not recorded */
	uint64_t weight;           /* perf: the event's count it stands for; 0: not recorded */
	int fallback;              /* chain from a fallback unwinder */
	int cut;                   /* the chain reached the depth limit (max-stack) */
};

struct gp_rmapping {
	unsigned asid;
	int pid;
	uint64_t start, end, offset;
	char *path;
	unsigned char *build_id;   /* NULL if unknown */
	size_t build_id_size;
};

struct gp_count {
	char *reason;
	uint64_t count;
};

/* A function of the vDSO, at OFFSET from its start ("[vdso]" mappings). */
struct gp_rsymbol {
	uint64_t offset, size;
	char *name;
};

/* The path of a vDSO mapping: no file, its symbols are in the profile. */
#define GP_VDSO_PATH "[vdso]"

struct gp_rprofile {
	unsigned version;
	unsigned hz;
	char *mode;                /* "cpu" or "wall" */
	char *command;
	char *method;              /* "perf" or "ptrace"; NULL in older files */
	char *event;               /* perf: the event sampled on; else NULL */
	/* perf: the depth limit of a chain (0: none recorded), and what set
	 * it ("sysctl": kernel.perf_event_max_stack; "record-size": the most
	 * a perf sample record holds). */
	unsigned max_stack;
	char *max_stack_by;
	/* perf: the kernel's throttling of sampling (its "throttle" record;
	 * has_throttle 0 when the file has none). */
	int has_throttle;
	uint64_t throttles, unthrottles;
	uint64_t duration_ns;
	/* Where and when it was recorded (files before these records have
	 * none: NULL, 0): the wall-clock start as written (ISO 8601, UTC)
	 * and in ms since the epoch, the host name, the kernel release, the
	 * CPUs online. */
	char *date;
	uint64_t start_unix_ms;
	char *host;
	char *kernel;
	unsigned cpus;
	/* The recording machine's architecture ("arm64", "riscv64") and its
	 * shadow stack's name ("GCS", "Zicfiss"); NULL in files before the
	 * arch record, all of them arm64's. */
	char *arch;
	char *shadow_stack;
	struct gp_rsample *samples;
	size_t nsamples, samples_cap;
	struct gp_stack_table stacks; /* every chain, once (version 1's interned as read) */
	struct gp_rmapping *mappings;
	size_t nmappings, mappings_cap;
	struct gp_count *lost;     /* samples lost or skipped, by reason */
	size_t nlost, lost_cap;
	struct gp_rsymbol *vdso_symbols;
	size_t nvdso_symbols, vdso_symbols_cap;
	int truncated;             /* no end record: the file was cut short */
};

/* Read PATH ("-": standard input) into *P. Returns 0, or prints one line and returns an exit
 * status (GP_EXIT_INPUT, GP_EXIT_BAD_PROFILE, ...). GP_EXIT_TRUNCATED is
 * the one error after which *P is valid (and must be freed): it holds the
 * complete records before the cut, and P->truncated is set. */
int gp_profile_read(struct gp_rprofile *p, const char *path);
void gp_profile_free(struct gp_rprofile *p);

/* Writing, line by line as the recording goes (nothing is held back). */
/* METHOD: "perf" or "ptrace"; EVENT: the perf event, or NULL. The header
 * also records when, where and on what kernel: now, this host's name, its
 * kernel release and online CPUs. */
int gp_profile_write_header(FILE *f, unsigned hz, const char *mode, const char *command,
			    const char *method, const char *event);
/* perf: chains are at most MAX_STACK frames, a limit set by BY ("sysctl"
 * or "record-size"). */
int gp_profile_write_max_stack(FILE *f, unsigned max_stack, const char *by);
/* perf: the kernel throttled sampling THROTTLES times, and lifted it
 * UNTHROTTLES times. Before the trailer. */
int gp_profile_write_throttle(FILE *f, uint64_t throttles, uint64_t unthrottles);
int gp_profile_write_mapping(FILE *f, const struct gp_rmapping *m);
/* The stack node FRAME called from node PARENT (0: the outermost frame):
 * the next node's id is the number of nodes written before, plus one. */
int gp_profile_write_stack(FILE *f, uint32_t parent, const struct gp_frame *frame);
/* Sample S, its chain the node S->stack (written before it). */
int gp_profile_write_sample(FILE *f, const struct gp_rsample *s);
int gp_profile_write_trailer(FILE *f, uint64_t duration_ns, const struct gp_count *lost,
			     size_t nlost, uint64_t nsamples, uint64_t nmappings, uint64_t nstacks);

/* Write S to F with spaces, '%' and control characters as %XX. */
int gp_write_escaped(FILE *f, const char *s);

#endif
