// SPDX-License-Identifier: MIT
/*
 * gcsprof inspect CORE: every thread's chain from its GCS, symbolised with
 * source lines; the fatal signal; and a cross-check of each thread's
 * stack (link register, frame records) against its GCS, reporting where
 * they disagree: the stack was overwritten there.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gcswalk.h>

#include "gcsprof.h"

struct inspect_opts {
	const char *exe;
	const char *sysroot;
	unsigned max_frames;
};

#define OPT(field) offsetof(struct inspect_opts, field)
static const struct gp_option inspect_options[] = {
	{ "exe", 'e', GP_OPT_STRING, OPT(exe), "FILE",
	  "the crashed program, if not where the core says", 0, 0, NULL, 0 },
	{ "sysroot", 0, GP_OPT_STRING, OPT(sysroot), "DIR",
	  "look for the mapped files under DIR (e.g. the guest's root)", 0, 0, NULL, 0 },
	{ "max-frames", 0, GP_OPT_UINT, OPT(max_frames), "N",
	  "show at most N frames per thread, and say how many more (default: all)", 1, 1u << 30,
	  NULL, 0 },
};
#undef OPT

/* Every frame is walked, however deep: none is hidden unless asked. */
#define WALK_ALL_FRAMES ((size_t)1 << 30)


struct fatal {
	int signo, code;
	uint64_t addr;
	int found;
};

/* The fatal signal the core records (libgcswalk reads its NT_SIGINFO). */
static void read_fatal_signal(const gcswalk_target *t, struct fatal *fs)
{
	struct gcswalk_signal_info si = { .size = sizeof(si) };

	memset(fs, 0, sizeof(*fs));
	if (gcswalk_target_fatal_signal(t, &si) != GCSWALK_OK)
		return;
	fs->signo = si.signo;
	fs->code = si.code;
	fs->addr = si.address;
	fs->found = 1;
}

