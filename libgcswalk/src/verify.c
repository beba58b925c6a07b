// SPDX-License-Identifier: MIT
/*
 * Frame records against the GCS. The GCS cannot be written by ordinary
 * stores, the stack can: a frame record whose return address is not on
 * the GCS, in order, was overwritten (or is no frame record).
 *
 * Healthy programs give records the GCS cannot vouch for, and these must
 * not read as corruption: the record in a signal frame (the interrupted
 * context's LR, possibly stale), records older than the GCS (a program or
 * thread that enabled GCS part-way), records on a stack the thread
 * switched away from (its entries are on another GCS). Only a record
 * whose return address is missing while the GCS still holds older
 * entries, or whose link leaves the stack downwards while the GCS still
 * holds older entries, is a disagreement.
 */
#include <signal.h>
#include <stdlib.h>

#include "internal.h"

#define VERIFY_GCS_FRAMES 65536
/* Records further apart than this are not on one stack (no thread's stack
 * is this large), without reading what lies between them. */
#define VERIFY_MAX_STACK ((uint64_t)256 << 20)

/* The signal frames the GCS walk found: each one's interrupted frame
 * pointer and link register, read from its sigcontext, which the kernel's
 * frame record repeats (arm64; riscv's kernel makes none). */
struct sigframe {
	uint64_t pc_slot, fp, lr;
};

/* Whether every byte of [LO, HI) is readable: one stack spans the
 * two addresses, with no unmapped gap or guard page between them. */
static int contiguous(gcswalk_target *t, uint64_t lo, uint64_t hi)
{
	unsigned char buf[4096];

	if (hi < lo || hi - lo > VERIFY_MAX_STACK)
		return 0;
	while (lo < hi) {
		size_t len = hi - lo < sizeof(buf) ? (size_t)(hi - lo) : sizeof(buf);

		if (gcswalk_target_read(t, lo, buf, len, NULL) != GCSWALK_OK)
			return 0;
		lo += len;
	}
	return 1;
}

/* Read the interrupted frame pointer and link register of each signal
 * frame, where the architecture's sigcontext keeps them beside the PC. */
static size_t find_sigframes(gcswalk_target *t, const struct gcswalk_frame *gcs, size_t ng,
			     struct sigframe *out, size_t max)
{
	const struct gw_arch *arch = t->arch;
	size_t i, n = 0;

	for (i = 0; i < ng && n < max; i++) {
		uint64_t fp, lr, at;

		if (gcs[i].kind != GCSWALK_FRAME_INTERRUPTED_PC || gcs[i].slot < 64)
			continue;
		at = gcs[i].slot;
		if (gcswalk_target_read(t, at + (uint64_t)(int64_t)arch->sigframe_fp_offset, &fp,
					sizeof(fp), NULL) != GCSWALK_OK ||
		    gcswalk_target_read(t, at + (uint64_t)(int64_t)arch->sigframe_lr_offset, &lr,
					sizeof(lr), NULL) != GCSWALK_OK)
			continue;
		out[n++] = (struct sigframe){ at, fp, lr };
	}
	return n;
}

/* The kernel puts a signal frame's record above its sigcontext, holding
 * the interrupted x29 and x30. */
static int is_sigframe_record(gcswalk_target *t, uint64_t record, const struct sigframe *sf,
			      size_t nsf)
{
	uint64_t raw[2];
	size_t i;

	if (!nsf || gcswalk_target_read(t, record, raw, sizeof(raw), NULL) != GCSWALK_OK)
		return 0;
	for (i = 0; i < nsf; i++) {
		if (record > sf[i].pc_slot && record - sf[i].pc_slot < ((uint64_t)1 << 20) &&
		    raw[0] == sf[i].fp && raw[1] == sf[i].lr)
			return 1;
	}
	return 0;
}

/* A GCS entry that holds a return address, which a frame record must
 * match: the library's own answer (gcswalk_frame_is_return), on a walk
 * that has no LR frame (the LR is not on the GCS, and the register checks
 * look at it apart). */
static int is_return(const struct gcswalk_frame *f)
{
	return gcswalk_frame_is_return(f) && f->kind != GCSWALK_FRAME_LR;
}

/* The first return entry at or after POS, or NG if the GCS has none left. */
static size_t next_return(const struct gcswalk_frame *gcs, size_t ng, size_t pos)
{
	while (pos < ng && !is_return(&gcs[pos]))
		pos++;
	return pos;
}

