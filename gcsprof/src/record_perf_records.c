// SPDX-License-Identifier: MIT
/*
 * gcsprof record, perf method: the records of the kernel's ring buffers
 * turned into the profile. Samples carry the user call chain the kernel
 * took from the GCS (PERF_SAMPLE_CALLCHAIN) and GCSPR_EL0 among the user
 * registers, which is 0 when the thread had no GCS and the chain came
 * from frame records instead. MMAP2 records give the file mappings with
 * their build-ids, COMM the names and execs, FORK and EXIT the threads and
 * processes, LOST what the kernel could not write.
 *
 * Every record is bounds-checked against its own size: a record the
 * kernel wrote is trusted no further than that.
 */
#include <string.h>
#include <stdlib.h>

#include "record_perf.h"

/* The sample fields asked for (record_perf.c), in the order they come. */
struct perf_sample {
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time;
	uint64_t id;
	uint32_t cpu;
	uint64_t period;
	uint64_t nr;
	const uint64_t *ips;
	uint64_t abi;
	uint64_t gcspr;
};

/* sample_id_all appends TID, TIME, ID and CPU (8 bytes each). */
#define SAMPLE_ID_SIZE 32

struct cursor {
	const unsigned char *p, *end;
};

static int take(struct cursor *c, void *out, size_t n)
{
	if ((size_t)(c->end - c->p) < n)
		return -1;
	memcpy(out, c->p, n);
	c->p += n;
	return 0;
}

static int take_u64(struct cursor *c, uint64_t *v)
{
	return take(c, v, sizeof(*v));
}

uint64_t perf_record_time(const struct perf_event_header *h)
{
	const unsigned char *p = (const unsigned char *)h;
	uint64_t t = 0;

	if (h->type == PERF_RECORD_SAMPLE) {
		/* ip, pid/tid, then time */
		if (h->size >= sizeof(*h) + 24)
			memcpy(&t, p + sizeof(*h) + 16, sizeof(t));
	} else if (h->size >= sizeof(*h) + SAMPLE_ID_SIZE) {
		memcpy(&t, p + h->size - SAMPLE_ID_SIZE + 8, sizeof(t));
	}
	return t;
}

static int parse_sample(const struct perf_event_header *h, struct perf_sample *s)
{
	struct cursor c = { (const unsigned char *)(h + 1), (const unsigned char *)h + h->size };
	uint64_t v;

	memset(s, 0, sizeof(*s));
	if (take_u64(&c, &s->ip) || take(&c, &s->pid, 4) || take(&c, &s->tid, 4) ||
	    take_u64(&c, &s->time) || take_u64(&c, &s->id) || take(&c, &s->cpu, 4) ||
	    take(&c, &v, 4) || take_u64(&c, &s->period) || take_u64(&c, &s->nr))
		return -1;
	if (s->nr > (uint64_t)(c.end - c.p) / sizeof(uint64_t))
		return -1;
	s->ips = (const uint64_t *)c.p;
	c.p += s->nr * sizeof(uint64_t);
	if (take_u64(&c, &s->abi))
		return -1;
	if (s->abi != PERF_SAMPLE_REGS_ABI_NONE && take_u64(&c, &s->gcspr))
		return -1;
	return 0;
}

/* ---- Processes and threads ----------------------------------------- */

struct process *perf_process(struct recorder *r, pid_t pid)
{
	struct process *p = rec_find_process(r, pid);

	if (p)
		return p;
	p = rec_add_process(r, pid);
	if (p)
		p->fresh = 1;
	return p;
}

static int set_name(char **dst, const char *name)
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

struct thread *perf_thread(struct recorder *r, pid_t tid, pid_t pid, const char *name)
{
	struct thread *t = rec_find_thread(r, tid);

	if (t && t->pid != pid) {
		/* A tid reused by another process: the old thread is gone. */
		t->gone = 1;
		t = NULL;
	}
	if (!t) {
		if (!perf_process(r, pid))
			return NULL;
		t = rec_add_thread(r, tid, pid);
		if (!t)
			return NULL;
	}
	if (set_name(&t->name, name) != 0)
		return NULL;
	return t;
}

