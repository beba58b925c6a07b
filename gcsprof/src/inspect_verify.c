// SPDX-License-Identifier: MIT
/*
 * gcsprof inspect: a thread's stack against its GCS. gcswalk_verify()
 * judges each frame record (and, for a thread killed by a GCS check, the
 * registers); the records it finds overwritten are printed as STACK
 * CORRUPTION naming the frame as the chain numbers it, the ones the GCS
 * cannot vouch for in neutral words.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gcsprof.h"
#include "inspect.h"

/* The frame numbers of the GCS entry at SLOT (the caller) and of the code
 * frame before it (the function whose record holds that return address).
 * 0 if the slot is not in the chain. */
static int frame_of_slot(const struct inspect_chain *c, uint64_t slot, size_t *owner_i,
			 size_t *caller_i)
{
	size_t i, j;

	for (i = 0; i < c->n; i++) {
		if (c->frames[i].slot != slot || !gcswalk_frame_is_code(&c->frames[i]))
			continue;
		for (j = i; j-- > 0;) {
			if (gcswalk_frame_is_code(&c->frames[j])) {
				*owner_i = j;
				*caller_i = i;
				return 1;
			}
		}
		return 0;
	}
	return 0;
}

static const char *frame_name(gcswalk_symbolizer *sym, const struct inspect_chain *c, size_t i)
{
	return inspect_short_name(sym, c->frames[i].address,
				  gcswalk_frame_is_return(&c->frames[i]));
}

/* A record whose link leaves the stack downwards (BAD_LINK). */
static void print_bad_link(FILE *f, gcswalk_target *t, gcswalk_symbolizer *sym,
			   const struct inspect_chain *c, const struct gcswalk_record_check *ck,
			   int known, size_t oi)
{
	uint64_t rec[2] = { 0, 0 };

	/* The saved frame pointer itself, for the message. */
	(void)gcswalk_target_read(t, ck->record, rec, sizeof(rec), NULL);
	if (known)
		fprintf(f, "  STACK CORRUPTION in frame #%zu (%s): ", c->numbers[oi],
			frame_name(sym, c, oi));
	else
		fprintf(f, "  STACK CORRUPTION: ");
	fprintf(f, "its frame record at 0x%016" PRIx64 " links to 0x%016" PRIx64
		   ", below it, where no older frame of this stack can be (the heap or other "
		   "data): its saved frame pointer was overwritten; the %s has the older frames\n",
		ck->record, rec[0], c->ss);
}

/* One line for a record gcswalk_verify() found overwritten. */
static void print_record_claim(FILE *f, gcswalk_target *t, gcswalk_symbolizer *sym,
			       const struct inspect_chain *c,
			       const struct gcswalk_record_check *ck, size_t sound)
{
	size_t oi = 0, ci = 0;
	int known = ck->gcs_slot && frame_of_slot(c, ck->gcs_slot, &oi, &ci);

	if (ck->verdict == GCSWALK_RECORD_BAD_LINK) {
		print_bad_link(f, t, sym, c, ck, known, oi);
		return;
	}
	if (known)
		fprintf(f, "  STACK CORRUPTION in frame #%zu (%s): its frame record at 0x%016" PRIx64
			   " holds return address 0x%016" PRIx64 ", but the %s says %s returns to 0x%016"
			   PRIx64 " (%s, frame #%zu): the stack is overwritten there (%zu sound record%s"
			   " below it)\n",
			c->numbers[oi], frame_name(sym, c, oi), ck->record, ck->return_address, c->ss,
			frame_name(sym, c, oi), c->frames[ci].address, frame_name(sym, c, ci),
			c->numbers[ci], sound, sound == 1 ? "" : "s");
	else
		fprintf(f, "  STACK CORRUPTION: the frame record at 0x%016" PRIx64
			   " holds return address 0x%016" PRIx64 ", which is not on the %s: the stack "
			   "is overwritten there (%zu sound record%s below it)\n",
			ck->record, ck->return_address, c->ss, sound, sound == 1 ? "" : "s");
}

/*
 * gcswalk_verify()'s verdicts on the registers of a thread killed by a GCS
 * check fault (the REGISTER verdicts), in the words of the other claims:
 * the frame is the one the refused return was leaving (the PC's), the
 * GCS entry the one the LR should have held. BAD says whether a claim
 * came before (the second one reads "and in").
 */
static void print_register_claim(FILE *f, gcswalk_symbolizer *sym, const struct inspect_chain *c,
				 const struct gcswalk_record_check *chk, int bad)
{
	size_t i, pc = c->n, ret = c->n;

	for (i = 0; i < c->n && ret == c->n; i++) {
		if (c->frames[i].kind == GCSWALK_FRAME_PC && pc == c->n)
			pc = i;
		else if (c->frames[i].kind == GCSWALK_FRAME_RETURN)
			ret = i;
	}
	if (pc == c->n)
		return;
	if (chk->verdict == GCSWALK_REGISTER_LR_MISMATCH && ret < c->n) {
		/* Where the forged return would have gone, if that is code. */
		const char *to = inspect_short_name(sym, chk->return_address, 0);

		fprintf(f, "  STACK CORRUPTION in frame #%zu (%s): %s holds 0x%016" PRIx64
			   "%s%s%s but the %s says %s returns to 0x%016" PRIx64 " (%s, frame #%zu)\n",
			c->numbers[pc], frame_name(sym, c, pc), c->ret_reg, chk->return_address,
			strcmp(to, "??") ? " (" : "", strcmp(to, "??") ? to : "",
			strcmp(to, "??") ? ")" : "", c->ss, frame_name(sym, c, pc),
			c->frames[ret].address,
			frame_name(sym, c, ret), c->numbers[ret]);
	} else if (chk->verdict == GCSWALK_REGISTER_FP_NOT_RECORD) {
		fprintf(f, "  %sframe #%zu (%s): the frame pointer 0x%016" PRIx64
			   " is not a frame record address: it was loaded from an overwritten stack\n",
			bad ? "and in " : "STACK CORRUPTION in ", c->numbers[pc],
			frame_name(sym, c, pc), chk->record);
	}
}

