// SPDX-License-Identifier: MIT
/*
 * gcsprof record, perf method (perf.h): the table entry. The loop waits
 * in poll() on the rings and a signalfd for gcsprof's own signals, copies
 * out what the rings hold, and hands it on in time order; at the end the
 * events are disabled and what the rings still hold is recorded too.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gcsprof.h"
#include "clock.h"
#include "perf.h"
#include "env.h"

/* How long the loop sleeps at most: the latency of the status line, of
 * noticing that an attached process is gone, and of reading the rings
 * when they fill slowly (the write-through's 100 ms). With --defer
 * nothing is written before the end, and each wake-up costs the command
 * the CPU time of a poll and a round: once a second. */
#define POLL_MS 100
#define POLL_MS_DEFER 1000

static int perf_usable(const struct record_opts *o, const char **event, const char **why,
		       int *quiet)
{
	static char no_chains[96];

	*event = NULL;
	*quiet = 1;
	if (o->wall) {
		*why = "perf samples threads only while they run, so --wall needs --method ptrace";
		return GP_EXIT_UNSUPPORTED;
	}
	if (o->fallback == REC_FALLBACK_CFI) {
		*why = "the kernel unwinds threads without a shadow stack by frame records only, so "
		       "--fallback cfi needs --method ptrace";
		return GP_EXIT_UNSUPPORTED;
	}
	*quiet = 0;
	switch (gcswalk_system_perf_callchains()) {
	case 1:
		return perf_probe_event(event, why);
	case 0:
		*why = PERF_CALLCHAIN_GCS_OFF;
		return GP_EXIT_UNSUPPORTED;
	default:
		snprintf(no_chains, sizeof(no_chains), "this kernel takes no call chains from the "
			 "%s (no kernel.perf_callchain_gcs)", rec_shadow_stack_name());
		*why = no_chains;
		return GP_EXIT_UNSUPPORTED;
	}
}

static unsigned perf_rate(unsigned hz)
{
	int max_hz = gcswalk_system_perf_max_sample_rate();

	if (max_hz <= 0 || hz <= (unsigned)max_hz)
		return hz;
	/* perf_event_open would refuse it with a bare EINVAL. */
	gp_warn("-F %u is above kernel.perf_event_max_sample_rate (%d; the kernel lowers it when "
		"sampling takes long): sampling at %d Hz", hz, max_hz, max_hz);
	return (unsigned)max_hz;
}

/* The method's state, the depth limit, the events' attributes, the
 * rings and the signalfd, before the target is touched. */
static int perf_setup(struct recording *rec)
{
	struct perf_state *ps = calloc(1, sizeof(*ps));
	int ret;

	if (!ps)
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	rec->priv = ps;
	ps->sigfd = -1;
	rec_target_init(&rec->target, sizeof(struct perf_thread), sizeof(struct perf_process));
	/* Read again as the events are opened: from here a sample's GCSPR
	 * says where its chain came from. */
	ps->gcs_chains = gcswalk_system_perf_callchains() == 1;
	if (!ps->gcs_chains)
		return gp_error(GP_EXIT_UNSUPPORTED, "record: --method perf: %s",
				PERF_CALLCHAIN_GCS_OFF);
	ps->max_stack = perf_max_stack(&ps->max_stack_by);
	if (ps->max_stack && (ret = rec_out_max_stack(&rec->out, ps->max_stack,
						       ps->max_stack_by)) != 0)
		return ret;
	perf_events_attr(rec);
	ret = perf_events_rings(rec);
	if (ret)
		return ret;
	ps->sigfd = rec_signals_fd(&rec->sigs);
	if (ps->sigfd < 0)
		return gp_error(GP_EXIT_SYSTEM, "signalfd: %s", strerror(errno));
	return 0;
}

/* With -p: is any process we sample still there? */
static int any_alive(struct recording *rec)
{
	size_t i;

	for (i = 0; i < rec->target.nprocs; i++) {
		struct rec_process *p = rec_process_at(&rec->target, i);

		if (p->gone)
			continue;
		if (kill(p->pid, 0) == 0 || errno == EPERM)
			return 1;
		p->gone = 1;
	}
	return 0;
}

