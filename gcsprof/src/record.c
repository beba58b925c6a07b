// SPDX-License-Identifier: MIT
/*
 * gcsprof record: sample every thread of a process tree through ptrace and
 * libgcswalk.
 *
 * The target is seized (PTRACE_SEIZE) with clone, fork, vfork and exec
 * events, so that threads and processes created later are traced too. At
 * each tick the threads to sample (running ones; all of them with --wall)
 * are interrupted with PTRACE_INTERRUPT; when they have stopped, each
 * process is opened with libgcswalk (GCSWALK_ATTACH_STOPPED: the library
 * only reads), each stopped thread's chain is taken from its GCS, the
 * process's new file mappings are written with their build-ids, and the
 * threads are resumed. Every other stop is passed straight through:
 * signals are delivered, group-stops stay stopped (PTRACE_LISTEN), so the
 * target behaves as it would untraced.
 *
 * Signals for gcsprof itself (SIGCHLD, SIGINT, SIGTERM, SIGHUP) are
 * blocked and taken synchronously with sigtimedwait(), which also times
 * the ticks: no handlers, no global state.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gcswalk.h>

#include "gcsprof.h"
#include "profile.h"

struct record_opts {
	unsigned hz;
	const char *output;
	int wall;
	const char *pid;
	const char *fallback;     /* "none", "fp", "cfi" */
	const char *gcs_tunable;  /* value for glibc.cpu.aarch64_gcs */
	int quiet;
};

static const char *const fallback_choices[] = { "none", "fp", "cfi", NULL };
static const char *const tunable_choices[] = { "0", "1", "2", "3", NULL };

#define OPT(field) offsetof(struct record_opts, field)
static const struct gp_option record_options[] = {
	{ "freq", 'F', GP_OPT_UINT, OPT(hz), "HZ", "samples per second per thread (default 99)",
	  1, 10000, NULL },
	{ "output", 'o', GP_OPT_STRING, OPT(output), "FILE", "profile file (default gcsprof.data)",
	  0, 0, NULL },
	{ "wall", 0, GP_OPT_FLAG, OPT(wall), NULL,
	  "sample every thread whatever its state (wall-clock profile)", 0, 0, NULL },
	{ "pid", 'p', GP_OPT_STRING, OPT(pid), "PID", "attach to a running process", 0, 0, NULL },
	{ "fallback", 0, GP_OPT_STRING, OPT(fallback), "none|fp|cfi",
	  "sample threads without GCS with a fallback unwinder (labelled)", 0, 0,
	  fallback_choices },
	{ "gcs-tunable", 0, GP_OPT_STRING, OPT(gcs_tunable), "0-3",
	  "glibc.cpu.aarch64_gcs for a launched command (default 2)", 0, 0, tunable_choices },
	{ "quiet", 'q', GP_OPT_FLAG, OPT(quiet), NULL, "no status line", 0, 0, NULL },
};
#undef OPT

static void record_init(void *p)
{
	struct record_opts *o = p;

	o->hz = 99;
	o->output = "gcsprof.data";
	o->fallback = "none";
	o->gcs_tunable = "2";
}

/* ---- State ---------------------------------------------------------- */

struct thread {
	pid_t tid, pid;           /* pid: its thread group */
	int gone;
	int stopped;              /* in a ptrace-stop we hold for a sample */
	int want;                 /* wanted in the current sample */
	int group_stop;           /* in a group-stop (PTRACE_LISTEN) */
	int pending_sig;          /* to deliver when resumed */
	char state;
};

struct process {
	pid_t pid;
	unsigned asid;
	int nogcs_seen;           /* a walk found GCS off (ld.so runs before it is on) */
	int gcs_seen;             /* a walk found GCS on */
	int nogcs_why;
	char *name;
	int gone;
};

/* A mapping already in the file, per address space. */
struct seen_mapping {
	unsigned asid;
	uint64_t start, end, offset;
	char *path;
};

struct recorder {
	const struct record_opts *o;
	FILE *out;
	const char *out_path;
	int write_failed;
	struct thread *threads;
	size_t nthreads, threads_cap;
	struct process *procs;
	size_t nprocs, procs_cap;
	struct seen_mapping *seen;
	size_t nseen, seen_cap;
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
	struct gp_frame *frames;
	size_t frames_cap;
	uint64_t rng;             /* xorshift state for the tick jitter */
	int stop_from_process;    /* the stop signal was sent by a process, not the tty */
};

