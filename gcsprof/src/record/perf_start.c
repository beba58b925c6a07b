// SPDX-License-Identifier: MIT
/*
 * gcsprof record, perf method: the target, with its events open. A
 * launched command is held before its exec until they are; with -p every
 * thread of the process gets its own, and its current mappings are taken
 * from libgcswalk's read of its map (the kernel reports only new ones).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "gcsprof.h"
#include "perf.h"
#include "env.h"

int perf_launch(struct recording *rec)
{
	int release, err = 0, ret;

	ret = rec_child_spawn(&rec->child, rec->argv, rec->o->gcs_tunable, &rec->sigs.old_mask,
			      &release);
	if (ret)
		return ret;
	if (!perf_process(rec, rec->child.pid) ||
	    !perf_thread(rec, rec->child.pid, rec->child.pid, NULL))
		err = ENOMEM;
	else
		err = -perf_open_task_events(rec, rec->child.pid);
	if (!err) {
		rec_child_release(release);       /* the command goes on to its exec */
		return 0;
	}
	rec_child_abandon(&rec->child, release);
	return gp_error(err == EACCES || err == EPERM ? GP_EXIT_PERMISSION : GP_EXIT_SYSTEM,
			"cannot sample the command with perf: %s", strerror(err));
}

static int attach_error(int err, pid_t pid)
{
	if (err == EACCES || err == EPERM)
		return gp_error(GP_EXIT_PERMISSION,
				"not permitted to sample process %d (see "
				"/proc/sys/kernel/perf_event_paranoid, or run as root)", (int)pid);
	return gp_error(GP_EXIT_SYSTEM, "perf_event_open for process %d: %s", (int)pid,
			strerror(err));
}

/* Open PID for reading (its map, its threads' names), checking that it is
 * a process and runs with GCS (or a fallback is asked for). */
static int open_process(struct recording *rec, pid_t pid, gcswalk_target **t)
{
	char *msg = NULL;
	int ret;

	if (kill(pid, 0) != 0 && errno == ESRCH)
		return gp_error(GP_EXIT_NO_PROCESS, "no process %d", (int)pid);
	if (rec_tgid_of(pid) != pid)
		return gp_error(GP_EXIT_NO_PROCESS, "no process %d (not a process id)", (int)pid);
	ret = gcswalk_target_open_pid(t, pid, GCSWALK_ATTACH_NONE, 0, &msg);
	if (ret < 0) {
		ret = gp_error(gp_exit_for_gcswalk(ret), "cannot read process %d: %s%s%s", (int)pid,
			       gcswalk_strerror(ret), msg ? ": " : "", msg ? msg : "");
		free(msg);
		return ret;
	}
	if (rec->o->fallback == REC_FALLBACK_NONE && !rec_region_start(*t, GCSWALK_REGION_GCS)) {
		gcswalk_target_close(*t);
		*t = NULL;
		return gp_error(GP_EXIT_TARGET_NO_GCS,
				"process %d runs without %s: start it with %s, or use --fallback fp",
				(int)pid, rec_shadow_stack_name(), rec_shadow_stack_hint());
	}
	return 0;
}

/* The process's vDSO and file mappings as they are now. */
static int note_mappings(struct recording *rec, pid_t pid, gcswalk_target *t)
{
	struct perf_process *p = perf_process(rec, pid);
	size_t i, n = gcswalk_target_mapping_count(t);

	if (!p)
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	p->base.vdso = rec_region_start(t, GCSWALK_REGION_VDSO);
	for (i = 0; i < n; i++) {
		struct gcswalk_mapping m;
		const unsigned char *id;
		size_t id_size;

		if (gcswalk_target_mapping(t, i, &m) != GCSWALK_OK || !m.path)
			continue;
		if (gcswalk_target_mapping_build_id(t, i, &id, &id_size) != GCSWALK_OK) {
			id = NULL;
			id_size = 0;
		}
		if (rec_map_insert(&p->base.map, m.start, m.end, m.offset, m.path, id,
				   id_size > 20 ? 20 : id_size) != 0)
			return gp_error(GP_EXIT_SYSTEM, "out of memory");
	}
	return 0;
}

/* Events on the threads of PID not sampled yet: *FRESH says whether there
 * were any. */
static int open_new_threads(struct recording *rec, pid_t pid, gcswalk_target *t, int *fresh)
{
	int *tids = NULL, ret = 0;
	size_t count, k;

	*fresh = 0;
	if (gcswalk_proc_threads((int)pid, &tids, &count) != GCSWALK_OK)
		return gp_error(GP_EXIT_NO_PROCESS, "no process %d", (int)pid);
	for (k = 0; k < count && !ret; k++) {
		pid_t tid = (pid_t)tids[k];
		struct gcswalk_thread_info info;
		const char *name = NULL;
		int idx, err;

		if (rec_find_thread(&rec->target, tid))
			continue;
		idx = gcswalk_target_refresh_thread(t, (int)tid, GCSWALK_REFRESH_NAMES);
		if (idx >= 0 && gcswalk_target_thread(t, (size_t)idx, &info) == GCSWALK_OK)
			name = info.name;
		if (!perf_thread(rec, tid, pid, name)) {
			ret = gp_error(GP_EXIT_SYSTEM, "out of memory");
			continue;
		}
		err = -perf_open_task_events(rec, tid);
		if (err == ESRCH)
			rec_find_thread(&rec->target, tid)->gone = 1;
		else if (err)
			ret = attach_error(err, pid);
		else
			*fresh = 1;
	}
	free(tids);
	return ret;
}

/*
 * Open events on every thread of PID. Threads created while we do are
 * found by reading the task list again until it has nothing new; one
 * created by a thread whose events were already open is then sampled
 * twice, and perf_sample.c counts only one of the two.
 */
int perf_attach(struct recording *rec)
{
	gcswalk_target *t = NULL;
	pid_t pid = rec->pid;
	int ret, round, fresh = 1;

	ret = open_process(rec, pid, &t);
	if (ret)
		return ret;
	ret = note_mappings(rec, pid, t);
	for (round = 0; round < 64 && fresh && !ret; round++)
		ret = open_new_threads(rec, pid, t, &fresh);
	gcswalk_target_close(t);
	if (!ret && !rec_live_threads(&rec->target))
		ret = gp_error(GP_EXIT_NO_PROCESS, "no process %d", (int)pid);
	return ret;
}
