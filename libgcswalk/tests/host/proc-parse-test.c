// SPDX-License-Identifier: MIT
/*
 * libgcswalk's /proc parsers (proc.h, hidden: linked against the static
 * library) on real text: the files of a live GCS process that
 * fuzz/proc-capture.sh copied in the guest, as the proc fuzz harness's
 * corpus keeps them (a selector byte, then the file). The fuzzer proves
 * the parsers survive hostile text; this proves they still read the
 * kernel's: gcswalk-target's seven GCS mappings (six threads and one
 * map_shadow_stack stack), its vDSO, its stat and status fields, and the
 * self walk's maps scanner agreeing with the whole-file reader.
 *
 * Usage: gcswalk-proc-parse-test CORPUS   (fuzz/corpus/proc)
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc.h"
#include "tap.h"

static const char *corpus;

/* The corpus file NAME without its selector byte, NUL-terminated. */
static char *load(const char *name)
{
	char *path, *text = NULL;
	long size;
	FILE *f;

	if (asprintf(&path, "%s/%s", corpus, name) < 0)
		return NULL;
	f = fopen(path, "rb");
	free(path);
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > 0 && fseek(f, 1, SEEK_SET) == 0) {
		text = malloc((size_t)size);
		if (text && fread(text, 1, (size_t)size - 1, f) != (size_t)size - 1) {
			free(text);
			text = NULL;
		} else if (text) {
			text[size - 1] = '\0';
		}
	}
	fclose(f);
	return text;
}

struct maps_seen {
	size_t n, named;
	struct gw_proc_map first, vdso;
	uint64_t lo[64], hi[64];
};

static int on_map(void *arg, const struct gw_proc_map *m)
{
	struct maps_seen *s = arg;

	if (s->n == 0)
		s->first = *m;
	if (m->name_len == 6 && memcmp(m->name, "[vdso]", 6) == 0)
		s->vdso = *m;
	if (s->n < 64) {
		s->lo[s->n] = m->lo;
		s->hi[s->n] = m->hi;
	}
	s->n++;
	s->named += m->name_len > 0;
	return GCSWALK_OK;
}

/* The self walk's answer for ADDR, the text fed CHUNK bytes at a time. */
static uint64_t self_end(const char *text, size_t chunk, uint64_t addr)
{
	struct gw_maps_find f = { addr, 0, GW_MAPS_HEAD_INIT };
	size_t len = strlen(text), at;

	for (at = 0; at < len; at += chunk)
		if (gw_maps_find_feed(&f, text + at, len - at < chunk ? len - at : chunk))
			break;
	return f.end;
}

static void test_maps(void)
{
	struct maps_seen s = { 0 };
	char *text = load("guest-maps"), *copy;
	size_t i, agree = 1;

	copy = text ? strdup(text) : NULL;
	if (!text || !copy) {
		tap_result(0, "maps: the guest's maps read");
		tap_skip("maps: the self walk's scanner", "no text");
		free(text);
		return;
	}
	tap_result(gw_proc_parse_maps(copy, on_map, &s) == GCSWALK_OK && s.n == 29 && s.named == 14 &&
		   s.first.lo == 0xaaaac11a0000 && s.first.hi == 0xaaaac11a3000 &&
		   s.first.offset == 0 && s.first.name_len == strlen("/opt/gcsprof/tests/gcswalk-target") &&
		   s.vdso.lo == 0xffff87ed4000 && s.vdso.hi == 0xffff87ed6000,
		   "maps: 29 mappings, 14 named, the program's first and the vDSO with their bounds");
	for (i = 0; i < s.n && i < 64; i++)
		agree &= self_end(text, 7, s.lo[i]) == s.hi[i] &&
			 self_end(text, 4096, s.hi[i] - 1) == s.hi[i];
	tap_result(agree && self_end(text, 1, 0x1000) == 0 &&
		   self_end(text, 256, 0xffff87ed5000) == 0xffff87ed6000,
		   "maps: the self walk's scanner finds every mapping's end, in any chunks, "
		   "and none for an unmapped address");
	free(text);
	free(copy);
}