enum { LOST_NO_GCS, LOST_GONE, LOST_TIMEOUT, LOST_WALK, LOST_STOPPED, LOST_NLOST };
static const char *const lost_names[LOST_NLOST] = {
	"no-gcs", "thread-gone", "stop-timeout", "walk-error", "group-stopped",
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static struct thread *find_thread(struct recorder *r, pid_t tid)
{
	size_t i;

	for (i = 0; i < r->nthreads; i++)
		if (r->threads[i].tid == tid && !r->threads[i].gone)
			return &r->threads[i];
	return NULL;
}

static struct process *find_process(struct recorder *r, pid_t pid)
{
	size_t i;

	for (i = 0; i < r->nprocs; i++)
		if (r->procs[i].pid == pid && !r->procs[i].gone)
			return &r->procs[i];
	return NULL;
}

static struct process *add_process(struct recorder *r, pid_t pid)
{
	struct process *p = find_process(r, pid), *n;

	if (p)
		return p;
	n = gp_grow(r->procs, &r->procs_cap, r->nprocs + 1, sizeof(*n));
	if (!n)
		return NULL;
	r->procs = n;
	p = &r->procs[r->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->asid = r->next_asid++;
	return p;
}

/* Numeric field NAME ("Tgid:", "TracerPid:") of /proc/TID/status, 0 if
 * the thread is gone or the field is missing. */
static long status_field(pid_t tid, const char *name)
{
	char path[64], *line = NULL;
	size_t cap = 0, len = strlen(name);
	long value = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (getline(&line, &cap, f) > 0)
		if (strncmp(line, name, len) == 0) {
			value = strtol(line + len, NULL, 10);
			break;
		}
	free(line);
	fclose(f);
	return value;
}

static pid_t tgid_of(pid_t tid)
{
	return (pid_t)status_field(tid, "Tgid:");
}

static struct thread *add_thread(struct recorder *r, pid_t tid, pid_t pid)
{
	struct thread *t = find_thread(r, tid), *n;

	if (t)
		return t;
	if (pid <= 0)
		pid = tgid_of(tid);
	if (pid <= 0)
		pid = tid;
	if (!add_process(r, pid))
		return NULL;
	n = gp_grow(r->threads, &r->threads_cap, r->nthreads + 1, sizeof(*n));
	if (!n)
		return NULL;
	r->threads = n;
	t = &r->threads[r->nthreads++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->pid = pid;
	return t;
}

static size_t live_threads(const struct recorder *r)
{
	size_t i, n = 0;

	for (i = 0; i < r->nthreads; i++)
		n += !r->threads[i].gone;
	return n;
}

/* A thread's scheduler state letter from /proc/TID/stat, '?' if unknown.
 * The line is "tid (comm) S ...": comm may hold anything, so the state is
 * after the last ')'. Only a prefix is read: the state is near the start. */
static char thread_state(pid_t tid)
{
	char path[64], buf[256], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return '?';
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2])
		return '?';
	return p[2];
}

/* ---- Mappings and build-ids ---------------------------------------- */

/* The GNU build-id of ELF file PATH into a malloc'd array; 0 if none. */
static size_t read_build_id(const char *path, unsigned char **out)
{
	size_t nph = 0, i, size = 0;
	Elf *elf;
	int fd;

	*out = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF && elf_getphdrnum(elf, &nph) == 0) {
		for (i = 0; i < nph && !*out; i++) {
			GElf_Phdr ph;
			Elf_Data *d;
			GElf_Nhdr nh;
			size_t off = 0, name_off, desc_off;

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
				continue;
			d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz,
						 ELF_T_NHDR);
			while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
				if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
				    memcmp((char *)d->d_buf + name_off, "GNU", 4) == 0 &&
				    nh.n_descsz > 0 && nh.n_descsz <= 64) {
					*out = malloc(nh.n_descsz);
					if (*out) {
						memcpy(*out, (char *)d->d_buf + desc_off, nh.n_descsz);
						size = nh.n_descsz;
					}
					break;
				}
			}
		}
	}
	elf_end(elf);
	close(fd);
	return size;
}

static int write_failed(struct recorder *r)
{
	if (!r->write_failed)
		gp_error(GP_EXIT_OUTPUT, "cannot write %s: %s", r->out_path, strerror(errno));
	r->write_failed = 1;
	return -1;
}

/* Write the mappings of TARGET (address space ASID) not written yet. */
static int note_mappings(struct recorder *r, gcswalk_target *target, unsigned asid, pid_t pid)
{
	size_t i, j, n = gcswalk_target_mapping_count(target);

	for (i = 0; i < n; i++) {
		struct gcswalk_mapping m;
		struct gp_rmapping rm;
		struct seen_mapping *s;
		int known = 0;
		char root_path[PATH_MAX + 64];

		if (gcswalk_target_mapping(target, i, &m) != GCSWALK_OK || !m.path)
			continue;
		for (j = 0; j < r->nseen && !known; j++)
			known = r->seen[j].asid == asid && r->seen[j].start == m.start &&
				r->seen[j].end == m.end && r->seen[j].offset == m.offset &&
				strcmp(r->seen[j].path, m.path) == 0;
		if (known)
			continue;
		s = gp_grow(r->seen, &r->seen_cap, r->nseen + 1, sizeof(*s));
		if (!s)
			return gp_error(GP_EXIT_SYSTEM, "out of memory");
		r->seen = s;
		s = &r->seen[r->nseen];
		s->path = strdup(m.path);
		if (!s->path)
			return gp_error(GP_EXIT_SYSTEM, "out of memory");
		s->asid = asid;
		s->start = m.start;
		s->end = m.end;
		s->offset = m.offset;
		r->nseen++;
		memset(&rm, 0, sizeof(rm));
		rm.asid = asid;
		rm.pid = pid;
		rm.start = m.start;
		rm.end = m.end;
		rm.offset = m.offset;
		rm.path = s->path;
		/* The file as the target sees it (its mount namespace). */
		if (strlen(m.path) < PATH_MAX) {
			snprintf(root_path, sizeof(root_path), "/proc/%d/root%s", (int)pid, m.path);
			rm.build_id_size = read_build_id(root_path, &rm.build_id);
		}
		if (gp_profile_write_mapping(r->out, &rm) != 0) {
			free(rm.build_id);
			return write_failed(r), GP_EXIT_OUTPUT;
		}
		free(rm.build_id);
	}
	return 0;
}

