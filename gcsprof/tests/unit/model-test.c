// SPDX-License-Identifier: MIT
/*
 * Unit tests of gcsprof's model (model.c) built from a profile file
 * (profile.c): the recording's facts carried into the model (mode,
 * command, method, event, duration, lost counts, throttling, the depth
 * limit and the chains cut at it, and the notes saying so), samples and their
 * locations merged by address and kind, mappings with hex build-ids, and
 * frames in no known file named by address, in a signal trampoline by
 * what they are. Symbols are not looked up: the mapped files are not on
 * this machine. TAP.
 * Usage: model-test WORKDIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../tests/tap.h"
#include "model.h"

static const char profile[] =
	"gcsprof-profile 1\n"
	"hz 250\n"
	"mode cpu\n"
	"method perf\n"
	"event cycles\n"
	"command prog%20one\n"
	"max-stack 3 sysctl\n"
	"vdso-symbol 300 40 __kernel_clock_gettime\n"
	"vdso-symbol 800 8 __kernel_rt_sigreturn\n"
	"mapping 0 42 400000 401000 0 0a0b /no/such/prog\n"
	"mapping 0 42 ffff0000 ffff1000 0 - [vdso]\n"
	"sample 100 42 42 R 0 main - P400100 R400200 Sffff0010 R400300\n"
	"sample 150 42 42 R 0 main - Pffff0320 R400200\n"
	"sample 200 42 43 R 0 worker f P400100 F400204\n"
	"sample 300 42 42 R 0 main - P400100 R400200 Sffff0010 R400300\n"
	"sample 400 42 42 R 0 main c P400100 R400200 R400200\n"
	"sample 500 42 43 R 0 worker fc P400100 F400204 F400204\n"
	"throttle 5 4\n"
	"lost no-gcs 3\n"
	"lost ring-overrun 4\n"
	"end 2000000 6 2\n";

static const char *frame_name(const struct gp_model *m, uint64_t location_id)
{
	const struct gp_location *l = &m->locations[location_id - 1];

	return l->nlines ? gp_model_function(m, l->lines[l->nlines - 1].function_id)->name : "";
}

/* A riscv64 recording: its arch record names the shadow stack (Zicfiss),
 * and the notes say that name; an arch record without it is refused. */
static const char riscv_profile[] =
	"gcsprof-profile 2\n"
	"hz 99\n"
	"mode cpu\n"
	"method perf\n"
	"command prog\n"
	"cpus 2\n"
	"arch riscv64 Zicfiss\n"
	"mapping 0 42 400000 401000 0 - /no/such/prog\n"
	"stack 0 P400100\n"
	"sample 100 42 42 R 0 main - 0 - 1\n"
	"lost no-gcs 2\n"
	"end 1000000 1 1 1\n";

/* Writes TEXT into DIR/NAME and reads it: gp_profile_read's status. */
static int read_text(const char *dir, const char *name, const char *text, struct gp_rprofile *raw)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) == EOF || fclose(f) != 0)
		return -1;
	return gp_profile_read(raw, path);
}

static void riscv_arch(const char *dir)
{
	struct gp_rprofile raw;
	struct gp_model m;
	char **notes = NULL;
	size_t n = 0;
	int ok = read_text(dir, "riscv.data", riscv_profile, &raw) == 0;

	tap_result(ok && raw.arch && strcmp(raw.arch, "riscv64") == 0 && raw.shadow_stack &&
		   strcmp(raw.shadow_stack, "Zicfiss") == 0, "riscv64: the arch record reads");
	ok = ok && gp_model_build(&m, &raw, NULL) == 0;
	if (ok)
		gp_profile_free(&raw);
	tap_result(ok && strcmp(m.arch, "riscv64") == 0 && strcmp(m.shadow_stack, "Zicfiss") == 0,
		   "riscv64: the architecture and its shadow stack's name are in the model");
	if (ok)
		n = gp_model_notes(&m, &notes);
	tap_result(ok && n == 2 && strstr(notes[1], "2 from threads running without a shadow stack "
					   "(Zicfiss) (no-gcs; ") && !strstr(notes[1], "GCS"),
		   "riscv64: the lost note names Zicfiss, not GCS");
	if (ok) {
		gp_model_notes_free(notes, n == (size_t)-1 ? 0 : n);
		gp_model_free(&m);
	}
	tap_result(read_text(dir, "arch-bad.data", "gcsprof-profile 2\nhz 99\narch riscv64\n"
			     "end 0 0 0 0\n", &raw) == GP_EXIT_BAD_PROFILE,
		   "an arch record without the shadow stack's name is a bad profile");
}

/* The one map and string table: ids from 0 ("") in order of first use,
 * the same pointer for the same text, every key found after growing. */
static int map_and_strings(void)
{
	struct gp_strtab t = { 0 };
	struct gp_map map = { 0 };
	const char *a = gp_strtab_intern(&t, "alpha"), *b = gp_strtab_intern(&t, "beta");
	char key[32];
	uint64_t i;
	int ok = a && b && gp_string_id(a) == 1 && gp_string_id(b) == 2 &&
		 gp_strtab_intern(&t, "alpha") == a && gp_string_id(gp_strtab_intern(&t, "")) == 0 &&
		 strcmp(t.text[0], "") == 0 && t.n == 3;

	for (i = 1; ok && i <= 5000; i++) {
		snprintf(key, sizeof(key), "k%llu", (unsigned long long)i);
		ok = gp_map_put(&map, i, i * 7, 3, i) == 0 && gp_strtab_intern(&t, key) != NULL;
	}
	for (i = 1; ok && i <= 5000; i++) {
		snprintf(key, sizeof(key), "k%llu", (unsigned long long)i);
		ok = gp_map_get(&map, i, i * 7, 3) == i && gp_map_get(&map, i, i * 7, 4) == 0 &&
		     gp_string_id(gp_strtab_intern(&t, key)) == i + 2;
	}
	ok = ok && map.count == 5000 && t.n == 5003 && gp_strtab_intern(&t, "alpha") == a;
	gp_map_free(&map);
	gp_strtab_free(&t);
	return ok;
}

