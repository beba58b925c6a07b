// SPDX-License-Identifier: MIT
/*
 * Host test: rv-target's core, made in the riscv64 guest (rv-gcswalk-test
 * --share), read on this x86_64 host with the guest's files as sysroot:
 * the architecture (riscv64, Zicfiss), every chain as the target recorded
 * it (leaves' callers from their CFI, through this symboliser: the walk
 * is given it, as readers of another machine's cores must), the smashed
 * record, the SIGQUIT that made the core, and the vDSO's symbols.
 *
 * Usage: rv-core-check DIR   (DIR: rv-target.core, rv-target.expect, root/)
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain-text.h"
#include "gcswalk.h"
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "tap.h"
#pragma GCC diagnostic pop

#define SMASHED_RETURN 0xdead0

static char *in(const char *dir, const char *name)
{
	char *p;

	return asprintf(&p, "%s/%s", dir, name) < 0 ? NULL : p;
}

/* Every thread's canonical chain, walked with SYM's CFI. */
static char *chains(gcswalk_target *t, gcswalk_symbolizer *sym, const char *expect)
{
	struct gcswalk_walk_options o = GCSWALK_WALK_OPTIONS_INIT;
	struct text out = { NULL, 0, 0 };
	size_t n, i;
	int *tids = text_tids(expect, &n);

	o.max_frames = 8192;
	o.symbolizer = sym;
	for (i = 0; i < n; i++)
		walk_text(&out, t, sym, tids[i], &o, "rv-target", 0);
	free(tids);
	return out.s;
}

static int smash_found(gcswalk_target *t)
{
	struct gcswalk_record_check checks[64];
	size_t i, j, count;

	for (i = 0; i < gcswalk_target_thread_count(t); i++) {
		if (gcswalk_verify(t, i, checks, 64, &count) < 0)
			continue;
		for (j = 0; j < count; j++)
			if (checks[j].verdict == GCSWALK_RECORD_MISMATCH &&
			    checks[j].return_address == SMASHED_RETURN)
				return 1;
	}
	return 0;
}

static int facts_ok(gcswalk_target *t)
{
	struct gcswalk_arch_info a = { .size = sizeof(a) };
	struct gcswalk_signal_info si = { .size = sizeof(si) };
	const struct gcswalk_elf_symbol *syms = NULL;
	size_t nsyms = 0, k, clock = 0;

	if (gcswalk_target_arch(t, &a) != GCSWALK_OK || strcmp(a.name, "riscv64") ||
	    strcmp(a.shadow_stack, "Zicfiss") || a.elf_machine != 243 ||
	    a.perf_reg_shadow_stack != 32 || a.perf_reg_leaf_caller != 1)
		return 0;
	if (gcswalk_target_fatal_signal(t, &si) != GCSWALK_OK || si.signo != 3 ||
	    gcswalk_target_vdso(t, NULL, NULL, &syms, &nsyms, NULL, NULL) != GCSWALK_OK)
		return 0;
	for (k = 0; k < nsyms; k++)
		clock += strcmp(syms[k].name, "__vdso_clock_gettime") == 0;
	return clock == 1;
}

int main(int argc, char **argv)
{
	struct gcswalk_symbolizer_options so = GCSWALK_SYMBOLIZER_OPTIONS_INIT;
	gcswalk_symbolizer *sym = NULL;
	gcswalk_target *t = NULL;
	char *core, *root, *epath, *expect, *got, *err = NULL;
	int ret, ok;

	if (argc != 2) {
		fprintf(stderr, "usage: rv-core-check DIR\n");
		return 2;
	}
	core = in(argv[1], "rv-target.core");
	root = in(argv[1], "root");
	epath = in(argv[1], "rv-target.expect");
	expect = epath ? read_text_file(epath) : NULL;
	if (!core || !root || !expect)
		tap_skip_all("no riscv64 core in the folder");
	tap_plan(5);
	ret = gcswalk_target_open_core(&t, core, &err);
	if (ret != GCSWALK_OK)
		tap_diag("%s: %s: %s", core, gcswalk_strerror(ret), err ? err : "");
	free(err);
	so.sysroot = root;
	ok = ret == GCSWALK_OK && gcswalk_symbolizer_new(&sym, t, &so) == GCSWALK_OK;
	tap_result(ok, "host: the riscv64 core opens, with the guest's files as sysroot");
	if (!ok)
		tap_finish();
	tap_result(gcswalk_target_thread_count(t) == 6, "host: six threads, as in the guest");
	got = chains(t, sym, expect);
	ok = got && strcmp(got, expect) == 0;
	if (!ok)
		tap_diag("expected:\n%s# got:\n%s", expect, got ? got : "");
	tap_result(ok, "host: every chain matches the target's own record, leaves' callers included");
	tap_result(smash_found(t), "host: verify finds the smashed return address");
	tap_result(facts_ok(t), "host: riscv64/Zicfiss, the core's SIGQUIT, the vDSO's symbols");
	free(got);
	gcswalk_symbolizer_free(sym);
	gcswalk_target_close(t);
	free(core);
	free(root);
	free(epath);
	free(expect);
	tap_finish();
}