static const char *signal_name(int sig)
{
	static const char *const names[] = {
		[SIGSEGV] = "SIGSEGV", [SIGBUS] = "SIGBUS", [SIGILL] = "SIGILL",
		[SIGABRT] = "SIGABRT", [SIGFPE] = "SIGFPE", [SIGTRAP] = "SIGTRAP",
		[SIGQUIT] = "SIGQUIT", [SIGKILL] = "SIGKILL", [SIGTERM] = "SIGTERM",
		[SIGSYS] = "SIGSYS", [SIGINT] = "SIGINT",
	};

	if (sig > 0 && (size_t)sig < sizeof(names) / sizeof(names[0]) && names[sig])
		return names[sig];
	return "signal";
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

static const char *short_name(gcswalk_symbolizer *sym, uint64_t address, int is_return)
{
	const struct gcswalk_location *loc = NULL;

	if (!sym || gcswalk_symbolize(sym, address, is_return, &loc) < 0 || !loc ||
	    !loc->nsymbols)
		return "??";
	return loc->symbols[loc->nsymbols - 1].function ? loc->symbols[loc->nsymbols - 1].function
							 : "??";
}

static int is_code(const struct gcswalk_frame *f)
{
	return f->kind == GCSWALK_FRAME_PC || f->kind == GCSWALK_FRAME_RETURN ||
	       f->kind == GCSWALK_FRAME_SIGRETURN || f->kind == GCSWALK_FRAME_LR;
}

/*
 * Print a thread's frames, numbered from #0. Every frame is accounted
 * for: a run of the same return address (recursion) is one line with the
 * frame numbers it spans; with MAX (0: all), frames past the MAXth are
 * counted, not shown.
 */
static void print_chain(FILE *f, gcswalk_symbolizer *sym, const struct gcswalk_frame *frames,
			size_t n, size_t max)
{
	size_t i = 0, k = 0, total = 0;

	for (i = 0; i < n; i++)
		total += is_code(&frames[i]);
	for (i = 0; i < n && (!max || k < max); i++) {
		const struct gcswalk_frame *fr = &frames[i];
		size_t run = 1;

		switch (fr->kind) {
		case GCSWALK_FRAME_PC:
		case GCSWALK_FRAME_RETURN:
		case GCSWALK_FRAME_SIGRETURN:
		case GCSWALK_FRAME_LR:
			while (i + run < n && frames[i + run].kind == fr->kind &&
			       frames[i + run].address == fr->address)
				run++;
			if (max && k + run > max)
				run = max - k;
			fprintf(f, "  #%-3zu ", k);
			print_location(f, sym, fr->address, gcswalk_frame_is_return(fr));
			if (run > 1)
				fprintf(f, "        [the same frame %zu more times: #%zu to #%zu, "
					   "recursion]\n", run - 1, k + 1, k + run - 1);
			k += run;
			i += run - 1;
			break;
		case GCSWALK_FRAME_SIGNAL_CAP:
			fprintf(f, "  ---- signal delivered here; the interrupted context follows ----\n");
			break;
		case GCSWALK_FRAME_TERMINATOR:
			break;
		default:
			fprintf(f, "  [%s entry 0x%016" PRIx64 " at 0x%016" PRIx64 "]\n",
				gcswalk_frame_kind_name(fr->kind), fr->address, fr->slot);
		}
	}
	if (k < total)
		fprintf(f, "  ... %zu more frame%s not shown (--max-frames %zu): #%zu to #%zu\n",
			total - k, total - k == 1 ? "" : "s", max, k, total - 1);
}

/* A thread's chain as printed: the frames and the number each code frame
 * is shown with (#0 the PC). */
struct chain {
	const struct gcswalk_frame *frames;
	const size_t *numbers;
	size_t n;
};

/* The frame numbers of the GCS entry at SLOT (the caller) and of the code
 * frame before it (the function whose record holds that return address).
 * 0 if the slot is not in the chain. */
static int frame_of_slot(const struct chain *c, uint64_t slot, size_t *owner, size_t *caller,
			 size_t *owner_i, size_t *caller_i)
{
	size_t i, j;

	for (i = 0; i < c->n; i++) {
		if (c->frames[i].slot != slot || !is_code(&c->frames[i]))
			continue;
		for (j = i; j-- > 0;) {
			if (is_code(&c->frames[j])) {
				*owner = c->numbers[j];
				*caller = c->numbers[i];
				*owner_i = j;
				*caller_i = i;
				return 1;
			}
		}
		return 0;
	}
	return 0;
}

static const char *frame_name(gcswalk_symbolizer *sym, const struct chain *c, size_t i)
{
	return short_name(sym, c->frames[i].address, gcswalk_frame_is_return(&c->frames[i]));
}

/* One line for a record gcswalk_verify() found overwritten. */
static void print_record_claim(FILE *f, gcswalk_target *t, gcswalk_symbolizer *sym,
			       const struct chain *c,
			       const struct gcswalk_record_check *ck, size_t sound)
{
	size_t owner, caller, oi, ci;
	int known = ck->gcs_slot && frame_of_slot(c, ck->gcs_slot, &owner, &caller, &oi, &ci);

	if (ck->verdict == GCSWALK_RECORD_BAD_LINK) {
		uint64_t rec[2] = { 0, 0 };

		/* The saved frame pointer itself, for the message. */
		(void)gcswalk_target_read(t, ck->record, rec, sizeof(rec), NULL);
		if (known)
			fprintf(f, "  STACK CORRUPTION in frame #%zu (%s): ", owner, frame_name(sym, c, oi));
		else
			fprintf(f, "  STACK CORRUPTION: ");
		fprintf(f, "its frame record at 0x%016" PRIx64 " links to 0x%016" PRIx64
			   ", below it, where no older frame of this stack can be (the heap or other "
			   "data): its saved frame pointer was overwritten; the GCS has the older frames\n",
			ck->record, rec[0]);
		return;
	}
	if (known)
		fprintf(f, "  STACK CORRUPTION in frame #%zu (%s): its frame record at 0x%016" PRIx64
			   " holds return address 0x%016" PRIx64 ", but the GCS says %s returns to 0x%016"
			   PRIx64 " (%s, frame #%zu): the stack is overwritten there (%zu sound record%s"
			   " below it)\n",
			owner, frame_name(sym, c, oi), ck->record, ck->return_address,
			frame_name(sym, c, oi), c->frames[ci].address, frame_name(sym, c, ci), caller,
			sound, sound == 1 ? "" : "s");
	else
		fprintf(f, "  STACK CORRUPTION: the frame record at 0x%016" PRIx64
			   " holds return address 0x%016" PRIx64 ", which is not on the GCS: the stack "
			   "is overwritten there (%zu sound record%s below it)\n",
			ck->record, ck->return_address, sound, sound == 1 ? "" : "s");
}

/*
 * gcswalk_verify()'s verdicts on the registers of a thread killed by a GCS
 * check fault (the REGISTER verdicts), in the words of the other claims:
 * the frame is the one the refused return was leaving (the PC's), the
 * GCS entry the one the LR should have held. BAD says whether a claim
 * came before (the second one reads "and in").
 */
static void print_register_claim(FILE *f, gcswalk_symbolizer *sym, const struct chain *c,
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
		const char *to = short_name(sym, chk->return_address, 0);

		fprintf(f, "  STACK CORRUPTION in frame #%zu (%s): the link register holds 0x%016" PRIx64
			   "%s%s%s but the GCS says %s returns to 0x%016" PRIx64 " (%s, frame #%zu)\n",
			c->numbers[pc], frame_name(sym, c, pc), chk->return_address,
			strcmp(to, "??") ? " (" : "", strcmp(to, "??") ? to : "",
			strcmp(to, "??") ? ")" : "", frame_name(sym, c, pc), c->frames[ret].address,
			frame_name(sym, c, ret), c->numbers[ret]);
	} else if (chk->verdict == GCSWALK_REGISTER_FP_NOT_RECORD) {
		fprintf(f, "  %sframe #%zu (%s): the frame pointer 0x%016" PRIx64
			   " is not a frame record address: it was loaded from an overwritten stack\n",
			bad ? "and in " : "STACK CORRUPTION in ", c->numbers[pc],
			frame_name(sym, c, pc), chk->record);
	}
}