/* Is any process of -p's target alive? With --defer, the processes it
 * forked are known only once the records held are handled: before the
 * answer is no, they are. */
static int alive(struct recording *rec)
{
	if (any_alive(rec))
		return 1;
	if (!perf_state(rec)->nrefs || perf_drain(rec, 1) != 0)
		return 0;
	return any_alive(rec);
}

/* Until a stop signal, the end of the target, or a failure. */
static int perf_loop(struct recording *rec)
{
	struct perf_state *ps = perf_state(rec);
	struct pollfd *pfds = calloc(ps->nrings + 1, sizeof(*pfds));
	size_t i, n;
	int ret = 0;

	if (!pfds)
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	for (;;) {
		int sigchld = 0;

		n = 0;
		for (i = 0; i < ps->nrings; i++)
			if (ps->rings[i].fd >= 0)
				pfds[n++] = (struct pollfd){ .fd = ps->rings[i].fd, .events = POLLIN };
		pfds[n++] = (struct pollfd){ .fd = ps->sigfd, .events = POLLIN };
		pfds[n - 1].revents = 0;
		if (poll(pfds, n, rec->o->defer ? POLL_MS_DEFER : POLL_MS) < 0 && errno != EINTR) {
			ret = gp_error(GP_EXIT_SYSTEM, "poll: %s", strerror(errno));
			break;
		}
		/* A read that finds nothing is a system call a round for nothing. */
		if (pfds[n - 1].revents & POLLIN)
			(void)rec_signals_read_fd(&rec->sigs, ps->sigfd, &sigchld);
		if (sigchld)
			rec_child_poll(&rec->child);
		ret = perf_drain(rec, 0);
		if (ret || rec->out.failed || rec->sigs.stop_sig)
			break;
		rec_status_show(&rec->status, rec_now_ns(), rec->out.nsamples + ps->held_samples,
				rec_live_threads(&rec->target));
		rec_out_flush(&rec->out, rec_now_ns());
		if (rec_should_stop(rec, rec->child.pid ? 1 : alive(rec)))
			break;
	}
	free(pfds);
	return ret;
}

/* What the rings still hold was recorded: keep it, then the summary. */
static int perf_finish(struct recording *rec, int ret)
{
	perf_disable_events(perf_state(rec));
	if (!ret && !rec->out.failed)
		ret = perf_drain(rec, 1);
	rec_child_poll(&rec->child);
	rec_status_clear(&rec->status);
	rec_report_no_gcs(&rec->target, rec_fallback_name(rec->o->fallback));
	if (!ret && !rec->out.failed)
		ret = perf_write_summary(rec);
	if (gcswalk_system_perf_callchains() != 1)
		gp_warn("kernel.perf_callchain_gcs was set to 0 during the recording: it is read "
			"once, at the start, so chains the kernel walked from frame records after that "
			"are labelled as exact chains from the shadow stack");
	return ret;
}

static int perf_run(struct recording *rec)
{
	int ret = perf_setup(rec);

	if (!ret)
		ret = rec->o->pid ? perf_attach(rec) : perf_launch(rec);
	if (ret)
		return ret;
	rec->started = 1;
	return perf_finish(rec, perf_loop(rec));
}

static void perf_release(struct recording *rec)
{
	struct perf_state *ps = perf_state(rec);

	if (!ps)
		return;
	perf_events_close(ps);
	if (ps->sigfd >= 0)
		close(ps->sigfd);
	perf_tasks_free(rec);
	free(ps->batch);
	free(ps->refs);
	free(ps->frames);
	free(ps->chain);
	free(ps->callers.ips);
	free(ps);
	rec->priv = NULL;
}

const struct rec_method rec_method_perf = {
	.name = "perf",
	.cost = "the target is never stopped",
	.usable = perf_usable,
	.rate = perf_rate,
	.run = perf_run,
	.release = perf_release,
};
