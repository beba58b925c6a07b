// SPDX-License-Identifier: MIT
/*
 * Live processes through ptrace: every thread stopped (by us with
 * PTRACE_SEIZE + PTRACE_INTERRUPT, or already by the caller), registers
 * and NT_ARM_GCS through PTRACE_GETREGSET, and GCS memory through
 * process_vm_readv in one call per walk. What /proc says (threads, their
 * names, the memory map) is parsed in proc.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "proc.h"

#define DEFAULT_TIMEOUT_MS 5000
/* Attach rounds: threads that a round finds new are attached in the next. */
#define MAX_ATTACH_ROUNDS 64

/* The ptrace state of one thread, beside the target's thread of the same
 * index. */
struct live_thread {
	int attached;           /* seized by us: detach on close */
	int stopped;            /* known to be ptrace-stopped */
	int pending_signal;     /* a signal caught while seizing, given back on detach */
};

/* What a live target keeps, private to this file. */
struct live_state {
	unsigned flags;                 /* GCSWALK_ATTACH_* */
	struct live_thread *threads;    /* as many as the target's threads */
	size_t threads_cap;
	/* Every mapping of the last map read, file-backed or not: the
	 * regions a GCS can be in. */
	struct gw_segment *segs;
	size_t nsegs, segs_cap;
};

static struct live_state *L(const struct gcswalk_target *t)
{
	return t->priv;
}

static struct live_thread *LT(const struct gcswalk_target *t, const struct gw_thread *th)
{
	return &L(t)->threads[th - t->threads];
}

/* A thread for the target, and its ptrace state (all 0); NULL when out
 * of memory. */
static struct gw_thread *add_thread(struct gcswalk_target *t, pid_t tid)
{
	struct live_state *l = L(t);
	struct live_thread *n = gw_grow(l->threads, t->nthreads, &l->threads_cap, sizeof(*n));
	struct gw_thread *th;

	if (!n)
		return NULL;
	l->threads = n;
	th = gw_target_add_thread(t, tid);
	if (th)
		memset(LT(t, th), 0, sizeof(struct live_thread));
	return th;
}

static int live_read(struct gcswalk_target *t, uint64_t addr, void *buf, size_t len, size_t *got)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t r;

	*got = 0;
	if (len == 0)
		return GCSWALK_OK;
	r = process_vm_readv(t->pid, &local, 1, &remote, 1, 0);
	if (r < 0) {
		if (errno == ESRCH)
			return gw_fail(t, GCSWALK_E_THREAD_GONE, "process %d is gone", (int)t->pid);
		if (errno == EPERM)
			return gw_fail_errno(t, GCSWALK_E_PERMISSION, errno,
					     "process_vm_readv of process %d", (int)t->pid);
		return gw_fail_errno(t, GCSWALK_E_IO, errno, "process_vm_readv at %#llx",
				     (unsigned long long)addr);
	}
	*got = (size_t)r;
	if ((size_t)r < len)
		return gw_fail(t, GCSWALK_E_IO, "memory at %#llx is not readable",
			       (unsigned long long)(addr + (size_t)r));
	return GCSWALK_OK;
}

static int find_segment(const struct gcswalk_target *t, uint64_t addr, uint64_t *lo,
			uint64_t *hi)
{
	size_t i;

	for (i = 0; i < L(t)->nsegs; i++) {
		if (addr >= L(t)->segs[i].vaddr && addr - L(t)->segs[i].vaddr < L(t)->segs[i].memsz) {
			*lo = L(t)->segs[i].vaddr;
			*hi = L(t)->segs[i].vaddr + L(t)->segs[i].memsz;
			return 1;
		}
	}
	return 0;
}

static int reread_maps(struct gcswalk_target *t);

/* The mapping holding ADDR; a GCS mapped since the map was read (a new
 * thread's) makes us read the map again. */
