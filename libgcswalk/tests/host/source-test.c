// SPDX-License-Identifier: MIT
/*
 * Host test: targets whose registers and memory the test supplies
 * (gcswalk_target_open_source), the way a debugger would. Hand-made GCS
 * pages and stacks in buffers, read through a callback that can be exact,
 * all-or-nothing (like a debugger's memory read), failing or lying: every
 * walk's frames, gcswalk_verify() on it, and the open call's checks.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gcswalk.h"
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "tap.h"
#pragma GCC diagnostic pop
#include "walk-expect.h"

#define GCS_BASE 0x7f0000000000ULL    /* two pages */
#define GCS2_BASE 0x7f0000010000ULL   /* one page, the next one unmapped */
#define STACK_BASE 0x7ff000000000ULL  /* one page */

static uint64_t gcs[1024], gcs2[512], stack[512];

struct region {
	uint64_t base;
	const void *bytes;
	size_t len;
};

static const struct region memory[] = {
	{ GCS_BASE, gcs, sizeof(gcs) },
	{ GCS2_BASE, gcs2, sizeof(gcs2) },
	{ STACK_BASE, stack, sizeof(stack) },
};

enum read_mode {
	READ_EXACT,        /* got: the bytes before the first unreadable one */
	READ_ALL_OR_NONE,  /* a short read reports 0 bytes */
	READ_FAIL,         /* every call fails with GCSWALK_E_THREAD_GONE */
	READ_LIE,          /* reports more bytes than asked for */
};

struct fake {
	enum read_mode mode;
	unsigned calls;
};

/* The bytes readable from ADDR on, at most LEN, copied to BUF. */
static size_t copy_out(uint64_t addr, void *buf, size_t len)
{
	size_t done = 0, i;

	while (done < len) {
		const struct region *r = NULL;
		size_t off, n;

		for (i = 0; i < sizeof(memory) / sizeof(memory[0]); i++)
			if (addr + done >= memory[i].base &&
			    addr + done - memory[i].base < memory[i].len)
				r = &memory[i];
		if (!r)
			break;
		off = (size_t)(addr + done - r->base);
		n = r->len - off < len - done ? r->len - off : len - done;
		memcpy((char *)buf + done, (const char *)r->bytes + off, n);
		done += n;
	}
	return done;
}

static int fake_read(void *data, uint64_t address, void *buf, size_t size, size_t *got)
{
	struct fake *f = data;
	size_t n;

	f->calls++;
	switch (f->mode) {
	case READ_FAIL:
		*got = 0;
		return GCSWALK_E_THREAD_GONE;
	case READ_LIE:
		*got = size + 8;
		return GCSWALK_OK;
	default:
		break;
	}
	n = copy_out(address, buf, size);
	*got = n == size || f->mode == READ_EXACT ? n : 0;
	return n == size ? GCSWALK_OK : GCSWALK_E_IO;
}

static uint64_t slot(int i)
{
	return GCS_BASE + 0x2000 - 8 * 8 + 8 * (uint64_t)i;
}

enum { T_KINDS, T_NO_MARKER, T_VERIFY, T_NO_GCS, T_NO_REGS, T_GCS_OFF, NTHREADS };

static struct gcswalk_source_thread threads[NTHREADS];
static char thread_name[] = "kinds";