/* ---- Ptrace plumbing ------------------------------------------------ */

#define TRACE_OPTIONS (PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | \
		       PTRACE_O_TRACEEXEC)

static void resume(struct thread *t)
{
	int sig = t->pending_sig;

	t->pending_sig = 0;
	t->stopped = 0;
	t->want = 0;
	if (ptrace(PTRACE_CONT, t->tid, NULL, (void *)(long)sig) != 0 && errno == ESRCH)
		t->gone = 1;  /* killed meanwhile: its exit is reported later */
}

static int is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

static void note_exit(struct recorder *r, pid_t tid, int status)
{
	struct thread *t = find_thread(r, tid);
	size_t i;
	int others = 0;

	if (tid == r->child) {
		r->child_done = 1;
		r->child_status = status;
	}
	if (!t)
		return;
	t->gone = 1;
	for (i = 0; i < r->nthreads; i++)
		others += !r->threads[i].gone && r->threads[i].pid == t->pid;
	if (!others) {
		struct process *p = find_process(r, t->pid);

		if (p)
			p->gone = 1;
	}
}

/* One wait status of TID: keep the target's behaviour, note what we need. */
static int handle_event(struct recorder *r, pid_t tid, int status)
{
	struct thread *t;
	unsigned long msg = 0;
	int sig, event;

	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		note_exit(r, tid, status);
		return 0;
	}
	if (!WIFSTOPPED(status))
		return 0;
	t = find_thread(r, tid);
	if (!t) {
		/* A new thread's first stop can come before its creator's
		 * clone event. */
		t = add_thread(r, tid, 0);
		if (!t)
			return gp_error(GP_EXIT_SYSTEM, "out of memory");
	}
	sig = WSTOPSIG(status);
	event = (status >> 16) & 0xff;
	switch (event) {
	case PTRACE_EVENT_CLONE:
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
		if (ptrace(PTRACE_GETEVENTMSG, tid, NULL, &msg) == 0 && msg > 0 && msg <= INT_MAX) {
			pid_t pid = event == PTRACE_EVENT_CLONE ? t->pid : (pid_t)msg;

			if (event == PTRACE_EVENT_CLONE) {
				pid_t g = tgid_of((pid_t)msg);

				if (g > 0)
					pid = g;  /* clone() without CLONE_THREAD */
			}
			if (!add_thread(r, (pid_t)msg, pid))
				return gp_error(GP_EXIT_SYSTEM, "out of memory");
			t = find_thread(r, tid);
		}
		if (!t->want)
			resume(t);
		else
			t->stopped = 1;
		return 0;
	case PTRACE_EVENT_EXEC: {
		struct process *p = find_process(r, t->pid);
		size_t i;

		/* A new program: new mappings; the other threads are gone,
		 * and the exec'ing thread now has the leader's id. */
		if (p)
			p->asid = r->next_asid++;
		if (ptrace(PTRACE_GETEVENTMSG, tid, NULL, &msg) == 0 && (pid_t)msg != tid) {
			struct thread *old = find_thread(r, (pid_t)msg);

			if (old)
				old->gone = 1;
		}
		for (i = 0; i < r->nthreads; i++)
			if (r->threads[i].pid == t->pid && r->threads[i].tid != tid)
				r->threads[i].gone = 1;
		if (tid == r->child)
			r->exec_seen = 1;
		if (!t->want)
			resume(t);
		else
			t->stopped = 1;
		return 0;
	}
	case PTRACE_EVENT_STOP:
		if (is_stop_signal(sig)) {
			/* Group-stop: stay stopped as job control wants. */
			t->group_stop = 1;
			t->want = 0;
			t->stopped = 0;
			if (ptrace(PTRACE_LISTEN, tid, NULL, NULL) != 0 && errno == ESRCH)
				t->gone = 1;
			return 0;
		}
		t->group_stop = 0;
		if (t->want)
			t->stopped = 1;        /* our interrupt */
		else
			resume(t);
		return 0;
	default:
		break;
	}
	/* A signal-delivery-stop: the signal goes to the target. */
	t->group_stop = 0;
	t->pending_sig = sig;
	if (t->want)
		t->stopped = 1;
	else
		resume(t);
	return 0;
}

/* Handle every wait status available now. */
static int drain_events(struct recorder *r)
{
	for (;;) {
		int status, ret;
		pid_t tid = waitpid(-1, &status, __WALL | WNOHANG);

		if (tid == 0 || (tid < 0 && errno == ECHILD))
			return 0;
		if (tid < 0) {
			if (errno == EINTR)
				continue;
			return gp_error(GP_EXIT_SYSTEM, "waitpid: %s", strerror(errno));
		}
		ret = handle_event(r, tid, status);
		if (ret)
			return ret;
	}
}

