// SPDX-License-Identifier: MIT
/*
 * gcsprof record, ptrace method: a tick. The threads due a sample are
 * interrupted, and once stopped each is walked through its process's
 * libgcswalk target; the sample's mappings are written before it, and
 * the threads are resumed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gcsprof.h"
#include "clock.h"
#include "ptrace.h"

/* The most frames a ptrace sample keeps: libgcswalk's own limit. */
#define SAMPLE_MAX_FRAMES ((size_t)1 << 22)

/* How often a thread's name is read again (names change with
 * pthread_setname_np and PR_SET_NAME, which no ptrace event reports). */
#define NAME_PERIOD_NS 100000000u

/*
 * Descriptors of /proc/TID/stat files are kept open only below this
 * number, half the usual soft limit of 1024, so that thousands of threads
 * cannot starve gcsprof of descriptors: beyond it the file is opened for
 * each read.
 */
#define STAT_FD_LIMIT 512

/* A thread's scheduler state letter, '?' if unknown, 0 if the thread is
 * gone, and in *CPU_NS the CPU time it has used (user and system, in
 * clock ticks: 10 ms steps), left alone if unknown. libgcswalk keeps the
 * thread's stat file open in t->stat_fd (re-read with pread: no open and
 * close per thread per tick), for the first STAT_FD_LIMIT descriptors. */
static char thread_stat(struct pt_thread *t, uint64_t *cpu_ns)
{
	struct gcswalk_proc_thread info;
	int ret;

	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	ret = gcswalk_proc_thread((int)t->base.pid, (int)t->base.tid, &t->stat_fd, &info);
	if (t->stat_fd >= STAT_FD_LIMIT) {
		close(t->stat_fd);
		t->stat_fd = -1;
	}
	if (ret == GCSWALK_E_NO_PROCESS)
		return 0;
	if (ret != GCSWALK_OK)
		return '?';
	*cpu_ns = info.cpu_time_ns;
	return info.state;
}

void pt_thread_close(struct pt_thread *t)
{
	if (t->stat_fd >= 0)
		close(t->stat_fd);
	t->stat_fd = -1;
}

/*
 * A CPU profile's sample stands for a period of CPU time. A thread is
 * sampled when it is running and has used a period's worth of CPU time
 * since its last sample: with more busy threads than CPUs, each then gets
 * the share of samples it got of the CPUs, not one per tick for waiting
 * its turn. The CPU time comes in clock-tick steps (10 ms), so the credit
 * is allowed to run a few steps ahead before it is capped.
 */
static int cpu_time_due(const struct recording *rec, struct pt_thread *t, uint64_t cpu_ns)
{
	uint64_t period = 1000000000u / rec->hz, cap = 4 * period;

	if (cap < 40000000u)
		cap = 40000000u;
	if (cpu_ns > t->cpu_ns)
		t->cpu_credit_ns += cpu_ns - t->cpu_ns;
	t->cpu_ns = cpu_ns;
	if (t->cpu_credit_ns > cap)
		t->cpu_credit_ns = cap;
	if (t->state != 'R' || t->cpu_credit_ns < period)
		return 0;
	t->cpu_credit_ns -= period;
	return 1;
}

/* Is T due a sample at this tick? (Counts what it must.) */
static int thread_due(struct recording *rec, struct pt_thread *t)
{
	uint64_t cpu_ns;

	if (t->base.gone) {
		pt_thread_close(t);
		return 0;
	}
	if (t->group_stop) {
		if (rec->o->wall)
			rec_out_lost(&rec->out, REC_LOST_STOPPED, 1);
		return 0;
	}
	cpu_ns = t->cpu_ns;
	t->state = thread_stat(t, &cpu_ns);
	if (t->state == 0) {
		t->base.gone = 1;     /* its exit status comes later */
		return 0;
	}
	return rec->o->wall || cpu_time_due(rec, t, cpu_ns);
}

/* Start a walk of thread IDX of P: of its GCS, or with the fallback
 * asked for when it has none (*FALLBACK set). 0 and *WALK, or 1 when the
 * sample is lost (counted). */