static void build_memory(void)
{
	int i;

	/* Every kind of entry, the signal cap with its signal frame. */
	gcs[1024 - 8 + 0] = 0x400104;
	gcs[1024 - 8 + 1] = 0x400204;                      /* sigreturn */
	gcs[1024 - 8 + 2] = slot(2) & ~0xfffULL;           /* signal cap */
	gcs[1024 - 8 + 3] = 0x400304;
	gcs[1024 - 8 + 4] = (slot(4) & ~0xfffULL) | 1;     /* switch cap */
	gcs[1024 - 8 + 5] = 0x400404;
	gcs[1024 - 8 + 6] = 0x400504;
	gcs[1024 - 8 + 7] = 0;                             /* terminator */
	put_signal_frame(&stack[64], 0x400abc, slot(2));
	/* No terminator: the entries run into an unmapped page. */
	gcs2[510] = 0x400804;
	gcs2[511] = 0x400904;
	/* GCS and frame records, the middle record overwritten. */
	put_smashed_records(&gcs[100], stack, STACK_BASE);

	for (i = 0; i < NTHREADS; i++) {
		threads[i].size = sizeof(threads[i]);
		threads[i].tid = 201 + i;
		threads[i].have_registers = 1;
		threads[i].have_gcs = 1;
		threads[i].gcs.features_enabled = GCSWALK_GCS_ENABLE;
	}
	threads[T_KINDS].name = thread_name;
	threads[T_KINDS].pc = 0x400010;
	threads[T_KINDS].lr = 0x400104;
	threads[T_KINDS].sp = STACK_BASE + 0x100;
	threads[T_KINDS].gcs.gcspr = slot(0);
	threads[T_NO_MARKER].pc = 0x400060;
	threads[T_NO_MARKER].gcs.gcspr = GCS2_BASE + 0x1000 - 16;
	threads[T_VERIFY].pc = 0x400080;
	threads[T_VERIFY].lr = 0x401004;
	threads[T_VERIFY].sp = STACK_BASE + 0x70;
	threads[T_VERIFY].fp = STACK_BASE + 0x80;
	threads[T_VERIFY].gcs.gcspr = GCS_BASE + 100 * 8;
	threads[T_NO_GCS].have_gcs = 0;
	threads[T_NO_REGS].have_registers = 0;
	threads[T_GCS_OFF].gcs.features_enabled = 0;
}

static int open_fake(gcswalk_target **t, struct fake *f, const struct gcswalk_mapping *maps,
		     size_t nmaps)
{
	struct gcswalk_source src;
	char *err = NULL;
	int ret;

	memset(&src, 0, sizeof(src));
	src.size = sizeof(src);
	src.pid = 201;
	src.read = fake_read;
	src.data = f;
	src.threads = threads;
	src.thread_count = NTHREADS;
	src.mappings = maps;
	src.mapping_count = nmaps;
	ret = gcswalk_target_open_source(t, &src, &err);
	if (ret != GCSWALK_OK)
		tap_diag("open_source: %s: %s", gcswalk_strerror(ret), err ? err : "");
	free(err);
	return ret;
}

static const struct expect kinds[] = {
	{ GCSWALK_FRAME_PC, 0x400010 },
	{ GCSWALK_FRAME_RETURN, 0x400104 },
	{ GCSWALK_FRAME_SIGRETURN, 0x400204 },
	{ GCSWALK_FRAME_SIGNAL_CAP, (GCS_BASE + 0x2000 - 48) & ~0xfffULL },
	{ GCSWALK_FRAME_INTERRUPTED_PC, 0x400abc },
	{ GCSWALK_FRAME_RETURN, 0x400304 },
	{ GCSWALK_FRAME_SWITCH_CAP, ((GCS_BASE + 0x2000 - 32) & ~0xfffULL) | 1 },
	{ GCSWALK_FRAME_RETURN, 0x400404 },
	{ GCSWALK_FRAME_RETURN, 0x400504 },
	{ GCSWALK_FRAME_TERMINATOR, 0 },
};

static const struct expect no_marker[] = {
	{ GCSWALK_FRAME_PC, 0x400060 },
	{ GCSWALK_FRAME_RETURN, 0x400804 },
	{ GCSWALK_FRAME_RETURN, 0x400904 },
	{ GCSWALK_FRAME_UNREADABLE, 0 },
};

static int verify_ok(gcswalk_target *t)
{
	struct gcswalk_record_check c[8];
	size_t n = 0;
	int ret = gcswalk_verify(t, T_VERIFY, c, 8, &n);

	if (ret != GCSWALK_END || n != 3) {
		tap_diag("verify: %s (%s), %zu records", gcswalk_strerror(ret),
			 gcswalk_target_errmsg(t), n);
		return 0;
	}
	return c[0].verdict == GCSWALK_RECORD_MATCHES && c[0].gcs_slot == GCS_BASE + 101 * 8 &&
	       c[0].record == STACK_BASE + 0x80 && c[1].verdict == GCSWALK_RECORD_MISMATCH &&
	       c[1].return_address == 0x666664 && c[2].verdict == GCSWALK_RECORD_MATCHES &&
	       c[2].gcs_slot == GCS_BASE + 103 * 8;
}