static void copy_bytes(unsigned char *dst, const unsigned char *src, unsigned n)
{
	memcpy(dst, src, n > 20 ? 20 : n);
}

static int insert_copy(struct process *p, const struct perf_mapping *from)
{
	struct perf_mapping *m = gp_grow(p->maps, &p->maps_cap, p->nmaps + 1, sizeof(*m));

	if (!m)
		return -1;
	p->maps = m;
	m = &p->maps[p->nmaps];
	*m = *from;
	m->path = strdup(from->path);
	if (!m->path)
		return -1;
	p->nmaps++;
	return 0;
}

/* Make room for [START, END) in P's map: what it overlaps is cut away. A
 * piece keeps its file offset, and stays written if it was: the record
 * in the file still describes it. */
static int cut_overlaps(struct process *p, uint64_t start, uint64_t end)
{
	size_t i = 0;

	while (i < p->nmaps) {
		struct perf_mapping *m = &p->maps[i];

		if (m->end <= start || m->start >= end) {
			i++;
		} else if (m->start >= start && m->end <= end) {
			free(m->path);
			p->maps[i] = p->maps[--p->nmaps];
		} else if (m->start < start && m->end > end) {
			struct perf_mapping tail = *m;

			tail.offset += end - m->start;
			tail.start = end;
			m->end = start;
			if (insert_copy(p, &tail) != 0)
				return -1;
			i++;
		} else if (m->start < start) {
			m->end = start;
			i++;
		} else {
			m->offset += end - m->start;
			m->start = end;
			i++;
		}
	}
	return 0;
}

int perf_note_mapping(struct recorder *r, struct process *p, uint64_t start, uint64_t end,
		      uint64_t offset, const char *path, const unsigned char *build_id,
		      unsigned build_id_size)
{
	struct perf_mapping m;

	(void)r;
	if (end <= start)
		return 0;
	memset(&m, 0, sizeof(m));
	m.start = start;
	m.end = end;
	m.offset = offset;
	m.path = (char *)path;
	m.build_id_size = build_id_size > 20 ? 20 : build_id_size;
	if (build_id)
		copy_bytes(m.build_id, build_id, m.build_id_size);
	if (cut_overlaps(p, start, end) != 0 || insert_copy(p, &m) != 0)
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	return 0;
}

/* Write the file mapping of P that holds ADDRESS, if the profile has it
 * not yet. */
static int need_mapping(struct recorder *r, struct process *p, uint64_t address)
{
	size_t i;

	for (i = 0; i < p->nmaps; i++) {
		struct perf_mapping *m = &p->maps[i];

		if (address < m->start || address >= m->end)
			continue;
		if (m->written)
			return 0;
		if (strcmp(m->path, REC_VDSO_PATH) == 0) {
			m->written = 1;
			return rec_vdso_mapping(r, p->asid, p->pid, m->start);
		}
		if (m->path[0] != '/')
			return 0;
		m->written = 1;
		return rec_write_mapping(r, p->asid, p->pid, m->start, m->end, m->offset, m->path,
					 m->build_id_size ? m->build_id : NULL, m->build_id_size);
	}
	return 0;
}

static void free_maps(struct process *p)
{
	size_t i;

	for (i = 0; i < p->nmaps; i++)
		free(p->maps[i].path);
	p->nmaps = 0;
}

/* ---- Records -------------------------------------------------------- */

/*
 * A thread seen through two events on one CPU (its own, opened with -p,
 * and one inherited from the thread that created it while we attached):
 * count the samples of the first only.
 */