static int begin_walk(struct recording *rec, struct pt_process *p, size_t idx,
		      const struct gcswalk_thread_info *info, gcswalk_walk **walk, int *fallback)
{
	struct gcswalk_walk_options wo = GCSWALK_WALK_OPTIONS_INIT;
	int ret;

	/* The whole chain, however deep (the library's default is 1024
	 * frames): a profile must not cut a deep recursion without a word.
	 * The walk allocates by the GCS's depth, not by this bound. */
	wo.max_frames = SAMPLE_MAX_FRAMES;
	*fallback = 0;
	ret = gcswalk_walk_begin(walk, p->target, idx, &wo);
	if (ret == GCSWALK_E_GCS_DISABLED || ret == GCSWALK_E_NO_GCS_CPU) {
		rec_process_no_gcs(&p->base, info->name, ret);
		if (rec->o->fallback == REC_FALLBACK_NONE) {
			rec_out_lost(&rec->out, REC_LOST_NO_GCS, 1);
			return 1;
		}
		wo.method = rec->o->fallback == REC_FALLBACK_FP ? GCSWALK_METHOD_FP :
			    GCSWALK_METHOD_CFI;
		if (wo.method == GCSWALK_METHOD_CFI && !(wo.symbolizer = pt_process_cfi(p))) {
			rec_out_lost(&rec->out, REC_LOST_WALK, 1);
			return 1;
		}
		*fallback = 1;
		ret = gcswalk_walk_begin(walk, p->target, idx, &wo);
	}
	if (ret < 0) {
		rec_out_lost(&rec->out, ret == GCSWALK_E_THREAD_GONE ? REC_LOST_GONE : REC_LOST_WALK,
			     1);
		return 1;
	}
	if (!*fallback)
		p->base.gcs_seen = 1;
	return 0;
}

/* A walk's frame as the profile records it (its kinds: PC, return,
 * sigreturn, fallback return); 0: not recorded. The profile has no kind
 * for an interrupted context's PC (a signal frame's), which the perf
 * method's chains never hold either: both methods leave it out. */
static char frame_kind(const struct gcswalk_frame *f)
{
	switch (f->kind) {
	case GCSWALK_FRAME_PC:
		return GP_FRAME_PC;
	case GCSWALK_FRAME_RETURN:
		return f->source == GCSWALK_SOURCE_GCS ? GP_FRAME_RETURN : GP_FRAME_FALLBACK;
	case GCSWALK_FRAME_SIGRETURN:
		return GP_FRAME_SIGRETURN;
	case GCSWALK_FRAME_LR:
		/* A caller only in the link register (riscv's leaves: the walk
		 * yields it only when the CFI says it is one). */
		return GP_FRAME_RETURN;
	default:
		return 0;      /* caps, terminator, unreadable, invalid, interrupted PC */
	}
}

/* The walk's code frames into the state's frames: their number, or
 * (size_t)-1 when out of memory. */
static size_t walk_frames(struct pt_state *ps, gcswalk_walk *walk)
{
	struct gcswalk_frame f;
	size_t n = 0;

	while (gcswalk_walk_next(walk, &f) == GCSWALK_OK) {
		char kind = frame_kind(&f);
		struct gp_frame *nf;

		if (!kind)
			continue;
		nf = gp_grow(ps->frames, &ps->frames_cap, n + 1, sizeof(*nf));
		if (!nf)
			return (size_t)-1;
		ps->frames = nf;
		ps->frames[n].address = f.address;
		ps->frames[n].kind = kind;
		n++;
	}
	return n;
}

