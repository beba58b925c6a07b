/* SPDX-License-Identifier: MIT */
/*
 * gcsprof record: the profile file being written. Every record that goes
 * into it goes through here (the format's serialisers are profile.c's):
 * the header, the vDSO's symbols, the mappings, the samples, the counts
 * of samples lost, perf's records of limits and throttling, the trailer;
 * the file is written through every 100 ms, and the first failed write is
 * said once and ends the recording (GP_EXIT_OUTPUT).
 *
 * Each mapping is written once per address space, the first time a
 * method hands it over: which ones are in the file is one question, asked
 * of the model's one hash map (model.h), whichever method asks it. Each
 * distinct chain is written once too, as the nodes of the stack table
 * (stack_table.h) it adds; a sample names its chain's node. The file is
 * gzip (gzip_file.h).
 */
#ifndef GCSPROF_RECORD_PROFILE_OUT_H
#define GCSPROF_RECORD_PROFILE_OUT_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "model.h"
#include "profile.h"
#include "maps.h"
#include "vdso.h"

/* Why samples were not taken, as the trailer's "lost" records name them. */
enum rec_lost {
	REC_LOST_NO_GCS, REC_LOST_GONE, REC_LOST_TIMEOUT, REC_LOST_WALK, REC_LOST_STOPPED,
	REC_LOST_RING,             /* perf: records the kernel could not write (ring full) */
	REC_LOST_N
};

struct rec_out {
	FILE *f;
	const char *path;
	int failed;                /* a write failed (said once): nothing more is written */
	uint64_t nsamples, nmappings;
	uint64_t lost[REC_LOST_N];
	uint64_t last_flush_ns;
	const struct rec_vdso *vdso; /* written by rec_out_vdso, for "[vdso]" mappings */
	/* The mappings in the file: (asid, offset, path) -> a number K, and
	 * (K, start, end) -> 1, in the one map; paths interned in PATHS. */
	struct gp_map written;
	struct gp_strtab paths;
	uint64_t nkeys;
	/* Every chain written, and which (chain, address space, map
	 * generation) have had their mappings handed over. */
	struct gp_stack_table stacks;
	size_t stacks_written;     /* nodes in the file: stacks.n - 1 when none failed */
	struct gp_map chains_mapped;
};

/* Create PATH for writing. 0, or GP_EXIT_OUTPUT with one line said. */
int rec_out_open(struct rec_out *o, const char *path);
/* Each returns 0, or GP_EXIT_OUTPUT once a write has failed. */
int rec_out_header(struct rec_out *o, unsigned hz, const char *mode, const char *command,
		   const char *method, const char *event);
/* The vDSO's symbols (no file has them); V stays valid until rec_out_close. */
int rec_out_vdso(struct rec_out *o, const struct rec_vdso *v);
int rec_out_max_stack(struct rec_out *o, unsigned max_stack, const char *by);
int rec_out_throttle(struct rec_out *o, uint64_t throttles, uint64_t unthrottles);
/*
 * Mapping M of address space ASID (of process PID), unless the file has
 * it already. Its build-id is M's, or else read from the file as PID sees
 * it (its mount namespace), when PID is still there. A "[vdso]" mapping
 * is the vDSO of rec_out_vdso (its size and build-id, from M's start).
 * GP_EXIT_SYSTEM when out of memory.
 */
int rec_out_mapping(struct rec_out *o, unsigned asid, pid_t pid, const struct rec_mapping *m);
/* The "[vdso]" mapping of ASID at START (nothing when START is 0 or no
 * vDSO is known). */
int rec_out_vdso_mapping(struct rec_out *o, unsigned asid, pid_t pid, uint64_t start);
/*
 * The chain FRAMES (N, innermost first) into *STACK, writing the stack
 * nodes the file lacks. Returns 1 when the chain's mappings are still to
 * be handed over (rec_out_mapping) for address space ASID with its map at
 * GENERATION (the chain, or that map, is new since it was last asked), 0
 * when they were, or an exit status (GP_EXIT_OUTPUT, GP_EXIT_SYSTEM) as a
 * negative number.
 */
int rec_out_stack(struct rec_out *o, const struct gp_frame *frames, size_t n, unsigned asid,
		  uint64_t generation, uint32_t *stack);
/* The same for the chain of FRAME called from the chain CALLERS (a node
 * rec_out_stack gave, or 0: none): a chain whose callers are known costs
 * one lookup, however deep. */
int rec_out_stack_under(struct rec_out *o, uint32_t callers, const struct gp_frame *frame,
			unsigned asid, uint64_t generation, uint32_t *stack);
/* The node of the callers of chain STACK (0: it has none). */
static inline uint32_t rec_out_stack_callers(const struct rec_out *o, uint32_t stack)
{
	return o->stacks.nodes[stack].parent;
}
/* Sample S, its chain S->stack from rec_out_stack. */
int rec_out_sample(struct rec_out *o, const struct gp_rsample *s);
static inline void rec_out_lost(struct rec_out *o, enum rec_lost why, uint64_t n)
{
	o->lost[why] += n;
}
/* Write the file through, at most every 100 ms: a recorder killed mid-run
 * (or a full disk) leaves every sample before the last 100 ms readable. */
void rec_out_flush(struct rec_out *o, uint64_t now_ns);
/* The trailer (DURATION_NS long), close, and compress the file in place
 * (a file that cannot be is left plain, with a warning). 0, or
 * GP_EXIT_OUTPUT if any write failed. Frees what O holds. */
int rec_out_close(struct rec_out *o, uint64_t duration_ns);
/* Close without a trailer (the recording never began), and free. */
void rec_out_discard(struct rec_out *o);

#endif
