/* SPDX-License-Identifier: MIT */
/*
 * storm-fuzz: random, seeded sequences of the system calls the GCS series
 * touches, in several processes and threads (docs/storm.md). This header
 * is what its files share: the counters, the pool of memory regions each
 * worker process plays with, and the table of operations.
 */
#ifndef GCSPROF_STORM_FUZZ_H
#define GCSPROF_STORM_FUZZ_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "storm.h"

/* The system calls counted, one row each in the report. */
enum fz_call {
	FZ_PRCTL,
	FZ_MAP_SHADOW_STACK,
	FZ_MMAP,
	FZ_MPROTECT,
	FZ_MUNMAP,
	FZ_MREMAP,
	FZ_MADVISE,
	FZ_CLONE,
	FZ_FORK,
	FZ_VFORK,
	FZ_EXECVE,
	FZ_PTRACE,
	FZ_PERF_EVENT_OPEN,
	FZ_RT_SIGRETURN,
	FZ_KILL,
	FZ_WAIT4,
	FZ_PROCESS_VM,
	FZ_PROC_MEM,
	FZ_GCS_INSN, /* not a system call: GCSSS1/2, GCSPUSHM/POPM, GCSSTR */
	FZ_NCALLS
};

/* Checks that must hold whatever the random arguments were. */
enum fz_invariant {
	FZ_INV_PRCTL_READBACK,  /* PR_SET accepted, PR_GET reads it back */
	FZ_INV_FORK_STATUS,     /* a forked child has its parent's GCS mode */
	FZ_INV_EXEC_GCS,        /* an exec'd child that enables GCS has it */
	FZ_INV_REGSET_READBACK, /* NT_ARM_GCS SETREGSET accepted, GET reads it back */
	FZ_INV_HUNG,            /* a child still there 60 s on, or after SIGKILL */
	FZ_INV_WORKER_NO_GCS,   /* a worker started without GCS */
	FZ_NINVARIANTS
};

/* In memory shared by every process of the run (MAP_SHARED). */
struct fz_shared {
	uint64_t calls[FZ_NCALLS];
	uint64_t failed[FZ_NCALLS]; /* of which returned an error */
	uint64_t total;
	uint64_t invariant[FZ_NINVARIANTS];
	uint64_t child_signals[65]; /* how sacrificial children died */
	uint64_t samples;           /* perf samples read back */
	uint64_t bad_chains;        /* of which with a malformed chain */
	char first_problem[256];
};

extern struct fz_shared *fz;
extern const char *fz_self; /* this program, for execve */
extern __thread const char *fz_op_name; /* the operation this thread is in */

/* Count one call of kind C that returned R (-1 with errno on failure). */
static inline long fz_count(enum fz_call c, long r)
{
	__atomic_fetch_add(&fz->calls[c], 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&fz->total, 1, __ATOMIC_RELAXED);
	if (r == -1)
		__atomic_fetch_add(&fz->failed[c], 1, __ATOMIC_RELAXED);
	return r;
}

void fz_problem(enum fz_invariant inv, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A memory region a worker made, for the operations to aim at. */
enum fz_kind { FZ_GCS, FZ_GCS_TOKEN, FZ_PLAIN };

struct fz_region {
	uint64_t addr;
	uint64_t len;
	enum fz_kind kind;
};

#define FZ_POOL_SIZE 24

struct fz_pool {
	pthread_mutex_t lock;
	struct fz_region r[FZ_POOL_SIZE];
	int n;
};

/* One fuzzing thread. */
struct fz_thread {
	uint64_t rng;
	struct fz_pool *pool;
	int depth; /* > 0 in a child made by an operation */
};

typedef void fz_op_fn(struct fz_thread *t);

struct fz_op {
	const char *name;
	fz_op_fn *fn;
	unsigned int weight;
};

extern const struct fz_op fz_ops[];
extern const unsigned int fz_nops;

/* Run one random operation. */
void fz_one(struct fz_thread *t);

/* Pool (fuzz-mem.c). */
void fz_pool_add(struct fz_pool *p, uint64_t addr, uint64_t len, enum fz_kind kind);
int fz_pool_pick(struct fz_thread *t, struct fz_region *out);
uint64_t fz_random_addr(struct fz_thread *t);

/* Children (fuzz-proc.c). */
int fz_reap(pid_t pid, int *status);
void fz_child_ops(struct fz_thread *t, int n) __attribute__((noreturn));
unsigned long fz_gcs_status(void);
void fz_describe_task(pid_t pid, pid_t tid, char *out, size_t size);

/* SIGUSR2's nesting handler, installed before a worker's threads start. */
void fz_signals_init(void);

/* Operations, by file. */
fz_op_fn fz_op_map_shadow_stack, fz_op_mmap, fz_op_mprotect, fz_op_munmap, fz_op_mremap,
	fz_op_madvise, fz_op_process_vm, fz_op_proc_mem, fz_op_gcs_switch, fz_op_gcs_insn;
fz_op_fn fz_op_prctl_get, fz_op_prctl_set, fz_op_prctl_lock, fz_op_fork, fz_op_vfork_exec,
	fz_op_clone_vm, fz_op_thread;
fz_op_fn fz_op_ptrace_gcs, fz_op_perf, fz_op_sigreturn, fz_op_signal_nest;

/* Where the shadow stack prctl's GCS mode bits may go. */
#define FZ_MODE_BITS (PR_SHADOW_STACK_ENABLE | PR_SHADOW_STACK_WRITE | PR_SHADOW_STACK_PUSH)

#endif /* GCSPROF_STORM_FUZZ_H */
