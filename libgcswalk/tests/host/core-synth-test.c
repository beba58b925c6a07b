// SPDX-License-Identifier: MIT
/*
 * Host test: synthetic arm64 cores with known GCS contents are walked and
 * every frame's kind and address checked; damaged cores (truncated at every
 * length, absurd sizes, notes cut off, GCS pointers outside the dump,
 * random byte flips) must give typed errors, never a crash or a hang.
 *
 *   gcswalk-core-synth-test [FEATURE...]   (none: all)
 * Each feature is a CTest test of its own: names, walk (the reference
 * core, frame by frame), facts, facts-minimal, threads (four handles at
 * once), truncated, flips, crafted (damaged cores).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chain-text.h"
#include "gcswalk.h"
#include "synth-core.h"
/* tap.h is header-only: not every helper is used by every test. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "tap.h"
#pragma GCC diagnostic pop
#include "walk-expect.h"

#define NT_ARM_GCS_TYPE 0x410
#define NT_FILE_TYPE 0x46494c45
#define NT_SIGINFO_TYPE 0x53494749
#define EM_AARCH64_MACHINE 183

#define GCS_BASE 0x7f0000000000ULL
#define GCS2_BASE 0x7f0000010000ULL
#define GCS3_BASE 0x7f0000020000ULL
#define STACK_BASE 0x7ff000000000ULL
#define UNDUMPED_BASE 0x7f0000030000ULL

static char *dir;

struct prstatus {
	unsigned char bytes[392];
};

static void make_prstatus(struct prstatus *p, int32_t tid, uint64_t pc, uint64_t lr, uint64_t sp,
			  uint64_t fp)
{
	memset(p, 0, sizeof(*p));
	memcpy(p->bytes + 32, &tid, 4);
	memcpy(p->bytes + 112 + 29 * 8, &fp, 8);
	memcpy(p->bytes + 112 + 30 * 8, &lr, 8);
	memcpy(p->bytes + 112 + 31 * 8, &sp, 8);
	memcpy(p->bytes + 112 + 32 * 8, &pc, 8);
}

static void make_gcs(uint64_t g[3], uint64_t enabled, uint64_t gcspr)
{
	g[0] = enabled;
	g[1] = 0;
	g[2] = gcspr;
}

/* The reference core's pieces, kept for the damage tests. */
static uint64_t gcs1[1024], gcs2[512], gcs3[1024], stack[512];
static struct prstatus pr[8];
static uint64_t gn[8][3];
static unsigned char prpsinfo[136], ntfile[16 + 2 * 24 + 64];
static size_t ntfile_len;

/* The fatal signal the reference core records: a GCS fault. */
#define SIG_SEGV 11
#define FAULT_ADDRESS 0x400504ULL
static unsigned char siginfo[128];
static uint64_t auxv[6];
/* This host's own vDSO, copied into the core as the target's: a real
 * image for the in-memory parser (0 size: the host has none). */
static const void *vdso_image;
static uint64_t vdso_base, vdso_size;

static void find_host_vdso(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi;

		if (strstr(line, "[vdso]") && sscanf(line, "%llx-%llx", &lo, &hi) == 2) {
			vdso_base = lo;
			vdso_size = hi - lo;
			vdso_image = (const void *)(uintptr_t)lo;
		}
	}
	if (f)
		fclose(f);
}

static uint64_t slot1(int i)
{
	return GCS_BASE + 0x2000 - 8 * 8 + 8 * (uint64_t)i;
}