static int live_region(struct gcswalk_target *t, uint64_t addr, uint64_t *lo, uint64_t *hi)
{
	int ret;

	if (find_segment(t, addr, lo, hi))
		return GCSWALK_OK;
	ret = reread_maps(t);
	if (ret < 0)
		return ret;
	if (find_segment(t, addr, lo, hi))
		return GCSWALK_OK;
	return gw_fail(t, GCSWALK_E_GCS_NOT_DUMPED, "GCS pointer %#llx is in no mapping",
		       (unsigned long long)addr);
}

/* Re-read the GCS state: proves the thread is still there and stopped. */
static int live_check_thread(struct gcswalk_target *t, struct gw_thread *th)
{
	struct gcswalk_gcs_state g;

	if (L(t)->flags & GCSWALK_ATTACH_NONE)
		return gw_fail(t, GCSWALK_E_NO_REGISTERS,
			       "thread %d: opened with GCSWALK_ATTACH_NONE, no registers",
			       (int)th->tid);
	if (!LT(t, th)->stopped)
		return gw_fail(t, gw_proc_thread_alive(th->tid) ? GCSWALK_E_NOT_STOPPED :
				  GCSWALK_E_THREAD_GONE,
			       "thread %d is not ptrace-stopped", (int)th->tid);
	if (gw_arch_ptrace_gcs(th->tid, &g) == 0) {
		th->gcs = g;
		th->have_gcs = 1;
		return GCSWALK_OK;
	}
	if (errno != ESRCH)
		return GCSWALK_OK;      /* no GCS regset: the walk says so */
	/* A thread we stopped leaves its stop only by dying (SIGKILL), even
	 * if it is not a zombie yet. */
	if (LT(t, th)->attached || !gw_proc_thread_alive(th->tid)) {
		LT(t, th)->stopped = 0;
		return gw_fail(t, GCSWALK_E_THREAD_GONE, "thread %d exited", (int)th->tid);
	}
	return gw_fail(t, GCSWALK_E_NOT_STOPPED, "thread %d is not ptrace-stopped", (int)th->tid);
}

static uint64_t now_ms(void);

/*
 * A seized thread that died is a zombie that only its tracer (us) can
 * collect; until it is collected, its process cannot be reaped by its
 * parent. Collect it, unless it is the leader of a process we are also the
 * parent of: that exit status belongs to the caller's own waitpid().
 */
static void reap_dead_tracee(struct gcswalk_target *t, pid_t tid)
{
	uint64_t deadline = now_ms() + 200;
	int c, st;

	if (tid == t->pid && gw_proc_status_field(tid, "\nPPid:", &c) == getpid())
		return;
	while (waitpid(tid, &st, __WALL | WNOHANG) == 0 && now_ms() < deadline) {
		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL);
	}
}

static void live_close(struct gcswalk_target *t)
{
	size_t i;

	if (!t->priv)
		return;

	for (i = 0; i < t->nthreads; i++) {
		struct live_thread *lt = &L(t)->threads[i];

		if (!lt->attached)
			continue;
		if (ptrace(PTRACE_DETACH, t->threads[i].tid, NULL,
			   (void *)(uintptr_t)lt->pending_signal) != 0) {
			if (errno != ESRCH)
				continue;
			reap_dead_tracee(t, t->threads[i].tid);
		}
		lt->attached = 0;
	}
	free(L(t)->threads);
	free(L(t)->segs);
	free(t->priv);
	t->priv = NULL;
}

/* The process's own view of its files (another mount namespace, a
 * chroot). */
static char *live_file_path(const struct gcswalk_target *t, const char *path)
{
	char *p;

	return asprintf(&p, "/proc/%d/root%s", (int)t->pid, path) < 0 ? NULL : p;
}