/*
 * Compare thread I's stack with its GCS and print the verdicts of
 * gcswalk_verify(): the records it found overwritten as STACK CORRUPTION
 * naming the frame, the ones the GCS cannot vouch for in neutral words.
 * Returns 1 if corruption was found.
 */
static int check_thread(FILE *f, gcswalk_target *t, size_t i, gcswalk_symbolizer *sym,
			const struct chain *c)
{
	struct gcswalk_record_check *checks = NULL;
	size_t n = 0, k, max = 2 * c->n + 64, count[GCSWALK_REGISTER_FP_NOT_RECORD + 1] = { 0 };
	uint64_t first_older = 0, first_other = 0;
	int ret, bad = 0;

	/* Every record is checked: a chain of records longer than the GCS
	 * (garbage links, frames older than the GCS) gets more room. */
	for (;;) {
		struct gcswalk_record_check *g = realloc(checks, max * sizeof(*checks));

		if (!g) {
			fprintf(f, "  stack not checked: out of memory\n");
			free(checks);
			return bad;
		}
		checks = g;
		ret = gcswalk_verify(t, i, checks, max, &n);
		if (ret != GCSWALK_CUT || max >= ((size_t)1 << 22))
			break;
		max *= 4;
	}
	if (ret < 0) {
		fprintf(f, "  stack not checked: %s\n", gcswalk_strerror(ret));
		free(checks);
		return bad;
	}
	for (k = 0; k < n; k++) {
		enum gcswalk_verdict v = checks[k].verdict;

		if (v >= GCSWALK_RECORD_MATCHES && v <= GCSWALK_REGISTER_FP_NOT_RECORD)
			count[v]++;
		if (v == GCSWALK_RECORD_OLDER_THAN_GCS && !first_older)
			first_older = checks[k].record;
		if (v == GCSWALK_RECORD_OTHER_STACK && !first_other)
			first_other = checks[k].record;
		if (v == GCSWALK_RECORD_MISMATCH || v == GCSWALK_RECORD_BAD_LINK) {
			print_record_claim(f, t, sym, c, &checks[k], count[GCSWALK_RECORD_MATCHES]);
			bad = 1;
		} else if (v == GCSWALK_REGISTER_LR_MISMATCH || v == GCSWALK_REGISTER_FP_NOT_RECORD) {
			print_register_claim(f, sym, c, &checks[k], bad);
			bad = 1;
		}
	}
	fprintf(f, "  stack: %zu frame record%s agree%s with the GCS",
			count[GCSWALK_RECORD_MATCHES], count[GCSWALK_RECORD_MATCHES] == 1 ? "" : "s",
			count[GCSWALK_RECORD_MATCHES] == 1 ? "s" : "");
	if (count[GCSWALK_RECORD_UNCHECKED])
		fprintf(f, "; %zu in signal frames (the interrupted LR) not checked",
			count[GCSWALK_RECORD_UNCHECKED]);
	if (ret == GCSWALK_CUT)
		fprintf(f, "; records past the %zuth not checked", n);
	fputc('\n', f);
	if (count[GCSWALK_RECORD_OLDER_THAN_GCS])
		fprintf(f, "  note: %zu frame record%s from 0x%016" PRIx64 " up %s older than the GCS "
			   "(GCS was enabled after %s made): the GCS cannot vouch for %s; not a sign "
			   "of corruption\n",
			count[GCSWALK_RECORD_OLDER_THAN_GCS],
			count[GCSWALK_RECORD_OLDER_THAN_GCS] == 1 ? "" : "s", first_older,
			count[GCSWALK_RECORD_OLDER_THAN_GCS] == 1 ? "is" : "are",
			count[GCSWALK_RECORD_OLDER_THAN_GCS] == 1 ? "it was" : "they were",
			count[GCSWALK_RECORD_OLDER_THAN_GCS] == 1 ? "it" : "them");
	if (count[GCSWALK_RECORD_OTHER_STACK])
		fprintf(f, "  note: %zu frame record%s from 0x%016" PRIx64 " up %s on another stack "
			   "(the thread switched stacks and GCSs): their return addresses are on the "
			   "other GCS, not checked; not a sign of corruption\n",
			count[GCSWALK_RECORD_OTHER_STACK],
			count[GCSWALK_RECORD_OTHER_STACK] == 1 ? "" : "s", first_other,
			count[GCSWALK_RECORD_OTHER_STACK] == 1 ? "is" : "are");
	free(checks);
	return bad;
}