int main(int argc, char **argv)
{
	struct gp_rprofile raw;
	struct gp_model m;
	char path[4096];
	FILE *f;
	int ok;

	if (argc != 2)
		return 64;
	snprintf(path, sizeof(path), "%s/model-test.data", argv[1]);
	f = fopen(path, "w");
	if (!f || fputs(profile, f) == EOF || fclose(f) != 0)
		tap_skip_all("cannot write the test profile");
	tap_result(gp_profile_read(&raw, path) == 0, "the profile reads");
	tap_result(gp_model_build(&m, &raw, NULL) == 0, "the model builds");
	gp_profile_free(&raw);   /* the model must not need it any more */

	tap_result(strcmp(m.mode, "cpu") == 0 && strcmp(m.command, "prog one") == 0 &&
		   strcmp(m.method, "perf") == 0 && strcmp(m.event, "cycles") == 0 &&
		   m.hz == 250 && m.duration_ns == 2000000, "the recording's facts are in the model");
	tap_result(strcmp(m.arch, "arm64") == 0 && strcmp(m.shadow_stack, "GCS") == 0,
		   "a file without an arch record is arm64's (GCS), as every such file was");
	tap_result(m.nlost == 2 && m.nlost_total == 7 && strcmp(m.lost[1].reason, "ring-overrun") == 0 &&
		   m.lost[1].count == 4, "the lost counts too");
	tap_result(m.nsamples == 6 && m.total == 6 && m.period_ns == 4000000, "six samples");
	tap_result(m.samples[0].nlocations == 4 && m.samples[2].nlocations == 2,
		   "their frames");
	ok = m.nsamples == 6 && m.samples[0].location_ids[0] == m.samples[3].location_ids[0] &&
	     m.samples[0].location_ids[0] == m.samples[2].location_ids[0] &&
	     m.samples[0].location_ids[1] != m.samples[2].location_ids[1];
	tap_result(ok, "one location per address, kind and address space");
	tap_result(m.samples[2].fallback && !m.samples[0].fallback &&
		   strcmp(m.samples[2].thread, "worker") == 0 && m.samples[2].tid == 43,
		   "fallback flag, thread name and tid");
	tap_result(m.samples[4].cut && m.samples[5].cut && m.samples[5].fallback &&
		   !m.samples[0].cut && m.ncut == 2 && m.cut_depth == 3,
		   "chains cut at the depth limit: flagged, counted, their depth");
	tap_result(m.max_stack == 3 && strcmp(m.max_stack_by, "sysctl") == 0 && m.has_throttle &&
		   m.throttles == 5 && m.unthrottles == 4,
		   "the depth limit and the kernel's throttling are in the model");
	{
		char **notes = NULL;
		size_t n = gp_model_notes(&m, &notes);

		tap_result(n == 3 &&
			   strcmp(notes[0], "not sampled: 7 samples (53.8% of the 13 due) were not "
				  "taken: 3 from threads running without a shadow stack (GCS) (no-gcs; "
				  "to avoid it, record with --gcs-tunable 3 to force it on, or with "
				  "--fallback fp "
				  "or cfi to sample them by frame records or DWARF CFI); 4 that the "
				  "kernel could not write because the ring buffer was full "
				  "(ring-overrun; to avoid it, a larger -m (ring buffer pages per CPU) "
				  "or a lower -F).") == 0 &&
			   strncmp(notes[1], "throttled: the kernel paused sampling 5 times", 45) == 0 &&
			   strncmp(notes[2], "cut: 2 of 6 samples (33.3%) have chains that reached the "
				   "limit of 3 frames", 74) == 0 &&
			   strstr(notes[2], "sysctl -w kernel.perf_event_max_stack=N"),
			   "the notes: losses, throttling, cut chains and how to avoid them");
		gp_model_notes_free(notes, n == (size_t)-1 ? 0 : n);
	}
	tap_result(m.nmappings == 2 && strcmp(m.mappings[0].build_id, "0a0b") == 0 &&
		   strcmp(m.mappings[0].file, "/no/such/prog") == 0, "the mapping, build-id in hex");
	tap_result(strcmp(frame_name(&m, m.samples[1].location_ids[0]),
			  "__kernel_clock_gettime [vdso]") == 0,
		   "a vDSO frame is named from the profile's vDSO symbols, as perf names it");
	tap_result(strcmp(frame_name(&m, m.samples[0].location_ids[0]), "[prog+0x100]") == 0,
		   "a frame in a file without symbols: [file+offset]");
	tap_result(strcmp(frame_name(&m, m.samples[0].location_ids[2]),
			  "[signal handler called]") == 0,
		   "the signal trampoline is named for what it is");
	{
		size_t *last = NULL, *order, n = gp_model_threads(&m, &last);

		order = gp_model_by_time(&m);
		tap_result(n == 2 && last[0] == 4 && last[1] == 5 && order && order[0] == 0 &&
			   order[1] == 1 && order[3] == 3,
			   "threads by tid with their last sample; samples in order of time");
		free(last);
		free(order);
	}
	gp_model_free(&m);
	riscv_arch(argv[1]);
	tap_result(map_and_strings(), "the map and the string table: ids in order, growth kept");
	tap_finish();
}