static int build_reference(struct synth_buf *core)
{
	struct synth_note notes[24];
	struct synth_seg segs[6];
	uint64_t hdr[2] = { 2, 4096 }, files[6] = {
		0x400000, 0x401000, 0, 0x7f8000000000ULL, 0x7f8000002000ULL, 1 };
	const char names[] = "/usr/bin/synth\0/usr/lib/libsynth.so";
	size_t n = 0;
	int i;

	/* Thread 1: every kind of entry. */
	memset(gcs1, 0, sizeof(gcs1));
	gcs1[1024 - 8 + 0] = 0x400104;
	gcs1[1024 - 8 + 1] = 0x400204;                      /* sigreturn */
	gcs1[1024 - 8 + 2] = slot1(2) & ~0xfffULL;           /* signal cap */
	gcs1[1024 - 8 + 3] = 0x400304;
	gcs1[1024 - 8 + 4] = (slot1(4) & ~0xfffULL) | 1;     /* switch cap */
	gcs1[1024 - 8 + 5] = 0x400403;                      /* misaligned */
	gcs1[1024 - 8 + 6] = 0x400504;
	gcs1[1024 - 8 + 7] = 0;                             /* terminator */
	make_prstatus(&pr[0], 101, 0x400010, 0x400104, STACK_BASE + 0x100, 0);
	make_gcs(gn[0], 1, slot1(0));
	/* Thread 1's signal frame, above its SP: a sigcontext whose pc is the
	 * interrupted PC, an fpsimd record, and a GCS record naming the cap. */
	memset(stack, 0, sizeof(stack));
	put_signal_frame(&stack[64], 0x400abc, slot1(2));
	/* Thread 2: GCS off; frame records on the stack for the FP fallback. */
	stack[2] = STACK_BASE + 0x40;
	stack[3] = 0x400604;
	stack[8] = 0;
	stack[9] = 0x400704;
	make_prstatus(&pr[1], 102, 0x400020, 0x400604, STACK_BASE, STACK_BASE + 0x10);
	make_gcs(gn[1], 0, 0);
	/* Thread 3: no GCS note at all. */
	make_prstatus(&pr[2], 103, 0x400030, 0, 0, 0);
	/* Thread 4: GCS pointer in a segment that was not dumped. */
	make_prstatus(&pr[3], 104, 0x400040, 0, 0, 0);
	make_gcs(gn[3], 1, UNDUMPED_BASE + 0x800);
	/* Thread 5: GCS pointer outside every segment. */
	make_prstatus(&pr[4], 105, 0x400050, 0, 0, 0);
	make_gcs(gn[4], 1, 0x1230000);
	/* Thread 6: a map_shadow_stack stack without a marker: two entries,
	 * then the end of the segment. The LR is not on the GCS. */
	memset(gcs2, 0, sizeof(gcs2));
	gcs2[510] = 0x400804;
	gcs2[511] = 0x400904;
	make_prstatus(&pr[5], 106, 0x400060, 0x400a04, 0, 0);
	make_gcs(gn[5], 1, GCS2_BASE + 0x1000 - 16);
	/* Thread 7: the GCS segment is only half dumped. */
	memset(gcs3, 0, sizeof(gcs3));
	gcs3[510] = 0x400b04;
	gcs3[511] = 0x400c04;
	make_prstatus(&pr[6], 107, 0x400070, 0, 0, 0);
	make_gcs(gn[6], 1, GCS3_BASE + 0x1000 - 16);

	/* Thread 8: GCS and frame records, one of them overwritten. */
	put_smashed_records(&gcs1[900], stack, STACK_BASE);
	make_prstatus(&pr[7], 108, 0x400080, 0x401004, STACK_BASE + 0x70, STACK_BASE + 0x80);
	make_gcs(gn[7], 1, GCS_BASE + 900 * 8);

	memset(prpsinfo, 0, sizeof(prpsinfo));
	memcpy(prpsinfo + 24, &(int32_t){ 101 }, 4);
	memcpy(prpsinfo + 40, "synth", 5);
	memcpy(ntfile, hdr, 16);
	memcpy(ntfile + 16, files, 24);
	memcpy(ntfile + 40, files + 3, 24);
	memcpy(ntfile + 64, names, sizeof(names));
	ntfile_len = 64 + sizeof(names);

	memset(siginfo, 0, sizeof(siginfo));
	memcpy(siginfo, &(int32_t){ SIG_SEGV }, 4);
	memcpy(siginfo + 8, &(int32_t){ GCSWALK_SEGV_CPERR }, 4);
	memcpy(siginfo + 16, &(uint64_t){ FAULT_ADDRESS }, 8);
	auxv[0] = 6;                    /* AT_PAGESZ */
	auxv[1] = 4096;
	auxv[2] = 33;                   /* AT_SYSINFO_EHDR */
	auxv[3] = vdso_base;
	auxv[4] = 0;                    /* AT_NULL */

	/* The kernel's order: the first thread's status, then the process's
	 * notes, then the other threads. */
	notes[n++] = (struct synth_note){ "CORE", NT_PRSTATUS, &pr[0], sizeof(pr[0]) };
	notes[n++] = (struct synth_note){ "CORE", NT_PRPSINFO, prpsinfo, sizeof(prpsinfo) };
	notes[n++] = (struct synth_note){ "CORE", NT_SIGINFO_TYPE, siginfo, sizeof(siginfo) };
	notes[n++] = (struct synth_note){ "CORE", NT_AUXV, auxv, sizeof(auxv) };
	for (i = 0; i < 8; i++) {
		if (i > 0)
			notes[n++] = (struct synth_note){ "CORE", NT_PRSTATUS, &pr[i], sizeof(pr[i]) };
		if (i != 2)
			notes[n++] = (struct synth_note){ "LINUX", NT_ARM_GCS_TYPE, gn[i], 24 };
	}
	notes[n++] = (struct synth_note){ "CORE", NT_FILE_TYPE, ntfile, ntfile_len };
	segs[0] = (struct synth_seg){ GCS_BASE, gcs1, sizeof(gcs1), sizeof(gcs1) };
	segs[1] = (struct synth_seg){ STACK_BASE, stack, sizeof(stack), sizeof(stack) };
	segs[2] = (struct synth_seg){ UNDUMPED_BASE, NULL, 0, 0x1000 };
	segs[3] = (struct synth_seg){ GCS2_BASE, gcs2, 0x1000, 0x1000 };
	segs[4] = (struct synth_seg){ GCS3_BASE, gcs3, 0x1000, 0x2000 };
	segs[5] = (struct synth_seg){ vdso_base, vdso_image, vdso_size, vdso_size };
	return synth_core(EM_AARCH64_MACHINE, ET_CORE, notes, n, segs, vdso_size ? 6 : 5, core);
}

static char *write_file(const char *name, const void *data, size_t len)
{
	char *path;
	int fd;

	if (asprintf(&path, "%s/%s", dir, name) < 0)
		return NULL;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len) {
		if (fd >= 0)
			close(fd);
		free(path);
		return NULL;
	}
	close(fd);
	return path;
}

