// SPDX-License-Identifier: MIT
/*
 * gcsprof record: taking samples through libgcswalk, and writing the
 * mappings (with build-ids) that the samples need.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <unistd.h>

#include "record.h"

/* ---- Mappings and build-ids ---------------------------------------- */

int rec_write_failed(struct recorder *r)
{
	if (!r->write_failed)
		gp_error(GP_EXIT_OUTPUT, "cannot write %s: %s", r->out_path, strerror(errno));
	r->write_failed = 1;
	return -1;
}

/*
 * Write a mapping of address space ASID (of process PID) to the profile,
 * unless it has it already. BUILD_ID (BUILD_ID_SIZE bytes) is the file's
 * GNU build-id if the caller knows it; otherwise it is read from the file
 * as PID sees it (its mount namespace), when PID is still there.
 */
static uint64_t seen_hash(unsigned asid, uint64_t start, uint64_t end, uint64_t offset,
			  const char *path)
{
	uint64_t h = 1469598103934665603ULL ^ asid;

	h = (h ^ start) * 1099511628211ULL;
	h = (h ^ end) * 1099511628211ULL;
	h = (h ^ offset) * 1099511628211ULL;
	for (; *path; path++)
		h = (h ^ (unsigned char)*path) * 1099511628211ULL;
	return h ^ (h >> 29);
}

/* The slot of the seen mapping like these, or the empty slot for it. */
static size_t *seen_slot(struct recorder *r, unsigned asid, uint64_t start, uint64_t end,
			 uint64_t offset, const char *path)
{
	size_t mask = r->seen_index_cap - 1, i;

	for (i = seen_hash(asid, start, end, offset, path) & mask; r->seen_index[i];
	     i = (i + 1) & mask) {
		const struct seen_mapping *m = &r->seen[r->seen_index[i] - 1];

		if (m->asid == asid && m->start == start && m->end == end && m->offset == offset &&
		    strcmp(m->path, path) == 0)
			break;
	}
	return &r->seen_index[i];
}

/* Room for one more seen mapping in the index. */
static int seen_index_grow(struct recorder *r)
{
	size_t cap = r->seen_index_cap ? r->seen_index_cap * 2 : 256, *old = r->seen_index;
	size_t old_cap = r->seen_index_cap, i;

	if ((r->nseen + 1) * 2 <= r->seen_index_cap)
		return 0;
	r->seen_index = calloc(cap, sizeof(*r->seen_index));
	if (!r->seen_index) {
		r->seen_index = old;
		return -1;
	}
	r->seen_index_cap = cap;
	for (i = 0; i < old_cap; i++)
		if (old[i]) {
			const struct seen_mapping *m = &r->seen[old[i] - 1];

			*seen_slot(r, m->asid, m->start, m->end, m->offset, m->path) = old[i];
		}
	free(old);
	return 0;
}

int rec_write_mapping(struct recorder *r, unsigned asid, pid_t pid, uint64_t start, uint64_t end,
		      uint64_t offset, const char *path, const unsigned char *build_id,
		      size_t build_id_size)
{
	struct gp_rmapping rm;
	struct seen_mapping *s;
	unsigned char *read_id = NULL;
	size_t *slot;
	int ret = 0;

	if (seen_index_grow(r) != 0)
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	slot = seen_slot(r, asid, start, end, offset, path);
	if (*slot)
		return 0;
	s = gp_grow(r->seen, &r->seen_cap, r->nseen + 1, sizeof(*s));
	if (!s)
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	r->seen = s;
	s = &r->seen[r->nseen];
	s->path = strdup(path);
	if (!s->path)
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	s->asid = asid;
	s->start = start;
	s->end = end;
	s->offset = offset;
	r->nseen++;
	*slot = r->nseen;
	memset(&rm, 0, sizeof(rm));
	rm.asid = asid;
	rm.pid = pid;
	rm.start = start;
	rm.end = end;
	rm.offset = offset;
	rm.path = s->path;
	rm.build_id = (unsigned char *)build_id;
	rm.build_id_size = build_id_size;
	if (!build_id_size &&
	    gcswalk_proc_build_id((int)pid, path, &read_id, &rm.build_id_size) == GCSWALK_OK)
		rm.build_id = read_id;
	if (gp_profile_write_mapping(r->out, &rm) != 0)
		ret = (rec_write_failed(r), GP_EXIT_OUTPUT);
	free(read_id);
	return ret;
}