/* A symbolising target for the core with the executable replaced by EXE. */
static int exe_target(gcswalk_target *core, const char *exe, gcswalk_target **out)
{
	size_t n = gcswalk_target_mapping_count(core), i;
	struct gcswalk_mapping *maps = calloc(n + 1, sizeof(*maps));
	const char *first = NULL;
	char *msg = NULL;
	int ret;

	if (!maps)
		return GCSWALK_E_NOMEM;
	for (i = 0; i < n; i++) {
		if (gcswalk_target_mapping(core, i, &maps[i]) != GCSWALK_OK) {
			free(maps);
			return GCSWALK_E_INVALID;
		}
		if (i == 0)
			first = maps[i].path;
		if (first && strcmp(maps[i].path, first) == 0)
			maps[i].path = exe;
	}
	ret = gcswalk_target_open_mappings(out, gcswalk_target_pid(core), maps, n, &msg);
	free(msg);
	free(maps);
	return ret;
}

static int inspect_run(void *p, int argc, char **argv)
{
	const struct inspect_opts *o = p;
	struct gcswalk_symbolizer_options so = GCSWALK_SYMBOLIZER_OPTIONS_INIT;
	struct gcswalk_walk_options wo = GCSWALK_WALK_OPTIONS_INIT;
	gcswalk_target *t = NULL, *symt = NULL;
	gcswalk_symbolizer *sym = NULL;
	struct gcswalk_frame *frames = NULL;
	size_t *numbers = NULL;
	size_t frames_cap = 0, numbers_cap = 0, nframes;
	struct fatal fs;
	struct gp_out out;
	char *msg = NULL, *sysroot = NULL;
	size_t i, n;
	int ret, corrupt = 0;

	(void)argc;
	if (o->exe && access(o->exe, R_OK) != 0)
		return gp_error(GP_EXIT_INPUT, "inspect: cannot read %s: %s", o->exe, strerror(errno));
	if (access(argv[0], R_OK) != 0)
		return gp_error(errno == EACCES ? GP_EXIT_PERMISSION : GP_EXIT_INPUT,
				"inspect: cannot read %s: %s", argv[0], strerror(errno));
	ret = gcswalk_target_open_core(&t, argv[0], &msg);
	if (ret < 0) {
		int st = gp_exit_for_gcswalk(ret);

		if (ret == GCSWALK_E_IO)
			st = GP_EXIT_INPUT;
		if (ret == GCSWALK_E_NOT_CORE && gp_looks_like_profile(argv[0]))
			ret = gp_error(st, "inspect: %s is a gcsprof profile, not a core dump: read it "
				       "with 'gcsprof report %s'", argv[0], argv[0]);
		else
			ret = gp_error(st, "inspect: %s: %s (%s)", argv[0], gcswalk_strerror(ret),
				       msg ? msg : "");
		free(msg);
		return ret;
	}
	read_fatal_signal(t, &fs);
	if (o->sysroot) {
		ret = gp_sysroot_resolve("inspect", o->sysroot, &sysroot);
		if (ret)
			goto done;
	}
	so.sysroot = sysroot;
	if (o->exe && exe_target(t, o->exe, &symt) != GCSWALK_OK)
		gp_warn("cannot use %s for symbols", o->exe);
	if (gcswalk_symbolizer_new(&sym, symt ? symt : t, &so) != GCSWALK_OK)
		gp_warn("no symbols: %s", gcswalk_target_errmsg(symt ? symt : t));
	ret = gp_out_open(&out, NULL);
	if (ret)
		goto done;
	n = gcswalk_target_thread_count(t);
	fprintf(out.fp, "core %s: process %d, %zu thread%s\n", argv[0], gcswalk_target_pid(t), n,
		n == 1 ? "" : "s");
	if (fs.found)
		fprintf(out.fp, "fatal signal: %d (%s)%s, code %d, address 0x%" PRIx64 "\n", fs.signo,
			signal_name(fs.signo),
			fs.signo == SIGSEGV && fs.code == GCSWALK_SEGV_CPERR ?
				" from a GCS check (SEGV_CPERR): a return address did not match the GCS" :
				"",
			fs.code, fs.addr);
	wo.max_frames = WALK_ALL_FRAMES;
	for (i = 0; i < n; i++) {
		struct gcswalk_thread_info info;
		struct gcswalk_frame f;
		gcswalk_walk *w = NULL;
		struct chain chain;
		size_t k = 0;
		int r;

		if (gcswalk_target_thread(t, i, &info) != GCSWALK_OK)
			continue;
		fprintf(out.fp, "\nthread %d%s%s%s%s:\n", info.tid, info.name ? " (" : "",
			info.name ? info.name : "", info.name ? ")" : "",
			i == 0 ? ", the one that received the signal" : "");
		r = gcswalk_walk_begin(&w, t, i, &wo);
		if (r < 0) {
			fprintf(out.fp, "  no GCS chain: %s (%s)\n", gcswalk_strerror(r),
				gcswalk_target_errmsg(t));
			continue;
		}
		nframes = 0;
		while ((r = gcswalk_walk_next(w, &f)) == GCSWALK_OK) {
			struct gcswalk_frame *g = gp_grow(frames, &frames_cap, nframes + 1,
							  sizeof(*g));
			size_t *num = g ? gp_grow(numbers, &numbers_cap, nframes + 1, sizeof(*num))
					: NULL;

			if (g)
				frames = g;
			if (!g || !num) {
				ret = gp_error(GP_EXIT_SYSTEM, "out of memory");
				gcswalk_walk_free(w);
				goto done_out;
			}
			numbers = num;
			numbers[nframes] = k;
			frames[nframes++] = f;
			k += is_code(&f);
		}
		print_chain(out.fp, sym, frames, nframes, o->max_frames);
		if (r == GCSWALK_CUT)
			fprintf(out.fp, "  ... the chain goes deeper than %zu frames\n",
				(size_t)WALK_ALL_FRAMES);
		gcswalk_walk_free(w);
		chain = (struct chain){ frames, numbers, nframes };
		corrupt |= check_thread(out.fp, t, i, sym, &chain);
	}
	if (corrupt)
		fprintf(out.fp, "\nverdict: STACK CORRUPTION (above). The chains come from the GCS, "
				"which the overwritten stack cannot change: they are the true call "
				"chains.\n");
	else
		fprintf(out.fp, "\nverdict: no stack corruption found\n");
done_out:
	if (ret)
		(void)gp_out_close(&out);
	else
		ret = gp_out_close(&out);
done:
	free(frames);
	free(numbers);
	free(sysroot);
	gcswalk_symbolizer_free(sym);
	gcswalk_target_close(symt);
	gcswalk_target_close(t);
	return ret;
}

const struct gp_command gp_cmd_inspect = {
	.name = "inspect",
	.synopsis = "CORE",
	.summary = "show every thread's call chain from a core dump's GCS and find stack corruption",
	.options = inspect_options,
	.noptions = sizeof(inspect_options) / sizeof(inspect_options[0]),
	.min_args = 1,
	.max_args = 1,
	.run = inspect_run,
	.opts_size = sizeof(struct inspect_opts),
	.init = NULL,
};
