// SPDX-License-Identifier: MIT
/*
 * storm-window: perf samples that land between GCSSS1 and GCSSS2, for
 * certain, and their chains (docs/storm.md).
 *
 * storm_window() (gcs-switch.c) executes GCSSS1, spins in a loop, calls a
 * leaf that spins, then executes GCSSS2. Between the two, GCSPR_EL0 points
 * at the in-progress cap that GCSSS1 left on the new stack, so the kernel's
 * GCS walk must stop there: a sample in the loop has the chain [PC], one
 * in the leaf [PC, the return into the window]. How we know a sample
 * landed in the window: its PC is one of the window's instructions, and
 * the sample's GCSPR_EL0 (user register 47, the series' patch 37) is the
 * in-progress cap's address (the leaf's: 8 below). Every such sample is
 * counted; the test asks for at least MIN_HITS of each kind, and also
 * counts the hits of a tight loop of switches with nothing in between.
 *
 * Project kernel only: elsewhere (no kernel.perf_callchain_gcs) it skips.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../tap.h"
#include "gcs-switch.h"
#include "sampler.h"
#include "storm.h"

#define MIN_HITS 10
#define GCS_SIZE (64 * 1024)

struct tally {
	uint64_t cap;
	uint32_t tid;
	long spin, leaf, other, bad;
	char first_bad[160];
};

static uint64_t at(const char *label)
{
	return (uint64_t)(uintptr_t)label;
}

static void bad(struct tally *t, const struct storm_sample *s, const char *why)
{
	if (!t->bad++)
		snprintf(t->first_bad, sizeof(t->first_bad), "pc %#llx, %llu entries, gcspr %#llx: %s",
			 (unsigned long long)s->ip, (unsigned long long)s->nr_user,
			 (unsigned long long)s->gcspr, why);
}

static void classify(void *arg, const struct storm_sample *s)
{
	struct tally *t = arg;

	if (s->tid != t->tid)
		return;
	if (s->ip >= at(storm_window_spin) && s->ip <= at(storm_window_ret)) {
		t->spin++;
		if (s->nr_user != 1 || s->user[0] != s->ip)
			bad(t, s, "in the window, but the chain is not [PC]");
		else if (!s->has_gcspr || s->gcspr != t->cap)
			bad(t, s, "in the window, but GCSPR_EL0 is not the in-progress cap");
	} else if (s->ip >= at(storm_window_leaf) && s->ip < at(storm_window_leaf_end)) {
		t->leaf++;
		if (s->nr_user != 2 || s->user[1] != at(storm_window_ret))
			bad(t, s, "in the window's leaf, but the chain is not [PC, return]");
		else if (!s->has_gcspr || s->gcspr != t->cap - 8)
			bad(t, s, "in the window's leaf, but GCSPR_EL0 is not 8 below the cap");
	} else {
		t->other++;
	}
}

static int open_sampler(struct storm_sampler *s)
{
	struct perf_event_attr a;
	long rate = storm_max_sample_rate();

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_CPU_CYCLES;
	a.freq = 1;
	a.sample_freq = rate > 0 ? (uint64_t)rate : 1000;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN |
			PERF_SAMPLE_REGS_USER;
	a.sample_regs_user = 1ULL << STORM_PERF_REG_GCSPR;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	return storm_sampler_open(s, &a, 0, -1, 64);
}

/* Spin in the window until both kinds have MIN_HITS, or 60 s. */
static void long_windows(struct storm_sampler *s, struct tally *t)
{
	double end = storm_now() + 60;

	while ((t->spin < MIN_HITS || t->leaf < MIN_HITS) && storm_now() < end) {
		storm_window((uint64_t *)(uintptr_t)t->cap, 2000000, 2000000);
		storm_sampler_drain(s, classify, t);
	}
}

static void tight_windows(struct storm_sampler *s, struct tally *t)
{
	for (int i = 0; i < 20; i++) {
		for (int j = 0; j < 20000; j++)
			storm_window((uint64_t *)(uintptr_t)t->cap, 1, 1);
		storm_sampler_drain(s, classify, t);
	}
}

int main(void)
{
	struct storm_sampler s;
	struct tally t, tight;
	long base;

	if (!(getauxval(AT_HWCAP) & HWCAP_GCS))
		tap_skip_all("no HWCAP_GCS: this CPU or kernel has no GCS");
	if (gcs_raw_prctl(PR_SET_SHADOW_STACK_STATUS, PR_SHADOW_STACK_ENABLE) != 0)
		tap_skip_all("PR_SET_SHADOW_STACK_STATUS(ENABLE) failed");
	if (!storm_gcs_callchains())
		tap_skip_all("no kernel.perf_callchain_gcs: this kernel walks frame records");
	base = syscall(NR_map_shadow_stack, 0, GCS_SIZE, SHADOW_STACK_SET_TOKEN | SHADOW_STACK_SET_MARKER);
	if (base == -1 || open_sampler(&s) != 0)
		tap_skip_all("map_shadow_stack or perf_event_open failed");
	tap_plan(3);
	memset(&t, 0, sizeof(t));
	t.cap = (uint64_t)base + GCS_SIZE - 16;
	t.tid = (uint32_t)gettid();
	tight = t;
	long_windows(&s, &t);
	tap_diag("spinning between GCSSS1 and GCSSS2: %ld samples in the loop, %ld in the leaf, "
		 "%ld elsewhere, %ld wrong%s%s", t.spin, t.leaf, t.other, t.bad,
		 t.bad ? ": first: " : "", t.first_bad);
	tap_result(t.spin >= MIN_HITS && t.bad == 0,
		   "samples in the window: chain [PC], GCSPR_EL0 at the in-progress cap");
	tap_result(t.leaf >= MIN_HITS && t.bad == 0,
		   "samples in a leaf called in the window: chain [PC, return into the window]");
	tight_windows(&s, &tight);
	tap_diag("400,000 switches back to back: %ld samples in the window, %ld in the leaf, "
		 "%ld elsewhere, %ld wrong%s%s", tight.spin, tight.leaf, tight.other, tight.bad,
		 tight.bad ? ": first: " : "", tight.first_bad);
	tap_result(tight.bad == 0, "back-to-back switches: every sample in the window ends at the cap");
	tap_diag("%llu samples, %llu lost", (unsigned long long)s.samples, (unsigned long long)s.lost);
	storm_sampler_close(&s);
	tap_finish();
}
