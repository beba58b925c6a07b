// SPDX-License-Identifier: MIT
/*
 * gcsprof record, ptrace method: the target, seized. A launched command
 * is seized while it is held before its exec; with -p every thread of the
 * process is, and the process must have a thread with GCS on (or a
 * fallback asked for).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>

#include "gcsprof.h"
#include "ptrace.h"
#include "env.h"

static int seize(struct recording *rec, pid_t tid, pid_t pid)
{
	if (ptrace(PTRACE_SEIZE, tid, NULL, (void *)(long)TRACE_OPTIONS) != 0)
		return -1;
	if (!pt_add_thread(rec, tid, pid)) {
		(void)ptrace(PTRACE_DETACH, tid, NULL, NULL);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

/* The process tracing thread TID, 0 if none or unknown. */
static pid_t tracer_of(pid_t tid)
{
	struct gcswalk_proc_thread info;

	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	return gcswalk_proc_thread((int)tid, (int)tid, NULL, &info) == GCSWALK_OK ?
	       (pid_t)info.tracer_pid : 0;
}

/* Why thread TID of PID could not be seized (ERR): the exit status. */
static int seize_error(pid_t pid, pid_t tid, int err)
{
	pid_t tracer;

	if (err != EPERM)
		return gp_error(GP_EXIT_SYSTEM, "PTRACE_SEIZE of %d: %s", (int)tid, strerror(err));
	tracer = tracer_of(tid);
	if (tracer)
		return gp_error(GP_EXIT_BUSY, "process %d is already traced by process %d", (int)pid,
				(int)tracer);
	return gp_error(GP_EXIT_PERMISSION,
			"not permitted to trace process %d (see "
			"/proc/sys/kernel/yama/ptrace_scope, or run as root)", (int)pid);
}

/* Seize the threads of PID not seized yet: *FRESH says whether there were
 * any. 0, or an exit status. */
static int seize_new_threads(struct recording *rec, pid_t pid, int *fresh)
{
	int *tids = NULL, ret = 0;
	size_t n, i;

	*fresh = 0;
	if (gcswalk_proc_threads((int)pid, &tids, &n) != GCSWALK_OK)
		return gp_error(GP_EXIT_NO_PROCESS, "no process %d", (int)pid);
	for (i = 0; i < n && !ret; i++) {
		pid_t tid = (pid_t)tids[i];

		if (rec_find_thread(&rec->target, tid))
			continue;
		if (seize(rec, tid, pid) == 0)
			*fresh = 1;
		else if (errno != ESRCH)
			ret = seize_error(pid, tid, errno);
	}
	free(tids);
	return ret;
}

/* Seize every thread of PID (rescanning until no new one appears). */
static int seize_process(struct recording *rec, pid_t pid)
{
	int round, fresh = 1, ret = 0;

	if (kill(pid, 0) != 0 && errno == ESRCH)
		return gp_error(GP_EXIT_NO_PROCESS, "no process %d", (int)pid);
	if (rec_tgid_of(pid) != pid)
		return gp_error(GP_EXIT_NO_PROCESS, "no process %d (not a process id)", (int)pid);
	for (round = 0; round < 64 && fresh && !ret; round++)
		ret = seize_new_threads(rec, pid, &fresh);
	if (!ret && !rec->target.nthreads)
		ret = gp_error(GP_EXIT_NO_PROCESS, "no process %d", (int)pid);
	return ret;
}

/* Does a thread of PID (its threads stopped for us) have GCS on? */
static int any_gcs(pid_t pid)
{
	gcswalk_target *target = NULL;
	char *msg = NULL;
	size_t i, n;
	int any = 0;

	if (gcswalk_target_open_pid(&target, pid, GCSWALK_ATTACH_STOPPED, 0, &msg) == GCSWALK_OK) {
		n = gcswalk_target_thread_count(target);
		for (i = 0; i < n; i++) {
			struct gcswalk_thread_info info;

			if (gcswalk_target_thread(target, i, &info) == GCSWALK_OK && info.have_gcs &&
			    (info.gcs.features_enabled & GCSWALK_GCS_ENABLE))
				any = 1;
		}
		gcswalk_target_close(target);
	}
	free(msg);
	return any;
}

/* With -p: the target must have a thread with GCS on. Interrupt all,
 * look, resume. */
static int check_target_gcs(struct recording *rec, pid_t pid)
{
	size_t i;
	int ret, any = 0;

	for (i = 0; i < rec->target.nthreads; i++)
		(void)pt_interrupt(pt_thread_at(rec, i));
	ret = pt_wait_wanted(rec);
	if (ret == 0)
		any = any_gcs(pid);
	for (i = 0; i < rec->target.nthreads; i++) {
		struct pt_thread *t = pt_thread_at(rec, i);

		if (t->want && t->stopped)
			pt_resume(t);
	}
	if (ret)
		return ret;
	if (!any && rec->o->fallback == REC_FALLBACK_NONE) {
		pt_detach_all(rec);
		return gp_error(GP_EXIT_TARGET_NO_GCS,
				"process %d runs without %s: start it with %s, or use --fallback fp",
				(int)pid, rec_shadow_stack_name(), rec_shadow_stack_hint());
	}
	return 0;
}

int pt_attach(struct recording *rec)
{
	int ret = seize_process(rec, rec->pid);

	return ret ? ret : check_target_gcs(rec, rec->pid);
}

int pt_launch(struct recording *rec)
{
	int release, e, ret;

	ret = rec_child_spawn(&rec->child, rec->argv, rec->o->gcs_tunable, &rec->sigs.old_mask,
			      &release);
	if (ret)
		return ret;
	if (seize(rec, rec->child.pid, rec->child.pid) == 0) {
		rec_child_release(release);
		return 0;
	}
	e = errno;
	rec_child_abandon(&rec->child, release);
	return gp_error(e == EPERM ? GP_EXIT_PERMISSION : GP_EXIT_SYSTEM,
			"cannot trace the command: %s", strerror(e));
}
