// SPDX-License-Identifier: MIT
/*
 * gcsprof record, ptrace method: sample every thread of a process tree
 * through ptrace and libgcswalk.
 *
 * The target is seized (PTRACE_SEIZE) with clone, fork, vfork and exec
 * events, so that threads and processes created later are traced too. At
 * each tick the threads to sample are interrupted with PTRACE_INTERRUPT:
 * with --wall all of them, otherwise the running ones that have used a
 * tick's worth of CPU time since they were last sampled (so that a thread
 * waiting for a CPU is not counted as if it had one). When they have
 * stopped, each stopped thread's chain is taken from its GCS through the
 * process's libgcswalk target (GCSWALK_ATTACH_STOPPED: the library only
 * reads; one per process, refreshed per sample, see record_sample.c), the
 * process's new file mappings are written with their build-ids, and the
 * threads are resumed. Every other stop is passed straight through:
 * signals are delivered, group-stops stay stopped (PTRACE_LISTEN), so the
 * target behaves as it would untraced.
 *
 * Signals for gcsprof itself (SIGCHLD, SIGINT, SIGTERM, SIGHUP) are
 * blocked and taken synchronously with sigtimedwait(), which also times
 * the ticks: no handlers, no global state.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"

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

int rec_ptrace_run(struct recorder *r, pid_t pid, char **argv, const sigset_t *old_mask,
		   int *stop_sig)
{
	const struct record_opts *o = r->o;
	uint64_t period, next;
	int ret;

	ret = o->pid ? rec_attach_pid(r, pid) : rec_launch(r, argv, old_mask);
	if (ret == 0 && o->pid)
		ret = rec_check_target_gcs(r, pid);
	if (ret) {
		/* Nothing recorded yet: the caller leaves a valid, empty profile. */
		rec_detach_all(r);
		return ret;
	}
	r->started = 1;

	period = 1000000000u / r->hz;
	r->rng = rec_now_ns() | 1;
	next = rec_now_ns() + next_interval(r, period);
	for (;;) {
		uint64_t now;

		ret = rec_drain_events(r);
		if (ret || r->write_failed || *stop_sig)
			break;
		if (r->child ? r->child_done : rec_live_threads(r) == 0)
			break;
		now = rec_now_ns();
		rec_status_line(r, now, rec_live_threads(r), 0);
		rec_flush_file(r, now);
		if (now >= next) {
			ret = rec_sample_round(r, stop_sig);
			if (ret)
				break;
			/* Late (the round took longer than the gap): skip the
			 * missed ticks and count the next gap from now, after
			 * the round, so the target always runs for a whole gap
			 * between two samples. Counted from before the round,
			 * an expensive sample would be followed at once by the
			 * next, and the two would land next to each other. */
			next += next_interval(r, period);
			now = rec_now_ns();
			if (next < now)
				next = now + next_interval(r, period);
			continue;
		}
		if (rec_wait_signal(r, next - now, stop_sig))
			break;
	}
	rec_status_line(r, rec_now_ns(), 0, 1);
	rec_detach_all(r);
	rec_report_no_gcs(r);
	return ret;
}

void rec_ptrace_release(struct recorder *r)
{
	size_t i;

	for (i = 0; i < r->nthreads; i++)
		rec_thread_release(&r->threads[i]);
	free(r->threads);
	for (i = 0; i < r->nprocs; i++) {
		rec_process_release(&r->procs[i]);
		free(r->procs[i].name);
	}
	free(r->procs);
	r->threads = NULL;
	r->procs = NULL;
	r->nthreads = r->nprocs = 0;
}