/* gcswalk_verify() on thread I, every record checked: a chain of records
 * longer than the GCS (garbage links, frames older than the GCS) gets
 * more room. Its status; *CHECKS (to free) and *N the verdicts. */
static int verify_all(gcswalk_target *t, size_t i, size_t nframes,
		      struct gcswalk_record_check **checks, size_t *n)
{
	size_t max = 2 * nframes + 64;
	int ret;

	*checks = NULL;
	for (;;) {
		struct gcswalk_record_check *g = realloc(*checks, max * sizeof(**checks));

		if (!g)
			return GCSWALK_E_NOMEM;
		*checks = g;
		ret = gcswalk_verify(t, i, *checks, max, n);
		if (ret != GCSWALK_CUT || max >= ((size_t)1 << 22))
			return ret;
		max *= 4;
	}
}

/* The counts of each verdict, and where the first neutral ones are. */
struct tally {
	size_t count[GCSWALK_REGISTER_FP_NOT_RECORD + 1];
	uint64_t first_older, first_other;
};

/* The stack's summary line and the neutral notes. CUT: records past the
 * Nth were not checked. */
static void print_summary(FILE *f, const struct inspect_chain *c, const struct tally *ty, int cut,
			  size_t n)
{
	size_t agree = ty->count[GCSWALK_RECORD_MATCHES];
	size_t older = ty->count[GCSWALK_RECORD_OLDER_THAN_GCS];
	size_t other = ty->count[GCSWALK_RECORD_OTHER_STACK];

	fprintf(f, "  stack: %zu frame record%s agree%s with the %s", agree, agree == 1 ? "" : "s",
		agree == 1 ? "s" : "", c->ss);
	if (ty->count[GCSWALK_RECORD_UNCHECKED])
		fprintf(f, "; %zu in signal frames (the interrupted LR) not checked",
			ty->count[GCSWALK_RECORD_UNCHECKED]);
	if (cut)
		fprintf(f, "; records past the %zuth not checked", n);
	fputc('\n', f);
	if (older)
		fprintf(f, "  note: %zu frame record%s from 0x%016" PRIx64 " up %s older than the %s "
			   "(%s%s was enabled after %s made): the %s cannot vouch for %s; not a sign "
			   "of corruption\n",
			older, older == 1 ? "" : "s", ty->first_older, older == 1 ? "is" : "are", c->ss,
			strcmp(c->ss, "GCS") ? "the " : "", c->ss,
			older == 1 ? "it was" : "they were", c->ss, older == 1 ? "it" : "them");
	if (other)
		fprintf(f, "  note: %zu frame record%s from 0x%016" PRIx64 " up %s on another stack "
			   "(the thread switched stacks and %ss): their return addresses are on the "
			   "other %s, not checked; not a sign of corruption\n",
			other, other == 1 ? "" : "s", ty->first_other, other == 1 ? "is" : "are", c->ss,
			c->ss);
}

int inspect_check_thread(FILE *f, gcswalk_target *t, size_t i, gcswalk_symbolizer *sym,
			 const struct inspect_chain *c)
{
	struct gcswalk_record_check *checks;
	struct tally ty;
	size_t n = 0, k;
	int ret = verify_all(t, i, c->n, &checks, &n), bad = 0;

	if (ret < 0) {
		fprintf(f, "  stack not checked: %s\n",
			ret == GCSWALK_E_NOMEM ? "out of memory" : gcswalk_strerror(ret));
		free(checks);
		return 0;
	}
	memset(&ty, 0, sizeof(ty));
	for (k = 0; k < n; k++) {
		enum gcswalk_verdict v = checks[k].verdict;

		if (v >= GCSWALK_RECORD_MATCHES && v <= GCSWALK_REGISTER_FP_NOT_RECORD)
			ty.count[v]++;
		if (v == GCSWALK_RECORD_OLDER_THAN_GCS && !ty.first_older)
			ty.first_older = checks[k].record;
		if (v == GCSWALK_RECORD_OTHER_STACK && !ty.first_other)
			ty.first_other = checks[k].record;
		if (v == GCSWALK_RECORD_MISMATCH || v == GCSWALK_RECORD_BAD_LINK) {
			print_record_claim(f, t, sym, c, &checks[k], ty.count[GCSWALK_RECORD_MATCHES]);
			bad = 1;
		} else if (v == GCSWALK_REGISTER_LR_MISMATCH || v == GCSWALK_REGISTER_FP_NOT_RECORD) {
			print_register_claim(f, sym, c, &checks[k], bad);
			bad = 1;
		}
	}
	print_summary(f, c, &ty, ret == GCSWALK_CUT, n);
	free(checks);
	return bad;
}
