// SPDX-License-Identifier: MIT
/*
 * gcsprof record: the target's processes and threads (target.h).
 */
#include <stdlib.h>
#include <string.h>

#include "gcsprof.h"
#include "target.h"
#include "env.h"

void rec_target_init(struct rec_target *t, size_t thread_size, size_t process_size)
{
	memset(t, 0, sizeof(*t));
	t->thread_size = thread_size;
	t->process_size = process_size;
}

void rec_target_free(struct rec_target *t)
{
	size_t i;

	for (i = 0; i < t->nprocs; i++) {
		struct rec_process *p = rec_process_at(t, i);

		free(p->name);
		rec_map_free(&p->map);
	}
	free(t->threads);
	free(t->procs);
	memset(t, 0, sizeof(*t));
}

struct rec_thread *rec_thread_at(const struct rec_target *t, size_t i)
{
	return (struct rec_thread *)(void *)(t->threads + i * t->thread_size);
}

struct rec_process *rec_process_at(const struct rec_target *t, size_t i)
{
	return (struct rec_process *)(void *)(t->procs + i * t->process_size);
}

struct rec_thread *rec_find_thread(const struct rec_target *t, pid_t tid)
{
	size_t i;

	for (i = 0; i < t->nthreads; i++) {
		struct rec_thread *th = rec_thread_at(t, i);

		if (th->tid == tid && !th->gone)
			return th;
	}
	return NULL;
}

struct rec_process *rec_find_process(const struct rec_target *t, pid_t pid)
{
	size_t i;

	for (i = 0; i < t->nprocs; i++) {
		struct rec_process *p = rec_process_at(t, i);

		if (p->pid == pid && !p->gone)
			return p;
	}
	return NULL;
}

/* Room for one more element of SIZE bytes in *ARRAY; the new one, zeroed. */
static void *append(unsigned char **array, size_t *n, size_t *cap, size_t size)
{
	unsigned char *g = gp_grow(*array, cap, *n + 1, size);

	if (!g)
		return NULL;
	*array = g;
	memset(g + *n * size, 0, size);
	return g + (*n)++ * size;
}

struct rec_process *rec_add_process(struct rec_target *t, pid_t pid, int *added)
{
	struct rec_process *p = rec_find_process(t, pid);

	if (added)
		*added = !p;
	if (p)
		return p;
	p = append(&t->procs, &t->nprocs, &t->procs_cap, t->process_size);
	if (!p)
		return NULL;
	p->pid = pid;
	p->asid = t->next_asid++;
	return p;
}

struct rec_thread *rec_add_thread(struct rec_target *t, pid_t tid, pid_t pid, int *added)
{
	struct rec_thread *th = rec_find_thread(t, tid);

	if (added)
		*added = !th;
	if (th)
		return th;
	if (pid <= 0)
		pid = rec_tgid_of(tid);
	if (pid <= 0)
		pid = tid;
	if (!rec_add_process(t, pid, NULL))
		return NULL;
	th = append(&t->threads, &t->nthreads, &t->threads_cap, t->thread_size);
	if (!th)
		return NULL;
	th->tid = tid;
	th->pid = pid;
	return th;
}

size_t rec_live_threads(const struct rec_target *t)
{
	size_t i, n = 0;

	for (i = 0; i < t->nthreads; i++)
		n += !rec_thread_at(t, i)->gone;
	return n;
}

unsigned rec_new_asid(struct rec_target *t)
{
	return t->next_asid++;
}

void rec_thread_exited(struct rec_target *t, struct rec_thread *th)
{
	struct rec_process *p;
	size_t i;

	th->gone = 1;
	for (i = 0; i < t->nthreads; i++) {
		const struct rec_thread *o = rec_thread_at(t, i);

		if (!o->gone && o->pid == th->pid)
			return;
	}
	p = rec_find_process(t, th->pid);
	if (p)
		p->gone = 1;
}

void rec_exec_threads_gone(struct rec_target *t, pid_t pid, pid_t tid)
{
	size_t i;

	for (i = 0; i < t->nthreads; i++) {
		struct rec_thread *th = rec_thread_at(t, i);

		if (th->pid == pid && th->tid != tid)
			th->gone = 1;
	}
}

void rec_process_no_gcs(struct rec_process *p, const char *name, int why)
{
	p->nogcs_seen = 1;
	p->nogcs_why = why;
	if (!p->name && name)
		p->name = strdup(name);
}

void rec_report_no_gcs(const struct rec_target *t, const char *fallback)
{
	size_t i;

	for (i = 0; i < t->nprocs; i++) {
		const struct rec_process *p = rec_process_at(t, i);

		if (!p->nogcs_seen || p->gcs_seen)
			continue;
		if (fallback)
			gp_warn("process %d (%s) ran without %s (%s): sampled with the %s fallback "
				"unwinder, chains labelled as such", (int)p->pid,
				p->name ? p->name : "?", rec_shadow_stack_name(),
				gcswalk_strerror(p->nogcs_why), fallback);
		else
			gp_warn("process %d (%s) ran without %s (%s): its samples were skipped; run "
				"it with %s, or use --fallback fp", (int)p->pid, p->name ? p->name : "?",
				rec_shadow_stack_name(), gcswalk_strerror(p->nogcs_why),
				rec_shadow_stack_hint());
	}
}

pid_t rec_tgid_of(pid_t tid)
{
	struct gcswalk_proc_thread info;

	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	/* /proc/TID/task/TID works for any thread id, not only a leader's. */
	return gcswalk_proc_thread((int)tid, (int)tid, NULL, &info) == GCSWALK_OK ?
	       (pid_t)info.tgid : 0;
}

uint64_t rec_region_start(gcswalk_target *t, enum gcswalk_region_kind kind)
{
	size_t i, n = gcswalk_target_region_count(t);

	for (i = 0; i < n; i++) {
		struct gcswalk_region g = { .size = sizeof(g) };

		if (gcswalk_target_region(t, i, &g) == GCSWALK_OK && g.kind == kind)
			return g.start;
	}
	return 0;
}