static int duplicate_sample(struct recorder *r, struct thread *t, const struct perf_sample *s)
{
	size_t i, n = r->perf->nrings;

	if (!t->event_ids) {
		t->event_ids = calloc(n, sizeof(*t->event_ids));
		if (!t->event_ids)
			return 0;
	}
	for (i = 0; i < n; i++)
		if (r->perf->rings[i].cpu == (int)s->cpu)
			break;
	if (i == n)
		return 0;
	if (!t->event_ids[i])
		t->event_ids[i] = s->id;
	return t->event_ids[i] != s->id;
}

static char frame_kind(const struct process *p, uint64_t sigreturn, size_t i, uint64_t addr,
		       int gcs)
{
	if (i == 0)
		return GP_FRAME_PC;
	if (p->vdso && sigreturn && addr == p->vdso + sigreturn)
		return GP_FRAME_SIGRETURN;
	return gcs ? GP_FRAME_RETURN : GP_FRAME_FALLBACK;
}

static int handle_sample(struct recorder *r, const struct perf_event_header *h)
{
	struct perf_sample s;
	struct gp_rsample rs;
	struct gp_frame *nf;
	struct process *p;
	struct thread *t;
	const uint64_t *user = NULL;
	size_t nuser = 0, i;
	int gcs;

	if (parse_sample(h, &s) != 0) {
		r->lost[LOST_WALK].count++;
		return 0;
	}
	/* The user part of the chain follows PERF_CONTEXT_USER. */
	for (i = 0; i < s.nr; i++) {
		if (s.ips[i] == PERF_CONTEXT_USER) {
			user = &s.ips[i + 1];
			nuser = s.nr - i - 1;
		} else if (user && s.ips[i] >= (uint64_t)PERF_CONTEXT_MAX) {
			nuser = (size_t)(&s.ips[i] - user);
			break;
		}
	}
	if (!nuser) {
		r->lost[LOST_WALK].count++;
		return 0;
	}
	p = perf_process(r, (pid_t)s.pid);
	t = p ? perf_thread(r, (pid_t)s.tid, (pid_t)s.pid, NULL) : NULL;
	if (!t)
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	if (duplicate_sample(r, t, &s))
		return 0;
	/* A GCSPR says the thread has GCS; the chain came from it only
	 * while the kernel was told to take it from there. */
	gcs = r->perf->gcs_chains && s.abi != PERF_SAMPLE_REGS_ABI_NONE && s.gcspr != 0;
	if (!gcs) {
		/* Every process starts without GCS while ld.so runs. */
		p->nogcs_seen = 1;
		p->nogcs_why = GCSWALK_E_GCS_DISABLED;
		if (!p->name && t->name)
			p->name = strdup(t->name);
		if (r->o->fallback == REC_FALLBACK_NONE) {
			r->lost[LOST_NO_GCS].count++;
			return 0;
		}
	} else {
		p->gcs_seen = 1;
	}
	nf = gp_grow(r->frames, &r->frames_cap, nuser, sizeof(*nf));
	if (!nf)
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	r->frames = nf;
	for (i = 0; i < nuser; i++) {
		int ret = need_mapping(r, p, user[i]);

		if (ret)
			return ret;
		r->frames[i].address = user[i];
		r->frames[i].kind = frame_kind(p, r->vdso.sigreturn, i, user[i], gcs);
	}
	memset(&rs, 0, sizeof(rs));
	rs.time_ns = s.time > r->start_ns ? s.time - r->start_ns : 0;
	rs.pid = (int)s.pid;
	rs.tid = (int)s.tid;
	rs.state = 'R';
	rs.asid = p->asid;
	rs.thread = t->name ? t->name : "";
	rs.nframes = nuser;
	rs.fallback = !gcs;
	/* The kernel stops at the limit without a word: a chain that long
	 * may have lost its outer frames (or be exactly that deep). */
	rs.cut = r->perf->max_stack && nuser >= r->perf->max_stack;
	if (gp_profile_write_sample(r->out, &rs, r->frames) != 0)
		return rec_write_failed(r), GP_EXIT_OUTPUT;
	p->fresh = 0;
	r->nsamples++;
	r->perf->ncut += (uint64_t)rs.cut;
	return 0;
}

