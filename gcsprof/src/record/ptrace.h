/* SPDX-License-Identifier: MIT */
/*
 * gcsprof record, ptrace method (rec_method_ptrace): sample every thread
 * of a process tree through ptrace and libgcswalk.
 *
 * The target is seized (PTRACE_SEIZE) with clone, fork, vfork and exec
 * events, so that threads and processes created later are traced too. At
 * each tick the threads to sample are interrupted with PTRACE_INTERRUPT:
 * with --wall all of them, otherwise the running ones that have used a
 * tick's worth of CPU time since they were last sampled (so that a thread
 * waiting for a CPU is not counted as if it had one). When they have
 * stopped, each stopped thread's chain is taken from its GCS through the
 * process's libgcswalk target (GCSWALK_ATTACH_STOPPED: the library only
 * reads; one per process, refreshed per sample), the process's new file
 * mappings are written with their build-ids, and the threads are resumed.
 * Every other stop is passed straight through: signals are delivered,
 * group-stops stay stopped (PTRACE_LISTEN), so the target behaves as it
 * would untraced. What the method's files share:
 *   ptrace_method.c   the table entry: run (start, the ticks' loop, end)
 *   ptrace_start.c    launching the command, attaching to a process
 *   ptrace_stops.c    the target's stops, passed through or kept for us
 *   ptrace_sample.c   a tick: which threads, their walks, the samples
 *   ptrace_process.c  a process's libgcswalk target and its map
 */
#ifndef GCSPROF_RECORD_PTRACE_H
#define GCSPROF_RECORD_PTRACE_H

#include <stdint.h>
#include <sys/ptrace.h>

#include "recording.h"

/* Every thread is seized with these: threads and processes it creates are
 * traced too, and an exec is seen. */
#define TRACE_OPTIONS (PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | \
		       PTRACE_O_TRACEEXEC)

struct pt_thread {
	struct rec_thread base;
	int stopped;              /* in a ptrace-stop we hold for a sample */
	int want;                 /* wanted in the current sample */
	int group_stop;           /* in a group-stop (PTRACE_LISTEN) */
	int pending_sig;          /* to deliver when resumed */
	char state;
	int stat_fd;              /* /proc/TID/stat kept open (-1: none), read with pread */
	uint64_t name_ns;         /* when libgcswalk last read its name */
	uint64_t cpu_ns;          /* CPU time used, at the last tick */
	uint64_t cpu_credit_ns;   /* CPU time used and not yet sampled */
};

struct pt_process {
	struct rec_process base;
	/* Opened at its first sample and refreshed for the next ones: the
	 * map is read again only when a chain has an address in no known
	 * file (a library loaded since). Closed at exec and exit. base.map
	 * holds the file mappings of the target's map as last written to
	 * the profile: a chain is checked against these, not against the
	 * target's map, because libgcswalk re-reads that map by itself (when
	 * a GCS appears), and what it finds must still reach the file. */
	gcswalk_target *target;
	/* Re-reads of the map are paid with credits: a burst of
	 * MAPS_BURST (a program's start loads several libraries in a few
	 * milliseconds), then one per MAPS_PERIOD_NS. */
	unsigned maps_credits;
	uint64_t maps_ns;         /* when credits were last added */
	/* A sample had an address in no known file while no credit was
	 * left: read the map at the next sample that can, so the mapping
	 * still reaches the file before the process execs or exits. */
	int maps_stale;
	/* Pages still in no file after the last read of the map (the vDSO,
	 * anonymous code): they do not make us read it again, for a second
	 * after that read (unknown_ns). Only for a second: a page can be
	 * caught while ld.so is still mapping its library. */
	uint64_t unknown_pages[16];
	uint64_t unknown_ns;
	/* --fallback cfi: one symboliser per process, made again when the
	 * target's map has changed (cfi_nmaps mappings when made). */
	gcswalk_symbolizer *cfi_sym;
	size_t cfi_nmaps;
};

struct pt_state {
	uint64_t rng;              /* xorshift state for the tick jitter */
	struct gp_frame *frames;   /* a sample's, as written */
	size_t frames_cap;
};

static inline struct pt_state *pt_state(struct recording *rec)
{
	return rec->priv;
}

static inline struct pt_thread *pt_thread_at(struct recording *rec, size_t i)
{
	return (struct pt_thread *)rec_thread_at(&rec->target, i);
}

static inline struct pt_process *pt_process_at(struct recording *rec, size_t i)
{
	return (struct pt_process *)rec_process_at(&rec->target, i);
}

/* ptrace_start.c: the launched command, or -p's process, seized (and
 * checked for GCS). 0, or an exit status. */
int pt_launch(struct recording *rec);
int pt_attach(struct recording *rec);

/* ptrace_stops.c */
/* Thread TID of PID (PID <= 0: found from /proc), added if new; NULL
 * when out of memory. */
struct pt_thread *pt_add_thread(struct recording *rec, pid_t tid, pid_t pid);
/* Resume a thread stopped for us, delivering any signal held for it. */
void pt_resume(struct pt_thread *t);
/* Interrupt T to sample it (want it): 0, or -1 with errno. */
int pt_interrupt(struct pt_thread *t);
/* Handle every wait status available now. 0, or an exit status. */
int pt_drain_events(struct recording *rec);
/* Wait until every wanted thread has stopped (or is gone), up to 2 s;
 * the late ones are counted lost and wanted no more. */
int pt_wait_wanted(struct recording *rec);
/* Stop every thread and detach, delivering any signal held for it. */
void pt_detach_all(struct recording *rec);

/* ptrace_sample.c */
/* One tick. 0, or an exit status. */
int pt_sample_round(struct recording *rec);
/* Close what a thread holds (its stat descriptor). */
void pt_thread_close(struct pt_thread *t);

/* ptrace_process.c */
/* Open P's libgcswalk target (at its first sample: its threads are
 * stopped for us) and write its mappings: 0, -1 when it cannot be read
 * (gone: the caller counts its samples lost), or an exit status. */
int pt_process_open(struct recording *rec, struct pt_process *p);
/* The mappings the FRAMES (N) of a sample of P need: written before it,
 * reading the map again when an address is in no known file. */
int pt_process_mappings(struct recording *rec, struct pt_process *p,
			const struct gp_frame *frames, size_t n, uint64_t now);
/* P's symboliser for the CFI fallback, NULL if none can be made. */
gcswalk_symbolizer *pt_process_cfi(struct pt_process *p);
/* Close what P holds (exec, exit): its target, symboliser and map. */
void pt_process_release(struct pt_process *p);

#endif
