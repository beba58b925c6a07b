/* SPDX-License-Identifier: MIT */
/*
 * gcsprof record's parts. record.c is the command: options, the choice of
 * method, the profile's header and trailer, the command's exit status.
 * Two methods take the samples:
 *  - ptrace (record_ptrace.c): stop each thread at every tick and walk its
 *    GCS through libgcswalk (record_sample.c), with the recorder's state
 *    (record_state.c), the ptrace plumbing that keeps the target behaving
 *    as untraced (record_trace.c), and starting and attaching
 *    (record_start.c);
 *  - perf (record_perf.c): the kernel takes the chains from the GCS and
 *    hands them over in perf ring buffers; the target is never stopped.
 *    record_perf_records.c turns the ring's records into the profile,
 *    record_perf_limits.c finds how deep a chain the kernel may give.
 */
#ifndef GCSPROF_RECORD_H
#define GCSPROF_RECORD_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/ptrace.h>
#include <sys/types.h>

#include <gcswalk.h>

#include "gcsprof.h"
#include "profile.h"

struct record_opts {
	unsigned hz;
	const char *output;
	int wall;
	const char *pid;
	int fallback;             /* enum rec_fallback */
	const char *gcs_tunable;  /* glibc.cpu.aarch64_gcs, GCSPROF_SHADOW_STACK (riscv64) */
	int method;               /* enum rec_method_ask */
	unsigned mmap_pages;      /* perf: ring pages per CPU, 0: the default */
	int quiet;
};

/* The option values, parsed once (record.c's choice tables). */
enum rec_fallback { REC_FALLBACK_NONE, REC_FALLBACK_FP, REC_FALLBACK_CFI };
enum rec_method_ask { REC_ASK_AUTO, REC_ASK_PERF, REC_ASK_PTRACE };
extern const char *const rec_fallback_names[];

enum rec_method { REC_METHOD_PTRACE, REC_METHOD_PERF };

struct thread {
	pid_t tid, pid;           /* pid: its thread group */
	int gone;
	int stopped;              /* in a ptrace-stop we hold for a sample */
	int want;                 /* wanted in the current sample */
	int group_stop;           /* in a group-stop (PTRACE_LISTEN) */
	int pending_sig;          /* to deliver when resumed */
	char state;
	int stat_fd;              /* /proc/TID/stat kept open (-1: none), read with pread */
	uint64_t name_ns;         /* when libgcswalk last read its name */
	uint64_t cpu_ns;          /* CPU time used, at the last tick */
	uint64_t cpu_credit_ns;   /* CPU time used and not yet sampled */
	/* perf method: its name, from the kernel's COMM and FORK records,
	 * and the event id its samples come from on each CPU: a thread
	 * found both through a parent's inherited event and its own (-p on
	 * a process creating threads) is sampled by each, and only one
	 * counts. */
	char *name;
	uint64_t *event_ids;
};

struct process {
	pid_t pid;
	unsigned asid;
	int nogcs_seen;           /* a walk found GCS off (ld.so runs before it is on) */
	int gcs_seen;             /* a walk found GCS on */
	int nogcs_why;
	char *name;
	int gone;
	/* Opened at its first sample and refreshed for the next ones: the
	 * map is read again only when a chain has an address in no known
	 * file (a library loaded since). Closed at exec and exit. */
	gcswalk_target *target;
	/* The file mappings of the target's map as last written to the
	 * profile, sorted. A chain is checked against these, not against
	 * the target's map: libgcswalk re-reads that map by itself (when a
	 * GCS appears), and what it finds must still reach the file. */
	struct range { uint64_t start, end; } *written;
	size_t nwritten, written_cap;
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
	/* perf method: the vDSO's address (its signal trampoline marks
	 * signal frames), whether the address space has had a sample or a
	 * mapping yet, and its file mappings, which a forked child starts
	 * with. */
	uint64_t vdso;
	int fresh;
	struct perf_mapping *maps;
	size_t nmaps, maps_cap;
};

/* A mapping already in the file, per address space. */
struct seen_mapping {
	unsigned asid;
	uint64_t start, end, offset;
	char *path;
};

/* The vDSO, read from gcsprof's own (record_vdso.c). */
#define REC_VDSO_PATH "[vdso]"
struct rec_vdso_symbol {
	uint64_t offset, size;     /* from the vDSO's start */
	char *name;
};
struct rec_vdso {
	uint64_t size;             /* of its code mapping; 0: no vDSO known */
	uint64_t sigreturn;        /* offset of the signal trampoline, 0 unknown */
	unsigned char build_id[20];
	size_t build_id_size;
	struct rec_vdso_symbol *symbols;
	size_t nsymbols, symbols_cap;
};

struct recorder {
	const struct record_opts *o;
	unsigned hz;               /* sampling frequency in effect: -F, or perf's limit */
	FILE *out;
	const char *out_path;
	int write_failed;
	struct thread *threads;
	size_t nthreads, threads_cap;
	struct process *procs;
	size_t nprocs, procs_cap;
	struct seen_mapping *seen;
	size_t nseen, seen_cap;
	/* Open addressing over seen (index + 1, 0 empty), twice its size:
	 * forks copy every mapping, so a linear scan would be quadratic. */
	size_t *seen_index;
	size_t seen_index_cap;
	unsigned next_asid;
	struct gp_count lost[6];
	uint64_t nsamples;
	uint64_t start_ns;
	pid_t child;              /* launched command, 0 with -p */
	int child_status;         /* wait status, valid when child_done */
	int child_done;
	int exec_seen;
	int exec_err_fd;
	sigset_t sigs;
	int tty;
	uint64_t last_status_ns;
	uint64_t last_flush_ns;     /* when the file was last written through */
	struct gp_frame *frames;
	size_t frames_cap;
	uint64_t rng;             /* xorshift state for the tick jitter */
	int stop_from_process;    /* the stop signal was sent by a process, not the tty */
	enum rec_method method;
	const char *event;        /* perf: the event sampled on */
	int started;              /* sampling began: what fails now still ends the file */
	struct perf_rec *perf;    /* the perf method's state (record_perf.c) */
	struct rec_vdso vdso;
};

