/* SPDX-License-Identifier: MIT */
/*
 * The internal profile model every output format is written from. Its
 * shape follows pprof's profile.proto: a Sample is a list of Locations
 * (innermost first) with a value; a Location is an address in a Mapping
 * with one or more Lines (inlined functions first, the real function
 * last); a Line names a Function and a line number. Ids are 1-based
 * indexes into the arrays, as in pprof (0 means none).
 */
#ifndef GCSPROF_MODEL_H
#define GCSPROF_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "gcsprof.h"
#include "model_map.h"
#include "profile.h"

struct gp_mapping {
	uint64_t start, limit, offset;
	const char *file;          /* interned */
	const char *build_id;      /* hex, interned; "" if unknown */
	int has_functions;         /* some location in it was symbolised */
	/* The program of its address space, not a library: its lowest file
	 * mapping (executables load below their libraries on Linux). */
	int is_program;
};

struct gp_function {
	const char *name;          /* interned; "[unknown]" style names for the unknown */
	const char *system_name;   /* the ELF symbol */
	const char *filename;      /* "" if unknown */
	/* The file it is in: a mapping's path (interned), "" if none. The
	 * same name in two files is two functions. */
	const char *object;
	int in_program;            /* object is a program, not a library */
	int unnamed;               /* no symbol: named by file and offset */
};

struct gp_line {
	uint64_t function_id;
	int64_t line;
};

struct gp_location {
	uint64_t mapping_id;       /* 0: none */
	uint64_t address;
	size_t nlines;
	struct gp_line *lines;     /* innermost (inlined) first */
};

struct gp_sample {
	size_t nlocations;
	uint64_t *location_ids;    /* innermost first */
	int64_t count;
	uint64_t time_ns;
	int pid, tid;
	const char *thread;        /* interned */
	char state;
	int fallback;
	int cut;                   /* the chain reached the depth limit: outer frames missing */
};

/* Samples not taken, by reason (the recorder's "lost" records). */
struct gp_lost {
	const char *reason;        /* interned */
	uint64_t count;
};

/*
 * Everything a writer needs, and nothing from the raw file: writers are
 * front-ends of this model only.
 */
struct gp_model {
	/* How the profile was recorded. */
	const char *mode;          /* "cpu" or "wall" */
	const char *command;       /* interned; "?" if unknown */
	const char *method;        /* "perf", "ptrace"; "" in older files */
	const char *event;         /* perf's event; "" otherwise */
	unsigned hz;
	uint64_t duration_ns;
	/* Where and when (older files: "", 0). */
	const char *date;          /* ISO 8601, UTC */
	uint64_t start_unix_ms;
	const char *host;
	const char *kernel;
	unsigned cpus;
	/* The recording machine's architecture and its shadow stack's name
	 * (older files, all arm64's: "arm64", "GCS"). */
	const char *arch;
	const char *shadow_stack;
	struct gp_lost *lost;
	size_t nlost;
	uint64_t nlost_total;      /* sum of the lost counts */
	/* perf: the depth limit of a chain (0: not recorded) and what set
	 * it ("sysctl", "record-size"; "" if unknown), the samples that
	 * reached it and the longest of them. */
	unsigned max_stack;
	const char *max_stack_by;
	uint64_t ncut;
	size_t cut_depth;
	/* perf: times the kernel throttled sampling and lifted it (has_throttle
	 * 0: the file does not say). */
	int has_throttle;
	uint64_t throttles, unthrottles;

	struct gp_mapping *mappings;
	size_t nmappings;
	struct gp_function *functions;
	size_t nfunctions, functions_cap;
	struct gp_location *locations;
	size_t nlocations, locations_cap;
	struct gp_sample *samples;
	size_t nsamples;
	int64_t period_ns;         /* 1e9 / hz */
	uint64_t total;            /* sum of sample counts */
	/* After gp_model_filter: the samples before it, and what it kept, in
	 * words ("" when nothing was filtered). */
	uint64_t total_before_filter;
	const char *filter_note;
	/* Frames with no symbol in a file that has some (a stripped
	 * library's local functions), and one such file, for the hint. */
	uint64_t nstripped;
	const char *stripped_eg;
	/* Every string above, and the writers' own (pprof's value types,
	 * label keys): a writer may add to it through a const model. */
	struct gp_strtab *strings;
	void *index;               /* private: the builder's look-ups */
};

/*
 * Symbolise RAW into M through libgcswalk, with mapped files looked for
 * under SYSROOT (NULL: none). Returns 0, or an exit status after one line
 * on stderr.
 */
int gp_model_build(struct gp_model *m, const struct gp_rprofile *raw, const char *sysroot);
void gp_model_free(struct gp_model *m);

/*
 * Slicing (model_filter.c). The report's options as given, NULL or 0 for
 * those not given: comma lists of pids, tids and thread names, a time
 * range START,END in seconds since the start, regular expressions
 * (extended) that a sample's frames must match (focus) or must not
 * (ignore), frames grouped by the file they are in, and stacks under a
 * share to leave out.
 */
