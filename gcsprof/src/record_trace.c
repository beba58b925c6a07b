// SPDX-License-Identifier: MIT
/*
 * gcsprof record: ptrace plumbing. Every stop that is not ours is passed
 * straight through: signals are delivered, group-stops stay stopped
 * (PTRACE_LISTEN), so the target behaves as it would untraced.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>

#include "record.h"

/* ---- Ptrace plumbing ------------------------------------------------ */

void rec_resume(struct thread *t)
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
	struct thread *t = rec_find_thread(r, tid);
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
		struct process *p = rec_find_process(r, t->pid);

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
	t = rec_find_thread(r, tid);
	if (!t) {
		/* A new thread's first stop can come before its creator's
		 * clone event. */
		t = rec_add_thread(r, tid, 0);
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
				pid_t g = rec_tgid_of((pid_t)msg);

				if (g > 0)
					pid = g;  /* clone() without CLONE_THREAD */
			}
			if (!rec_add_thread(r, (pid_t)msg, pid))
				return gp_error(GP_EXIT_SYSTEM, "out of memory");
			t = rec_find_thread(r, tid);
		}
		if (!t->want)
			rec_resume(t);
		else
			t->stopped = 1;
		return 0;
	case PTRACE_EVENT_EXEC: {
		struct process *p = rec_find_process(r, t->pid);
		size_t i;

		/* A new program: new mappings; the other threads are gone,
		 * and the exec'ing thread now has the leader's id. */
		if (p) {
			p->asid = r->next_asid++;
			rec_process_release(p);
		}
		if (ptrace(PTRACE_GETEVENTMSG, tid, NULL, &msg) == 0 && (pid_t)msg != tid) {
			struct thread *old = rec_find_thread(r, (pid_t)msg);

			if (old)
				old->gone = 1;
		}
		for (i = 0; i < r->nthreads; i++)
			if (r->threads[i].pid == t->pid && r->threads[i].tid != tid)
				r->threads[i].gone = 1;
		if (tid == r->child)
			r->exec_seen = 1;
		if (!t->want)
			rec_resume(t);
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
			rec_resume(t);
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
		rec_resume(t);
	return 0;
}

/* Handle every wait status available now. */
int rec_drain_events(struct recorder *r)
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
int rec_stop_signal(struct recorder *r, const siginfo_t *si, int *stop_sig)
{
	int sig = si->si_signo;

	if (sig != SIGINT && sig != SIGTERM && sig != SIGHUP)
		return 0;
	*stop_sig = sig;
	r->stop_from_process = si->si_code == SI_USER || si->si_code == SI_QUEUE ||
			       si->si_code == SI_TKILL;
	return 1;
}

int rec_wait_signal(struct recorder *r, uint64_t ns, int *stop_sig)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
	siginfo_t si;

	if (sigtimedwait(&r->sigs, &si, &ts) < 0)
		return 0;
	return rec_stop_signal(r, &si, stop_sig);
}

/* Wait until every wanted thread has stopped (or is gone), up to 2 s. */
int rec_wait_wanted(struct recorder *r, int *stop_sig)
{
	uint64_t deadline = rec_now_ns() + 2000000000u;

	for (;;) {
		size_t i, waiting = 0;
		uint64_t now;
		int ret = rec_drain_events(r);

		if (ret)
			return ret;
		for (i = 0; i < r->nthreads; i++)
			waiting += r->threads[i].want && !r->threads[i].stopped &&
				   !r->threads[i].gone;
		if (!waiting)
			return 0;
		now = rec_now_ns();
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
		(void)rec_wait_signal(r, deadline - now > 10000000u ? 10000000u : deadline - now,
				  stop_sig);
	}
}

/* ---- Detaching ------------------------------------------------------ */

/* Stop every thread and detach, delivering any signal held for it. */
void rec_detach_all(struct recorder *r)
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
	(void)rec_wait_wanted(r, &stop_sig);
	for (i = 0; i < r->nthreads; i++) {
		struct thread *t = &r->threads[i];

		if (t->gone)
			continue;
		if (t->stopped || t->group_stop)
			(void)ptrace(PTRACE_DETACH, t->tid, NULL, (void *)(long)t->pending_sig);
		t->gone = 1;
	}
}

