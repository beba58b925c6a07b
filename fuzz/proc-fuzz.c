// SPDX-License-Identifier: MIT
/*
 * Harness: libgcswalk's /proc parsers, each over a buffer (proc.h). The
 * first byte of the input picks the parser, the rest is its text:
 *
 *   'm'  maps: gw_proc_parse_maps (a live target's mappings), and the
 *        self walk's scanner (gw_maps_find_feed, self.c) on the same text
 *        cut into chunks
 *   's'  smaps: gw_proc_parse_smaps (the GCS and vDSO regions)
 *   't'  a stat line: gw_proc_parse_stat (gcswalk_proc_thread)
 *   'S'  status: gw_proc_field for every field libgcswalk reads
 *   'd'  a /proc/PID/task entry: gw_proc_tid_of
 *   'f'  a flag (the first line) and a VmFlags list: gw_proc_has_flag
 *
 * Any other first byte picks by its value, so that no input is wasted.
 * One harness rather than six: each parser is a few microseconds of work
 * on text that libFuzzer mutates alike, one corpus and one fuzz test (not
 * six of FUZZ_SECONDS each) cover them all, and libFuzzer learns the
 * selector byte at once. Besides crashes and sanitizer reports, each
 * parser's result is checked against what the text says (an independent
 * reading where one is short). Seeds: guest /proc files with their
 * selector byte (fuzz/seeds.py --proc).
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "proc.h"

/* Mappings whose bounds are looked up with the self walk's scanner per
 * input: each lookup reads the text again, and the fuzzer reorders lines
 * anyway (overlaps, duplicates, bad lines before a good one). */
#define MAX_LOOKUPS 4

struct range {
	uint64_t lo, hi;
};

struct ranges {
	struct range *r;
	size_t n, cap;
};

static int push(struct ranges *l, uint64_t lo, uint64_t hi)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		struct range *r = realloc(l->r, cap * sizeof(*r));

		if (!r)
			return -1;
		l->r = r;
		l->cap = cap;
	}
	l->r[l->n++] = (struct range){ lo, hi };
	return 0;
}

struct maps_seen {
	struct ranges maps;
	const char *text;
	size_t len;
};

static int on_map(void *arg, const struct gw_proc_map *m)
{
	struct maps_seen *s = arg;

	if (m->hi <= m->lo)
		abort();
	/* The name is the rest of a line of the text. */
	if (m->name && (m->name < s->text || m->name + m->name_len > s->text + s->len ||
			strlen(m->name) != m->name_len))
		abort();
	if (!m->name && m->name_len)
		abort();
	return push(&s->maps, m->lo, m->hi);
}

/* The end the self walk finds for ADDR, the text fed in two chunks cut at
 * CUT (the whole text in one if CUT is 0 or LEN), or one byte at a time
 * if CUT is SIZE_MAX. */
static uint64_t find_end(const char *text, size_t len, size_t cut, uint64_t addr)
{
	struct gw_maps_find f = { addr, 0, GW_MAPS_HEAD_INIT };
	size_t i;

	if (cut == SIZE_MAX) {
		for (i = 0; i < len && !gw_maps_find_feed(&f, text + i, 1); i++)
			;
	} else if (!gw_maps_find_feed(&f, text, cut)) {
		(void)gw_maps_find_feed(&f, text + cut, len - cut);
	}
	return f.end;
}

/* The end of the first head of HEADS that holds ADDR, or 0. */
static uint64_t first_holding(const struct ranges *heads, uint64_t addr)
{
	size_t i;

	for (i = 0; i < heads->n; i++)
		if (addr >= heads->r[i].lo && addr < heads->r[i].hi)
			return heads->r[i].hi;
	return 0;
}

static void maps_text(char *text)
{
	struct ranges heads = { NULL, 0, 0 };
	struct maps_seen seen = { { NULL, 0, 0 }, NULL, 0 };
	struct gw_maps_head h = GW_MAPS_HEAD_INIT;
	size_t i, k, len = strlen(text), cut = 0;

	/* A cut the text itself moves, so that the fuzzer tries many. */
	for (i = 0; i < len && i < 64; i++)
		cut = cut * 33 + (unsigned char)text[i];
	cut = len ? cut % len : 0;

	/* Every line's head, as the scanner reads it. */
	for (i = 0; i < len; i++)
		if (gw_maps_head_feed(&h, text[i]) && push(&heads, h.lo, h.hi) != 0)
			goto out;
	/* The self walk's answer, whatever the chunks, is the first head
	 * that holds the address. */
	for (i = 0; i < heads.n && i < MAX_LOOKUPS; i++) {
		uint64_t probe[3] = { heads.r[i].lo, heads.r[i].hi - 1, heads.r[i].hi };

		for (k = 0; k < 3; k++) {
			uint64_t want = first_holding(&heads, probe[k]);

			/* One byte at a time is slow: for one address. */
			if (find_end(text, len, cut, probe[k]) != want ||
			    (i + k == 0 && find_end(text, len, SIZE_MAX, probe[k]) != want))
				abort();
		}
	}
	/* The mappings of the full reader are those heads (in order) whose
	 * lines are well-formed: the two readers never disagree on a
	 * mapping's bounds. */
	seen.text = text;
	seen.len = len;
	if (gw_proc_parse_maps(text, on_map, &seen) < 0)
		goto out;       /* out of memory in on_map */
	for (i = 0, k = 0; i < seen.maps.n; i++, k++) {
		while (k < heads.n && (heads.r[k].lo != seen.maps.r[i].lo ||
				       heads.r[k].hi != seen.maps.r[i].hi))
			k++;
		if (k == heads.n)
			abort();
	}
out:
	free(heads.r);
	free(seen.maps.r);
}