/* A string field running from C to the sample_id at the record's end. */
static const char *string_field(const struct perf_event_header *h, const struct cursor *c)
{
	const unsigned char *end = (const unsigned char *)h + h->size;

	if (end - c->p < SAMPLE_ID_SIZE)
		return NULL;
	end -= SAMPLE_ID_SIZE;
	if (c->p >= end || !memchr(c->p, '\0', (size_t)(end - c->p)))
		return NULL;
	return (const char *)c->p;
}

static int handle_mmap2(struct recorder *r, const struct perf_event_header *h)
{
	struct cursor c = { (const unsigned char *)(h + 1), (const unsigned char *)h + h->size };
	uint32_t pid, tid, prot, flags;
	uint64_t addr, len, pgoff;
	unsigned char id_block[24];
	unsigned build_id_size = 0;
	const char *path;
	struct process *p;

	if (take(&c, &pid, 4) || take(&c, &tid, 4) || take_u64(&c, &addr) || take_u64(&c, &len) ||
	    take_u64(&c, &pgoff) || take(&c, id_block, sizeof(id_block)) || take(&c, &prot, 4) ||
	    take(&c, &flags, 4) || !(path = string_field(h, &c)) || addr + len < addr)
		return 0;
	p = perf_process(r, (pid_t)pid);
	if (!p)
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	if (strcmp(path, "[vdso]") == 0)
		p->vdso = addr;
	else if (path[0] != '/')
		path = "[anon]";    /* code in no file: it still replaces what was there */
	if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID)
		build_id_size = id_block[0];
	return perf_note_mapping(r, p, addr, addr + len, pgoff, path, id_block + 4,
				 build_id_size);
}

static int handle_comm(struct recorder *r, const struct perf_event_header *h)
{
	struct cursor c = { (const unsigned char *)(h + 1), (const unsigned char *)h + h->size };
	uint32_t pid, tid;
	const char *comm;
	struct process *p;
	struct thread *t;

	if (take(&c, &pid, 4) || take(&c, &tid, 4) || !(comm = string_field(h, &c)))
		return 0;
	p = perf_process(r, (pid_t)pid);
	if (!p)
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	if (h->misc & PERF_RECORD_MISC_COMM_EXEC) {
		size_t i;

		/* A new program: a new address space, unless nothing was
		 * recorded of the old one; the other threads are gone. */
		if (!p->fresh) {
			p->asid = r->next_asid++;
			p->vdso = 0;
			p->fresh = 1;
		}
		free_maps(p);
		for (i = 0; i < r->nthreads; i++)
			if (r->threads[i].pid == (pid_t)pid && r->threads[i].tid != (pid_t)tid)
				r->threads[i].gone = 1;
		if (set_name(&p->name, comm) != 0)
			return gp_error(GP_EXIT_SYSTEM, "out of memory");
		if ((pid_t)pid == r->child)
			r->exec_seen = 1;
	}
	t = perf_thread(r, (pid_t)tid, (pid_t)pid, comm);
	if (!t)
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	return 0;
}