/* Sample one stopped thread T of P, at TIME_NS into the recording. */
static int sample_thread(struct recording *rec, struct pt_process *p, struct pt_thread *t,
			 uint64_t time_ns)
{
	struct pt_state *ps = pt_state(rec);
	struct gcswalk_thread_info info;
	struct gp_rsample s;
	gcswalk_walk *walk = NULL;
	uint64_t now = rec_now_ns();
	unsigned names = now - t->name_ns >= NAME_PERIOD_NS ? GCSWALK_REFRESH_NAMES : 0;
	size_t n;
	int idx, ret, fallback;

	idx = gcswalk_target_refresh_thread(p->target, t->base.tid, names);
	if (idx < 0 || gcswalk_target_thread(p->target, (size_t)idx, &info) != GCSWALK_OK) {
		rec_out_lost(&rec->out, REC_LOST_GONE, 1);
		return 0;
	}
	if (names)
		t->name_ns = now;
	if (begin_walk(rec, p, (size_t)idx, &info, &walk, &fallback))
		return 0;
	n = walk_frames(ps, walk);
	gcswalk_walk_free(walk);
	if (n == (size_t)-1)
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	ret = pt_process_mappings(rec, p, ps->frames, n, now);
	if (ret)
		return ret;
	memset(&s, 0, sizeof(s));
	s.time_ns = time_ns;
	s.pid = p->base.pid;
	s.tid = t->base.tid;
	s.state = t->state ? t->state : '?';
	s.asid = p->base.asid;
	s.thread = (char *)(info.name ? info.name : "");
	s.nframes = n;
	s.cpu = -1;               /* a ptrace stop tells neither CPU nor weight */
	s.fallback = fallback;
	/* The mappings were handed over above, as this method reads them. */
	ret = rec_out_stack(&rec->out, ps->frames, n, p->base.asid, p->base.map.generation,
			    &s.stack);
	if (ret < 0)
		return -ret;
	return rec_out_sample(&rec->out, &s);
}

/* Is a thread of P stopped for this tick? */
static int has_stopped(struct recording *rec, pid_t pid)
{
	size_t i;

	for (i = 0; i < rec->target.nthreads; i++) {
		const struct pt_thread *t = pt_thread_at(rec, i);

		if (t->want && t->stopped && t->base.pid == pid)
			return 1;
	}
	return 0;
}

/* The stopped threads of P: its target is opened at its first sample
 * (reading its whole map) and refreshed for the next ones. */
static int sample_process(struct recording *rec, struct pt_process *p, uint64_t time_ns)
{
	size_t i;
	int ret = 0;

	if (!p->target) {
		ret = pt_process_open(rec, p);
		if (ret < 0) {
			for (i = 0; i < rec->target.nthreads; i++) {
				const struct pt_thread *t = pt_thread_at(rec, i);

				if (t->want && t->stopped && t->base.pid == p->base.pid)
					rec_out_lost(&rec->out, REC_LOST_GONE, 1);
			}
			return 0;
		}
	}
	for (i = 0; i < rec->target.nthreads && ret == 0; i++) {
		struct pt_thread *t = pt_thread_at(rec, i);

		if (t->want && t->stopped && !t->base.gone && t->base.pid == p->base.pid)
			ret = sample_thread(rec, p, t, time_ns);
	}
	return ret;
}

/* Interrupt the threads due a sample: whether any is. */
static int interrupt_due(struct recording *rec)
{
	size_t i;
	int any = 0;

	for (i = 0; i < rec->target.nthreads; i++) {
		struct pt_thread *t = pt_thread_at(rec, i);

		if (!thread_due(rec, t))
			continue;
		any = 1;
		if (pt_interrupt(t) != 0 && errno == ESRCH)
			rec_out_lost(&rec->out, REC_LOST_GONE, 1);
	}
	return any;
}

int pt_sample_round(struct recording *rec)
{
	uint64_t time_ns = rec_now_ns() - rec->start_ns;
	size_t i;
	int ret;

	if (!interrupt_due(rec))
		return 0;
	ret = pt_wait_wanted(rec);
	for (i = 0; i < rec->target.nprocs && ret == 0; i++) {
		struct pt_process *p = pt_process_at(rec, i);

		if (p->base.gone)
			pt_process_release(p);
		else if (has_stopped(rec, p->base.pid))
			ret = sample_process(rec, p, time_ns);
	}
	for (i = 0; i < rec->target.nthreads; i++) {
		struct pt_thread *t = pt_thread_at(rec, i);

		if (t->want && t->stopped && !t->base.gone)
			pt_resume(t);
		t->want = 0;
	}
	return ret;
}
