// SPDX-License-Identifier: MIT
/*
 * The size-field rule of sized structs (docs/libgcswalk.md, "Sized
 * structs"), through the library's own helpers and its public calls:
 * linked against the static library, so that the hidden helpers are
 * reachable. A made-up struct that grew from "1.0" to "1.1" stands for
 * the library a caller built against an older header meets: the older,
 * smaller struct works, a smaller one still is refused, and a newer,
 * larger one is zeroed (out) or must be zero (in) past what the library
 * knows. Nothing is written past the size a caller gives.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "tap.h"

/* What an old caller has (1.0) and what the library knows (1.1). */
struct thing_1_0 {
	size_t size;
	int a;
	uint64_t b;
};
struct thing_1_1 {
	size_t size;
	int a;
	uint64_t b;
	uint64_t c;                  /* new in 1.1 */
};
#define THING_SIZE_1_0 GW_SIZE_TO(struct thing_1_1, b)

/* A caller's struct of SIZE bytes in a larger buffer whose bytes past
 * SIZE are GUARD: the library must not touch them. */
#define GUARD 0xa5
union callers {
	struct thing_1_0 old;
	struct thing_1_1 now;
	unsigned char bytes[sizeof(struct thing_1_1) + 32];
};

static int guard_intact(const unsigned char *p, size_t from, size_t to)
{
	size_t i;

	for (i = from; i < to; i++)
		if (p[i] != GUARD)
			return 0;
	return 1;
}

static void test_in(void)
{
	struct thing_1_1 lib;
	union callers u;
	int ok;

	/* An older caller: its fields taken, the new one keeps its default. */
	memset(&u, 0, sizeof(u));
	u.old.size = sizeof(u.old);
	u.old.a = 7;
	u.old.b = 8;
	memset(&lib, 0, sizeof(lib));
	lib.c = 99;
	ok = gw_sized_in(&lib, sizeof(lib), &u, u.old.size, THING_SIZE_1_0) == GCSWALK_OK &&
	     lib.a == 7 && lib.b == 8 && lib.c == 99;
	tap_result(ok, "in: an older caller's smaller struct is taken, new fields keep their defaults");

	/* Smaller than 1.0: refused, nothing taken. */
	memset(&lib, 0, sizeof(lib));
	u.old.size = THING_SIZE_1_0 - 1;
	ok = gw_sized_in(&lib, sizeof(lib), &u, u.old.size, THING_SIZE_1_0) == GCSWALK_E_INVALID &&
	     lib.a == 0;
	tap_result(ok, "in: a size below 1.0's is INVALID");

	/* A newer caller: its unknown part must be zero. */
	memset(&u, 0, sizeof(u));
	u.now.size = sizeof(u.bytes);
	u.now.a = 1;
	u.now.c = 3;
	ok = gw_sized_in(&lib, sizeof(lib), &u, u.now.size, THING_SIZE_1_0) == GCSWALK_OK &&
	     lib.a == 1 && lib.c == 3;
	u.bytes[sizeof(u.bytes) - 1] = 1;
	ok = ok && gw_sized_in(&lib, sizeof(lib), &u, u.now.size, THING_SIZE_1_0) ==
			   GCSWALK_E_INVALID;
	tap_result(ok, "in: a newer caller's larger struct: its unknown part 0 taken, else INVALID");
}

static void test_out(void)
{
	struct thing_1_1 lib = { sizeof(struct thing_1_1), 7, 8, 9 };
	union callers u;
	int ok;

	/* An older caller: the fields it knows filled, nothing past its size
	 * written, its size field kept. */
	memset(&u, GUARD, sizeof(u));
	u.old.size = sizeof(u.old);
	ok = gw_sized_out(&u, u.old.size, &lib, sizeof(lib), THING_SIZE_1_0) == GCSWALK_OK &&
	     u.old.size == sizeof(u.old) && u.old.a == 7 && u.old.b == 8 &&
	     guard_intact(u.bytes, sizeof(u.old), sizeof(u.bytes));
	tap_result(ok, "out: an older caller's smaller struct is filled, nothing written past it");

	memset(&u, GUARD, sizeof(u));
	u.old.size = THING_SIZE_1_0 - 1;
	ok = gw_sized_out(&u, u.old.size, &lib, sizeof(lib), THING_SIZE_1_0) == GCSWALK_E_INVALID &&
	     guard_intact(u.bytes, sizeof(size_t), sizeof(u.bytes));
	tap_result(ok, "out: a size below 1.0's is INVALID, nothing written");

	/* A newer caller: what the library does not know is zeroed, up to
	 * the caller's size and no further. */
	memset(&u, GUARD, sizeof(u));
	u.now.size = sizeof(u.now) + 8;
	ok = gw_sized_out(&u, u.now.size, &lib, sizeof(lib), THING_SIZE_1_0) == GCSWALK_OK &&
	     u.now.size == sizeof(u.now) + 8 && u.now.c == 9;
	{
		uint64_t tail;

		memcpy(&tail, u.bytes + sizeof(u.now), sizeof(tail));
		ok = ok && tail == 0 && guard_intact(u.bytes, sizeof(u.now) + 8, sizeof(u.bytes));
	}
	tap_result(ok, "out: a newer caller's larger struct: the unknown part zeroed, nothing past it");
}