static void test_reference(const char *path)
{
	struct gcswalk_walk_options o = GCSWALK_WALK_OPTIONS_INIT;
	const struct expect full[] = {
		{ GCSWALK_FRAME_PC, 0x400010 },
		{ GCSWALK_FRAME_RETURN, 0x400104 },
		{ GCSWALK_FRAME_SIGRETURN, 0x400204 },
		{ GCSWALK_FRAME_SIGNAL_CAP, slot1(2) & ~0xfffULL },
		{ GCSWALK_FRAME_INTERRUPTED_PC, 0x400abc },
		{ GCSWALK_FRAME_RETURN, 0x400304 },
		{ GCSWALK_FRAME_SWITCH_CAP, (slot1(4) & ~0xfffULL) | 1 },
		{ GCSWALK_FRAME_INVALID, 0x400403 },
		{ GCSWALK_FRAME_RETURN, 0x400504 },
		{ GCSWALK_FRAME_TERMINATOR, 0 },
	};
	const struct expect fp[] = {
		{ GCSWALK_FRAME_PC, 0x400020 },
		{ GCSWALK_FRAME_RETURN, 0x400604 },
		{ GCSWALK_FRAME_RETURN, 0x400704 },
	};
	const struct expect nomarker[] = {
		{ GCSWALK_FRAME_PC, 0x400060 },
		{ GCSWALK_FRAME_LR, 0x400a04 },
		{ GCSWALK_FRAME_RETURN, 0x400804 },
		{ GCSWALK_FRAME_RETURN, 0x400904 },
	};
	const struct expect half[] = {
		{ GCSWALK_FRAME_PC, 0x400070 },
		{ GCSWALK_FRAME_RETURN, 0x400b04 },
		{ GCSWALK_FRAME_RETURN, 0x400c04 },
		{ GCSWALK_FRAME_UNREADABLE, 0 },
	};
	const struct gcswalk_location *loc, *loc2;
	struct gcswalk_thread_info info;
	struct gcswalk_mapping m;
	gcswalk_symbolizer *sym = NULL;
	gcswalk_target *t;
	char *err = NULL;
	int ret, ok;

	ret = gcswalk_target_open_core(&t, path, &err);
	if (ret != GCSWALK_OK) {
		tap_diag("open: %s: %s", gcswalk_strerror(ret), err ? err : "");
		free(err);
		tap_skip_all("the reference core does not open");
	}
	tap_result(gcswalk_target_thread_count(t) == 8 && gcswalk_target_pid(t) == 101,
		   "core: 8 threads, pid from NT_PRPSINFO");
	ok = gcswalk_target_thread(t, 0, &info) == GCSWALK_OK && info.tid == 101 && info.name &&
	     strcmp(info.name, "synth") == 0 && info.have_gcs && info.gcs.gcspr == slot1(0) &&
	     info.pc == 0x400010 && info.lr == 0x400104 && info.sp == STACK_BASE + 0x100;
	tap_result(ok, "core: thread 0 registers, name and GCS state");
	tap_result(gcswalk_target_thread_index(t, 106) == 5 &&
		   gcswalk_target_thread_index(t, 999) == GCSWALK_E_INVALID &&
		   gcswalk_target_thread(t, 8, &info) == GCSWALK_E_INVALID,
		   "core: thread lookup by tid, bad index rejected");
	ok = gcswalk_target_mapping_count(t) == 2 &&
	     gcswalk_target_mapping(t, 1, &m) == GCSWALK_OK && m.start == 0x7f8000000000ULL &&
	     m.offset == 4096 && strcmp(m.path, "/usr/lib/libsynth.so") == 0;
	tap_result(ok, "core: NT_FILE mappings");
	tap_result(walk_matches(t, 0, NULL, full, 10, GCSWALK_END),
		   "walk: return, sigreturn, signal cap, interrupted PC, switch cap, invalid, terminator");
	o.max_frames = 4;
	tap_result(walk_matches(t, 0, &o, full, 4, GCSWALK_CUT), "walk: depth limit says cut");
	o.max_frames = 10;
	tap_result(walk_matches(t, 0, &o, full, 10, GCSWALK_END),
		   "walk: a limit equal to the depth is not a cut");
	o.max_frames = 0;
	o.flags = GCSWALK_WALK_LR;
	tap_result(walk_matches(t, 0, &o, full, 10, GCSWALK_END),
		   "walk: LR equal to the newest entry is not repeated");
	tap_result(walk_matches(t, 5, &o, nomarker, 4, GCSWALK_END),
		   "walk: LR off the GCS; stack without terminator ends at its mapping");
	o.flags = 0;
	tap_result(walk_error(t, 1, GCSWALK_E_GCS_DISABLED), "walk: GCS off gives GCS_DISABLED");
	o.method = GCSWALK_METHOD_FP;
	ret = walk_matches(t, 1, &o, fp, 3, GCSWALK_END);
	tap_result(ret, "fallback: frame records of a thread without GCS");
	o.method = GCSWALK_METHOD_GCS;
	tap_result(walk_error(t, 2, GCSWALK_E_NO_GCS_NOTE), "walk: no GCS note gives NO_GCS_NOTE");
	tap_result(walk_error(t, 3, GCSWALK_E_GCS_NOT_DUMPED),
		   "walk: GCS in an undumped segment gives GCS_NOT_DUMPED");
	tap_result(walk_error(t, 4, GCSWALK_E_GCS_NOT_DUMPED),
		   "walk: GCS pointer outside every segment gives GCS_NOT_DUMPED");
	tap_result(walk_matches(t, 6, NULL, half, 4, GCSWALK_END),
		   "walk: half-dumped GCS ends with an unreadable frame");
	tap_result(walk_error(t, 8, GCSWALK_E_INVALID), "walk: bad thread index");
	{
		struct gcswalk_record_check c[8];
		size_t n = 0;

		ret = gcswalk_verify(t, 7, c, 8, &n);
		ok = ret == GCSWALK_END && n == 3 && c[0].verdict == GCSWALK_RECORD_MATCHES &&
		     c[0].gcs_slot == GCS_BASE + 901 * 8 && c[0].record == STACK_BASE + 0x80 &&
		     c[1].verdict == GCSWALK_RECORD_MISMATCH && c[1].return_address == 0x666664 &&
		     c[2].verdict == GCSWALK_RECORD_MATCHES && c[2].gcs_slot == GCS_BASE + 903 * 8;
		if (!ok)
			tap_diag("verify: %s, %zu records", gcswalk_strerror(ret), n);
		tap_result(ok, "verify: an overwritten frame record is a mismatch, the rest match");
		ret = gcswalk_verify(t, 7, c, 1, &n);
		tap_result(ret == GCSWALK_CUT && n == 1, "verify: the record limit says cut");
		tap_result(gcswalk_verify(t, 1, c, 8, &n) == GCSWALK_E_GCS_DISABLED,
			   "verify: a thread without GCS is GCS_DISABLED");
	}
	{
		/* Sizes: too small is refused; a newer caller's larger struct
		 * is taken when what this library does not know is zero. */
		unsigned char big[sizeof(o) + 16];
		struct gcswalk_walk_options *bo = (struct gcswalk_walk_options *)(void *)big;
		gcswalk_walk *w = NULL;

		o.size = sizeof(o) - 1;
		ok = gcswalk_walk_begin(&w, t, 0, &o) == GCSWALK_E_INVALID && !w;
		memset(big, 0, sizeof(big));
		memcpy(big, &(struct gcswalk_walk_options)GCSWALK_WALK_OPTIONS_INIT, sizeof(o));
		bo->size = sizeof(big);
		bo->max_frames = 4;
		ok = ok && walk_matches(t, 0, bo, full, 4, GCSWALK_CUT);
		big[sizeof(o) + 3] = 1;
		ok = ok && gcswalk_walk_begin(&w, t, 0, bo) == GCSWALK_E_INVALID && !w;
		o.size = sizeof(o);
		tap_result(ok, "walk: options sizes: too small refused, larger zero-extended taken");
	}

	ret = gcswalk_symbolizer_new(&sym, t, NULL);
	ok = ret == GCSWALK_OK;
	if (ok) {
		ok = gcswalk_symbolize(sym, 0x7f8000000010ULL, 1, &loc) == GCSWALK_OK &&
		     loc->module && strcmp(loc->module, "/usr/lib/libsynth.so") == 0 &&
		     loc->lookup_address == 0x7f800000000cULL && loc->nsymbols == 0;
		ok = ok && gcswalk_symbolize(sym, 0x7f8000000010ULL, 1, &loc2) == GCSWALK_OK &&
		     loc2 == loc;
		ok = ok && gcswalk_symbolize(sym, 0x10, 0, &loc) == GCSWALK_E_NO_SYMBOL &&
		     loc->module == NULL;
	} else {
		tap_diag("symboliser: %s (%s)", gcswalk_strerror(ret), gcswalk_target_errmsg(t));
	}
	tap_result(ok, "symbols: missing file gives the mapping, cached; no mapping NO_SYMBOL");
	{
		/* The vDSO is in no file: its functions are named from the
		 * image dumped in the core. */
		const struct gcswalk_elf_symbol *vs = NULL;
		size_t nvs = 0, k;
		uint64_t vstart = 0;

		ok = sym && gcswalk_target_vdso(t, &vstart, NULL, &vs, &nvs, NULL, NULL) == GCSWALK_OK &&
		     nvs > 0;
		for (k = 0; ok && k < nvs; k++) {
			uint64_t at = vstart + vs[k].offset + (vs[k].size > 4 ? 4 : 0);

			ok = gcswalk_symbolize(sym, at, 0, &loc) == GCSWALK_OK && loc->module &&
			     strcmp(loc->module, "[vdso]") == 0 && loc->nsymbols == 1 &&
			     loc->symbols[0].function &&
			     loc->symbols[0].function_offset == (vs[k].size > 4 ? 4u : 0u);
			if (!ok)
				tap_diag("vDSO %s at %#llx: %s", vs[k].name, (unsigned long long)at,
					 loc && loc->nsymbols ? loc->symbols[0].function : "(none)");
		}
		tap_result(ok, "symbols: every vDSO function named from the core's image, [vdso]");
	}
	{
		/* The same mappings as a target of mappings only. */
		struct gcswalk_mapping maps[2] = { { 0x400000, 0x401000, 0, "/usr/bin/synth" },
						   { 0x7f8000000000ULL, 0x7f8000002000ULL, 4096,
						     "/usr/lib/libsynth.so" } };
		gcswalk_symbolizer *ms = NULL;
		gcswalk_target *mt = NULL;
		char *merr = NULL;

		ok = gcswalk_target_open_mappings(&mt, 101, maps, 2, &merr) == GCSWALK_OK &&
		     gcswalk_target_thread_count(mt) == 0 && gcswalk_target_mapping_count(mt) == 2 &&
		     gcswalk_target_pid(mt) == 101 &&
		     gcswalk_walk_begin(&(gcswalk_walk *){ NULL }, mt, 0, NULL) == GCSWALK_E_INVALID &&
		     gcswalk_symbolizer_new(&ms, mt, NULL) == GCSWALK_OK &&
		     gcswalk_symbolize(ms, 0x7f8000001000ULL, 0, &loc) == GCSWALK_OK && loc->module &&
		     strcmp(loc->module, "/usr/lib/libsynth.so") == 0;
		maps[0].path = NULL;
		ok = ok && gcswalk_target_open_mappings(&(gcswalk_target *){ NULL }, 1, maps, 2, NULL) ==
				   GCSWALK_E_INVALID;
		free(merr);
		tap_result(ok, "mappings-only target: symbolises, has no threads, rejects bad input");
		gcswalk_symbolizer_free(ms);
		gcswalk_target_close(mt);
	}
	gcswalk_symbolizer_free(sym);
	gcswalk_target_close(t);
}