/*
 * The innermost-first walk of the records in FP (NFP frames, the PC
 * first), each given its verdict in CHECKS (room for MAX).
 */
struct verify_state {
	gcswalk_target *t;
	const struct gcswalk_frame *gcs;
	size_t ng;
	const struct sigframe *sf;
	size_t nsf;
	uint64_t sp;
};

static size_t judge_records(const struct verify_state *s, const struct gcswalk_frame *fp,
			    size_t nfp, struct gcswalk_record_check *checks, size_t max,
			    size_t *consumed, size_t *gcs_pos)
{
	enum gcswalk_verdict beyond = 0;
	uint64_t prev = s->sp;
	size_t i, k, pos = 0, n = 0;
	int after_sigreturn = 0;

	for (i = 0; i < nfp && n < max; i++) {
		struct gcswalk_record_check *c;

		if (fp[i].kind != GCSWALK_FRAME_RETURN)
			continue;       /* the PC */
		c = &checks[n++];
		c->record = fp[i].slot;
		c->return_address = fp[i].address;
		c->gcs_slot = 0;
		if (after_sigreturn || is_sigframe_record(s->t, fp[i].slot, s->sf, s->nsf)) {
			/* The signal frame's record: the interrupted LR. */
			c->verdict = GCSWALK_RECORD_UNCHECKED;
			after_sigreturn = 0;
			prev = fp[i].slot;
			continue;
		}
		for (k = pos; k < s->ng; k++) {
			if (is_return(&s->gcs[k]) && s->gcs[k].address == fp[i].address)
				break;
		}
		if (k < s->ng) {
			c->verdict = GCSWALK_RECORD_MATCHES;
			c->gcs_slot = s->gcs[k].slot;
			after_sigreturn = s->gcs[k].kind == GCSWALK_FRAME_SIGRETURN;
			pos = k + 1;
		} else if ((k = next_return(s->gcs, s->ng, pos)) < s->ng) {
			/* The GCS vouches for older frames, so this record
			 * should have matched one of them: the one next in
			 * order is the return address it should hold. */
			c->verdict = GCSWALK_RECORD_MISMATCH;
			c->gcs_slot = s->gcs[k].slot;
		} else {
			/* Past the GCS's oldest entry: on the same stack,
			 * frames from before GCS was enabled; across a gap,
			 * the stack the thread switched away from. Once on
			 * another stack, the rest are too. */
			if (beyond != GCSWALK_RECORD_OTHER_STACK)
				beyond = contiguous(s->t, prev, fp[i].slot) ?
						 GCSWALK_RECORD_OLDER_THAN_GCS :
						 GCSWALK_RECORD_OTHER_STACK;
			c->verdict = beyond;
		}
		prev = fp[i].slot;
	}
	*consumed = i;
	*gcs_pos = pos;
	return n;
}

/*
 * The chain of records ended at the record LAST: where its saved x29
 * points decides whether that was the end of the chain. Zero is the end;
 * a misaligned or unreadable value is what code without frame pointers
 * leaves in x29. A readable record below LAST (stacks grow down, so an
 * older frame is always above) while the GCS still holds older entries
 * is a link overwritten to point elsewhere, into the heap or other data.
 */
static int bad_link(gcswalk_target *t, uint64_t last)
{
	uint64_t rec[2], next[2], at;

	if (gcswalk_target_read(t, last, rec, sizeof(rec), NULL) != GCSWALK_OK)
		return 0;
	at = rec[0] + (uint64_t)(int64_t)t->arch->record_offset;
	if (rec[0] == 0 || rec[0] % 16 != 0 || at >= last)
		return 0;
	return gcswalk_target_read(t, at, next, sizeof(next), NULL) == GCSWALK_OK;
}


/*
 * Where not every function keeps a frame pointer (riscv: sid's glibc is
 * built without, and s0 is then a register like the others), the thread's
 * frame pointer starts a chain of records only when it can be one: above
 * the stack pointer, on the same stack. A PC in such a function can find
 * s0 holding its data (a pointer to a global, say): no record to check.
 * Frame pointers (arm64's x29) are kept everywhere else.
 */
#define VERIFY_FP_REACH ((uint64_t)8 << 20)

static int fp_starts_chain(const gcswalk_target *t, const struct gw_thread *th)
{
	uint64_t fp = th->regs.fp, sp = th->regs.sp;

	if (!t->arch->callee_pushes)
		return 1;
	return fp > sp && fp - sp < VERIFY_FP_REACH;
}

