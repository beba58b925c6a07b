// SPDX-License-Identifier: MIT
/*
 * gcsprof record, perf method: the records of the kernel's ring buffers.
 * Samples go to perf_sample.c; MMAP2 records give the file mappings with
 * their build-ids, COMM the names and execs, FORK and EXIT the threads and
 * processes, LOST what the kernel could not write.
 *
 * Every record is bounds-checked against its own size: a record the
 * kernel wrote is trusted no further than that.
 */
#include <string.h>
#include <stdlib.h>

#include "gcsprof.h"
#include "perf.h"

/* sample_id_all appends TID, TIME, ID and CPU (8 bytes each). */
#define SAMPLE_ID_SIZE 32

struct cursor {
	const unsigned char *p, *end;
};

static struct cursor record_body(const struct perf_event_header *h)
{
	return (struct cursor){ (const unsigned char *)(h + 1), (const unsigned char *)h + h->size };
}

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

/* The user registers, in the order of their numbers (perf_user_regs()). */
static int take_regs(struct cursor *c, struct perf_sample *s)
{
	const struct perf_regs *r = perf_user_regs();
	uint64_t v;
	int bit;

	for (bit = 0; bit < 64; bit++) {
		if (!(r->mask & 1ULL << bit))
			continue;
		if (take_u64(c, &v))
			return -1;
		if (bit == r->ss)
			s->ssp = v;
		else if (bit == r->lr)
			s->lr = v;
	}
	return 0;
}

static int parse_sample(const struct perf_event_header *h, struct perf_sample *s)
{
	struct cursor c = record_body(h);
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
	if (s->abi != PERF_SAMPLE_REGS_ABI_NONE)
		return take_regs(&c, s);
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

static int out_of_memory(void)
{
	return gp_error(GP_EXIT_SYSTEM, "out of memory");
}

static int handle_mmap2(struct recording *rec, const struct perf_event_header *h)
{
	struct cursor c = record_body(h);
	uint32_t pid, tid, prot, flags;
	uint64_t addr, len, pgoff;
	unsigned char id_block[24];
	unsigned build_id_size = 0;
	const char *path;
	struct perf_process *p;

	if (take(&c, &pid, 4) || take(&c, &tid, 4) || take_u64(&c, &addr) || take_u64(&c, &len) ||
	    take_u64(&c, &pgoff) || take(&c, id_block, sizeof(id_block)) || take(&c, &prot, 4) ||
	    take(&c, &flags, 4) || !(path = string_field(h, &c)) || addr + len < addr)
		return 0;
	p = perf_process(rec, (pid_t)pid);
	if (!p)
		return out_of_memory();
	if (strcmp(path, GP_VDSO_PATH) == 0)
		p->base.vdso = addr;
	else if (path[0] != '/')
		path = "[anon]";    /* code in no file: it still replaces what was there */
	if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID)
		build_id_size = id_block[0] > 20 ? 20 : id_block[0];
	if (rec_map_insert(&p->base.map, addr, addr + len, pgoff, path, id_block + 4,
			   build_id_size) != 0)
		return out_of_memory();
	return 0;
}

/* An exec in process P by thread TID: a new program. */
static int handle_exec(struct recording *rec, struct perf_process *p, pid_t tid, const char *comm)
{
	/* A new address space, unless nothing was recorded of the old one;
	 * the other threads are gone. */
	if (!p->fresh) {
		p->base.asid = rec_new_asid(&rec->target);
		p->base.vdso = 0;
		p->fresh = 1;
	}
	rec_map_clear(&p->base.map);
	rec_exec_threads_gone(&rec->target, p->base.pid, tid);
	if (perf_set_name(&p->base.name, comm) != 0)
		return out_of_memory();
	if (p->base.pid == rec->child.pid)
		rec->child.exec_seen = 1;
	return 0;
}

