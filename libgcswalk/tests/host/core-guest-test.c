// SPDX-License-Identifier: MIT
/*
 * Host test: a core made in the guest (by gcswalk-guest-test --core-for-host,
 * see guest-core-test.sh), read on this host with the guest's mapped files
 * as a sysroot, gives the chains the target recorded for itself and the very
 * symbolised dump the guest produced from the same core.
 *
 * Usage: gcswalk-core-guest-test DIR   (DIR: gcswalk.core, expect.txt,
 *                                       guest-full.txt, sysroot/)
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

static char *path_in(const char *dir, const char *name)
{
	char *p;

	return asprintf(&p, "%s/%s", dir, name) < 0 ? NULL : p;
}

static char *read_in(const char *dir, const char *name)
{
	char *p = path_in(dir, name), *s = p ? read_text_file(p) : NULL;

	free(p);
	return s;
}

int main(int argc, char **argv)
{
	struct gcswalk_symbolizer_options so = GCSWALK_SYMBOLIZER_OPTIONS_INIT;
	struct text canon = { NULL, 0, 0 }, full = { NULL, 0, 0 };
	gcswalk_symbolizer *sym = NULL;
	gcswalk_target *t = NULL;
	char *core, *expect, *guest_full, *sysroot, *err = NULL;
	int *tids, ret, ok;
	size_t n, i;

	if (argc != 2) {
		fprintf(stderr, "usage: gcswalk-core-guest-test DIR\n");
		return 2;
	}
	core = path_in(argv[1], "gcswalk.core");
	sysroot = path_in(argv[1], "sysroot");
	expect = read_in(argv[1], "expect.txt");
	guest_full = read_in(argv[1], "guest-full.txt");
	if (!core || !sysroot || !expect || !guest_full)
		tap_skip_all("no guest core in the folder");
	tap_plan(6);
	ret = gcswalk_target_open_core(&t, core, &err);
	if (ret != GCSWALK_OK)
		tap_diag("%s: %s: %s", core, gcswalk_strerror(ret), err ? err : "");
	free(err);
	so.sysroot = sysroot;
	ok = ret == GCSWALK_OK && gcswalk_symbolizer_new(&sym, t, &so) == GCSWALK_OK;
	tap_result(ok, "host: the arm64 core opens, with the guest's files as sysroot");
	if (!ok)
		tap_finish();
	tids = text_tids(expect, &n);
	for (i = 0; i < n; i++) {
		walk_text(&canon, t, sym, tids[i], NULL, "gcswalk-target", 0);
		walk_text(&full, t, sym, tids[i], NULL, "gcswalk-target", 1);
	}
	free(tids);
	tap_result(n == 6 && gcswalk_target_thread_count(t) == 6,
		   "host: six threads, as in the guest");
	ok = canon.s && strcmp(canon.s, expect) == 0;
	if (!ok)
		tap_diag("expected:\n%s# got:\n%s", expect, canon.s ? canon.s : "");
	tap_result(ok, "host: every chain matches the target's own record");
	ok = full.s && strcmp(full.s, guest_full) == 0;
	if (!ok)
		tap_diag("the guest's dump:\n%s# the host's:\n%s", guest_full, full.s ? full.s : "");
	tap_result(ok, "host: the symbolised dump equals the guest's, frame for frame");
	{
		/* libdwfl's CFI unwinder on the arm64 core, on this host: the
		 * plain thread's chain without the GCS's own terminator. */
		struct gcswalk_walk_options o = GCSWALK_WALK_OPTIONS_INIT;
		struct text cfi = { NULL, 0, 0 };
		char *want = NULL, *term;

		o.method = GCSWALK_METHOD_CFI;
		o.symbolizer = sym;
		tids = text_tids(expect, &n);
		if (n > 1) {
			want = text_block(expect, tids[1]);
			walk_text(&cfi, t, sym, tids[1], &o, "gcswalk-target", 0);
		}
		term = want ? strstr(want, "terminator\n") : NULL;
		if (term)
			memmove(term, term + 11, strlen(term + 11) + 1);
		ok = term && cfi.s && strcmp(cfi.s, want) == 0;
		if (!ok)
			tap_diag("CFI; expected:\n%s# got:\n%s", want ? want : "", cfi.s ? cfi.s : "");
		tap_result(ok, "host: the CFI fallback unwinds the arm64 core to the same chain");
		free(want);
		free(tids);
		text_free(&cfi);
	}
	{
		/* The facts of a real arm64 core, read on this host: the
		 * SIGQUIT that made it, and the vDSO from its dumped segment. */
		struct gcswalk_signal_info si;
		const struct gcswalk_elf_symbol *syms = NULL;
		size_t nsyms = 0, k, clock = 0, nbid = 0;
		const unsigned char *bid = NULL;

		memset(&si, 0, sizeof(si));
		si.size = sizeof(si);
		ok = gcswalk_target_fatal_signal(t, &si) == GCSWALK_OK && si.signo == 3 &&
		     si.thread_index == 0 &&
		     gcswalk_target_vdso(t, NULL, NULL, &syms, &nsyms, &bid, &nbid) == GCSWALK_OK;
		for (k = 0; ok && k < nsyms; k++)
			clock += strcmp(syms[k].name, "__kernel_clock_gettime") == 0;
		ok = ok && clock == 1 && nbid > 0;
		if (!ok)
			tap_diag("signal %d, %zu vDSO symbols: %s", si.signo, nsyms,
				 gcswalk_target_errmsg(t));
		tap_result(ok, "host: the core's SIGQUIT, and its vDSO's symbols and build-id");
	}
	text_free(&canon);
	text_free(&full);
	gcswalk_symbolizer_free(sym);
	gcswalk_target_close(t);
	free(core);
	free(sysroot);
	free(expect);
	free(guest_full);
	tap_finish();
}