/* Write mapping INDEX (M) of P's target, unless the file has it already. */
static int note_mapping(struct recorder *r, const struct process *p, size_t index,
			const struct gcswalk_mapping *m)
{
	const unsigned char *id;
	size_t id_size;

	if (gcswalk_target_mapping_build_id(p->target, index, &id, &id_size) != GCSWALK_OK) {
		id = NULL;
		id_size = 0;
	}
	return rec_write_mapping(r, p->asid, p->pid, m->start, m->end, m->offset, m->path, id,
				 id_size);
}

static int range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* In one pass over the target's map: write its new file mappings, and
 * remember them all as the ones the profile has for P. */
static int sync_mappings(struct recorder *r, struct process *p)
{
	size_t i, n = gcswalk_target_mapping_count(p->target);

	p->nwritten = 0;
	for (i = 0; i < n; i++) {
		struct gcswalk_mapping m;
		struct range *g;
		int ret;

		if (gcswalk_target_mapping(p->target, i, &m) != GCSWALK_OK || !m.path)
			continue;
		ret = note_mapping(r, p, i, &m);
		if (ret)
			return ret;
		g = gp_grow(p->written, &p->written_cap, p->nwritten + 1, sizeof(*g));
		if (!g)
			return gp_error(GP_EXIT_SYSTEM, "out of memory");
		p->written = g;
		p->written[p->nwritten++] = (struct range){ m.start, m.end };
	}
	/* The vDSO, in no file: its symbols are in the profile. */
	if (p->vdso && r->vdso.size) {
		struct range *g = gp_grow(p->written, &p->written_cap, p->nwritten + 1, sizeof(*g));
		int ret;

		if (!g)
			return gp_error(GP_EXIT_SYSTEM, "out of memory");
		p->written = g;
		p->written[p->nwritten++] = (struct range){ p->vdso, p->vdso + r->vdso.size };
		ret = rec_vdso_mapping(r, p->asid, p->pid, p->vdso);
		if (ret)
			return ret;
	}
	qsort(p->written, p->nwritten, sizeof(*p->written), range_cmp);
	return 0;
}

/* Is ADDRESS in a file mapping of P that the profile has? */
static int address_written(const struct process *p, uint64_t address)
{
	size_t lo = 0, hi = p->nwritten;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->written[mid].start <= address)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && address < p->written[lo - 1].end;
}

/* ---- Sampling ------------------------------------------------------- */

static char frame_kind(const struct gcswalk_frame *f)
{
	switch (f->kind) {
	case GCSWALK_FRAME_PC:
		return GP_FRAME_PC;
	case GCSWALK_FRAME_RETURN:
		return f->source == GCSWALK_SOURCE_GCS ? GP_FRAME_RETURN : GP_FRAME_FALLBACK;
	case GCSWALK_FRAME_SIGRETURN:
		return GP_FRAME_SIGRETURN;
	case GCSWALK_FRAME_LR:
		/* A caller only in the link register (riscv's leaves: the walk
		 * yields it only when the CFI says it is one). */
		return GP_FRAME_RETURN;
	default:
		return 0;      /* caps, terminator, unreadable, invalid: not code */
	}
}

/* A walk found GCS off in P. Reported at the end, for processes that never
 * turned it on: every process starts without it while ld.so runs. */
static void note_no_gcs(struct process *p, const char *name, int why)
{
	p->nogcs_seen = 1;
	p->nogcs_why = why;
	if (!p->name && name)
		p->name = strdup(name);
}

void rec_report_no_gcs(const struct recorder *r)
{
	size_t i;

	for (i = 0; i < r->nprocs; i++) {
		const struct process *p = &r->procs[i];

		if (!p->nogcs_seen || p->gcs_seen)
			continue;
		if (r->o->fallback != REC_FALLBACK_NONE)
			gp_warn("process %d (%s) ran without GCS (%s): sampled with the %s fallback "
				"unwinder, chains labelled as such", (int)p->pid,
				p->name ? p->name : "?", gcswalk_strerror(p->nogcs_why),
				rec_fallback_names[r->o->fallback]);
		else
			gp_warn("process %d (%s) ran without %s (%s): its samples were skipped; run "
				"it with %s, or use --fallback fp", (int)p->pid, p->name ? p->name : "?",
				rec_shadow_stack_name(), gcswalk_strerror(p->nogcs_why),
				rec_shadow_stack_hint());
	}
}