static void test_walks(void)
{
	struct gcswalk_mapping maps[1] = { { 0x400000, 0x402000, 0, "/usr/bin/fake" } };
	struct gcswalk_walk_options o = GCSWALK_WALK_OPTIONS_INIT;
	struct gcswalk_thread_info info;
	struct gcswalk_mapping m;
	struct fake f = { READ_EXACT, 0 };
	gcswalk_target *t = NULL;
	uint64_t word = 0, two[2];
	size_t got = 0;
	char path[32];
	int ok;

	strcpy(path, maps[0].path);
	maps[0].path = path;
	if (open_fake(&t, &f, maps, 1) != GCSWALK_OK)
		tap_skip_all("the fake source does not open");
	/* What was given is copied: the caller's strings may go. */
	strcpy(thread_name, "xxxxx");
	strcpy(path, "/gone");
	ok = gcswalk_target_pid(t) == 201 && gcswalk_target_thread_count(t) == NTHREADS &&
	     gcswalk_target_thread(t, T_KINDS, &info) == GCSWALK_OK && info.tid == 201 &&
	     info.name && strcmp(info.name, "kinds") == 0 && info.pc == 0x400010 &&
	     info.sp == STACK_BASE + 0x100 && info.have_gcs && info.gcs.gcspr == slot(0) &&
	     gcswalk_target_thread(t, T_NO_REGS, &info) == GCSWALK_OK && !info.have_registers &&
	     gcswalk_target_thread_index(t, 203) == T_VERIFY &&
	     gcswalk_target_mapping_count(t) == 1 && gcswalk_target_mapping(t, 0, &m) == GCSWALK_OK &&
	     strcmp(m.path, "/usr/bin/fake") == 0 && gcswalk_target_mapping_find(t, 0x400104) == 0;
	strcpy(thread_name, "kinds");
	tap_result(ok, "source: pid, threads, names and mappings copied at open");
	tap_result(walk_matches(t, T_KINDS, NULL, kinds, 10, GCSWALK_END),
		   "source: returns, sigreturn, signal cap, interrupted PC, switch cap, terminator");
	o.max_frames = 5;
	tap_result(walk_matches(t, T_KINDS, &o, kinds, 5, GCSWALK_CUT),
		   "source: the depth limit cuts the walk");
	tap_result(walk_matches(t, T_NO_MARKER, NULL, no_marker, 4, GCSWALK_END),
		   "source: a GCS without terminator ends at its unreadable slot");
	tap_result(verify_ok(t), "source: verify finds the overwritten frame record");
	o.max_frames = 0;
	o.method = GCSWALK_METHOD_FP;
	{
		const struct expect fp[] = { { GCSWALK_FRAME_PC, 0x400080 },
					     { GCSWALK_FRAME_RETURN, 0x401104 },
					     { GCSWALK_FRAME_RETURN, 0x666664 },
					     { GCSWALK_FRAME_RETURN, 0x401304 } };

		tap_result(walk_matches(t, T_VERIFY, &o, fp, 4, GCSWALK_END),
			   "source: the frame-record fallback reads through the callback");
	}
	tap_result(walk_error(t, T_NO_GCS, GCSWALK_E_NO_GCS_CPU) &&
		   walk_error(t, T_NO_REGS, GCSWALK_E_NO_REGISTERS) &&
		   walk_error(t, T_GCS_OFF, GCSWALK_E_GCS_DISABLED) &&
		   walk_error(t, NTHREADS, GCSWALK_E_INVALID),
		   "source: no GCS state, no registers, GCS off, bad index: typed errors");
	ok = gcswalk_target_read(t, STACK_BASE + 0x88, &word, 8, &got) == GCSWALK_OK &&
	     got == 8 && word == 0x401104 &&
	     gcswalk_target_read(t, GCS2_BASE + 0xff8, two, 16, &got) == GCSWALK_E_IO &&
	     got == 8;
	tap_result(ok, "source: gcswalk_target_read goes through the callback, short reads say so");
	gcswalk_target_close(t);
}