static const struct gw_backend live_backend = {
	.name = "live",
	.read = live_read,
	.region = live_region,
	.check_thread = live_check_thread,
	.close = live_close,
	.load_regions = gw_proc_load_regions,
	.file_path = live_file_path,
	.no_gcs_status = GCSWALK_E_NO_GCS_CPU,
	.no_gcs_detail = "the kernel has no such regset",
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Who traces PID, 0 if nobody or unknown. */
static long tracer_of(pid_t pid)
{
	int c;

	return gw_proc_status_field(pid, "\nTracerPid:", &c);
}

static struct gw_thread *find_thread(struct gcswalk_target *t, pid_t tid)
{
	size_t i;

	for (i = 0; i < t->nthreads; i++)
		if (t->threads[i].tid == tid)
			return &t->threads[i];
	return NULL;
}

/*
 * Wait until TID reports a stop; 1 stopped, 0 gone, or an error. A signal
 * that arrived first stops it too (a signal-delivery-stop, no event in the
 * status): *SIG gets it, to be given back on detach, not swallowed.
 */
static int wait_stop(struct gcswalk_target *t, pid_t tid, uint64_t deadline, int *sig)
{
	*sig = 0;
	for (;;) {
		int st;
		pid_t r = waitpid(tid, &st, __WALL | WNOHANG);

		if (r == tid) {
			if (WIFSTOPPED(st)) {
				if ((st >> 16) == 0 && WSTOPSIG(st) != SIGTRAP)
					*sig = WSTOPSIG(st);
				return 1;
			}
			if (WIFEXITED(st) || WIFSIGNALED(st))
				return 0;
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return errno == ECHILD ? 0 : gw_fail_errno(t, GCSWALK_E_SYSTEM, errno,
								   "waitpid(%d)", (int)tid);
		if (now_ms() >= deadline)
			return gw_fail(t, GCSWALK_E_TIMEOUT, "thread %d did not stop", (int)tid);
		{
			struct timespec ts = { 0, 1000000 };

			nanosleep(&ts, NULL);
		}
	}
}

static int seize_one(struct gcswalk_target *t, pid_t tid, uint64_t deadline)
{
	struct gw_thread *th;
	int ret, sig;

	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) != 0) {
		int err = errno;

		if (err == ESRCH)
			return 0;               /* exited before we got to it */
		if (err == EPERM && tracer_of(tid) != 0)
			return gw_fail(t, GCSWALK_E_BUSY, "thread %d is already traced by %ld",
				       (int)tid, tracer_of(tid));
		if (err == EPERM && gw_proc_is_zombie(t->pid))
			return gw_fail(t, GCSWALK_E_NO_PROCESS, "process %d has exited",
				       (int)t->pid);
		return gw_fail_errno(t, err == EPERM ? GCSWALK_E_PERMISSION : GCSWALK_E_SYSTEM,
				     err, "PTRACE_SEIZE of thread %d", (int)tid);
	}
	th = add_thread(t, tid);
	if (!th) {
		/* Best effort: we are failing anyway, and report why. */
		(void)ptrace(PTRACE_DETACH, tid, NULL, NULL);
		return gw_fail(t, GCSWALK_E_NOMEM, "out of memory");
	}
	LT(t, th)->attached = 1;
	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) != 0) {
		if (errno == ESRCH) {
			LT(t, th)->attached = 0;
			t->nthreads--;
			return 0;
		}
		return gw_fail_errno(t, GCSWALK_E_SYSTEM, errno, "PTRACE_INTERRUPT of %d",
				     (int)tid);
	}
	ret = wait_stop(t, tid, deadline, &sig);
	if (ret < 0)
		return ret;
	if (ret == 0) {                         /* it exited while we attached */
		LT(t, th)->attached = 0;
		t->nthreads--;
		return 0;
	}
	LT(t, th)->stopped = 1;
	LT(t, th)->pending_signal = sig;
	return 1;
}

struct scan {
	struct gcswalk_target *t;
	uint64_t deadline;
	size_t fresh;
	int failed;     /* a thread's own failure, already said */
};

/* A thread of /proc/PID/task: attach (SEIZE) or record (STOPPED) it if
 * not seen yet. */