/* The most frames a ptrace sample keeps: libgcswalk's own limit. */
#define SAMPLE_MAX_FRAMES ((size_t)1 << 22)

/* How often a thread's name is read again (names change with
 * pthread_setname_np and PR_SET_NAME, which no ptrace event reports), and
 * how often a process's map may be read again once its burst is spent. */
#define NAME_PERIOD_NS 100000000u
#define MAPS_PERIOD_NS 100000000u
#define MAPS_BURST 8u
#define UNKNOWN_PAGES_NS 1000000000u

static int page_known_unmapped(const struct process *p, uint64_t page, uint64_t now)
{
	size_t i;

	if (now - p->unknown_ns >= UNKNOWN_PAGES_NS)
		return 0;
	for (i = 0; i < sizeof(p->unknown_pages) / sizeof(p->unknown_pages[0]); i++)
		if (p->unknown_pages[i] == page + 1)
			return 1;
	return 0;
}

/* Does a code address of the sample lie in no file the profile has for
 * P, and not in a page we know is in none? Then a library was probably
 * loaded since the map was read (by us or by a walk). */
static int has_unknown_address(const struct process *p, const struct gp_frame *frames, size_t n,
			       uint64_t now)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!address_written(p, frames[i].address) &&
		    !page_known_unmapped(p, frames[i].address >> 12, now))
			return 1;
	return 0;
}

/* A fresh target: a full burst of map re-reads. */
static void maps_credits_reset(struct process *p, uint64_t now)
{
	p->maps_credits = MAPS_BURST;
	p->maps_ns = now;
	p->maps_stale = 0;
	memset(p->unknown_pages, 0, sizeof(p->unknown_pages));
}

/* Take a credit for reading P's map again, if one is left: 1, else 0. */
static int maps_credit_take(struct process *p, uint64_t now)
{
	uint64_t earned = (now - p->maps_ns) / MAPS_PERIOD_NS;

	if (earned >= MAPS_BURST - p->maps_credits) {
		p->maps_credits = MAPS_BURST;
		p->maps_ns = now;
	} else if (earned) {
		p->maps_credits += (unsigned)earned;
		p->maps_ns += earned * MAPS_PERIOD_NS;
	}
	if (!p->maps_credits)
		return 0;
	p->maps_credits--;
	return 1;
}

/*
 * Read P's map again, if a credit is left (else mark it stale), and write
 * its new mappings. The pages of FRAMES still in no file are remembered,
 * so that the vDSO or anonymous code does not make us read it at every
 * sample.
 */
static int refresh_maps(struct recorder *r, struct process *p, const struct gp_frame *frames,
			size_t n, uint64_t now)
{
	size_t i, k = 0, slots = sizeof(p->unknown_pages) / sizeof(p->unknown_pages[0]);
	int ret;

	if (!maps_credit_take(p, now)) {
		p->maps_stale = 1;
		return 0;
	}
	p->maps_stale = 0;
	if (gcswalk_target_refresh(p->target, GCSWALK_REFRESH_MAPS) != GCSWALK_OK)
		return 0;       /* gone: the next sample says so */
	/* A symboliser knows the map it was made with. */
	gcswalk_symbolizer_free(p->cfi_sym);
	p->cfi_sym = NULL;
	ret = sync_mappings(r, p);
	if (ret)
		return ret;
	memset(p->unknown_pages, 0, sizeof(p->unknown_pages));
	p->unknown_ns = now;
	for (i = 0; i < n && k < slots; i++) {
		uint64_t page = frames[i].address >> 12;

		if (!address_written(p, frames[i].address) &&
		    !page_known_unmapped(p, page, now))
			p->unknown_pages[k++] = page + 1;
	}
	return 0;
}

/* P's symboliser for the CFI fallback: made at the first need, and again
 * when the target's map has changed since (a library loaded). */