/* The frozen 1.0 sizes (LP64): a field added later must not move them. */
static void test_frozen(void)
{
	int ok = GW_WALK_OPTIONS_SIZE_1_0 == 32 && GW_SYMBOLIZER_OPTIONS_SIZE_1_0 == 24 &&
		 GW_SOURCE_SIZE_1_0 == 64 && GW_SOURCE_THREAD_SIZE_1_0 == 96 &&
		 GW_SIGNAL_INFO_SIZE_1_0 == 48 && GW_REGION_SIZE_1_0 == 32 &&
		 GW_PROC_THREAD_SIZE_1_0 == 32;

	if (!ok)
		tap_diag("1.0 sizes: walk %zu symbolizer %zu source %zu thread %zu signal %zu "
			 "region %zu proc_thread %zu", GW_WALK_OPTIONS_SIZE_1_0,
			 GW_SYMBOLIZER_OPTIONS_SIZE_1_0, GW_SOURCE_SIZE_1_0,
			 GW_SOURCE_THREAD_SIZE_1_0, GW_SIGNAL_INFO_SIZE_1_0, GW_REGION_SIZE_1_0,
			 GW_PROC_THREAD_SIZE_1_0);
	tap_result(ok, "the sized structs' 1.0 sizes are frozen");
}

/* gcswalk_proc_thread(), an output struct of the public API, by the rule. */
static void test_proc_thread(void)
{
	union {
		struct gcswalk_proc_thread info;
		unsigned char bytes[sizeof(struct gcswalk_proc_thread) + 32];
	} u;
	int ok, pid = (int)getpid();

	memset(&u, GUARD, sizeof(u));
	u.info.size = GW_PROC_THREAD_SIZE_1_0;
	ok = gcswalk_proc_thread(pid, pid, NULL, &u.info) == GCSWALK_OK &&
	     u.info.size == GW_PROC_THREAD_SIZE_1_0 && u.info.tgid == pid && u.info.state == 'R' &&
	     guard_intact(u.bytes, GW_PROC_THREAD_SIZE_1_0, sizeof(u.bytes));
	tap_result(ok, "gcswalk_proc_thread: 1.0's size filled, nothing past it");

	memset(&u, GUARD, sizeof(u));
	u.info.size = GW_PROC_THREAD_SIZE_1_0 - 1;
	ok = gcswalk_proc_thread(pid, pid, NULL, &u.info) == GCSWALK_E_INVALID &&
	     guard_intact(u.bytes, sizeof(size_t), sizeof(u.bytes));
	tap_result(ok, "gcswalk_proc_thread: a size below 1.0's is INVALID, nothing written");

	memset(&u, GUARD, sizeof(u));
	u.info.size = sizeof(u.info) + 16;
	ok = gcswalk_proc_thread(pid, pid, NULL, &u.info) == GCSWALK_OK &&
	     u.info.size == sizeof(u.info) + 16 && u.info.tgid == pid;
	{
		static const unsigned char zero[16];

		ok = ok && memcmp(u.bytes + sizeof(u.info), zero, sizeof(zero)) == 0 &&
		     guard_intact(u.bytes, sizeof(u.info) + 16, sizeof(u.bytes));
	}
	tap_result(ok, "gcswalk_proc_thread: a newer caller's larger struct, its tail zeroed");
}

int main(void)
{
	tap_plan(10);
	test_in();
	test_out();
	test_frozen();
	test_proc_thread();
	tap_finish();
}
