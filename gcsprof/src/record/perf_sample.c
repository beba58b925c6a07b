// SPDX-License-Identifier: MIT
/*
 * gcsprof record, perf method: a sample record into a profile sample.
 * The record carries the user call chain the kernel took from the shadow
 * stack (PERF_SAMPLE_CALLCHAIN) and the shadow stack pointer among the
 * user registers (GCSPR_EL0, riscv64's ssp), which is 0 when the thread
 * had none and the chain came from frame records instead; on riscv64 ra
 * too, the caller of a leaf, which the chain lacks (perf_leaf.c). Each
 * mapping a chain's address is in is handed to the profile writer, which
 * writes it the first time.
 */
#include <stdlib.h>
#include <string.h>

#include "gcsprof.h"
#include "perf.h"

/*
 * A thread seen through two events on one CPU (its own, opened with -p,
 * and one inherited from the thread that created it while we attached):
 * count the samples of the first only.
 */
static int duplicate_sample(struct perf_state *ps, struct perf_thread *t,
			    const struct perf_sample *s)
{
	size_t i, n = ps->nrings;

	if (!t->event_ids) {
		t->event_ids = calloc(n, sizeof(*t->event_ids));
		if (!t->event_ids)
			return 0;
	}
	for (i = 0; i < n; i++)
		if (ps->rings[i].cpu == (int)s->cpu)
			break;
	if (i == n)
		return 0;
	if (!t->event_ids[i])
		t->event_ids[i] = s->id;
	return t->event_ids[i] != s->id;
}

/* The user part of the chain: what follows PERF_CONTEXT_USER, up to the
 * next context marker. Its length, 0 if none. */
static size_t user_chain(const struct perf_sample *s, const uint64_t **user)
{
	size_t i, n = 0;

	*user = NULL;
	for (i = 0; i < s->nr; i++) {
		if (s->ips[i] == PERF_CONTEXT_USER) {
			*user = &s->ips[i + 1];
			n = s->nr - i - 1;
		} else if (*user && s->ips[i] >= (uint64_t)PERF_CONTEXT_MAX) {
			return (size_t)(&s->ips[i] - *user);
		}
	}
	return n;
}

/* Is the chain from the GCS? If not, note it, and say whether the
 * sample is still wanted (--fallback): 1 GCS, 0 fallback, -1 skip. */
static int chain_source(struct recording *rec, struct perf_process *p, struct perf_thread *t,
			const struct perf_sample *s)
{
	/* A shadow stack pointer says the thread has a shadow stack; the
	 * chain came from it only while the kernel was told to take it
	 * from there. */
	if (perf_state(rec)->gcs_chains && s->abi != PERF_SAMPLE_REGS_ABI_NONE && s->ssp != 0) {
		p->base.gcs_seen = 1;
		return 1;
	}
	/* Every process starts without GCS while ld.so runs. */
	rec_process_no_gcs(&p->base, t->name, GCSWALK_E_GCS_DISABLED);
	if (rec->o->fallback == REC_FALLBACK_NONE) {
		rec_out_lost(&rec->out, REC_LOST_NO_GCS, 1);
		return -1;
	}
	return 0;
}

/* Write the mapping of P that holds ADDRESS, if the profile has it not
 * yet; *LAST: the mapping of the frame before (not asked again). */
static int need_mapping(struct recording *rec, struct perf_process *p, uint64_t address,
			const struct rec_mapping **last)
{
	const struct rec_mapping *m = rec_map_find(&p->base.map, address);

	if (!m || m == *last)
		return 0;
	*last = m;
	if (strcmp(m->path, GP_VDSO_PATH) == 0)
		return rec_out_vdso_mapping(&rec->out, p->base.asid, p->base.pid, m->start);
	if (m->path[0] != '/')
		return 0;
	return rec_out_mapping(&rec->out, p->base.asid, p->base.pid, m);
}

static char frame_kind(const struct recording *rec, const struct perf_process *p, size_t i,
		       uint64_t addr, int gcs)
{
	if (i == 0)
		return GP_FRAME_PC;
	if (p->base.vdso && rec->vdso.sigreturn && addr == p->base.vdso + rec->vdso.sigreturn)
		return GP_FRAME_SIGRETURN;
	return gcs ? GP_FRAME_RETURN : GP_FRAME_FALLBACK;
}

/* The mappings of the chain's frames (N of them), each written unless
 * the profile has it. */
static int chain_mappings(struct recording *rec, struct perf_process *p, size_t n)
{
	const struct gp_frame *frames = perf_state(rec)->frames;
	const struct rec_mapping *last = NULL;
	size_t i;

	for (i = 0; i < n; i++) {
		int ret = need_mapping(rec, p, frames[i].address, &last);

		if (ret)
			return ret;
	}
	return 0;
}

/* The N frames of the chain USER, as the profile writes them, into
 * ps->frames. */
static int chain_frames(struct recording *rec, struct perf_process *p, const uint64_t *user,
			size_t n, int gcs)
{
	struct perf_state *ps = perf_state(rec);
	struct gp_frame *nf = gp_grow(ps->frames, &ps->frames_cap, n, sizeof(*nf));
	size_t i;

	if (!nf)
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	ps->frames = nf;
	for (i = 0; i < n; i++) {
		ps->frames[i].address = user[i];
		ps->frames[i].kind = frame_kind(rec, p, i, user[i], gcs);
	}
	return 0;
}

/* Are the callers of the chain USER (N addresses) the ones remembered? */
static int same_callers(const struct perf_callers *c, const struct perf_process *p,
			const uint64_t *user, size_t n, int gcs)
{
	return c->valid && c->asid == p->base.asid && c->vdso == p->base.vdso && c->gcs == gcs &&
	       c->n == n - 1 && memcmp(c->ips, user + 1, c->n * sizeof(*user)) == 0;
}

