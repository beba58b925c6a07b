/* SPDX-License-Identifier: MIT */
/*
 * gcsprof record, perf method (rec_method_perf): the kernel takes each
 * sample's user call chain from the thread's GCS (kernel.perf_callchain_gcs)
 * and writes it to a ring buffer; the target is never stopped, and gcsprof
 * needs no ptrace. What the method's files share:
 *   perf_method.c   the table entry: usable, rate, run (setup, loop, end)
 *   perf_events.c   the events (one per CPU for each task), their rings
 *   perf_start.c    launching the command, attaching to a process
 *   perf_ring.c     copying the rings' records out, in time order
 *   perf_records.c  the records: mappings, names, forks, exits, losses
 *   perf_sample.c   a sample record into a profile sample
 *   perf_tasks.c    the processes and threads as the records tell them
 *   perf_limits.c   how deep a chain the kernel may hand over
 */
#ifndef GCSPROF_RECORD_PERF_H
#define GCSPROF_RECORD_PERF_H

#include <linux/perf_event.h>
#include <stdint.h>

#include "recording.h"

#include "gcswalk.h"

/* Why not, when the sysctl is there but 0: perf's chains would then come
 * from frame records for every thread, GCSPR or not, and are not exact. */
#define PERF_CALLCHAIN_GCS_OFF                                                              \
	"kernel.perf_callchain_gcs is 0: the kernel walks frame records, which are not exact " \
	"(sysctl -w kernel.perf_callchain_gcs=1 turns its GCS call chains on)"

struct perf_thread {
	struct rec_thread base;
	/* Its name, from the kernel's COMM and FORK records, and the event
	 * id its samples come from on each CPU: a thread found both through a
	 * parent's inherited event and its own (-p on a process creating
	 * threads) is sampled by each, and only one counts. */
	char *name;
	uint64_t *event_ids;
};

struct perf_process {
	struct rec_process base;
	int fresh;                 /* nothing of its address space recorded yet */
	/* perf_leaf.c: a symboliser of its mappings as the map's generation
	 * leaf_generation had them (leaf_made: tried, perhaps in vain). */
	gcswalk_target *leaf_target;
	gcswalk_symbolizer *leaf_sym;
	uint64_t leaf_generation;
	int leaf_made;
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
	size_t off, size;                /* in perf_state.batch */
};

struct perf_state {
	struct perf_event_attr attr;
	struct perf_ring *rings;
	size_t nrings;
	int *fds;                        /* every event opened, for disable and close */
	size_t nfds, fds_cap;
	int sigfd;
	unsigned char *batch;            /* records not yet handled, 8-byte aligned */
	size_t batch_len, batch_cap;
	uint64_t held_samples;           /* of them, samples (the status line's) */
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
	size_t ring_pages;               /* asked of each ring (perf_events_rings) */
	struct gp_frame *frames;         /* a sample's, as written */
	size_t frames_cap;
	uint64_t *chain;                 /* a chain with a leaf's caller added */
	size_t chain_cap;
	/* The callers (the chain less its PC) of the last sample whose chain
	 * was interned whole, as the kernel gave them, and their node: the
	 * next sample with the same callers in the same address space is its
	 * PC's node under that one (a 2,000-frame chain then costs a
	 * comparison of its addresses, not a hash and a walk of its nodes). */
	struct perf_callers {
		uint64_t *ips;
		size_t n, cap;
		uint32_t node;
		unsigned asid;
		uint64_t vdso;           /* the process's vDSO then: it names sigreturn frames */
		int gcs;
		int valid;
	} callers;
};

static inline struct perf_state *perf_state(struct recording *rec)
{
	return rec->priv;
}

/* perf_regs.c: the user registers every sample carries, as libgcswalk's
 * architecture table names them (gcswalk_arch_info): the shadow stack
 * pointer (arm64's GCSPR_EL0, riscv64's ssp; 0 for a thread without a
 * shadow stack) and, where a leaf's caller is only in the link register,
 * that register (riscv64's ra; LR -1 on arm64, whose calls push). They
 * come in a sample in the order of their numbers. */