static int scan_one(void *arg, pid_t tid)
{
	struct scan *sc = arg;
	struct gcswalk_target *t = sc->t;
	int ret;

	if (find_thread(t, tid))
		return GCSWALK_OK;
	sc->failed = 1;
	if (L(t)->flags & (GCSWALK_ATTACH_STOPPED | GCSWALK_ATTACH_NONE)) {
		if (!add_thread(t, tid))
			return gw_fail(t, GCSWALK_E_NOMEM, "out of memory");
		sc->failed = 0;
		sc->fresh++;
		return GCSWALK_OK;
	}
	ret = seize_one(t, tid, sc->deadline);
	if (ret < 0)
		return ret;
	sc->failed = 0;
	sc->fresh += (size_t)ret;
	return GCSWALK_OK;
}

/* One pass over /proc/PID/task. *FRESH counts the threads not seen yet. */
static int scan_tasks(struct gcswalk_target *t, uint64_t deadline, size_t *fresh)
{
	struct scan sc = { t, deadline, 0, 0 };
	int ret = gw_proc_each_task(t->pid, scan_one, &sc);

	*fresh = sc.fresh;
	if (ret < 0 && !sc.failed)      /* /proc/PID/task itself */
		return gw_fail_errno(t, ret, errno, "process %d", (int)t->pid);
	return ret;
}

/* A line of /proc/PID/maps: a segment to read memory from, and a
 * mapping to symbolise if it names a file. */
static int add_map_line(void *arg, const struct gw_proc_map *m)
{
	struct gcswalk_target *t = arg;
	struct live_state *ls = L(t);
	struct gw_segment *n;
	int ret;

	n = gw_grow(ls->segs, ls->nsegs, &ls->segs_cap, sizeof(*n));
	if (!n)
		return gw_fail(t, GCSWALK_E_NOMEM, "out of memory");
	ls->segs = n;
	ls->segs[ls->nsegs++] = (struct gw_segment){ m->lo, m->hi - m->lo, 0, m->hi - m->lo };
	if (m->name_len && m->name[0] == '/') {
		ret = gw_target_add_mapping(t, m->lo, m->hi, m->offset, m->name, m->name_len);
		if (ret < 0)
			return gw_fail(t, ret, "out of memory");
	}
	return GCSWALK_OK;
}

static int read_maps(struct gcswalk_target *t)
{
	char path[64], *text;
	int ret;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)t->pid);
	text = gw_proc_read_file(path);
	if (!text)
		return gw_fail_errno(t, gw_proc_status_of_errno(errno), errno, "%s", path);
	ret = gw_proc_parse_maps(text, add_map_line, t);
	free(text);
	return ret;
}

/* The thread's name from /proc; the old one is retired, not freed. */
static int read_thread_name(struct gcswalk_target *t, struct gw_thread *th)
{
	char *name = gw_proc_thread_name(t->pid, th->tid);

	if (!name)
		return GCSWALK_OK;      /* gone: the walk will say so */
	if (th->name && gw_target_retire(t, th->name) < 0) {
		th->name = name;
		return gw_fail(t, GCSWALK_E_NOMEM, "out of memory");
	}
	th->name = name;
	return GCSWALK_OK;
}

/* Registers and GCS state of a thread the caller or we stopped. */
static void read_thread_regs(struct gcswalk_target *t, struct gw_thread *th)
{
	if (gw_arch_ptrace_regs(th->tid, &th->regs) != 0) {
		th->regs.valid = 0;
		if (errno == ESRCH)
			LT(t, th)->stopped = 0; /* gone, or not stopped by the caller */
		return;
	}
	LT(t, th)->stopped = 1;
	th->have_gcs = gw_arch_ptrace_gcs(th->tid, &th->gcs) == 0;
}

static int read_thread_state(struct gcswalk_target *t, struct gw_thread *th)
{
	int ret = read_thread_name(t, th);

	if (ret < 0)
		return ret;
	if (!(L(t)->flags & GCSWALK_ATTACH_NONE))
		read_thread_regs(t, th);
	return GCSWALK_OK;
}