/* Wait for SIGCHLD (or a stop request) for at most NS nanoseconds.
 * Returns 1 if a stop was requested (SIGINT, SIGTERM, SIGHUP). */
static int wait_signal(struct recorder *r, uint64_t ns, int *stop_sig)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
	siginfo_t si;
	int sig = sigtimedwait(&r->sigs, &si, &ts);

	if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
		*stop_sig = sig;
		r->stop_from_process = si.si_code == SI_USER || si.si_code == SI_QUEUE ||
				       si.si_code == SI_TKILL;
		return 1;
	}
	return 0;
}

/* Wait until every wanted thread has stopped (or is gone), up to 2 s. */
static int wait_wanted(struct recorder *r, int *stop_sig)
{
	uint64_t deadline = now_ns() + 2000000000u;

	for (;;) {
		size_t i, waiting = 0;
		uint64_t now;
		int ret = drain_events(r);

		if (ret)
			return ret;
		for (i = 0; i < r->nthreads; i++)
			waiting += r->threads[i].want && !r->threads[i].stopped &&
				   !r->threads[i].gone;
		if (!waiting)
			return 0;
		now = now_ns();
		if (now >= deadline) {
			for (i = 0; i < r->nthreads; i++) {
				struct thread *t = &r->threads[i];

				if (t->want && !t->stopped && !t->gone) {
					t->want = 0;       /* its stop will be resumed on arrival */
					r->lost[LOST_TIMEOUT].count++;
				}
			}
			return 0;
		}
		(void)wait_signal(r, deadline - now > 10000000u ? 10000000u : deadline - now,
				  stop_sig);
	}
}

/* ---- Sampling ------------------------------------------------------- */

static char frame_kind(const struct gcswalk_frame *f)
{
	switch (f->kind) {
	case GCSWALK_FRAME_PC:
		return GP_FRAME_PC;
	case GCSWALK_FRAME_RETURN:
		return f->source == GCSWALK_SOURCE_GCS ? GP_FRAME_RETURN : GP_FRAME_FALLBACK;
	case GCSWALK_FRAME_SIGRETURN:
		return GP_FRAME_SIGRETURN;
	default:
		return 0;      /* caps, terminator, unreadable, invalid: not code */
	}
}

/* A walk found GCS off in P. Reported at the end, for processes that never
 * turned it on: every process starts without it while ld.so runs. */
static void note_no_gcs(struct process *p, const char *name, int why)
{
	p->nogcs_seen = 1;
	p->nogcs_why = why;
	if (!p->name && name)
		p->name = strdup(name);
}

static void report_no_gcs(const struct recorder *r)
{
	size_t i;

	for (i = 0; i < r->nprocs; i++) {
		const struct process *p = &r->procs[i];

		if (!p->nogcs_seen || p->gcs_seen)
			continue;
		if (strcmp(r->o->fallback, "none") != 0)
			gp_warn("process %d (%s) ran without GCS (%s): sampled with the %s fallback "
				"unwinder, chains labelled as such", (int)p->pid,
				p->name ? p->name : "?", gcswalk_strerror(p->nogcs_why),
				r->o->fallback);
		else
			gp_warn("process %d (%s) ran without GCS (%s): its samples were skipped; run "
				"it with GLIBC_TUNABLES=glibc.cpu.aarch64_gcs=3 (or build it with GCS "
				"marking), or use --fallback fp", (int)p->pid, p->name ? p->name : "?",
				gcswalk_strerror(p->nogcs_why));
	}
}

/* Sample one stopped thread of TARGET. */
static int sample_thread(struct recorder *r, gcswalk_target *target, struct process *p,
			 struct thread *t, uint64_t time_ns)
{
	struct gcswalk_walk_options wo = GCSWALK_WALK_OPTIONS_INIT;
	struct gcswalk_thread_info info;
	struct gcswalk_symbolizer *sym = NULL;
	struct gcswalk_frame f;
	struct gp_rsample s;
	gcswalk_walk *walk = NULL;
	size_t n = 0;
	int idx = gcswalk_target_thread_index(target, t->tid), ret, fallback = 0;

