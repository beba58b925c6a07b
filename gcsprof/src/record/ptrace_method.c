// SPDX-License-Identifier: MIT
/*
 * gcsprof record, ptrace method (ptrace.h): the table entry. The loop
 * passes the target's stops through, and at each tick takes a round of
 * samples; between ticks it waits for gcsprof's own signals, whose
 * sigtimedwait() also times the ticks.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gcsprof.h"
#include "clock.h"
#include "ptrace.h"

static int pt_usable(const struct record_opts *o, const char **event, const char **why,
		     int *quiet)
{
	(void)o;
	*event = NULL;
	*why = NULL;
	*quiet = 0;
	return 0;
}

/*
 * The time to the next tick: exponentially distributed around the period
 * (ticks as a Poisson process, cut at 4 periods), so that ticks never run
 * in step with a periodic target, which would give some code paths more
 * samples than their share of the time. This matters most when taking a
 * sample costs more than a period (under emulation): the target then runs
 * only between samples, and a fixed gap would alias with its loops.
 */
static uint64_t next_interval(struct pt_state *ps, uint64_t period)
{
	double u, t;

	ps->rng ^= ps->rng << 13;
	ps->rng ^= ps->rng >> 7;
	ps->rng ^= ps->rng << 17;
	u = ((double)(ps->rng >> 11) + 1.0) / 9007199254740993.0;   /* (0, 1] */
	t = -log(u);
	if (t > 4.0)
		t = 4.0;
	return (uint64_t)(t * (double)period) + 1;
}

/* Until a stop signal, the end of the target, or a failure. */
static int pt_loop(struct recording *rec)
{
	struct pt_state *ps = pt_state(rec);
	uint64_t period = 1000000000u / rec->hz, next;
	int ret;

	ps->rng = rec_now_ns() | 1;
	next = rec_now_ns() + next_interval(ps, period);
	for (;;) {
		uint64_t now;

		ret = pt_drain_events(rec);
		if (ret || rec_should_stop(rec, rec_live_threads(&rec->target) > 0))
			break;
		now = rec_now_ns();
		rec_status_show(&rec->status, now, rec->out.nsamples,
				rec_live_threads(&rec->target));
		rec_out_flush(&rec->out, now);
		if (now >= next) {
			ret = pt_sample_round(rec);
			if (ret)
				break;
			/* Late (the round took longer than the gap): skip the
			 * missed ticks and count the next gap from now, after
			 * the round, so the target always runs for a whole gap
			 * between two samples. Counted from before the round,
			 * an expensive sample would be followed at once by the
			 * next, and the two would land next to each other. */
			next += next_interval(ps, period);
			now = rec_now_ns();
			if (next < now)
				next = now + next_interval(ps, period);
			continue;
		}
		if (rec_signals_wait(&rec->sigs, next - now))
			break;
	}
	return ret;
}

static int pt_run(struct recording *rec)
{
	int ret;

	rec->priv = calloc(1, sizeof(struct pt_state));
	if (!rec->priv)
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	rec_target_init(&rec->target, sizeof(struct pt_thread), sizeof(struct pt_process));
	ret = rec->o->pid ? pt_attach(rec) : pt_launch(rec);
	if (ret) {
		/* Nothing recorded yet: the caller leaves a valid, empty profile. */
		pt_detach_all(rec);
		return ret;
	}
	rec->started = 1;
	ret = pt_loop(rec);
	rec_status_clear(&rec->status);
	pt_detach_all(rec);
	rec_report_no_gcs(&rec->target, rec_fallback_name(rec->o->fallback));
	return ret;
}

static void pt_release(struct recording *rec)
{
	size_t i;

	for (i = 0; i < rec->target.nthreads; i++)
		pt_thread_close(pt_thread_at(rec, i));
	for (i = 0; i < rec->target.nprocs; i++)
		pt_process_release(pt_process_at(rec, i));
	if (rec->priv)
		free(pt_state(rec)->frames);
	free(rec->priv);
	rec->priv = NULL;
}

const struct rec_method rec_method_ptrace = {
	.name = "ptrace",
	.cost = "every sample stops the target",
	.usable = pt_usable,
	.rate = NULL,
	.run = pt_run,
	.release = pt_release,
};