static int has_symbol(const struct gcswalk_elf_symbol *syms, size_t n, const char *name,
		      uint64_t *offset)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (strcmp(syms[i].name, name) == 0) {
			*offset = syms[i].offset;
			return syms[i].size > 0;
		}
	}
	return 0;
}

/* The facts of the reference core: signal, regions, vDSO. */
static void test_facts(const char *path)
{
	struct gcswalk_signal_info si;
	struct gcswalk_region r;
	const struct gcswalk_elf_symbol *syms = NULL;
	const unsigned char *bid = NULL;
	gcswalk_target *t = NULL;
	uint64_t start = 0, size = 0, off1 = 0, off2 = 1, prev = 0;
	size_t n = 0, nbid = 0, i, gcs = 0, vdso = 0;
	int ok, ret;

	if (gcswalk_target_open_core(&t, path, NULL) != GCSWALK_OK) {
		tap_result(0, "facts: the reference core opens");
		return;
	}
	memset(&si, 0, sizeof(si));
	si.size = sizeof(si);
	ret = gcswalk_target_fatal_signal(t, &si);
	ok = ret == GCSWALK_OK && si.signo == SIG_SEGV && si.code == GCSWALK_SEGV_CPERR &&
	     si.address == FAULT_ADDRESS && si.tid == 101 && si.thread_index == 0 &&
	     si.size == sizeof(si);
	if (!ok)
		tap_diag("fatal signal: %s: %d %d %#llx tid %d", gcswalk_strerror(ret), si.signo,
			 si.code, (unsigned long long)si.address, si.tid);
	si.size = sizeof(si) - 1;
	ok = ok && gcswalk_target_fatal_signal(t, &si) == GCSWALK_E_INVALID;
	tap_result(ok, "facts: NT_SIGINFO: SIGSEGV, SEGV_CPERR, the address, the first thread");

	n = gcswalk_target_region_count(t);
	ok = 1;
	for (i = 0; i < n; i++) {
		r.size = sizeof(r);
		if (gcswalk_target_region(t, i, &r) != GCSWALK_OK || r.start < prev) {
			ok = 0;
			continue;
		}
		prev = r.start;
		if (r.kind == GCSWALK_REGION_GCS)
			gcs += (r.start == GCS_BASE && r.end == GCS_BASE + 0x2000) ||
			       (r.start == GCS2_BASE && r.end == GCS2_BASE + 0x1000) ||
			       (r.start == GCS3_BASE && r.end == GCS3_BASE + 0x2000) ||
			       (r.start == UNDUMPED_BASE && r.end == UNDUMPED_BASE + 0x1000);
		if (r.kind == GCSWALK_REGION_VDSO)
			vdso += r.start == vdso_base && r.end == vdso_base + vdso_size;
	}
	r.size = 4;
	ok = ok && gcs == 4 && vdso == (vdso_size ? 1u : 0u) && n == gcs + vdso &&
	     gcswalk_target_region(t, 0, &r) == GCSWALK_E_INVALID;
	r.size = sizeof(r);
	ok = ok && gcswalk_target_region(t, n, &r) == GCSWALK_E_INVALID;
	if (!ok)
		tap_diag("%zu regions, %zu GCS and %zu vDSO as expected", n, gcs, vdso);
	tap_result(ok, "facts: regions: the four GCS segments threads point into, the vDSO");

	if (!vdso_size) {
		tap_skip("facts: the vDSO image parsed from the core", "this host has no vDSO");
		gcswalk_target_close(t);
		return;
	}
	ret = gcswalk_target_vdso(t, &start, &size, &syms, &n, &bid, &nbid);
	ok = ret == GCSWALK_OK && start == vdso_base && size == vdso_size && n > 0 &&
	     has_symbol(syms, n, "__vdso_clock_gettime", &off1) &&
	     has_symbol(syms, n, "clock_gettime", &off2) && off1 == off2 && off1 < size;
	for (i = 1; ok && i < n; i++)
		ok = syms[i - 1].offset <= syms[i].offset;
	{
		/* The same image as a file: the same build-id by another path. */
		unsigned char *fid = NULL;
		size_t nfid = 0;
		char *p = write_file("vdso.so", vdso_image, vdso_size);

		ok = ok && p && gcswalk_file_build_id(p, &fid, &nfid) == GCSWALK_OK && bid &&
		     nfid == nbid && memcmp(fid, bid, nbid) == 0;
		free(fid);
		free(p);
	}
	if (!ok)
		tap_diag("vdso: %s (%s), %zu symbols", gcswalk_strerror(ret), gcswalk_target_errmsg(t),
			 n);
	tap_result(ok, "facts: the vDSO image parsed from the core: symbols, offsets, build-id");
	gcswalk_target_close(t);
}