	if (idx < 0 || gcswalk_target_thread(target, (size_t)idx, &info) != GCSWALK_OK) {
		r->lost[LOST_GONE].count++;
		return 0;
	}
	ret = gcswalk_walk_begin(&walk, target, (size_t)idx, &wo);
	if (ret == GCSWALK_E_GCS_DISABLED || ret == GCSWALK_E_NO_GCS_CPU) {
		note_no_gcs(p, info.name, ret);
		if (strcmp(r->o->fallback, "none") == 0) {
			r->lost[LOST_NO_GCS].count++;
			return 0;
		}
		wo.method = strcmp(r->o->fallback, "fp") == 0 ? GCSWALK_METHOD_FP : GCSWALK_METHOD_CFI;
		if (wo.method == GCSWALK_METHOD_CFI &&
		    gcswalk_symbolizer_new(&sym, target, NULL) != GCSWALK_OK) {
			r->lost[LOST_WALK].count++;
			return 0;
		}
		wo.symbolizer = sym;
		fallback = 1;
		ret = gcswalk_walk_begin(&walk, target, (size_t)idx, &wo);
	}
	if (ret < 0) {
		r->lost[ret == GCSWALK_E_THREAD_GONE ? LOST_GONE : LOST_WALK].count++;
		gcswalk_symbolizer_free(sym);
		return 0;
	}
	if (!fallback)
		p->gcs_seen = 1;
	while (gcswalk_walk_next(walk, &f) == GCSWALK_OK) {
		char kind = frame_kind(&f);
		struct gp_frame *nf;

		if (!kind)
			continue;
		nf = gp_grow(r->frames, &r->frames_cap, n + 1, sizeof(*nf));
		if (!nf) {
			gcswalk_walk_free(walk);
			gcswalk_symbolizer_free(sym);
			return gp_error(GP_EXIT_SYSTEM, "out of memory");
		}
		r->frames = nf;
		r->frames[n].address = f.address;
		r->frames[n].kind = kind;
		n++;
	}
	gcswalk_walk_free(walk);
	gcswalk_symbolizer_free(sym);
	memset(&s, 0, sizeof(s));
	s.time_ns = time_ns;
	s.pid = p->pid;
	s.tid = t->tid;
	s.state = t->state ? t->state : '?';
	s.asid = p->asid;
	s.thread = (char *)(info.name ? info.name : "");
	s.nframes = n;
	s.fallback = fallback;
	if (gp_profile_write_sample(r->out, &s, r->frames) != 0)
		return write_failed(r), GP_EXIT_OUTPUT;
	r->nsamples++;
	return 0;
}

static int sample_process(struct recorder *r, struct process *p, uint64_t time_ns)
{
	gcswalk_target *target = NULL;
	char *msg = NULL;
	size_t i;
	int ret;

	ret = gcswalk_target_open_pid(&target, p->pid, GCSWALK_ATTACH_STOPPED, 0, &msg);
	if (ret < 0) {
		for (i = 0; i < r->nthreads; i++)
			if (r->threads[i].want && r->threads[i].stopped && r->threads[i].pid == p->pid)
				r->lost[LOST_GONE].count++;
		free(msg);
		return 0;
	}
	ret = note_mappings(r, target, p->asid, p->pid);
	for (i = 0; i < r->nthreads && ret == 0; i++) {
		struct thread *t = &r->threads[i];

		if (t->want && t->stopped && !t->gone && t->pid == p->pid)
			ret = sample_thread(r, target, p, t, time_ns);
	}
	gcswalk_target_close(target);
	return ret;
}

static int sample_round(struct recorder *r, int *stop_sig)
{
	uint64_t time_ns = now_ns() - r->start_ns;
	size_t i;
	int ret = 0, any = 0;

	for (i = 0; i < r->nthreads; i++) {
		struct thread *t = &r->threads[i];

		if (t->gone)
			continue;
		if (t->group_stop) {
			if (r->o->wall)
				r->lost[LOST_STOPPED].count++;
			continue;
		}
		t->state = thread_state(t->tid);
		if (t->state == 0) {
			t->gone = 1;     /* its exit status comes later */
			continue;
		}
		if (!r->o->wall && t->state != 'R')
			continue;
		t->want = 1;
		any = 1;
		if (!t->stopped && ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL) != 0) {
			t->want = 0;
			if (errno == ESRCH)
				r->lost[LOST_GONE].count++;
		}
	}
	if (!any)
		return 0;
	ret = wait_wanted(r, stop_sig);
	for (i = 0; i < r->nprocs && ret == 0; i++) {
		struct process *p = &r->procs[i];
		size_t j;
		int has = 0;

		if (p->gone)
			continue;
		for (j = 0; j < r->nthreads; j++)
			has |= r->threads[j].want && r->threads[j].stopped && r->threads[j].pid == p->pid;
		if (has)
			ret = sample_process(r, p, time_ns);
	}
	for (i = 0; i < r->nthreads; i++) {
		struct thread *t = &r->threads[i];

		if (t->want && t->stopped && !t->gone)
			resume(t);
		t->want = 0;
	}
	return ret;
}

/* ---- Detaching ------------------------------------------------------ */

/* Stop every thread and detach, delivering any signal held for it. */
static void detach_all(struct recorder *r)
{
	size_t i;
	int stop_sig = 0;

	for (i = 0; i < r->nthreads; i++) {
		struct thread *t = &r->threads[i];

		if (t->gone || t->group_stop)
			continue;
		t->want = 1;
		if (!t->stopped && ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL) != 0)
			t->want = 0;
	}
	(void)wait_wanted(r, &stop_sig);
	for (i = 0; i < r->nthreads; i++) {
		struct thread *t = &r->threads[i];

		if (t->gone)
			continue;
		if (t->stopped || t->group_stop)
			(void)ptrace(PTRACE_DETACH, t->tid, NULL, (void *)(long)t->pending_sig);
		t->gone = 1;
	}
}

/* ---- Starting ------------------------------------------------------- */

