// SPDX-License-Identifier: MIT
/*
 * gcsprof record, perf method: the processes and threads as the kernel's
 * records tell them, in the target's table (target.h) with what the perf
 * method adds (struct perf_thread, struct perf_process).
 */
#include <stdlib.h>
#include <string.h>

#include "gcsprof.h"
#include "perf.h"

struct perf_thread *perf_find_thread(struct recording *rec, pid_t tid)
{
	return (struct perf_thread *)rec_find_thread(&rec->target, tid);
}

struct perf_process *perf_find_process(struct recording *rec, pid_t pid)
{
	return (struct perf_process *)rec_find_process(&rec->target, pid);
}

struct perf_process *perf_process(struct recording *rec, pid_t pid)
{
	int added;
	struct perf_process *p = (struct perf_process *)rec_add_process(&rec->target, pid, &added);

	if (p && added)
		p->fresh = 1;
	return p;
}

int perf_set_name(char **dst, const char *name)
{
	char *n;

	if (!name || (*dst && strcmp(*dst, name) == 0))
		return 0;
	n = strdup(name);
	if (!n)
		return -1;
	free(*dst);
	*dst = n;
	return 0;
}

struct perf_thread *perf_thread(struct recording *rec, pid_t tid, pid_t pid, const char *name)
{
	struct perf_thread *t = perf_find_thread(rec, tid);

	if (t && t->base.pid != pid) {
		/* A tid reused by another process: the old thread is gone. */
		t->base.gone = 1;
		t = NULL;
	}
	if (!t) {
		if (!perf_process(rec, pid))
			return NULL;
		t = (struct perf_thread *)rec_add_thread(&rec->target, tid, pid, NULL);
		if (!t)
			return NULL;
	}
	if (perf_set_name(&t->name, name) != 0)
		return NULL;
	return t;
}

void perf_tasks_free(struct recording *rec)
{
	size_t i;

	for (i = 0; i < rec->target.nprocs; i++)
		perf_leaf_free((struct perf_process *)rec_process_at(&rec->target, i));

	for (i = 0; i < rec->target.nthreads; i++) {
		struct perf_thread *t = (struct perf_thread *)rec_thread_at(&rec->target, i);

		free(t->name);
		free(t->event_ids);
		t->name = NULL;
		t->event_ids = NULL;
	}
}