struct gp_filter_spec {
	const char *pids, *tids, *comms, *time, *focus, *ignore;
	int by_object;
	double percent_limit;
};
struct gp_filter;
/* Check and compile SPEC into *F (free it with gp_filter_free, even after
 * an error). Returns 0, or an exit status after one line on stderr. */
int gp_filter_new(struct gp_filter **f, const struct gp_filter_spec *spec);
void gp_filter_free(struct gp_filter *f);
/* Keep only the samples F selects, in M; with DROP_RARE, also leave out
 * those whose whole stack is under the percent limit (the text report
 * applies the limit to its rows instead). Functions and locations no
 * longer used are dropped; M->total_before_filter keeps the count before,
 * M->filter_note says what was kept. Returns 0 or an exit status. */
int gp_model_filter(struct gp_model *m, const struct gp_filter *f, int drop_rare);

/* Warn, one line per cause, about the files samples use that are missing
 * (under SYSROOT, if not NULL) or differ from the recorded ones. */
void gp_model_check_files(const struct gp_model *m, const char *sysroot);

/* Intern a string in the model's table (NULL for out of memory). Writers
 * may: the table grows, the model's facts do not change. */
const char *gp_model_intern(const struct gp_model *m, const char *s);

/* The outermost (real) function of a location's line I, for writers that
 * show one name per frame: names of a location from the innermost
 * (inlined) to the real function. */
static inline const struct gp_function *gp_model_function(const struct gp_model *m,
							  uint64_t function_id)
{
	return &m->functions[function_id - 1];
}

/*
 * The recording's caveats, as sentences, for the writers that have room
 * for prose (the text report's header, pprof's comments, the SVG's foot):
 * samples not taken, the kernel's throttling, chains cut at the depth
 * limit. *NOTES gets a malloc'd array of malloc'd strings (free with
 * gp_model_notes_free); returns the count, or (size_t)-1 for out of memory.
 */
size_t gp_model_notes(const struct gp_model *m, char ***notes);
void gp_model_notes_free(char **notes, size_t n);

/* Writers: each returns 0 or an exit status. */
struct gp_out;
enum gp_sort { GP_SORT_SELF, GP_SORT_TOTAL };
enum gp_graph { GP_GRAPH_NONE, GP_GRAPH_CALLER, GP_GRAPH_CALLEE };
struct gp_report_opts {
	int per_thread;
	unsigned top;              /* functions in the text report */
	enum gp_sort sort;         /* the text report's order */
	unsigned chains;           /* heaviest chains in the text report */
	double percent_limit;      /* text: rows and chains under it left out */
	/* text: each function's callers (callee graph) or callees (caller
	 * graph) as chains; folded and svg: CALLEE puts the leaf at the root
	 * (an inverted flame graph). */
	enum gp_graph graph;
	const char *peek;          /* text: who calls, and what is called by, these */
};
int gp_write_text(const struct gp_model *m, struct gp_out *out, const struct gp_report_opts *o);
int gp_write_folded(const struct gp_model *m, struct gp_out *out, const struct gp_report_opts *o);
int gp_write_pprof(const struct gp_model *m, struct gp_out *out, const struct gp_report_opts *o);
int gp_write_svg(const struct gp_model *m, struct gp_out *out, const struct gp_report_opts *o);
int gp_write_speedscope(const struct gp_model *m, struct gp_out *out, const struct gp_report_opts *o);
int gp_write_firefox(const struct gp_model *m, struct gp_out *out, const struct gp_report_opts *o);

/* The threads of the model, in order of tid: the index of each one's last
 * sample, which has its latest name (threads name themselves after they
 * start). *LAST gets a malloc'd array; returns the count, or (size_t)-1
 * for out of memory. Writers that make one view per thread use it. */
size_t gp_model_threads(const struct gp_model *m, size_t **last);

/* The indexes of the samples in order of time (the file's order where
 * times are equal), for the writers with a timeline: the recorder sorts
 * each batch it drains, but a file promises no order. A malloc'd array,
 * or NULL for out of memory. */
size_t *gp_model_by_time(const struct gp_model *m);

/*
 * The frames of sample S as function ids, root first, one per
 * source-level frame (inlined ones included): *FUNCTION_IDS gets a
 * malloc'd array the caller frees. Returns the count, or (size_t)-1 for
 * out of memory.
 */
size_t gp_sample_frames(const struct gp_model *m, const struct gp_sample *s, uint64_t **function_ids);

/*
 * The frames of sample S as names, root first, one per source-level frame
 * (inlined ones included): *NAMES gets a malloc'd array of interned
 * strings that the caller frees. Returns the count, or (size_t)-1 for out
 * of memory. Thread-prefixed when PER_THREAD.
 */
size_t gp_sample_stack(const struct gp_model *m, const struct gp_sample *s, int per_thread,
		       const char ***names);
/* The same, leaf first (the thread, with PER_THREAD, still first). */
size_t gp_sample_stack_inverted(const struct gp_model *m, const struct gp_sample *s,
				int per_thread, const char ***names);

#endif