static gcswalk_symbolizer *cfi_symbolizer(struct process *p)
{
	size_t n = gcswalk_target_mapping_count(p->target);

	if (p->cfi_sym && p->cfi_nmaps != n) {
		gcswalk_symbolizer_free(p->cfi_sym);
		p->cfi_sym = NULL;
	}
	if (!p->cfi_sym && gcswalk_symbolizer_new(&p->cfi_sym, p->target, NULL) != GCSWALK_OK)
		p->cfi_sym = NULL;
	p->cfi_nmaps = n;
	return p->cfi_sym;
}

/* Sample one stopped thread of P. */
static int sample_thread(struct recorder *r, struct process *p, struct thread *t,
			 uint64_t time_ns)
{
	struct gcswalk_walk_options wo = GCSWALK_WALK_OPTIONS_INIT;
	struct gcswalk_thread_info info;
	struct gcswalk_symbolizer *sym = NULL;
	struct gcswalk_frame f;
	struct gp_rsample s;
	gcswalk_walk *walk = NULL;
	uint64_t now = rec_now_ns();
	size_t n = 0;
	unsigned names = now - t->name_ns >= NAME_PERIOD_NS ? GCSWALK_REFRESH_NAMES : 0;
	int idx, ret, fallback = 0;

	/* The whole chain, however deep (the library's default is 1024
	 * frames): a profile must not cut a deep recursion without a word.
	 * The walk allocates by the GCS's depth, not by this bound. */
	wo.max_frames = SAMPLE_MAX_FRAMES;
	idx = gcswalk_target_refresh_thread(p->target, t->tid, names);
	if (idx < 0 || gcswalk_target_thread(p->target, (size_t)idx, &info) != GCSWALK_OK) {
		r->lost[LOST_GONE].count++;
		return 0;
	}
	if (names)
		t->name_ns = now;
	ret = gcswalk_walk_begin(&walk, p->target, (size_t)idx, &wo);
	if (ret == GCSWALK_E_GCS_DISABLED || ret == GCSWALK_E_NO_GCS_CPU) {
		note_no_gcs(p, info.name, ret);
		if (r->o->fallback == REC_FALLBACK_NONE) {
			r->lost[LOST_NO_GCS].count++;
			return 0;
		}
		wo.method = r->o->fallback == REC_FALLBACK_FP ? GCSWALK_METHOD_FP : GCSWALK_METHOD_CFI;
		if (wo.method == GCSWALK_METHOD_CFI) {
			sym = cfi_symbolizer(p);
			if (!sym) {
				r->lost[LOST_WALK].count++;
				return 0;
			}
		}
		wo.symbolizer = sym;
		fallback = 1;
		ret = gcswalk_walk_begin(&walk, p->target, (size_t)idx, &wo);
	}
	if (ret < 0) {
		r->lost[ret == GCSWALK_E_THREAD_GONE ? LOST_GONE : LOST_WALK].count++;
		return 0;
	}
	if (!fallback)
		p->gcs_seen = 1;
	while (gcswalk_walk_next(walk, &f) == GCSWALK_OK) {
		char kind = frame_kind(&f);
		struct gp_frame *nf;

		if (!kind)
			continue;
		nf = gp_grow(r->frames, &r->frames_cap, n + 1, sizeof(*nf));
		if (!nf) {
			gcswalk_walk_free(walk);
			return gp_error(GP_EXIT_SYSTEM, "out of memory");
		}
		r->frames = nf;
		r->frames[n].address = f.address;
		r->frames[n].kind = kind;
		n++;
	}
	gcswalk_walk_free(walk);
	/* The mappings a sample needs are written before it, or, when the
	 * map may not be re-read yet (credits spent), at the next sample that
	 * may. */
	if (p->maps_stale || has_unknown_address(p, r->frames, n, now)) {
		/* First what the walk itself may have read, then a new read. */
		ret = sync_mappings(r, p);
		if (!ret && (p->maps_stale || has_unknown_address(p, r->frames, n, now)))
			ret = refresh_maps(r, p, r->frames, n, now);
		if (ret)
			return ret;
	}
	memset(&s, 0, sizeof(s));
	s.time_ns = time_ns;
	s.pid = p->pid;
	s.tid = t->tid;
	s.state = t->state ? t->state : '?';
	s.asid = p->asid;
	s.thread = (char *)(info.name ? info.name : "");
	s.nframes = n;
	s.fallback = fallback;
	if (gp_profile_write_sample(r->out, &s, r->frames) != 0)
		return rec_write_failed(r), GP_EXIT_OUTPUT;
	r->nsamples++;
	return 0;
}