/* A core that records no signal, no auxv, no GCS. */
static void test_facts_minimal(void)
{
	struct synth_note note = { "CORE", NT_PRSTATUS, &pr[2], sizeof(pr[2]) };
	struct gcswalk_signal_info si = { sizeof(si), 0, 0, 0, 0, 0, 0 };
	struct gcswalk_mapping m = { 0x400000, 0x401000, 0, "/x" };
	struct synth_buf b;
	gcswalk_target *t = NULL, *mt = NULL;
	char *p = NULL;
	int ok;

	ok = synth_core(EM_AARCH64_MACHINE, ET_CORE, &note, 1, NULL, 0, &b) == 0 &&
	     (p = write_file("minimal", b.p, b.len)) != NULL &&
	     gcswalk_target_open_core(&t, p, NULL) == GCSWALK_OK &&
	     gcswalk_target_fatal_signal(t, &si) == GCSWALK_E_NO_SIGNAL &&
	     gcswalk_target_region_count(t) == 0 &&
	     gcswalk_target_vdso(t, NULL, NULL, NULL, NULL, NULL, NULL) == GCSWALK_E_NO_SYMBOL &&
	     gcswalk_target_open_mappings(&mt, 1, &m, 1, NULL) == GCSWALK_OK &&
	     gcswalk_target_fatal_signal(mt, &si) == GCSWALK_E_INVALID &&
	     gcswalk_target_region_count(mt) == 0 &&
	     strcmp(gcswalk_strerror(GCSWALK_E_NO_SIGNAL), "unknown status") != 0;
	tap_result(ok, "facts: no NT_SIGINFO is NO_SIGNAL, no auxv no vDSO; a mappings target is no core");
	gcswalk_target_close(t);
	gcswalk_target_close(mt);
	free(p);
	free(b.p);
}

