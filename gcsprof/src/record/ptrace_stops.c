// SPDX-License-Identifier: MIT
/*
 * gcsprof record, ptrace method: the target's stops. Those we asked for
 * (PTRACE_INTERRUPT of a wanted thread) are kept for the sample; every
 * other is passed straight through: signals are delivered, group-stops
 * stay stopped (PTRACE_LISTEN), new threads and processes are added, an
 * exec starts a new address space. The target behaves as it would
 * untraced.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "gcsprof.h"
#include "clock.h"
#include "ptrace.h"

struct pt_thread *pt_add_thread(struct recording *rec, pid_t tid, pid_t pid)
{
	int added;
	struct pt_thread *t = (struct pt_thread *)rec_add_thread(&rec->target, tid, pid, &added);

	if (t && added)
		t->stat_fd = -1;
	return t;
}

static struct pt_thread *find_thread(struct recording *rec, pid_t tid)
{
	return (struct pt_thread *)rec_find_thread(&rec->target, tid);
}

void pt_resume(struct pt_thread *t)
{
	int sig = t->pending_sig;

	t->pending_sig = 0;
	t->stopped = 0;
	t->want = 0;
	if (ptrace(PTRACE_CONT, t->base.tid, NULL, (void *)(long)sig) != 0 && errno == ESRCH)
		t->base.gone = 1;  /* killed meanwhile: its exit is reported later */
}

int pt_interrupt(struct pt_thread *t)
{
	t->want = 1;
	if (!t->stopped && ptrace(PTRACE_INTERRUPT, t->base.tid, NULL, NULL) != 0) {
		t->want = 0;
		return -1;
	}
	return 0;
}

/* A stop that is ours (T wanted) is kept; any other is resumed. */
static void keep_or_resume(struct pt_thread *t)
{
	if (t->want)
		t->stopped = 1;
	else
		pt_resume(t);
}

static int is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

static void on_exit_status(struct recording *rec, pid_t tid, int status)
{
	struct rec_thread *t = rec_find_thread(&rec->target, tid);

	if (tid == rec->child.pid)
		rec_child_exited(&rec->child, status);
	if (t)
		rec_thread_exited(&rec->target, t);
}

/* Thread TID created a thread or process (EVENT): add it. */
static int on_new_task(struct recording *rec, pid_t tid, int event)
{
	struct pt_thread *t = find_thread(rec, tid);
	unsigned long msg = 0;

	if (ptrace(PTRACE_GETEVENTMSG, tid, NULL, &msg) == 0 && msg > 0 && msg <= INT_MAX) {
		pid_t pid = event == PTRACE_EVENT_CLONE ? t->base.pid : (pid_t)msg;

		if (event == PTRACE_EVENT_CLONE) {
			pid_t g = rec_tgid_of((pid_t)msg);

			if (g > 0)
				pid = g;  /* clone() without CLONE_THREAD */
		}
		if (!pt_add_thread(rec, (pid_t)msg, pid))
			return gp_error(GP_EXIT_SYSTEM, "out of memory");
		t = find_thread(rec, tid);
	}
	keep_or_resume(t);
	return 0;
}

/* Thread TID has exec'd: a new program, with new mappings; the other
 * threads are gone, and the exec'ing thread now has the leader's id. */
static void on_exec(struct recording *rec, pid_t tid)
{
	struct pt_thread *t = find_thread(rec, tid), *old;
	struct pt_process *p = (struct pt_process *)rec_find_process(&rec->target, t->base.pid);
	unsigned long msg = 0;

	if (p) {
		p->base.asid = rec_new_asid(&rec->target);
		pt_process_release(p);
	}
	if (ptrace(PTRACE_GETEVENTMSG, tid, NULL, &msg) == 0 && (pid_t)msg != tid &&
	    (old = find_thread(rec, (pid_t)msg)) != NULL)
		old->base.gone = 1;
	rec_exec_threads_gone(&rec->target, t->base.pid, tid);
	if (tid == rec->child.pid)
		rec->child.exec_seen = 1;
	keep_or_resume(t);
}

/* PTRACE_EVENT_STOP of T with signal SIG: a group-stop, or our interrupt. */
static void on_event_stop(struct pt_thread *t, int sig)
{
	if (is_stop_signal(sig)) {
		/* Group-stop: stay stopped as job control wants. */
		t->group_stop = 1;
		t->want = 0;
		t->stopped = 0;
		if (ptrace(PTRACE_LISTEN, t->base.tid, NULL, NULL) != 0 && errno == ESRCH)
			t->base.gone = 1;
		return;
	}
	t->group_stop = 0;
	keep_or_resume(t);
}

/* One wait status of TID: keep the target's behaviour, note what we need. */
static int handle_status(struct recording *rec, pid_t tid, int status)
{
	struct pt_thread *t;
	int sig = WSTOPSIG(status), event = (status >> 16) & 0xff;

	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		on_exit_status(rec, tid, status);
		return 0;
	}
	if (!WIFSTOPPED(status))
		return 0;
	/* A new thread's first stop can come before its creator's clone
	 * event. */
	t = pt_add_thread(rec, tid, 0);
	if (!t)
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	switch (event) {
	case PTRACE_EVENT_CLONE:
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
		return on_new_task(rec, tid, event);
	case PTRACE_EVENT_EXEC:
		on_exec(rec, tid);
		return 0;
	case PTRACE_EVENT_STOP:
		on_event_stop(t, sig);
		return 0;
	default:
		/* A signal-delivery-stop: the signal goes to the target. */
		t->group_stop = 0;
		t->pending_sig = sig;
		keep_or_resume(t);
		return 0;
	}
}

int pt_drain_events(struct recording *rec)
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
		ret = handle_status(rec, tid, status);
		if (ret)
			return ret;
	}
}

/* The wanted threads not stopped yet; with GIVE_UP, each is wanted no
 * more (its stop will be resumed on arrival) and counted lost. */
static size_t not_stopped(struct recording *rec, int give_up)
{
	size_t i, n = 0;

	for (i = 0; i < rec->target.nthreads; i++) {
		struct pt_thread *t = pt_thread_at(rec, i);

		if (!t->want || t->stopped || t->base.gone)
			continue;
		n++;
		if (give_up) {
			t->want = 0;
			rec_out_lost(&rec->out, REC_LOST_TIMEOUT, 1);
		}
	}
	return n;
}

int pt_wait_wanted(struct recording *rec)
{
	uint64_t deadline = rec_now_ns() + 2000000000u;

	for (;;) {
		uint64_t now;
		int ret = pt_drain_events(rec);

		if (ret)
			return ret;
		if (!not_stopped(rec, 0))
			return 0;
		now = rec_now_ns();
		if (now >= deadline) {
			(void)not_stopped(rec, 1);
			return 0;
		}
		(void)rec_signals_wait(&rec->sigs,
				       deadline - now > 10000000u ? 10000000u : deadline - now);
	}
}

void pt_detach_all(struct recording *rec)
{
	size_t i;

	for (i = 0; i < rec->target.nthreads; i++) {
		struct pt_thread *t = pt_thread_at(rec, i);

		if (!t->base.gone && !t->group_stop)
			(void)pt_interrupt(t);
	}
	(void)pt_wait_wanted(rec);
	for (i = 0; i < rec->target.nthreads; i++) {
		struct pt_thread *t = pt_thread_at(rec, i);

		if (t->base.gone)
			continue;
		if (t->stopped || t->group_stop)
			(void)ptrace(PTRACE_DETACH, t->base.tid, NULL, (void *)(long)t->pending_sig);
		t->base.gone = 1;
	}
}