struct perf_regs {
	uint64_t mask;                   /* sample_regs_user */
	int ss, lr;
};
const struct perf_regs *perf_user_regs(void);

/* perf_events.c */
/* The event to sample on: the first of cycles, cpu-clock that can be
 * opened on gcsprof itself. 0, or the exit status and *WHY. */
int perf_probe_event(const char **event, const char **why);
/* Fill the attributes of the events to open (record's options). */
void perf_events_attr(struct recording *rec);
/* One ring per online CPU, none mapped yet. 0, or an exit status. */
int perf_events_rings(struct recording *rec);
/* Open the events of task TID, one per CPU, into the CPUs' rings: 0, or
 * -errno. */
int perf_open_task_events(struct recording *rec, pid_t tid);
void perf_disable_events(struct perf_state *ps);
void perf_events_close(struct perf_state *ps);

/* perf_start.c: the launched command, or -p's process, with its events
 * open. 0, or an exit status. */
int perf_launch(struct recording *rec);
int perf_attach(struct recording *rec);

/* perf_ring.c: copy out everything the rings hold, and handle it in time
 * order; with --defer only when FINAL (the recording's end) or when the
 * records held have grown past their bound. */
int perf_drain(struct recording *rec, int final);

/* perf_records.c */
/* Handle one record (header H, H->size bytes, 8-byte aligned). */
int perf_handle_record(struct recording *rec, const struct perf_event_header *h);
/* The time of a record, from its sample fields or sample_id; 0 if none. */
uint64_t perf_record_time(const struct perf_event_header *h);

/* perf_sample.c: the sample fields asked for (perf_events_attr), in the
 * order they come. */
struct perf_sample {
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time;
	uint64_t id;
	uint32_t cpu;
	uint64_t period;
	uint64_t nr;
	const uint64_t *ips;
	uint64_t abi;
	uint64_t ssp;                    /* GCSPR_EL0 or ssp, 0 without a shadow stack */
	uint64_t lr;                     /* riscv64's ra; 0 where not asked for */
};
int perf_sample(struct recording *rec, const struct perf_sample *s);
/* After the last record: the throttle record, and a line for the chains
 * cut at the depth limit. 0, or an exit status. */
int perf_write_summary(struct recording *rec);

/* perf_leaf.c: whether the link register LR of sample S (chain USER, N
 * frames from the shadow stack, of process P) holds the caller of the
 * PC's function, which the chain lacks: 1 to put it after the PC. */
int perf_leaf_caller(struct perf_process *p, const struct perf_sample *s, const uint64_t *user,
		     size_t n);
/* Free P's symboliser and its target. */
void perf_leaf_free(struct perf_process *p);

/* perf_tasks.c */
/* The process PID (a new one, with an address space of its own, if
 * unknown), and the thread TID of it (named NAME if not NULL). NULL when
 * out of memory. */
struct perf_process *perf_process(struct recording *rec, pid_t pid);
struct perf_thread *perf_thread(struct recording *rec, pid_t tid, pid_t pid, const char *name);
struct perf_thread *perf_find_thread(struct recording *rec, pid_t tid);
struct perf_process *perf_find_process(struct recording *rec, pid_t pid);
/* Replace *DST with a copy of NAME (nothing if NAME is NULL or the same). */
int perf_set_name(char **dst, const char *name);
void perf_tasks_free(struct recording *rec);

/* perf_limits.c */
/* Why a chain is at most max_stack frames: the profile's max-stack record. */
#define PERF_MAX_STACK_BY_SYSCTL "sysctl"
#define PERF_MAX_STACK_BY_RECORD "record-size"
/* The sample_max_stack to ask for: the deepest chain the kernel allows
 * and a sample record holds (*BY says which bounds it); 0 when the limit
 * cannot be known (the kernel's default then applies). */
unsigned perf_max_stack(const char **by);
/* The bytes of a sample record whose chain is MAX_STACK frames (0: the
 * kernel's default limit): what a ring must make room for. */
size_t perf_sample_bytes(unsigned max_stack);

#endif