/* Several threads, each with its own handles, on the same core. */
struct worker {
	const char *path;
	pthread_t thread;
	int good;
};

static void *worker_main(void *arg)
{
	struct worker *wk = arg;
	int i;

	for (i = 0; i < 40; i++) {
		const struct gcswalk_location *loc;
		gcswalk_symbolizer *sym = NULL;
		gcswalk_target *t = NULL;
		struct gcswalk_frame f;
		gcswalk_walk *w = NULL;
		size_t n = 0;
		int ok;

		ok = gcswalk_target_open_core(&t, wk->path, NULL) == GCSWALK_OK &&
		     gcswalk_walk_begin(&w, t, 0, NULL) == GCSWALK_OK &&
		     gcswalk_symbolizer_new(&sym, t, NULL) == GCSWALK_OK;
		while (ok && gcswalk_walk_next(w, &f) == GCSWALK_OK)
			n++;
		ok = ok && n == 10 &&
		     gcswalk_symbolize(sym, 0x7f8000000010ULL, 1, &loc) == GCSWALK_OK && loc->module &&
		     strcmp(loc->module, "/usr/lib/libsynth.so") == 0;
		wk->good += ok;
		gcswalk_walk_free(w);
		gcswalk_symbolizer_free(sym);
		gcswalk_target_close(t);
	}
	return NULL;
}

static void test_threads(const char *path)
{
	struct worker wk[4];
	int i, started = 0, good = 0;

	for (i = 0; i < 4; i++) {
		wk[i].path = path;
		wk[i].good = 0;
		started += pthread_create(&wk[i].thread, NULL, worker_main, &wk[i]) == 0;
	}
	for (i = 0; i < started; i++) {
		pthread_join(wk[i].thread, NULL);
		good += wk[i].good;
	}
	tap_result(started == 4 && good == 4 * 40,
		   "threads: four threads with their own handles, same results");
}

static int typed(int ret)
{
	return ret == GCSWALK_OK || (ret < 0 && ret >= GCSWALK_E_NO_SIGNAL);
}

/* Open, walk every thread every way, symbolise: only typed statuses. */
static int exercise(const char *path)
{
	struct gcswalk_walk_options o = GCSWALK_WALK_OPTIONS_INIT;
	gcswalk_symbolizer *sym = NULL;
	gcswalk_target *t;
	char *err = NULL;
	size_t i;
	int ret, m;

	ret = gcswalk_target_open_core(&t, path, &err);
	free(err);
	if (ret != GCSWALK_OK)
		return typed(ret) ? ret : 1000;
	for (i = 0; i < gcswalk_target_thread_count(t); i++) {
		for (m = GCSWALK_METHOD_GCS; m <= GCSWALK_METHOD_FP; m++) {
			struct gcswalk_frame f;
			gcswalk_walk *w;
			int r;

			o.method = m;
			r = gcswalk_walk_begin(&w, t, i, &o);
			if (!typed(r)) {
				ret = 1000;
				continue;
			}
			if (r != GCSWALK_OK)
				continue;
			while ((r = gcswalk_walk_next(w, &f)) == GCSWALK_OK)
				;
			if (r != GCSWALK_END && r != GCSWALK_CUT)
				ret = 1000;
			gcswalk_walk_free(w);
		}
	}
	if (gcswalk_symbolizer_new(&sym, t, NULL) == GCSWALK_OK) {
		const struct gcswalk_location *loc;

		(void)gcswalk_symbolize(sym, 0x400104, 1, &loc);
		gcswalk_symbolizer_free(sym);
	}
	{
		/* The facts too: a damaged vDSO image or note must not crash. */
		struct gcswalk_signal_info si = { sizeof(si), 0, 0, 0, 0, 0, 0 };
		struct gcswalk_region r = { sizeof(r), GCSWALK_REGION_GCS, 0, 0 };
		const struct gcswalk_elf_symbol *syms;
		size_t n = 0, k;

		if (!typed(gcswalk_target_fatal_signal(t, &si)))
			ret = 1000;
		for (k = 0; k < gcswalk_target_region_count(t); k++)
			if (gcswalk_target_region(t, k, &r) != GCSWALK_OK)
				ret = 1000;
		if (!typed(gcswalk_target_vdso(t, NULL, NULL, &syms, &n, NULL, NULL)))
			ret = 1000;
		for (k = 0; k < n; k++)
			if (!syms[k].name)
				ret = 1000;
	}
	gcswalk_target_close(t);
	return ret;
}

static void test_truncation(const struct synth_buf *core)
{
	size_t len, bad = 0, tried = 0, opened = 0;

	for (len = 0; len < core->len; len += len < 4096 ? 1 : 509) {
		char *p = write_file("trunc", core->p, len);
		int ret;

		if (!p)
			continue;
		ret = exercise(p);
		tried++;
		opened += ret == GCSWALK_OK;
		if (ret == 1000 || (len < 64 && ret != GCSWALK_E_NOT_CORE)) {
			if (bad++ < 5)
				tap_diag("truncated to %zu bytes: status %d", len, ret);
		}
		free(p);
	}
	tap_diag("%zu truncations, %zu opened", tried, opened);
	tap_result(bad == 0 && tried > 0, "damage: truncated at every length: typed errors only");
}