enum {
	LOST_NO_GCS, LOST_GONE, LOST_TIMEOUT, LOST_WALK, LOST_STOPPED,
	LOST_RING,                /* perf: records the kernel could not write (ring full) */
	LOST_NLOST
};

extern const char *const rec_lost_names[LOST_NLOST];

/* Every thread is seized with these: threads and processes it creates are
 * traced too, and an exec is seen. */
#define TRACE_OPTIONS (PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | \
		       PTRACE_O_TRACEEXEC)


/* record_state.c: threads and processes, /proc fields */
uint64_t rec_now_ns(void);
struct thread *rec_find_thread(struct recorder *r, pid_t tid);
struct process *rec_find_process(struct recorder *r, pid_t pid);
struct process *rec_add_process(struct recorder *r, pid_t pid);
pid_t rec_tgid_of(pid_t tid);
pid_t rec_tracer_of(pid_t tid);
struct thread *rec_add_thread(struct recorder *r, pid_t tid, pid_t pid);
size_t rec_live_threads(const struct recorder *r);
char rec_thread_stat(struct thread *t, uint64_t *cpu_ns);
/* Release what a gone thread or process holds (fds, libgcswalk target). */
void rec_thread_release(struct thread *t);
void rec_process_release(struct process *p);

/* record_trace.c: ptrace events, waiting, detaching */
void rec_resume(struct thread *t);
int rec_drain_events(struct recorder *r);
int rec_wait_wanted(struct recorder *r, int *stop_sig);
void rec_detach_all(struct recorder *r);

/* record_start.c: launching a command, attaching to a process */
int rec_attach_pid(struct recorder *r, pid_t pid);
int rec_check_target_gcs(struct recorder *r, pid_t pid);

/* record_env.c: the environment a launched command gets for
 * --gcs-tunable (arm64: GLIBC_TUNABLES; riscv64: the preloaded
 * libgcsprof-shstk.so and GCSPROF_SHADOW_STACK), made in the parent,
 * applied in the child; and the words for a process without a shadow
 * stack: its name ("GCS", "Zicfiss") and how to start one with it. */
struct rec_env {
	const char *name[2];
	char *value[2];
	size_t n;
};
int rec_env_for_command(struct rec_env *e, const char *tunable);
void rec_env_apply(const struct rec_env *e);
void rec_env_free(struct rec_env *e);
const char *rec_shadow_stack_name(void);
const char *rec_shadow_stack_hint(void);
int rec_launch(struct recorder *r, char **argv, const sigset_t *old_mask);
/* Fork the command, held before its exec until *RELEASE_FD is closed. */
int rec_spawn(struct recorder *r, char **argv, const sigset_t *old_mask, int *release_fd);

/* record_sample.c: the samples and the mappings they need */
int rec_write_failed(struct recorder *r);
int rec_write_mapping(struct recorder *r, unsigned asid, pid_t pid, uint64_t start, uint64_t end,
		      uint64_t offset, const char *path, const unsigned char *build_id,
		      size_t build_id_size);
void rec_report_no_gcs(const struct recorder *r);
int rec_sample_round(struct recorder *r, int *stop_sig);

/* record_vdso.c: the vDSO's symbols, and where a process has it */
int rec_vdso_load(struct rec_vdso *v);
int rec_vdso_write(FILE *f, const struct rec_vdso *v);
void rec_vdso_free(struct rec_vdso *v);
/* Where the first region of KIND (a GCS, the vDSO) of target T (a live
 * process) starts; 0: it has none. */
uint64_t rec_region_start(gcswalk_target *t, enum gcswalk_region_kind kind);
/* Write the "[vdso]" mapping of address space ASID, at START. */
int rec_vdso_mapping(struct recorder *r, unsigned asid, pid_t pid, uint64_t start);

/* record_ptrace.c: the ptrace method's sampling loop */
int rec_ptrace_run(struct recorder *r, pid_t pid, char **argv, const sigset_t *old_mask,
		   int *stop_sig);
void rec_ptrace_release(struct recorder *r);

/* record_perf.c: the perf method */
/* Can the kernel give GCS call chains through perf? 0, or the exit status
 * for it (GP_EXIT_PERMISSION, GP_EXIT_UNSUPPORTED) with *WHY (a static
 * string) saying why not. *EVENT: the event that will be used. */
int rec_perf_usable(const char **why, const char **event);
int rec_perf_run(struct recorder *r, pid_t pid, char **argv, const sigset_t *old_mask,
		 int *stop_sig);
void rec_perf_release(struct recorder *r);

/* Wait for a stop signal (SIGINT, SIGTERM, SIGHUP) for up to NS: 1 when
 * one came (*STOP_SIG), else 0. SIGCHLD ends the wait too. */
int rec_wait_signal(struct recorder *r, uint64_t ns, int *stop_sig);
/* Take a stop signal from SI into *STOP_SIG: 1 if it was one. */
int rec_stop_signal(struct recorder *r, const siginfo_t *si, int *stop_sig);
void rec_status_line(struct recorder *r, uint64_t now, size_t threads, int final);
/* Called from the sampling loops: every 100 ms the samples recorded so far
 * are written through to the file, so that a recorder killed mid-run (or
 * a full disk) leaves every sample before the last 100 ms readable. */
void rec_flush_file(struct recorder *r, uint64_t now);

#endif