struct regions_seen {
	size_t gcs, vdso;
};

static int on_region(void *arg, enum gcswalk_region_kind kind, uint64_t lo, uint64_t hi)
{
	struct regions_seen *s = arg;

	if (hi <= lo)
		abort();
	if (kind == GCSWALK_REGION_GCS)
		s->gcs++;
	else if (kind == GCSWALK_REGION_VDSO)
		s->vdso++;
	else
		abort();
	return GCSWALK_OK;
}

static size_t count(const char *text, const char *word)
{
	size_t n = 0;
	const char *p;

	for (p = strstr(text, word); p; p = strstr(p + 1, word))
		n++;
	return n;
}

static void smaps_text(char *text)
{
	struct regions_seen s = { 0, 0 };
	size_t flags = count(text, "VmFlags:"), vdso = count(text, "[vdso]");

	if (gw_proc_parse_smaps(text, on_region, &s) != GCSWALK_OK)
		abort();
	/* At most one GCS per VmFlags line, one vDSO per "[vdso]". */
	if (s.gcs > flags || s.vdso > vdso)
		abort();
}

/* Field N (4 and up) of a stat line whose last ')' is at CLOSE: the
 * state is the one character at CLOSE[2] (whatever it is), then fields
 * are separated by single blanks, so field N starts after the (N - 3)th
 * blank from CLOSE + 3 on. NULL if there is none. */
static const char *stat_field(const char *close, int n)
{
	const char *p = close + 3;
	int blanks = 0;

	for (; *p && blanks < n - 3; p++)
		blanks += *p == ' ';
	return blanks == n - 3 ? p : NULL;
}

static void stat_line(char *text)
{
	uint64_t ticks = 0;
	char state = 0;
	const char *close = strrchr(text, ')'), *ut, *st;

	if (gw_proc_parse_stat(text, &state, &ticks) != 0)
		return;
	/* The state follows the last ')', and the ticks are utime + stime
	 * (fields 14 and 15), read here independently. */
	if (!close || close[1] != ' ' || state != close[2] || !state)
		abort();
	ut = stat_field(close, 14);
	st = stat_field(close, 15);
	if (!ut || !st || *ut < '0' || *ut > '9' || *st < '0' || *st > '9' ||
	    ticks != strtoull(ut, NULL, 10) + strtoull(st, NULL, 10))
		abort();
}

static void status_text(char *text)
{
	static const char *const names[] = { "\nState:", "\nTgid:", "\nTracerPid:", "\nPPid:" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int c = -1;
		long v = gw_proc_field(text, names[i], &c);

		if (c < 0 || c > UCHAR_MAX || (c == 0 && v != 0))
			abort();
		if (!strstr(text, names[i]) && (c != 0 || v != 0))
			abort();
	}
}

static void task_entry(char *text)
{
	long t = gw_proc_tid_of(text);
	const char *p;

	if (t == -1)
		return;
	if (t <= 0 || t > INT32_MAX || !*text)
		abort();
	for (p = text; *p; p++)
		if (*p < '0' || *p > '9')
			abort();
}

/* The first line is the flag, cut at a blank (flags are words), the rest
 * the list; checked against a plain split of the list into words. */
static void flag_list(char *text)
{
	char *list = strchr(text, '\n'), *word, *save;
	int want = 0, got;

	if (!list)
		return;
	*list++ = '\0';
	text[strcspn(text, " \t")] = '\0';
	got = gw_proc_has_flag(list, text);
	for (word = strtok_r(list, " \t", &save); word; word = strtok_r(NULL, " \t", &save))
		want |= strcmp(word, text) == 0;
	if (got != want)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct {
		char key;
		void (*run)(char *text);
	} parsers[] = { { 'm', maps_text }, { 's', smaps_text }, { 't', stat_line },
			{ 'S', status_text }, { 'd', task_entry }, { 'f', flag_list } };
	const size_t n = sizeof(parsers) / sizeof(parsers[0]);
	size_t i, pick;
	char *text;

	if (size < 1)
		return 0;
	pick = data[0] % n;
	for (i = 0; i < n; i++)
		if (data[0] == (uint8_t)parsers[i].key)
			pick = i;
	/* The parsers take C strings, as the kernel's text has no NUL: the
	 * text ends at the first. */
	text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	parsers[pick].run(text);
	free(text);
	return 0;
}