static int seize(struct recorder *r, pid_t tid, pid_t pid)
{
	if (ptrace(PTRACE_SEIZE, tid, NULL, (void *)(long)TRACE_OPTIONS) != 0)
		return -1;
	if (!add_thread(r, tid, pid)) {
		(void)ptrace(PTRACE_DETACH, tid, NULL, NULL);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

static long tracer_of(pid_t pid)
{
	return status_field(pid, "TracerPid:");
}

/* Attach to every thread of PID (rescanning until no new one appears). */
static int attach_pid(struct recorder *r, pid_t pid)
{
	char path[64];
	int round, fresh = 1;

	if (kill(pid, 0) != 0 && errno == ESRCH)
		return gp_error(GP_EXIT_NO_PROCESS, "no process %d", (int)pid);
	if (tgid_of(pid) != pid)
		return gp_error(GP_EXIT_NO_PROCESS, "no process %d (not a process id)", (int)pid);
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	for (round = 0; round < 64 && fresh; round++) {
		struct dirent **names = NULL;
		int n, i;

		fresh = 0;
		n = scandir(path, &names, NULL, NULL);
		if (n < 0)
			return gp_error(GP_EXIT_NO_PROCESS, "no process %d", (int)pid);
		for (i = 0; i < n; i++) {
			char *end;
			long tid = strtol(names[i]->d_name, &end, 10);

			if (*end == '\0' && tid > 0 && tid <= INT_MAX && !find_thread(r, (pid_t)tid)) {
				if (seize(r, (pid_t)tid, pid) == 0)
					fresh = 1;
				else if (errno == EPERM) {
					int e;

					for (e = i; e < n; e++)
						free(names[e]);
					free(names);
					if (tracer_of((pid_t)tid))
						return gp_error(GP_EXIT_BUSY,
								"process %d is already traced by process %ld",
								(int)pid, tracer_of((pid_t)tid));
					return gp_error(GP_EXIT_PERMISSION,
							"not permitted to trace process %d (see "
							"/proc/sys/kernel/yama/ptrace_scope, or run as root)",
							(int)pid);
				} else if (errno != ESRCH) {
					int e = errno, k;

					for (k = i; k < n; k++)
						free(names[k]);
					free(names);
					return gp_error(GP_EXIT_SYSTEM, "PTRACE_SEIZE of %ld: %s", tid,
							strerror(e));
				}
			}
			free(names[i]);
		}
		free(names);
	}
	if (!r->nthreads)
		return gp_error(GP_EXIT_NO_PROCESS, "no process %d", (int)pid);
	return 0;
}

/* With -p: the target must have a thread with GCS on. Interrupt all,
 * look, resume. */
static int check_target_gcs(struct recorder *r, pid_t pid)
{
	gcswalk_target *target = NULL;
	char *msg = NULL;
	size_t i, n;
	int stop_sig = 0, ret, any = 0;

	for (i = 0; i < r->nthreads; i++) {
		r->threads[i].want = 1;
		if (ptrace(PTRACE_INTERRUPT, r->threads[i].tid, NULL, NULL) != 0)
			r->threads[i].want = 0;
	}
	ret = wait_wanted(r, &stop_sig);
	if (ret == 0 &&
	    gcswalk_target_open_pid(&target, pid, GCSWALK_ATTACH_STOPPED, 0, &msg) == GCSWALK_OK) {
		n = gcswalk_target_thread_count(target);
		for (i = 0; i < n; i++) {
			struct gcswalk_thread_info info;

			if (gcswalk_target_thread(target, i, &info) == GCSWALK_OK && info.have_gcs &&
			    (info.gcs.features_enabled & 1))
				any = 1;
		}
		gcswalk_target_close(target);
	}
	free(msg);
	for (i = 0; i < r->nthreads; i++)
		if (r->threads[i].want && r->threads[i].stopped)
			resume(&r->threads[i]);
	if (ret)
		return ret;
	if (!any && strcmp(r->o->fallback, "none") == 0) {
		detach_all(r);
		return gp_error(GP_EXIT_TARGET_NO_GCS,
				"process %d runs without GCS: start it with "
				"GLIBC_TUNABLES=glibc.cpu.aarch64_gcs=3 (or a GCS-marked build), or use "
				"--fallback fp", (int)pid);
	}
	return 0;
}

/* The GLIBC_TUNABLES value a launched command gets. NULL: leave as is. */
static char *tunables_for_command(const char *value)
{
	const char *cur = getenv("GLIBC_TUNABLES");
	char *s;

	if (cur && strstr(cur, "glibc.cpu.aarch64_gcs"))
		return NULL;             /* the user chose */
	if (asprintf(&s, "%s%sglibc.cpu.aarch64_gcs=%s", cur ? cur : "", cur && *cur ? ":" : "",
		     value) < 0)
		return NULL;
	return s;
}

static int launch(struct recorder *r, char **argv, const sigset_t *old_mask)
{
	int sync_pipe[2], err_pipe[2];
	char *tunables = tunables_for_command(r->o->gcs_tunable);
	pid_t pid;

	if (pipe2(sync_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
		free(tunables);
		return gp_error(GP_EXIT_SYSTEM, "pipe: %s", strerror(errno));
	}
	pid = fork();
	if (pid < 0) {
		free(tunables);
		return gp_error(GP_EXIT_SYSTEM, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		char c;
		int e;

		close(sync_pipe[1]);
		close(err_pipe[0]);
		if (tunables)
			(void)setenv("GLIBC_TUNABLES", tunables, 1);
		(void)sigprocmask(SIG_SETMASK, old_mask, NULL);
		/* Wait until the parent has seized us (it closes its end). */
		while (read(sync_pipe[0], &c, 1) < 0 && errno == EINTR)
			;
		execvp(argv[0], argv);
		e = errno;
		if (write(err_pipe[1], &e, sizeof(e)) < 0)
			_exit(GP_EXIT_EXEC);
		_exit(e == ENOENT ? GP_EXIT_EXEC : 126);
	}
	free(tunables);
	close(sync_pipe[0]);
	close(err_pipe[1]);
	r->child = pid;
	r->exec_err_fd = err_pipe[0];
	if (seize(r, pid, pid) != 0) {
		int e = errno;

		close(sync_pipe[1]);
		kill(pid, SIGKILL);
		(void)waitpid(pid, NULL, 0);
		return gp_error(e == EPERM ? GP_EXIT_PERMISSION : GP_EXIT_SYSTEM,
				"cannot trace the command: %s", strerror(e));
	}
	close(sync_pipe[1]);
	return 0;
}

/* ---- Status line ---------------------------------------------------- */

static void status_line(struct recorder *r, uint64_t now, int final)
{
	double secs = (double)(now - r->start_ns) / 1e9;

	if (!r->tty)
		return;
	if (final) {
		fputs("\r\033[K", stderr);
		return;
	}
	if (now - r->last_status_ns < 250000000u)
		return;
	r->last_status_ns = now;
	fprintf(stderr, "\r\033[Kgcsprof: %.1f s, %llu samples, %zu threads, %.0f samples/s", secs,
		(unsigned long long)r->nsamples, live_threads(r),
		secs > 0 ? (double)r->nsamples / secs : 0.0);
}

/* ---- The command ---------------------------------------------------- */

/*
 * The time to the next tick: exponentially distributed around the period
 * (ticks as a Poisson process, cut at 4 periods), so that ticks never run
 * in step with a periodic target, which would give some code paths more
 * samples than their share of the time. This matters most when taking a
 * sample costs more than a period (under emulation): the target then runs
 * only between samples, and a fixed gap would alias with its loops.
 */
static uint64_t next_interval(struct recorder *r, uint64_t period)
{
	double u, t;

	r->rng ^= r->rng << 13;
	r->rng ^= r->rng >> 7;
	r->rng ^= r->rng << 17;
	u = ((double)(r->rng >> 11) + 1.0) / 9007199254740993.0;   /* (0, 1] */
	t = -log(u);
	if (t > 4.0)
		t = 4.0;
	return (uint64_t)(t * (double)period) + 1;
}

static int finish_file(struct recorder *r)
{
	uint64_t nmappings = r->nseen;
	size_t i;
	int ret = 0;

	for (i = 0; i < LOST_NLOST; i++)
		r->lost[i].reason = (char *)lost_names[i];
	if (!r->write_failed &&
	    gp_profile_write_trailer(r->out, now_ns() - r->start_ns, r->lost, LOST_NLOST,
				     r->nsamples, nmappings) != 0)
		write_failed(r);
	if (fclose(r->out) != 0 && !r->write_failed)
		write_failed(r);
	r->out = NULL;
	if (r->write_failed)
		ret = GP_EXIT_OUTPUT;
	return ret;
}

static char *join_command(char **argv, int argc)
{
	size_t len = 1;
	char *s;
	int i;

	for (i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = malloc(len);
	if (!s)
		return NULL;
	s[0] = '\0';
	for (i = 0; i < argc; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

static int record_run(void *p, int argc, char **argv)
{
	const struct record_opts *o = p;
	struct recorder r;
	sigset_t old_mask;
	char *command = NULL;
	pid_t pid = 0;
	int ret = 0, stop_sig = 0, i;
	uint64_t period, next;

	memset(&r, 0, sizeof(r));
	r.o = o;
	r.exec_err_fd = -1;
	if (!o->pid && argc == 0)
		return gp_error(GP_EXIT_USAGE, "record: give a command to run or -p PID");
	if (o->pid && argc > 0)
		return gp_error(GP_EXIT_USAGE, "record: give either -p PID or a command, not both");
	if (o->pid) {
		char *end;
		long v = strtol(o->pid, &end, 10);

		if (*end || end == o->pid || v <= 0 || v > INT_MAX)
			return gp_error(GP_EXIT_USAGE, "record: -p: '%s' is not a process id", o->pid);
		pid = (pid_t)v;
	}
#if !defined(__aarch64__)
	(void)ret;
	return gp_error(GP_EXIT_UNSUPPORTED,
			"record: recording needs an arm64 system with GCS (this is not arm64)");
#endif
	if (!gp_kernel_has_gcs() && strcmp(o->fallback, "none") == 0)
		return gp_error(GP_EXIT_KERNEL_NO_GCS,
				"record: this CPU or kernel has no GCS (no HWCAP_GCS in AT_HWCAP)");
	r.out_path = o->output;
	r.out = fopen(o->output, "w");
	if (!r.out)
		return gp_error(GP_EXIT_OUTPUT, "cannot write %s: %s", o->output, strerror(errno));
	command = o->pid ? NULL : join_command(argv, argc);
	if (o->pid && asprintf(&command, "pid %d", (int)pid) < 0)
		command = NULL;
	if (!command) {
		fclose(r.out);
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	}
	if (gp_profile_write_header(r.out, o->hz, o->wall ? "wall" : "cpu", command) != 0) {
		free(command);
		write_failed(&r);
		fclose(r.out);
		return GP_EXIT_OUTPUT;
	}
	free(command);
	r.tty = !o->quiet && isatty(STDERR_FILENO);
	sigemptyset(&r.sigs);
	sigaddset(&r.sigs, SIGCHLD);
	sigaddset(&r.sigs, SIGINT);
	sigaddset(&r.sigs, SIGTERM);
	sigaddset(&r.sigs, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &r.sigs, &old_mask) != 0) {
		fclose(r.out);
		return gp_error(GP_EXIT_SYSTEM, "sigprocmask: %s", strerror(errno));
	}
	r.start_ns = now_ns();
	ret = o->pid ? attach_pid(&r, pid) : launch(&r, argv, &old_mask);
	if (ret == 0 && o->pid)
		ret = check_target_gcs(&r, pid);
	if (ret) {
		/* Nothing recorded yet: leave a valid, empty profile. */
		detach_all(&r);
		(void)finish_file(&r);
		goto out;
	}

	period = 1000000000u / o->hz;
	r.rng = now_ns() | 1;
	next = now_ns() + next_interval(&r, period);
	for (;;) {
		uint64_t now;

		ret = drain_events(&r);
		if (ret || r.write_failed || stop_sig)
			break;
		if (r.child ? r.child_done : live_threads(&r) == 0)
			break;
		now = now_ns();
		status_line(&r, now, 0);
		if (now >= next) {
			ret = sample_round(&r, &stop_sig);
			if (ret)
				break;
			next += next_interval(&r, period);
			if (next < now)
				next = now + next_interval(&r, period);  /* late: skip, no burst */
			continue;
		}
		if (wait_signal(&r, next - now, &stop_sig))
			break;
	}
	status_line(&r, now_ns(), 1);
	detach_all(&r);
	report_no_gcs(&r);
	i = finish_file(&r);
	if (!ret)
		ret = i;
	if (r.child && !r.child_done && stop_sig && r.stop_from_process)
		/* Someone signalled gcsprof alone: the command gets the same
		 * signal, as both would from the terminal's Ctrl-C. */
		(void)kill(r.child, stop_sig);
	if (r.child && !r.child_done) {
		/* Wait for the command; a second signal ends gcsprof at once,
		 * leaving the command running. */
		for (;;) {
			int st;
			pid_t w = waitpid(r.child, &st, WNOHANG);

			if (w == r.child && (WIFEXITED(st) || WIFSIGNALED(st))) {
				r.child_done = 1;
				r.child_status = st;
				break;
			}
			if (w < 0 && errno != EINTR)
				break;
			stop_sig = 0;
			if (wait_signal(&r, 100000000u, &stop_sig))
				break;
		}
	}
	if (r.child && r.child_done && !r.exec_seen) {
		int e = 0;

		if (read(r.exec_err_fd, &e, sizeof(e)) == (ssize_t)sizeof(e) && e) {
			ret = gp_error(e == ENOENT ? GP_EXIT_EXEC : 126, "cannot run %s: %s", argv[0],
				       strerror(e));
			goto out;
		}
	}
	if (ret == 0 && r.child && r.child_done) {
		if (WIFEXITED(r.child_status))
			ret = WEXITSTATUS(r.child_status);
		else if (WIFSIGNALED(r.child_status))
			ret = 128 + WTERMSIG(r.child_status);
	} else if (ret == 0 && r.child && stop_sig)
		ret = 128 + stop_sig;
out:
	if (r.exec_err_fd >= 0)
		close(r.exec_err_fd);
	for (i = 0; (size_t)i < r.nseen; i++)
		free(r.seen[i].path);
	free(r.seen);
	free(r.threads);
	for (i = 0; (size_t)i < r.nprocs; i++)
		free(r.procs[i].name);
	free(r.procs);
	free(r.frames);
	(void)sigprocmask(SIG_SETMASK, &old_mask, NULL);
	return ret;
}

const struct gp_command gp_cmd_record = {
	.name = "record",
	.synopsis = "[-F HZ] [-o FILE] [--wall] [--fallback fp|cfi] (-p PID | [--] COMMAND [ARGS...])",
	.summary = "sample the call chains of a process from their GCS into a profile file",
	.options = record_options,
	.noptions = sizeof(record_options) / sizeof(record_options[0]),
	.min_args = 0,
	.max_args = -1,
	.stop_at_operand = 1,
	.run = record_run,
	.opts_size = sizeof(struct record_opts),
	.init = record_init,
};