struct regions_seen {
	size_t gcs, vdso;
	uint64_t vdso_lo, vdso_hi;
};

static int on_region(void *arg, enum gcswalk_region_kind kind, uint64_t lo, uint64_t hi)
{
	struct regions_seen *s = arg;

	if (kind == GCSWALK_REGION_GCS) {
		s->gcs++;
	} else {
		s->vdso++;
		s->vdso_lo = lo;
		s->vdso_hi = hi;
	}
	return GCSWALK_OK;
}

static void test_smaps(void)
{
	struct regions_seen s = { 0 };
	char *text = load("guest-smaps");

	tap_result(text && gw_proc_parse_smaps(text, on_region, &s) == GCSWALK_OK && s.gcs == 7 &&
		   s.vdso == 1 && s.vdso_lo == 0xffff87ed4000 && s.vdso_hi == 0xffff87ed6000,
		   "smaps: seven GCS mappings (\"ss\") and the vDSO");
	free(text);
	tap_result(gw_proc_has_flag("rd wr mr mw me ac nh ss ", "ss") &&
		   gw_proc_has_flag("ss\tmr", "ss") && !gw_proc_has_flag("rd wr ssx", "ss") &&
		   !gw_proc_has_flag("rd xss wr", "ss") && !gw_proc_has_flag("", "ss"),
		   "smaps: the flag is a whole word of VmFlags");
}

static void test_stat(void)
{
	static const struct {
		const char *file;
		char state;
		uint64_t ticks;
	} cases[] = {
		{ "guest-stat", 'S', 7 },               /* utime 2, stime 5 */
		{ "guest-task-124-stat", 'S', 0 },
		{ "hand-stat-name", 'R', 40 },          /* a name with ") (" */
	};
	size_t i;
	int ok = 1;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *text = load(cases[i].file), state = 0;
		uint64_t ticks = 0;

		ok &= text && gw_proc_parse_stat(text, &state, &ticks) == 0 &&
		      state == cases[i].state && ticks == cases[i].ticks;
		free(text);
	}
	tap_result(ok && gw_proc_parse_stat("1 (x) S 1 2", &(char){ 0 }, &(uint64_t){ 0 }) < 0 &&
		   gw_proc_parse_stat("1 (x)", &(char){ 0 }, &(uint64_t){ 0 }) < 0,
		   "stat: state and CPU ticks after the last ')'; a short line refused");
}

static void test_status(void)
{
	char *text = load("guest-status");
	int c1 = 0, c2 = 0, c3 = 0, c4 = 0, c5 = 1;

	tap_result(text && gw_proc_field(text, "\nTgid:", &c1) == 120 &&
		   gw_proc_field(text, "\nPPid:", &c2) == 117 &&
		   gw_proc_field(text, "\nTracerPid:", &c3) == 0 && c3 == '0' &&
		   (gw_proc_field(text, "\nState:", &c4), c4 == 'S') &&
		   gw_proc_field(text, "\nNoSuchField:", &c5) == 0 && c5 == 0,
		   "status: Tgid, PPid, TracerPid and State; a missing field reads 0");
	free(text);
	tap_result(gw_proc_tid_of("120") == 120 && gw_proc_tid_of(".") == -1 &&
		   gw_proc_tid_of("0") == -1 && gw_proc_tid_of("12a") == -1 &&
		   gw_proc_tid_of("2147483648") == -1 && gw_proc_tid_of("") == -1,
		   "task: a folder name is a tid only if it is a decimal in range");
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: gcswalk-proc-parse-test CORPUS\n");
		return 2;
	}
	corpus = argv[1];
	tap_plan(7);
	test_maps();
	test_smaps();
	test_stat();
	test_status();
	tap_finish();
}