static void test_flips(const struct synth_buf *core)
{
	unsigned char *copy = malloc(core->len);
	unsigned seed = 12345;
	size_t bad = 0;
	int i, j;

	if (!copy) {
		tap_result(0, "damage: random byte flips: typed errors only");
		return;
	}
	for (i = 0; i < 1500; i++) {
		char *p;
		int ret;

		memcpy(copy, core->p, core->len);
		for (j = 0; j < 1 + i % 8; j++) {
			size_t limit = i % 2 ? core->len : 2048;   /* headers and notes, or anywhere */

			seed = seed * 1103515245u + 12345u;
			copy[(seed >> 8) % (limit < core->len ? limit : core->len)] ^=
				(unsigned char)(1u << ((seed >> 4) & 7));
			if (i % 3 == 0) {                          /* and a whole random word */
				seed = seed * 1103515245u + 12345u;
				size_t at = (seed >> 8) % (core->len - 8);
				uint64_t v = (uint64_t)seed * 0x9e3779b97f4a7c15ULL;

				memcpy(copy + at, &v, 8);
			}
		}
		p = write_file("flip", copy, core->len);
		if (!p)
			continue;
		ret = exercise(p);
		if (ret == 1000 && bad++ < 5)
			tap_diag("flip case %d: untyped status", i);
		free(p);
	}
	free(copy);
	tap_result(bad == 0, "damage: random byte flips: typed errors only");
}

static int open_status(const char *path)
{
	gcswalk_target *t = NULL;
	char *err = NULL;
	int ret = gcswalk_target_open_core(&t, path, &err);

	if (ret != GCSWALK_OK && (!err || !*err)) {
		tap_diag("%s: no error detail", path);
		ret = 1000;
	}
	if (ret != GCSWALK_OK)
		tap_diag("%s: %s: %s", path, gcswalk_strerror(ret), err ? err : "");
	free(err);
	if (ret == GCSWALK_OK && t == NULL)
		ret = 1001;
	if (ret != GCSWALK_OK && t != NULL)
		ret = 1002;
	gcswalk_target_close(t);
	return ret;
}

static void test_crafted(const struct synth_buf *core)
{
	struct synth_buf b;
	struct synth_note notes[2];
	uint64_t absurd[5] = { 1ULL << 60, 4096, 0, 0, 0 };
	Elf64_Ehdr eh;
	uint16_t phnum;
	char *p;
	int ret;

	/* Not ELF, not a core, not arm64, not there. */
	p = write_file("text", "hello, world\n", 13);
	tap_result(p && open_status(p) == GCSWALK_E_NOT_CORE, "damage: a text file is NOT_CORE");
	free(p);
	memcpy(&eh, core->p, sizeof(eh));
	eh.e_type = ET_EXEC;
	memcpy(core->p, &eh, sizeof(eh));
	p = write_file("exec", core->p, core->len);
	tap_result(p && open_status(p) == GCSWALK_E_NOT_CORE, "damage: ET_EXEC is NOT_CORE");
	free(p);
	eh.e_type = ET_CORE;
	eh.e_machine = EM_X86_64;
	memcpy(core->p, &eh, sizeof(eh));
	p = write_file("x86", core->p, core->len);
	tap_result(p && open_status(p) == GCSWALK_E_WRONG_ARCH, "damage: an x86_64 core is WRONG_ARCH");
	free(p);
	eh.e_machine = EM_AARCH64_MACHINE;
	phnum = eh.e_phnum;
	eh.e_phnum = 60000;
	memcpy(core->p, &eh, sizeof(eh));
	p = write_file("phnum", core->p, core->len);
	tap_result(p && open_status(p) == GCSWALK_E_CORRUPT, "damage: absurd e_phnum is CORRUPT");
	free(p);
	eh.e_phnum = phnum;
	memcpy(core->p, &eh, sizeof(eh));
	{
		/* The note segment claims far more bytes than the file has. */
		Elf64_Phdr ph;

		memcpy(&ph, core->p + sizeof(eh), sizeof(ph));
		ph.p_filesz += 1u << 30;
		memcpy(core->p + sizeof(eh), &ph, sizeof(ph));
		p = write_file("notesize", core->p, core->len);
		tap_result(p && open_status(p) == GCSWALK_E_CORRUPT,
			   "damage: note segment beyond the file is CORRUPT");
		free(p);
		ph.p_filesz -= 1u << 30;
		memcpy(core->p + sizeof(eh), &ph, sizeof(ph));
	}
	tap_result(open_status("/nonexistent/core") == GCSWALK_E_IO, "damage: a missing file is IO");

	/* A note whose descriptor runs past its segment. */
	notes[0] = (struct synth_note){ "CORE", NT_PRSTATUS, &pr[0], sizeof(pr[0]) };
	if (synth_core(EM_AARCH64_MACHINE, ET_CORE, notes, 1, NULL, 0, &b) == 0) {
		Elf64_Phdr ph;

		memcpy(&ph, b.p + sizeof(Elf64_Ehdr), sizeof(ph));
		ph.p_filesz = 100;      /* cut inside the descriptor */
		memcpy(b.p + sizeof(Elf64_Ehdr), &ph, sizeof(ph));
		p = write_file("cutnote", b.p, b.len);
		ret = p ? open_status(p) : 0;
		tap_result(ret == GCSWALK_E_CORRUPT, "damage: a note cut off is CORRUPT");
		free(p);
		free(b.p);
	} else {
		tap_result(0, "damage: a note cut off is CORRUPT");
	}
	/* NT_FILE claiming 2^60 files; a GCS note that is too short. */
	notes[1] = (struct synth_note){ "CORE", NT_FILE_TYPE, absurd, sizeof(absurd) };
	ret = synth_core(EM_AARCH64_MACHINE, ET_CORE, notes, 2, NULL, 0, &b);
	p = ret == 0 ? write_file("ntfile", b.p, b.len) : NULL;
	tap_result(p && open_status(p) == GCSWALK_E_CORRUPT, "damage: absurd NT_FILE count is CORRUPT");
	free(p);
	free(b.p);
	notes[1] = (struct synth_note){ "LINUX", NT_ARM_GCS_TYPE, gn[0], 16 };
	ret = synth_core(EM_AARCH64_MACHINE, ET_CORE, notes, 2, NULL, 0, &b);
	p = ret == 0 ? write_file("shortgcs", b.p, b.len) : NULL;
	tap_result(p && open_status(p) == GCSWALK_E_CORRUPT, "damage: short GCS note is CORRUPT");
	free(p);
	free(b.p);
	/* No threads at all. */
	ret = synth_core(EM_AARCH64_MACHINE, ET_CORE, NULL, 0, NULL, 0, &b);
	p = ret == 0 ? write_file("nothreads", b.p, b.len) : NULL;
	tap_result(p && open_status(p) == GCSWALK_E_CORRUPT, "damage: a core without threads is CORRUPT");
	free(p);
	free(b.p);
}

