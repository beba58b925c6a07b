/* SPDX-License-Identifier: MIT */
/*
 * gcsprof record: the target's processes and threads, as both methods
 * know them. Each method keeps more about them, privately: its thread and
 * process structs start with these (struct rec_thread, struct
 * rec_process) and the target holds them whole, the sizes given by the
 * method (rec_target_init). Adding a thread or a process may move every
 * one of them: a pointer held across rec_add_* must be looked up again.
 */
#ifndef GCSPROF_RECORD_TARGET_H
#define GCSPROF_RECORD_TARGET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <gcswalk.h>

#include "maps.h"

struct rec_thread {
	pid_t tid, pid;            /* pid: its thread group */
	int gone;
};

struct rec_process {
	pid_t pid;
	/* Address space: a new one at each exec, so that the profile never
	 * mixes the mappings of a program and of the one it became. */
	unsigned asid;
	int gone;
	char *name;                /* for the end's no-GCS warning */
	/* A sample found GCS off (every process starts so, while ld.so
	 * runs), or on: processes never seen with it are named at the end. */
	int nogcs_seen, gcs_seen, nogcs_why;
	uint64_t vdso;             /* where its vDSO is; 0: unknown */
	struct rec_map map;        /* its code mappings, as the method knows them */
};

struct rec_target {
	unsigned char *threads, *procs;
	size_t nthreads, threads_cap, thread_size;
	size_t nprocs, procs_cap, process_size;
	unsigned next_asid;
};

/* THREAD_SIZE and PROCESS_SIZE: the method's structs, which start with
 * struct rec_thread and struct rec_process. */
void rec_target_init(struct rec_target *t, size_t thread_size, size_t process_size);
void rec_target_free(struct rec_target *t);

struct rec_thread *rec_thread_at(const struct rec_target *t, size_t i);
struct rec_process *rec_process_at(const struct rec_target *t, size_t i);
/* The live thread TID, the live process PID; NULL if none. */
struct rec_thread *rec_find_thread(const struct rec_target *t, pid_t tid);
struct rec_process *rec_find_process(const struct rec_target *t, pid_t pid);
/* The process PID, added (zeroed, with an address space of its own) if
 * it is not there; *ADDED (if not NULL) says which. NULL: out of memory. */
struct rec_process *rec_add_process(struct rec_target *t, pid_t pid, int *added);
/* The thread TID of process PID (PID <= 0: found from /proc), added with
 * its process if new; NULL: out of memory. */
struct rec_thread *rec_add_thread(struct rec_target *t, pid_t tid, pid_t pid, int *added);
size_t rec_live_threads(const struct rec_target *t);
/* A fresh address space number (an exec). */
unsigned rec_new_asid(struct rec_target *t);
/* Thread TH has exited: gone, and its process too when it was the last. */
void rec_thread_exited(struct rec_target *t, struct rec_thread *th);
/* An exec in process PID by thread TID: every other thread of it is gone. */
void rec_exec_threads_gone(struct rec_target *t, pid_t pid, pid_t tid);
/* A walk or a sample found GCS off (WHY) in P, a thread of it named NAME. */
void rec_process_no_gcs(struct rec_process *p, const char *name, int why);
/* At the end: a warning for each process that ran without GCS only, its
 * samples skipped, or sampled with the fallback FALLBACK (a name; NULL:
 * none). */
void rec_report_no_gcs(const struct rec_target *t, const char *fallback);

/* The thread group of thread TID, 0 if unknown. */
pid_t rec_tgid_of(pid_t tid);
/* Where the first region of KIND (a GCS, the vDSO) of T (a live process)
 * starts; 0: it has none. */
uint64_t rec_region_start(gcswalk_target *t, enum gcswalk_region_kind kind);

#endif
