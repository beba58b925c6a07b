/* SPDX-License-Identifier: MIT */
/*
 * gcsprof record, perf method: what record_perf.c (events, ring buffers,
 * the loop) and record_perf_records.c (the ring's records turned into the
 * profile) share.
 */
#ifndef GCSPROF_RECORD_PERF_H
#define GCSPROF_RECORD_PERF_H

#include <linux/perf_event.h>
#include <stdint.h>

#include "record.h"

/* PERF_REG_ARM64_GCSPR: GCSPR_EL0 of a task with GCS enabled, else 0. */
#define GP_PERF_REG_GCSPR 47

/*
 * A code mapping of a process, as the kernel reported it (MMAP2), or the
 * vDSO ("[vdso]"). A process keeps its current map: a new mapping replaces
 * what it overlaps, as mmap() does. A mapping is written to the profile
 * when a sample first needs it, so that a range replaced before any
 * sample (ld.so's first, whole-file mapping) never reaches the file.
 */
struct perf_mapping {
	uint64_t start, end, offset;
	char *path;
	unsigned char build_id[20];
	unsigned build_id_size;
	int written;
};

/* One ring buffer per CPU; every event on that CPU writes into it. */
struct perf_ring {
	int fd;                          /* the event the ring belongs to */
	int cpu;
	struct perf_event_mmap_page *meta;
	unsigned char *data;
	uint64_t size;                   /* of the data area, a power of two */
	uint64_t last_time;              /* of its last record: for records without one */
};

/* A record copied out of a ring, to be handled in time order. */
struct perf_ref {
	uint64_t time;
	uint64_t seq;                    /* ties keep the rings' order */
	size_t off, size;                /* in perf_rec.batch */
};

struct perf_rec {
	struct perf_event_attr attr;
	struct perf_ring *rings;
	size_t nrings;
	int *fds;                        /* every event opened, for disable and close */
	size_t nfds, fds_cap;
	int sigfd;
	unsigned char *batch;            /* records of one round, 8-byte aligned */
	size_t batch_len, batch_cap;
	struct perf_ref *refs;
	size_t nrefs, refs_cap;
	uint64_t seq;
	uint64_t bytes;                  /* read from the rings */
	/* The depth asked for (sample_max_stack; 0: the kernel's default,
	 * not known): a chain that long reached it, and is marked cut. */
	unsigned max_stack;
	const char *max_stack_by;        /* PERF_MAX_STACK_BY_* */
	uint64_t ncut;
	/* kernel.perf_callchain_gcs, read once as the events are opened: a
	 * non-zero GCSPR in a sample means a chain from the GCS only while it
	 * is 1. A change during the recording is not tracked (only noticed
	 * at its end). */
	int gcs_chains;
	uint64_t throttles, unthrottles; /* PERF_RECORD_THROTTLE, _UNTHROTTLE */
};

/* record_perf_limits.c */
/* Why a chain is at most max_stack frames: the profile's max-stack record. */
#define PERF_MAX_STACK_BY_SYSCTL "sysctl"
#define PERF_MAX_STACK_BY_RECORD "record-size"
/* The sample_max_stack to ask for: the deepest chain the kernel allows
 * and a sample record holds (*BY says which bounds it); 0 when the limit
 * cannot be known (the kernel's default then applies). */
unsigned perf_max_stack(const char **by);

/* record_perf_records.c */
/* Handle one record (header H, H->size bytes, 8-byte aligned). */
int perf_handle_record(struct recorder *r, const struct perf_event_header *h);
/* The time of a record, from its sample fields or sample_id; 0 if none. */
uint64_t perf_record_time(const struct perf_event_header *h);
/* The process PID (a new one, with an address space of its own, if
 * unknown), and the thread TID of it. NULL when out of memory. */
struct process *perf_process(struct recorder *r, pid_t pid);
struct thread *perf_thread(struct recorder *r, pid_t tid, pid_t pid, const char *name);
/* After the last record: the throttle record, and a line for the chains
 * cut at the depth limit. 0, or an exit status. */
int perf_write_summary(struct recorder *r);
/* Note a mapping of P, to be written when a sample needs it. */
int perf_note_mapping(struct recorder *r, struct process *p, uint64_t start, uint64_t end,
		      uint64_t offset, const char *path, const unsigned char *build_id,
		      unsigned build_id_size);

#endif