static int open_live(struct gcswalk_target *t, unsigned timeout_ms)
{
	uint64_t deadline = now_ms() + (timeout_ms ? timeout_ms : DEFAULT_TIMEOUT_MS);
	size_t fresh, i;
	int round, ret;

	if (kill(t->pid, 0) != 0 && errno == ESRCH)
		return gw_fail(t, GCSWALK_E_NO_PROCESS, "no process %d", (int)t->pid);
	if (gw_proc_is_zombie(t->pid))
		return gw_fail(t, GCSWALK_E_NO_PROCESS, "process %d has exited", (int)t->pid);
	for (round = 0; round < MAX_ATTACH_ROUNDS; round++) {
		ret = scan_tasks(t, deadline, &fresh);
		if (ret < 0)
			return ret;
		if (fresh == 0 || (L(t)->flags & (GCSWALK_ATTACH_STOPPED | GCSWALK_ATTACH_NONE)))
			break;
	}
	if (t->nthreads == 0)
		return gw_fail(t, GCSWALK_E_NO_PROCESS, "process %d has no threads left",
			       (int)t->pid);
	/* The main thread first, as documented. */
	for (i = 1; i < t->nthreads; i++) {
		if (t->threads[i].tid == t->pid) {
			struct gw_thread tmp = t->threads[0];
			struct live_thread ltmp = L(t)->threads[0];

			t->threads[0] = t->threads[i];
			t->threads[i] = tmp;
			L(t)->threads[0] = L(t)->threads[i];
			L(t)->threads[i] = ltmp;
		}
	}
	for (i = 0; i < t->nthreads; i++) {
		ret = read_thread_state(t, &t->threads[i]);
		if (ret < 0)
			return ret;
	}
	return read_maps(t);
}

int gcswalk_target_open_pid(gcswalk_target **out, int pid, unsigned flags, unsigned timeout_ms,
			    char **errmsg)
{
	struct gcswalk_target *t;

	if (errmsg)
		*errmsg = NULL;
	if (out)
		*out = NULL;
	if (!out || pid <= 0 ||
	    (flags & ~(unsigned)(GCSWALK_ATTACH_STOPPED | GCSWALK_ATTACH_NONE)) ||
	    (flags & GCSWALK_ATTACH_STOPPED && flags & GCSWALK_ATTACH_NONE))
		return GCSWALK_E_INVALID;
	t = gw_target_alloc(&live_backend);
	if (!t)
		return GCSWALK_E_NOMEM;
	t->pid = pid;
	t->priv = calloc(1, sizeof(struct live_state));
	if (!t->priv) {
		gcswalk_target_close(t);
		return GCSWALK_E_NOMEM;
	}
	L(t)->flags = flags;
	t->arch = gw_arch_native();
	if (!t->arch)
		return gw_target_opened(t, gw_fail(t, GCSWALK_E_UNSUPPORTED,
						   "no live back end for this host's architecture"),
					out, errmsg);
	return gw_target_opened(t, open_live(t, timeout_ms), out, errmsg);
}

/* ---- Refreshing a target for another sample ------------------------- */

/*
 * Read the map again. The new mappings replace the old ones, but a
 * mapping of a path that is still mapped keeps its old string (callers may
 * hold it); strings of paths no longer mapped are retired. On failure the
 * old map stays.
 */