static int handle_comm(struct recording *rec, const struct perf_event_header *h)
{
	struct cursor c = record_body(h);
	uint32_t pid, tid;
	const char *comm;
	struct perf_process *p;
	int ret;

	if (take(&c, &pid, 4) || take(&c, &tid, 4) || !(comm = string_field(h, &c)))
		return 0;
	p = perf_process(rec, (pid_t)pid);
	if (!p)
		return out_of_memory();
	if ((h->misc & PERF_RECORD_MISC_COMM_EXEC) &&
	    (ret = handle_exec(rec, p, (pid_t)tid, comm)) != 0)
		return ret;
	return perf_thread(rec, (pid_t)tid, (pid_t)pid, comm) ? 0 : out_of_memory();
}

/* A new process PID, forked by PPID: a copy of its parent's address space. */
static int forked(struct recording *rec, pid_t pid, pid_t ppid)
{
	struct perf_process *p = perf_find_process(rec, pid), *pp;

	if (p)
		p->base.gone = 1;     /* a reused pid */
	p = perf_process(rec, pid);
	pp = perf_find_process(rec, ppid);
	if (!p)
		return out_of_memory();
	if (pp && pp != p) {
		p->base.vdso = pp->base.vdso;
		if (rec_map_copy(&p->base.map, &pp->base.map) != 0)
			return out_of_memory();
	}
	return 0;
}

static int handle_fork(struct recording *rec, const struct perf_event_header *h)
{
	struct cursor c = record_body(h);
	uint32_t pid, ppid, tid, ptid;
	struct perf_thread *parent;
	char *name = NULL;
	int ret = 0;

	if (take(&c, &pid, 4) || take(&c, &ppid, 4) || take(&c, &tid, 4) || take(&c, &ptid, 4))
		return 0;
	/* Adding threads and processes moves them: copy, then look up. */
	parent = perf_find_thread(rec, (pid_t)ptid);
	if (parent && parent->name && !(name = strdup(parent->name)))
		return out_of_memory();
	if (pid != ppid)
		ret = forked(rec, (pid_t)pid, (pid_t)ppid);
	if (!ret && !perf_thread(rec, (pid_t)tid, (pid_t)pid, name))
		ret = out_of_memory();
	free(name);
	return ret;
}

static int handle_exit(struct recording *rec, const struct perf_event_header *h)
{
	struct cursor c = record_body(h);
	uint32_t pid, ppid, tid, ptid;
	struct rec_thread *t;

	if (take(&c, &pid, 4) || take(&c, &ppid, 4) || take(&c, &tid, 4) || take(&c, &ptid, 4))
		return 0;
	t = rec_find_thread(&rec->target, (pid_t)tid);
	if (t && t->pid == (pid_t)pid)
		rec_thread_exited(&rec->target, t);
	return 0;
}

int perf_handle_record(struct recording *rec, const struct perf_event_header *h)
{
	struct cursor c = record_body(h);
	struct perf_state *ps = perf_state(rec);
	struct perf_sample s;
	uint64_t id, n;

	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		if (parse_sample(h, &s) != 0) {
			rec_out_lost(&rec->out, REC_LOST_WALK, 1);
			return 0;
		}
		return perf_sample(rec, &s);
	case PERF_RECORD_MMAP2:
		return handle_mmap2(rec, h);
	case PERF_RECORD_COMM:
		return handle_comm(rec, h);
	case PERF_RECORD_FORK:
		return handle_fork(rec, h);
	case PERF_RECORD_EXIT:
		return handle_exit(rec, h);
	case PERF_RECORD_LOST:
		if (take_u64(&c, &id) == 0 && take_u64(&c, &n) == 0)
			rec_out_lost(&rec->out, REC_LOST_RING, n);
		return 0;
	case PERF_RECORD_LOST_SAMPLES:
		if (take_u64(&c, &n) == 0)
			rec_out_lost(&rec->out, REC_LOST_RING, n);
		return 0;
	case PERF_RECORD_THROTTLE:
		ps->throttles++;
		return 0;
	case PERF_RECORD_UNTHROTTLE:
		ps->unthrottles++;
		return 0;
	default:
		return 0;         /* what we do not know is skipped by its size */
	}
}