static void test_callbacks(void)
{
	struct fake f = { READ_ALL_OR_NONE, 0 };
	gcswalk_target *t = NULL;
	gcswalk_walk *w = NULL;
	int ok, ret;

	ok = open_fake(&t, &f, NULL, 0) == GCSWALK_OK &&
	     walk_matches(t, T_KINDS, NULL, kinds, 10, GCSWALK_END) &&
	     walk_matches(t, T_NO_MARKER, NULL, no_marker, 4, GCSWALK_END) && verify_ok(t);
	tap_result(ok, "source: an all-or-nothing callback gives the same walks (page retries)");
	f.mode = READ_FAIL;
	ret = t ? gcswalk_walk_begin(&w, t, T_KINDS, NULL) : GCSWALK_OK;
	tap_result(ret == GCSWALK_E_THREAD_GONE && w == NULL &&
		   strstr(gcswalk_target_errmsg(t), "callback"),
		   "source: a callback's error is the walk's, with a message");
	f.mode = READ_LIE;
	ret = t ? gcswalk_walk_begin(&w, t, T_KINDS, NULL) : GCSWALK_OK;
	tap_result(ret == GCSWALK_E_INVALID && w == NULL,
		   "source: a callback reporting more bytes than asked is INVALID");
	gcswalk_target_close(t);
}

static int open_error(const struct gcswalk_source *src)
{
	gcswalk_target *t = (gcswalk_target *)src;
	int ret = gcswalk_target_open_source(&t, src, NULL);

	if (t) {
		gcswalk_target_close(t);
		return 1;
	}
	return ret;
}

static void test_open_errors(void)
{
	struct gcswalk_mapping bad = { 0x2000, 0x1000, 0, "/x" };
	struct gcswalk_source src;
	struct fake f = { READ_EXACT, 0 };
	unsigned char grown[sizeof(src) + 8];
	int ok;

	memset(&src, 0, sizeof(src));
	src.size = sizeof(src);
	src.read = fake_read;
	src.data = &f;
	ok = gcswalk_target_open_source(NULL, &src, NULL) == GCSWALK_E_INVALID &&
	     open_error(NULL) == GCSWALK_E_INVALID;
	src.read = NULL;
	ok = ok && open_error(&src) == GCSWALK_E_INVALID;
	src.read = fake_read;
	/* Shorter than 1.0's struct (which ends with mapping_count). */
	src.size = offsetof(struct gcswalk_source, mapping_count);
	ok = ok && open_error(&src) == GCSWALK_E_INVALID;
	src.size = sizeof(src);
	src.threads = threads;
	src.thread_count = 2;
	threads[1].size = sizeof(threads[1]) - 8;
	ok = ok && open_error(&src) == GCSWALK_E_INVALID;
	threads[1].size = sizeof(threads[1]);
	src.mappings = &bad;
	src.mapping_count = 1;
	ok = ok && open_error(&src) == GCSWALK_E_INVALID;
	src.mapping_count = 0;
	tap_result(ok, "source: NULL, no callback, sizes too small, a bad mapping: INVALID");

	/* A newer caller's bigger structs: accepted when the unknown part is 0. */
	memset(grown, 0, sizeof(grown));
	src.size = sizeof(grown);
	memcpy(grown, &src, sizeof(src));
	ok = open_error((const struct gcswalk_source *)(const void *)grown) == 1;
	grown[sizeof(src)] = 1;
	ok = ok && open_error((const struct gcswalk_source *)(const void *)grown) ==
			   GCSWALK_E_INVALID;
	src.size = sizeof(src);
	/* Threads with a larger stride: each item's size says it. */
	{
		unsigned char items[2][sizeof(struct gcswalk_source_thread) + 16];
		gcswalk_target *t = NULL;
		struct gcswalk_thread_info info;

		memset(items, 0, sizeof(items));
		memcpy(items[0], &threads[T_KINDS], sizeof(threads[0]));
		memcpy(items[1], &threads[T_VERIFY], sizeof(threads[0]));
		((struct gcswalk_source_thread *)(void *)items[0])->size = sizeof(items[0]);
		((struct gcswalk_source_thread *)(void *)items[1])->size = sizeof(items[1]);
		src.threads = (const struct gcswalk_source_thread *)(const void *)items;
		ok = ok && gcswalk_target_open_source(&t, &src, NULL) == GCSWALK_OK &&
		     gcswalk_target_thread(t, 1, &info) == GCSWALK_OK && info.tid == 203 &&
		     walk_matches(t, 0, NULL, kinds, 10, GCSWALK_END);
		gcswalk_target_close(t);
	}
	tap_result(ok, "source: larger structs of newer callers, zero-extended, are accepted");
}

int main(void)
{
	tap_plan(13);
	build_memory();
	test_walks();
	test_callbacks();
	test_open_errors();
	tap_finish();
}
