// SPDX-License-Identifier: MIT
/*
 * gcsprof record: launching the command (under ptrace, or held until the
 * perf method's events are on it), or attaching to a running process and
 * checking that it has GCS.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "record.h"

/* ---- Starting ------------------------------------------------------- */

static int seize(struct recorder *r, pid_t tid, pid_t pid)
{
	if (ptrace(PTRACE_SEIZE, tid, NULL, (void *)(long)TRACE_OPTIONS) != 0)
		return -1;
	if (!rec_add_thread(r, tid, pid)) {
		(void)ptrace(PTRACE_DETACH, tid, NULL, NULL);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

/* Attach to every thread of PID (rescanning until no new one appears). */
int rec_attach_pid(struct recorder *r, pid_t pid)
{
	int round, fresh = 1;

	if (kill(pid, 0) != 0 && errno == ESRCH)
		return gp_error(GP_EXIT_NO_PROCESS, "no process %d", (int)pid);
	if (rec_tgid_of(pid) != pid)
		return gp_error(GP_EXIT_NO_PROCESS, "no process %d (not a process id)", (int)pid);
	for (round = 0; round < 64 && fresh; round++) {
		int *tids = NULL, err = 0;
		size_t n, i;

		fresh = 0;
		if (gcswalk_proc_threads((int)pid, &tids, &n) != GCSWALK_OK)
			return gp_error(GP_EXIT_NO_PROCESS, "no process %d", (int)pid);
		for (i = 0; i < n && !err; i++) {
			pid_t tid = (pid_t)tids[i], tracer;

			if (rec_find_thread(r, tid))
				continue;
			if (seize(r, tid, pid) == 0)
				fresh = 1;
			else if (errno == EPERM)
				err = EPERM;
			else if (errno != ESRCH)
				err = errno;
			if (err == EPERM) {
				free(tids);
				tracer = rec_tracer_of(tid);
				if (tracer)
					return gp_error(GP_EXIT_BUSY,
							"process %d is already traced by process %d",
							(int)pid, (int)tracer);
				return gp_error(GP_EXIT_PERMISSION,
						"not permitted to trace process %d (see "
						"/proc/sys/kernel/yama/ptrace_scope, or run as root)",
						(int)pid);
			}
			if (err) {
				free(tids);
				return gp_error(GP_EXIT_SYSTEM, "PTRACE_SEIZE of %d: %s", (int)tid,
						strerror(err));
			}
		}
		free(tids);
	}
	if (!r->nthreads)
		return gp_error(GP_EXIT_NO_PROCESS, "no process %d", (int)pid);
	return 0;
}

/* With -p: the target must have a thread with GCS on. Interrupt all,
 * look, resume. */
int rec_check_target_gcs(struct recorder *r, pid_t pid)
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
	ret = rec_wait_wanted(r, &stop_sig);
	if (ret == 0 &&
	    gcswalk_target_open_pid(&target, pid, GCSWALK_ATTACH_STOPPED, 0, &msg) == GCSWALK_OK) {
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
	for (i = 0; i < r->nthreads; i++)
		if (r->threads[i].want && r->threads[i].stopped)
			rec_resume(&r->threads[i]);
	if (ret)
		return ret;
	if (!any && r->o->fallback == REC_FALLBACK_NONE) {
		rec_detach_all(r);
		return gp_error(GP_EXIT_TARGET_NO_GCS,
				"process %d runs without %s: start it with %s, or use --fallback fp",
				(int)pid, rec_shadow_stack_name(), rec_shadow_stack_hint());
	}
	return 0;
}

int rec_spawn(struct recorder *r, char **argv, const sigset_t *old_mask, int *release_fd)
{
	int sync_pipe[2], err_pipe[2];
	struct rec_env env;
	pid_t pid;

	if (rec_env_for_command(&env, r->o->gcs_tunable))
		return GP_EXIT_SYSTEM;
	if (pipe2(sync_pipe, O_CLOEXEC) != 0) {
		rec_env_free(&env);
		return gp_error(GP_EXIT_SYSTEM, "pipe: %s", strerror(errno));
	}
	if (pipe2(err_pipe, O_CLOEXEC) != 0) {
		close(sync_pipe[0]);
		close(sync_pipe[1]);
		rec_env_free(&env);
		return gp_error(GP_EXIT_SYSTEM, "pipe: %s", strerror(errno));
	}
	pid = fork();
	if (pid < 0) {
		rec_env_free(&env);
		return gp_error(GP_EXIT_SYSTEM, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		char c;
		int e;

		close(sync_pipe[1]);
		close(err_pipe[0]);
		rec_env_apply(&env);
		(void)sigprocmask(SIG_SETMASK, old_mask, NULL);
		/* Wait until the parent is ready for us (it closes its end). */
		while (read(sync_pipe[0], &c, 1) < 0 && errno == EINTR)
			;
		execvp(argv[0], argv);
		e = errno;
		if (write(err_pipe[1], &e, sizeof(e)) < 0)
			_exit(GP_EXIT_EXEC);
		_exit(e == ENOENT ? GP_EXIT_EXEC : 126);
	}
	rec_env_free(&env);
	close(sync_pipe[0]);
	close(err_pipe[1]);
	r->child = pid;
	r->exec_err_fd = err_pipe[0];
	*release_fd = sync_pipe[1];
	return 0;
}

int rec_launch(struct recorder *r, char **argv, const sigset_t *old_mask)
{
	int release, ret = rec_spawn(r, argv, old_mask, &release);

	if (ret)
		return ret;
	if (seize(r, r->child, r->child) != 0) {
		int e = errno;

		close(release);
		kill(r->child, SIGKILL);
		(void)waitpid(r->child, NULL, 0);
		r->child = 0;
		return gp_error(e == EPERM ? GP_EXIT_PERMISSION : GP_EXIT_SYSTEM,
				"cannot trace the command: %s", strerror(e));
	}
	close(release);
	return 0;
}
