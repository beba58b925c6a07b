// SPDX-License-Identifier: MIT
/*
 * gcsprof inspect: a thread's chain, printed as the GDB plugin's `gcs bt`
 * prints it (gdb/gcsgdb/chain.py), so that the two compare line for line.
 * The code frames (gcswalk_frame_is_code) are numbered from #0 and named,
 * the signal trampoline, the interrupted PC and the link register with a
 * note saying what they are; a run of the same frame (recursion) is one
 * line with the numbers it spans; a signal delivery, a GCS switch, an
 * unreadable slot and an invalid entry are lines of their own.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gcsprof.h"
#include "inspect.h"

int inspect_walk(gcswalk_target *t, size_t i, gcswalk_symbolizer *sym, struct inspect_chain *c,
		 int *status)
{
	struct gcswalk_walk_options wo = GCSWALK_WALK_OPTIONS_INIT;
	struct gcswalk_frame f;
	gcswalk_walk *w = NULL;
	size_t k = 0;
	int ret = 0;

	wo.max_frames = INSPECT_ALL_FRAMES;
	wo.symbolizer = sym;
	c->n = 0;
	*status = gcswalk_walk_begin(&w, t, i, &wo);
	if (*status < 0)
		return 0;
	while ((*status = gcswalk_walk_next(w, &f)) == GCSWALK_OK) {
		struct gcswalk_frame *g = gp_grow(c->frames, &c->frames_cap, c->n + 1, sizeof(*g));
		size_t *num = g ? gp_grow(c->numbers, &c->numbers_cap, c->n + 1, sizeof(*num)) : NULL;

		if (g)
			c->frames = g;
		if (num)
			c->numbers = num;
		if (!g || !num) {
			ret = -1;
			break;
		}
		c->numbers[c->n] = k;
		c->frames[c->n++] = f;
		k += (size_t)gcswalk_frame_is_code(&f);
	}
	gcswalk_walk_free(w);
	return ret;
}

void inspect_chain_free(struct inspect_chain *c)
{
	free(c->frames);
	free(c->numbers);
	memset(c, 0, sizeof(*c));
}

static void print_location(FILE *f, gcswalk_symbolizer *sym, uint64_t address, int is_return)
{
	const struct gcswalk_location *loc = NULL;
	size_t i;

	if (!sym || gcswalk_symbolize(sym, address, is_return, &loc) < 0 || !loc) {
		fprintf(f, "0x%016" PRIx64 " ??\n", address);
		return;
	}
	if (!loc->nsymbols) {
		const char *mod = loc->module ? strrchr(loc->module, '/') : NULL;

		fprintf(f, "0x%016" PRIx64 " ?? (%s)\n", address,
			mod ? mod + 1 : loc->module ? loc->module : "no mapping");
		return;
	}
	for (i = 0; i < loc->nsymbols; i++) {
		const struct gcswalk_symbol *s = &loc->symbols[i];
		const char *fn = s->function ? s->function : s->symbol ? s->symbol : "??";

		if (i == 0)
			fprintf(f, "0x%016" PRIx64 " ", address);
		else
			fprintf(f, "%*s", 19, "");
		fprintf(f, "%s", fn);
		if (!s->inlined && s->function_offset)
			fprintf(f, "+0x%" PRIx64, s->function_offset);
		if (s->inlined)
			fprintf(f, " [inlined]");
		if (s->file)
			fprintf(f, " at %s:%d", s->file, s->line);
		fputc('\n', f);
	}
}

const char *inspect_short_name(gcswalk_symbolizer *sym, uint64_t address, int is_return)
{
	const struct gcswalk_location *loc = NULL;

	if (!sym || gcswalk_symbolize(sym, address, is_return, &loc) < 0 || !loc ||
	    !loc->nsymbols)
		return "??";
	return loc->symbols[loc->nsymbols - 1].function ? loc->symbols[loc->nsymbols - 1].function
							 : "??";
}

/* What a code frame of KIND is, when it is not plainly a caller (the
 * words of the GDB plugin's notes); NULL for none. */
static const char *code_note(enum gcswalk_frame_kind kind)
{
	switch (kind) {
	case GCSWALK_FRAME_SIGRETURN:
		return "the signal handler returns here (signal trampoline)";
	case GCSWALK_FRAME_INTERRUPTED_PC:
		return "interrupted here by the signal";
	case GCSWALK_FRAME_LR:
		return "the link register (not on the GCS: unverified)";
	default:
		return NULL;
	}
}

/* The line of a frame that is not code; nothing for the terminator. */
static void print_mark(FILE *f, const struct gcswalk_frame *fr)
{
	switch (fr->kind) {
	case GCSWALK_FRAME_SIGNAL_CAP:
		fprintf(f, "  ---- signal delivered here; the interrupted context follows ----\n");
		break;
	case GCSWALK_FRAME_SWITCH_CAP:
		fprintf(f, "  ---- GCS switch: this stack was left here (switch cap token 0x%016" PRIx64
			   " at 0x%016" PRIx64 "); the frames below ran on it ----\n",
			fr->address, fr->slot);
		break;
	case GCSWALK_FRAME_TERMINATOR:
		break;
	case GCSWALK_FRAME_UNREADABLE:
		fprintf(f, "  [the GCS slot at 0x%016" PRIx64 " cannot be read: the chain ends here]\n",
			fr->slot);
		break;
	default:
		fprintf(f, "  [%s entry 0x%016" PRIx64 " at 0x%016" PRIx64 "]\n",
			gcswalk_frame_kind_name(fr->kind), fr->address, fr->slot);
	}
}

/* Code frame I of C, numbered K, and the frames after it that repeat it
 * (a recursion, up to MAX code frames in all; 0: no limit): the number
 * of frames it stands for. */
static size_t print_code(FILE *f, gcswalk_symbolizer *sym, const struct inspect_chain *c,
			 size_t i, size_t k, size_t max)
{
	const struct gcswalk_frame *fr = &c->frames[i];
	const char *note = code_note(fr->kind);
	size_t run = 1;

	while (i + run < c->n && c->frames[i + run].kind == fr->kind &&
	       c->frames[i + run].address == fr->address)
		run++;
	if (max && k + run > max)
		run = max - k;
	fprintf(f, "  #%-3zu ", k);
	print_location(f, sym, fr->address, gcswalk_frame_is_return(fr));
	if (note)
		fprintf(f, "        [%s]\n", note);
	if (run > 1)
		fprintf(f, "        [the same frame %zu more times: #%zu to #%zu, recursion]\n",
			run - 1, k + 1, k + run - 1);
	return run;
}

/*
 * Every frame is accounted for: a run of the same return address
 * (recursion) is one line with the frame numbers it spans; with MAX (0:
 * all), frames past the MAXth are counted, not shown.
 */
void inspect_print_chain(FILE *f, gcswalk_symbolizer *sym, const struct inspect_chain *c,
			 size_t max)
{
	size_t i, k = 0, total = 0;

	for (i = 0; i < c->n; i++)
		total += (size_t)gcswalk_frame_is_code(&c->frames[i]);
	for (i = 0; i < c->n && (!max || k < max); i++) {
		size_t run;

		if (!gcswalk_frame_is_code(&c->frames[i])) {
			print_mark(f, &c->frames[i]);
			continue;
		}
		run = print_code(f, sym, c, i, k, max);
		k += run;
		i += run - 1;
	}
	if (k < total)
		fprintf(f, "  ... %zu more frame%s not shown (--max-frames %zu): #%zu to #%zu\n",
			total - k, total - k == 1 ? "" : "s", max, k, total - 1);
}