/* The stopped threads of P: its target is opened at its first sample
 * (reading its whole map) and refreshed for the next ones. */
static int sample_process(struct recorder *r, struct process *p, uint64_t time_ns)
{
	char *msg = NULL;
	size_t i;
	int ret = 0;

	if (!p->target) {
		ret = gcswalk_target_open_pid(&p->target, p->pid, GCSWALK_ATTACH_STOPPED, 0, &msg);
		free(msg);
		if (ret < 0) {
			for (i = 0; i < r->nthreads; i++)
				if (r->threads[i].want && r->threads[i].stopped &&
				    r->threads[i].pid == p->pid)
					r->lost[LOST_GONE].count++;
			return 0;
		}
		maps_credits_reset(p, rec_now_ns());
		p->vdso = rec_region_start(p->target, GCSWALK_REGION_VDSO);
		ret = sync_mappings(r, p);
	}
	for (i = 0; i < r->nthreads && ret == 0; i++) {
		struct thread *t = &r->threads[i];

		if (t->want && t->stopped && !t->gone && t->pid == p->pid)
			ret = sample_thread(r, p, t, time_ns);
	}
	return ret;
}

/*
 * A CPU profile's sample stands for a period of CPU time. A thread is
 * sampled when it is running and has used a period's worth of CPU time
 * since its last sample: with more busy threads than CPUs, each then gets
 * the share of samples it got of the CPUs, not one per tick for waiting
 * its turn. The CPU time comes in clock-tick steps (10 ms), so the credit
 * is allowed to run a few steps ahead before it is capped.
 */
static int cpu_time_due(struct recorder *r, struct thread *t, uint64_t cpu_ns)
{
	uint64_t period = 1000000000u / r->hz, cap = 4 * period;

	if (cap < 40000000u)
		cap = 40000000u;
	if (cpu_ns > t->cpu_ns)
		t->cpu_credit_ns += cpu_ns - t->cpu_ns;
	t->cpu_ns = cpu_ns;
	if (t->cpu_credit_ns > cap)
		t->cpu_credit_ns = cap;
	if (t->state != 'R' || t->cpu_credit_ns < period)
		return 0;
	t->cpu_credit_ns -= period;
	return 1;
}

int rec_sample_round(struct recorder *r, int *stop_sig)
{
	uint64_t time_ns = rec_now_ns() - r->start_ns, cpu_ns;
	size_t i;
	int ret = 0, any = 0;

	for (i = 0; i < r->nthreads; i++) {
		struct thread *t = &r->threads[i];

		if (t->gone) {
			rec_thread_release(t);
			continue;
		}
		if (t->group_stop) {
			if (r->o->wall)
				r->lost[LOST_STOPPED].count++;
			continue;
		}
		cpu_ns = t->cpu_ns;
		t->state = rec_thread_stat(t, &cpu_ns);
		if (t->state == 0) {
			t->gone = 1;     /* its exit status comes later */
			continue;
		}
		if (!r->o->wall && !cpu_time_due(r, t, cpu_ns))
			continue;
		t->want = 1;
		any = 1;
		if (!t->stopped && ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL) != 0) {
			t->want = 0;
			if (errno == ESRCH)
				r->lost[LOST_GONE].count++;
		}
	}
	if (!any)
		return 0;
	ret = rec_wait_wanted(r, stop_sig);
	for (i = 0; i < r->nprocs && ret == 0; i++) {
		struct process *p = &r->procs[i];
		size_t j;
		int has = 0;

		if (p->gone) {
			rec_process_release(p);
			continue;
		}
		for (j = 0; j < r->nthreads; j++)
			has |= r->threads[j].want && r->threads[j].stopped && r->threads[j].pid == p->pid;
		if (has)
			ret = sample_process(r, p, time_ns);
	}
	for (i = 0; i < r->nthreads; i++) {
		struct thread *t = &r->threads[i];

		if (t->want && t->stopped && !t->gone)
			rec_resume(t);
		t->want = 0;
	}
	return ret;
}