static int handle_fork(struct recorder *r, const struct perf_event_header *h)
{
	struct cursor c = { (const unsigned char *)(h + 1), (const unsigned char *)h + h->size };
	uint32_t pid, ppid, tid, ptid;
	struct thread *parent;
	struct process *pp, *p;
	char *name = NULL;
	size_t i;
	int ret;

	if (take(&c, &pid, 4) || take(&c, &ppid, 4) || take(&c, &tid, 4) || take(&c, &ptid, 4))
		return 0;
	/* Adding threads and processes moves them: copy, then look up. */
	parent = rec_find_thread(r, (pid_t)ptid);
	if (parent && parent->name && !(name = strdup(parent->name)))
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	if (pid != ppid) {
		/* A new process, with a copy of its parent's address space. */
		p = rec_find_process(r, (pid_t)pid);
		if (p)
			p->gone = 1;     /* a reused pid */
		p = perf_process(r, (pid_t)pid);
		pp = rec_find_process(r, (pid_t)ppid);
		if (!p) {
			free(name);
			return gp_error(GP_EXIT_SYSTEM, "out of memory");
		}
		if (pp && pp != p) {
			ret = 0;
			p->vdso = pp->vdso;
			for (i = 0; i < pp->nmaps && !ret; i++)
				ret = perf_note_mapping(r, p, pp->maps[i].start, pp->maps[i].end,
							pp->maps[i].offset, pp->maps[i].path,
							pp->maps[i].build_id,
							pp->maps[i].build_id_size);
			if (ret) {
				free(name);
				return ret;
			}
		}
	}
	ret = perf_thread(r, (pid_t)tid, (pid_t)pid, name) ? 0 :
	      gp_error(GP_EXIT_SYSTEM, "out of memory");
	free(name);
	return ret;
}

static int handle_exit(struct recorder *r, const struct perf_event_header *h)
{
	struct cursor c = { (const unsigned char *)(h + 1), (const unsigned char *)h + h->size };
	uint32_t pid, ppid, tid, ptid;
	struct thread *t;
	size_t i;
	int others = 0;

	if (take(&c, &pid, 4) || take(&c, &ppid, 4) || take(&c, &tid, 4) || take(&c, &ptid, 4))
		return 0;
	t = rec_find_thread(r, (pid_t)tid);
	if (!t || t->pid != (pid_t)pid)
		return 0;
	t->gone = 1;
	for (i = 0; i < r->nthreads; i++)
		others += !r->threads[i].gone && r->threads[i].pid == (pid_t)pid;
	if (!others) {
		struct process *p = rec_find_process(r, (pid_t)pid);

		if (p)
			p->gone = 1;
	}
	return 0;
}

int perf_handle_record(struct recorder *r, const struct perf_event_header *h)
{
	struct cursor c = { (const unsigned char *)(h + 1), (const unsigned char *)h + h->size };
	uint64_t id, n;

	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		return handle_sample(r, h);
	case PERF_RECORD_MMAP2:
		return handle_mmap2(r, h);
	case PERF_RECORD_COMM:
		return handle_comm(r, h);
	case PERF_RECORD_FORK:
		return handle_fork(r, h);
	case PERF_RECORD_EXIT:
		return handle_exit(r, h);
	case PERF_RECORD_LOST:
		if (take_u64(&c, &id) == 0 && take_u64(&c, &n) == 0)
			r->lost[LOST_RING].count += n;
		return 0;
	case PERF_RECORD_LOST_SAMPLES:
		if (take_u64(&c, &n) == 0)
			r->lost[LOST_RING].count += n;
		return 0;
	case PERF_RECORD_THROTTLE:
		r->perf->throttles++;
		return 0;
	case PERF_RECORD_UNTHROTTLE:
		r->perf->unthrottles++;
		return 0;
	default:
		return 0;         /* what we do not know is skipped by its size */
	}
}

/* The throttling goes into the profile only: a throttle or two as each
 * event starts is usual (its first period is one count, until the
 * kernel has found the period for -F), and the report puts the count
 * in proportion. */
int perf_write_summary(struct recorder *r)
{
	const struct perf_rec *pr = r->perf;

	if (gp_profile_write_throttle(r->out, pr->throttles, pr->unthrottles) != 0)
		return rec_write_failed(r), GP_EXIT_OUTPUT;
	if (pr->ncut)
		gp_warn("%llu of %llu samples have chains cut at %u frames (%s)",
			(unsigned long long)pr->ncut, (unsigned long long)r->nsamples, pr->max_stack,
			strcmp(pr->max_stack_by, PERF_MAX_STACK_BY_SYSCTL) == 0 ?
			"kernel.perf_event_max_stack: raise it to record them whole" :
			"the most a perf sample holds: --method ptrace records them whole");
	return 0;
}