/* Remember the callers of the chain USER (N addresses), whose node is
 * STACK (not remembered when out of memory: the next chain is interned
 * whole). */
static void remember_callers(struct recording *rec, const struct perf_process *p,
			     const uint64_t *user, size_t n, int gcs, uint32_t stack)
{
	struct perf_callers *c = &perf_state(rec)->callers;
	uint64_t *ips = gp_grow(c->ips, &c->cap, n - 1 ? n - 1 : 1, sizeof(*ips));

	c->valid = 0;
	if (!ips)
		return;
	c->ips = ips;
	c->n = n - 1;
	memcpy(c->ips, user + 1, c->n * sizeof(*user));
	c->node = rec_out_stack_callers(&rec->out, stack);
	c->asid = p->base.asid;
	c->vdso = p->base.vdso;
	c->gcs = gcs;
	c->valid = 1;
}

/* The chain USER (N addresses) as the profile's stack *STACK, its nodes
 * and (the first time the chain is seen with P's map as it is) its
 * mappings written. */
static int chain_stack(struct recording *rec, struct perf_process *p, const uint64_t *user,
		       size_t n, int gcs, uint32_t *stack)
{
	struct perf_state *ps = perf_state(rec);
	int fresh, ret;

	if (same_callers(&ps->callers, p, user, n, gcs)) {
		struct gp_frame pc = { user[0], GP_FRAME_PC };

		fresh = rec_out_stack_under(&rec->out, ps->callers.node, &pc, p->base.asid,
					    p->base.map.generation, stack);
		if (fresh <= 0)
			return -fresh;
		ret = chain_frames(rec, p, user, n, gcs);
		return ret ? ret : chain_mappings(rec, p, n);
	}
	ret = chain_frames(rec, p, user, n, gcs);
	if (ret)
		return ret;
	fresh = rec_out_stack(&rec->out, ps->frames, n, p->base.asid, p->base.map.generation,
			      stack);
	if (fresh < 0)
		return -fresh;
	remember_callers(rec, p, user, n, gcs, *stack);
	return fresh ? chain_mappings(rec, p, n) : 0;
}

/* *USER (*N frames) with CALLER after the PC, in the state's own room. */
static int with_leaf_caller(struct perf_state *ps, uint64_t caller, const uint64_t **user,
			    size_t *n)
{
	uint64_t *c = gp_grow(ps->chain, &ps->chain_cap, *n + 1, sizeof(*c));

	if (!c)
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	ps->chain = c;
	c[0] = (*user)[0];
	c[1] = caller;
	memcpy(c + 2, *user + 1, (*n - 1) * sizeof(*c));
	*user = c;
	(*n)++;
	return 0;
}

int perf_sample(struct recording *rec, const struct perf_sample *s)
{
	struct perf_state *ps = perf_state(rec);
	const uint64_t *user;
	size_t nuser = user_chain(s, &user);
	struct gp_rsample rs;
	struct perf_process *p;
	struct perf_thread *t;
	int gcs, ret;

	if (!nuser) {
		rec_out_lost(&rec->out, REC_LOST_WALK, 1);
		return 0;
	}
	p = perf_process(rec, (pid_t)s->pid);
	t = p ? perf_thread(rec, (pid_t)s->tid, (pid_t)s->pid, NULL) : NULL;
	/* Adding the thread may have moved the process. */
	p = t ? perf_find_process(rec, (pid_t)s->pid) : NULL;
	if (!t || !p)
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	if (duplicate_sample(ps, t, s))
		return 0;
	gcs = chain_source(rec, p, t, s);
	if (gcs < 0)
		return 0;
	/* The kernel stops at the limit without a word: a chain that long
	 * may have lost its outer frames (or be exactly that deep). */
	memset(&rs, 0, sizeof(rs));
	rs.cut = ps->max_stack && nuser >= ps->max_stack;
	if (gcs && perf_leaf_caller(p, s, user, nuser)) {
		ret = with_leaf_caller(ps, s->lr, &user, &nuser);
		if (ret)
			return ret;
	}
	ret = chain_stack(rec, p, user, nuser, gcs, &rs.stack);
	if (ret)
		return ret;
	rs.time_ns = s->time > rec->start_ns ? s->time - rec->start_ns : 0;
	rs.pid = (int)s->pid;
	rs.tid = (int)s->tid;
	rs.state = 'R';
	rs.asid = p->base.asid;
	rs.thread = t->name ? t->name : "";
	rs.nframes = nuser;
	rs.cpu = (int)s->cpu;
	rs.weight = s->period;
	rs.fallback = !gcs;
	ret = rec_out_sample(&rec->out, &rs);
	if (ret)
		return ret;
	p->fresh = 0;
	ps->ncut += (uint64_t)rs.cut;
	return 0;
}

/* The throttling goes into the profile only: a throttle or two as each
 * event starts is usual (its first period is one count, until the
 * kernel has found the period for -F), and the report puts the count
 * in proportion. */
int perf_write_summary(struct recording *rec)
{
	const struct perf_state *ps = perf_state(rec);
	int ret = rec_out_throttle(&rec->out, ps->throttles, ps->unthrottles);

	if (ret)
		return ret;
	if (ps->ncut)
		gp_warn("%llu of %llu samples have chains cut at %u frames (%s)",
			(unsigned long long)ps->ncut, (unsigned long long)rec->out.nsamples,
			ps->max_stack,
			strcmp(ps->max_stack_by, PERF_MAX_STACK_BY_SYSCTL) == 0 ?
			"kernel.perf_event_max_stack: raise it to record them whole" :
			"the most a perf sample holds: --method ptrace records them whole");
	return 0;
}