static int reread_maps(struct gcswalk_target *t)
{
	struct gw_mapping *old = t->maps;
	struct gw_segment *old_segs = L(t)->segs;
	size_t nold = t->nmaps, old_cap = t->maps_cap, nold_segs = L(t)->nsegs;
	size_t old_segs_cap = L(t)->segs_cap, i, k, next = 0;
	int old_unsorted = t->maps_unsorted, ret;

	t->maps = NULL;
	t->nmaps = t->maps_cap = 0;
	t->maps_unsorted = 0;
	L(t)->segs = NULL;
	L(t)->nsegs = L(t)->segs_cap = 0;
	ret = read_maps(t);
	if (ret < 0) {
		for (i = 0; i < t->nmaps; i++)
			free(t->maps[i].path);
		free(t->maps);
		free(L(t)->segs);
		t->maps = old;
		t->nmaps = nold;
		t->maps_cap = old_cap;
		t->maps_unsorted = old_unsorted;
		L(t)->segs = old_segs;
		L(t)->nsegs = nold_segs;
		L(t)->segs_cap = old_segs_cap;
		return ret;
	}
	/* Both maps are in address order and mostly alike: search from
	 * where the last match was. */
	for (i = 0; i < t->nmaps && nold; i++) {
		for (k = 0; k < nold; k++) {
			struct gw_mapping *o = &old[(next + k) % nold];

			if (o->path && strcmp(o->path, t->maps[i].path) == 0) {
				free(t->maps[i].path);
				t->maps[i].path = o->path;
				o->path = NULL;
				next = (next + k + 1) % nold;
				break;
			}
		}
	}
	for (i = 0; i < nold; i++)
		if (old[i].path && gw_target_retire(t, old[i].path) < 0)
			ret = gw_fail(t, GCSWALK_E_NOMEM, "out of memory");
	free(old);
	free(old_segs);
	gw_target_forget_facts(t);      /* regions: from the new map's smaps */
	return ret;
}

static int refreshable(struct gcswalk_target *t)
{
	return t && t->be == &live_backend && (L(t)->flags & GCSWALK_ATTACH_STOPPED);
}

int gcswalk_target_refresh_thread(gcswalk_target *t, int tid, unsigned flags)
{
	struct gw_thread *th;
	size_t index;
	int ret, fresh = 0;

	if (!refreshable(t) || tid <= 0 ||
	    (flags & ~(unsigned)(GCSWALK_REFRESH_MAPS | GCSWALK_REFRESH_NAMES)))
		return GCSWALK_E_INVALID;
	gw_clear_error(t);
	th = find_thread(t, tid);
	if (!th) {
		if (!gw_proc_has_thread(t->pid, tid))
			return gw_fail(t, errno == ENOENT ? GCSWALK_E_INVALID : GCSWALK_E_SYSTEM,
				       "%d is not a thread of process %d", tid, (int)t->pid);
		th = add_thread(t, tid);
		if (!th)
			return gw_fail(t, GCSWALK_E_NOMEM, "out of memory");
		fresh = 1;
	}
	index = (size_t)(th - t->threads);
	if (fresh || (flags & GCSWALK_REFRESH_NAMES)) {
		ret = read_thread_name(t, th);
		if (ret < 0)
			return ret;
	}
	if (flags & GCSWALK_REFRESH_MAPS) {
		ret = reread_maps(t);
		if (ret < 0)
			return ret;
	}
	read_thread_regs(t, th);
	if (!LT(t, th)->stopped)
		return gw_fail(t, gw_proc_thread_alive(th->tid) ? GCSWALK_E_NOT_STOPPED :
				  GCSWALK_E_THREAD_GONE,
			       "thread %d is not ptrace-stopped", (int)th->tid);
	return index > INT32_MAX ? GCSWALK_E_INVALID : (int)index;
}

int gcswalk_target_refresh(gcswalk_target *t, unsigned flags)
{
	size_t i;
	int ret = GCSWALK_OK;

	if (!t || t->be != &live_backend || (flags & ~(unsigned)(GCSWALK_REFRESH_MAPS | GCSWALK_REFRESH_NAMES)))
		return GCSWALK_E_INVALID;
	gw_clear_error(t);
	if (flags & GCSWALK_REFRESH_MAPS)
		ret = reread_maps(t);
	for (i = 0; i < t->nthreads && ret >= 0 && (flags & GCSWALK_REFRESH_NAMES); i++)
		ret = read_thread_name(t, &t->threads[i]);
	return ret;
}