/*
 * A thread that died of a GCS check fault was refused a return: the
 * register the check compared (the link register a RET used; riscv's t0
 * of `sspopchk t0`) is not the newest GCS entry, and the frame pointer,
 * loaded from the same overwritten stack, may not even be a record
 * address. Judged from the registers, before any record; CHECKS has room
 * for MAX.
 */
static size_t judge_gcs_fault(gcswalk_target *t, size_t index,
			      const struct gcswalk_thread_info *info,
			      const struct gcswalk_frame *gcs, size_t ng,
			      struct gcswalk_record_check *checks, size_t max)
{
	struct gcswalk_signal_info si = { .size = sizeof(si) };
	uint64_t ret;
	size_t i, n = 0;

	if (gcswalk_target_fatal_signal(t, &si) != GCSWALK_OK || si.signo != SIGSEGV ||
	    si.code != GCSWALK_SEGV_CPERR || si.thread_index != index ||
	    !info->have_registers)
		return 0;
	ret = t->arch->checked_return(&t->threads[index].regs);
	for (i = 0; i < ng && gcs[i].kind != GCSWALK_FRAME_RETURN; i++)
		;
	if (i < ng && ret && ret != gcs[i].address && n < max)
		checks[n++] = (struct gcswalk_record_check){
			0, ret, GCSWALK_REGISTER_LR_MISMATCH, gcs[i].slot };
	if (info->fp % 16 && n < max)
		checks[n++] = (struct gcswalk_record_check){
			info->fp, 0, GCSWALK_REGISTER_FP_NOT_RECORD, 0 };
	return n;
}

int gcswalk_verify(gcswalk_target *t, size_t index, struct gcswalk_record_check *checks,
		   size_t max, size_t *count)
{
	struct gcswalk_walk_options o = GCSWALK_WALK_OPTIONS_INIT;
	struct gcswalk_frame *gcs = NULL, *fp = NULL, f;
	struct sigframe *sf = NULL;
	struct gcswalk_thread_info info;
	struct verify_state s;
	size_t ng = 0, nfp = 0, nsf, used, pos, n, k;
	int ret, fp_final;
	gcswalk_walk *w;

	if (count)
		*count = 0;
	if (!t || !count || (!checks && max))
		return GCSWALK_E_INVALID;
	o.max_frames = VERIFY_GCS_FRAMES;
	ret = gcswalk_walk_begin(&w, t, index, &o);
	if (ret < 0)
		return ret;
	gcs = malloc(VERIFY_GCS_FRAMES * sizeof(*gcs));
	fp = malloc((max + 1) * sizeof(*fp));
	sf = malloc(VERIFY_GCS_FRAMES / 4 * sizeof(*sf));
	if (!gcs || !fp || !sf || gcswalk_target_thread(t, index, &info) != GCSWALK_OK) {
		ret = gw_fail(t, GCSWALK_E_NOMEM, "out of memory");
		goto out;
	}
	while (ng < VERIFY_GCS_FRAMES && gcswalk_walk_next(w, &f) == GCSWALK_OK)
		gcs[ng++] = f;
	nsf = find_sigframes(t, gcs, ng, sf, VERIFY_GCS_FRAMES / 4);
	/* One more record than fits, to know whether there were more. */
	fp_final = GCSWALK_END;
	if (fp_starts_chain(t, &t->threads[index]))
		fp_final = gw_unwind_fp(t, &t->threads[index], fp, max + 1, &nfp);
	s = (struct verify_state){ t, gcs, ng, sf, nsf, info.sp };
	k = judge_gcs_fault(t, index, &info, gcs, ng, checks, max);
	n = judge_records(&s, fp, nfp, checks + k, max - k, &used, &pos);
	if (n && used == nfp && fp_final == GCSWALK_END &&
	    checks[k + n - 1].verdict == GCSWALK_RECORD_MATCHES &&
	    next_return(gcs, ng, pos) < ng && bad_link(t, checks[k + n - 1].record))
		checks[k + n - 1].verdict = GCSWALK_RECORD_BAD_LINK;
	n += k;
	*count = n;
	ret = used < nfp || fp_final == GCSWALK_CUT ? GCSWALK_CUT : GCSWALK_END;
out:
	gcswalk_walk_free(w);
	free(gcs);
	free(fp);
	free(sf);
	return ret;
}