/* The names and the back ends this host has not. */
static void test_names(void)
{
	/* This host has no live or self back end (x86_64 has no GCS). */
	struct gcswalk_frame f[4];
	gcswalk_target *t = NULL;
	size_t n = 9;
	int live = gcswalk_target_open_pid(&t, (int)getpid(), GCSWALK_ATTACH_NONE, 0, NULL);
	char uc[4096] = { 0 };

	tap_result(gcswalk_strerror(GCSWALK_E_CORRUPT)[0] && gcswalk_strerror(GCSWALK_END)[0] &&
		   strcmp(gcswalk_strerror(-9999), "unknown status") == 0 &&
		   strcmp(gcswalk_frame_kind_name(GCSWALK_FRAME_SWITCH_CAP), "switch-cap") == 0,
		   "every status and frame kind has a name");
	tap_result(live == GCSWALK_E_UNSUPPORTED && t == NULL &&
		   gcswalk_self(f, 4, &n) == GCSWALK_E_UNSUPPORTED && n == 0 &&
		   gcswalk_self_signal(uc, f, 4, &n) == GCSWALK_E_UNSUPPORTED &&
		   gcswalk_self_signal(NULL, f, 4, &n) == GCSWALK_E_INVALID,
		   "live and self walks on a host without a back end are UNSUPPORTED");
}

/* The reference core, in memory and as a file, made once. */
static struct synth_buf reference_core;
static char *reference_path;

static int reference(void)
{
	static int made;

	if (!made) {
		made = 1;
		find_host_vdso();
		if (build_reference(&reference_core) == 0)
			reference_path = write_file("reference", reference_core.p, reference_core.len);
		if (!reference_path)
			tap_diag("cannot make the reference core");
	}
	return reference_path ? 0 : -1;
}

static void test_walk(void)
{
	if (reference() == 0)
		test_reference(reference_path);
}

static void test_facts_reference(void)
{
	if (reference() == 0)
		test_facts(reference_path);
}

static void test_threads_reference(void)
{
	if (reference() == 0)
		test_threads(reference_path);
}

static void test_truncated(void)
{
	if (reference() == 0)
		test_truncation(&reference_core);
}

static void test_flipped(void)
{
	if (reference() == 0)
		test_flips(&reference_core);
}

static void test_crafted_cores(void)
{
	if (reference() == 0)
		test_crafted(&reference_core);
}

/* The features, each a CTest test of its own (tests/CMakeLists.txt). */
static const struct tap_feature features[] = {
	{ "names", test_names },
	{ "walk", test_walk },
	{ "facts", test_facts_reference },
	{ "facts-minimal", test_facts_minimal },
	{ "threads", test_threads_reference },
	{ "truncated", test_truncated },
	{ "flips", test_flipped },
	{ "crafted", test_crafted_cores },
};
#define NFEATURES (sizeof(features) / sizeof(features[0]))

/* GCSWALK_KEEP_CORE=PATH: only write the reference core there (for the
 * example test), run nothing. */
static int keep_core(const char *path)
{
	struct synth_buf core;
	FILE *f;
	int ok;

	find_host_vdso();
	if (build_reference(&core) != 0)
		return 1;
	f = fopen(path, "wb");
	ok = f && fwrite(core.p, 1, core.len, f) == core.len;
	if (f && fclose(f) != 0)
		ok = 0;
	free(core.p);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	int fds_before = count_open_fds();
	char tmpl[] = "/tmp/gcswalk-synth.XXXXXX";
	char cmd[64];

	if (getenv("GCSWALK_KEEP_CORE"))
		return keep_core(getenv("GCSWALK_KEEP_CORE"));
	if (!tap_features_known(features, NFEATURES, argc, argv))
		return 2;
	dir = mkdtemp(tmpl);
	if (!dir)
		tap_skip_all("cannot make a temporary folder");
	tap_start();
	tap_run_features(features, NFEATURES, argc, argv);
	free(reference_path);
	free(reference_core.p);
	tap_result(fds_before >= 0 && count_open_fds() == fds_before,
		   "no file descriptor leaked by any case");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		tap_diag("could not remove %s", dir);
	tap_done();
}
