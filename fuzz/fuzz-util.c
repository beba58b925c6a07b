// SPDX-License-Identifier: MIT
/* The fuzz harnesses' shared helpers: the input as a file, and a target
 * put through every call a client (gcsprof inspect) makes. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

/* Bounds that keep one input fast: a fuzzer must run thousands a second. */
#define FZ_MAX_THREADS 16
#define FZ_MAX_FRAMES 256
/* Symbolising is elfutils' work (a linear search of the symbol table),
 * not code under test: a few frames are enough. */
#define FZ_MAX_SYMBOLISED 8

/* Build-id lookups must not go to debuginfod servers: inputs name made-up
 * build-ids, and a fuzzer must not wait on the network. */
__attribute__((constructor)) static void fz_no_debuginfod(void)
{
	unsetenv("DEBUGINFOD_URLS");
}

const char *fz_input_path(const void *data, size_t size)
{
	static int fd = -1;
	static char path[32];
	const char *p = data;
	size_t done = 0;

	if (fd < 0) {
		fd = memfd_create("fuzz-input", MFD_CLOEXEC);
		if (fd < 0)
			return NULL;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) != 0)
		return NULL;
	while (done < size) {
		ssize_t n = pwrite(fd, p + done, size - done, (off_t)done);

		if (n <= 0)
			return NULL;
		done += (size_t)n;
	}
	return path;
}

int fz_path_is_harmless(const char *path)
{
	struct stat st;

	return stat(path, &st) != 0 || S_ISREG(st.st_mode);
}

/* Every mapping listed, and looked up by its own bounds. */
static int exercise_mappings(gcswalk_target *t)
{
	size_t i, n = gcswalk_target_mapping_count(t);
	int harmless = 1;

	for (i = 0; i < n; i++) {
		struct gcswalk_mapping m;

		if (gcswalk_target_mapping(t, i, &m) != GCSWALK_OK)
			abort();        /* an index below the count must work */
		if (!m.path || m.end < m.start)
			abort();
		(void)gcswalk_target_mapping_find(t, m.start);
		if (m.end > m.start)
			(void)gcswalk_target_mapping_find(t, m.end - 1);
		if (!fz_path_is_harmless(m.path)) {
			harmless = 0;
		} else {
			const unsigned char *id;
			size_t id_size;

			(void)gcswalk_target_mapping_build_id(t, i, &id, &id_size);
		}
	}
	if (gcswalk_target_mapping(t, n, &(struct gcswalk_mapping){ 0 }) == GCSWALK_OK)
		abort();
	return harmless;
}

/* One walk of thread INDEX with METHOD; its frames into FRAMES. */
static size_t walk(gcswalk_target *t, size_t index, enum gcswalk_method method, unsigned flags,
		   gcswalk_symbolizer *s, struct gcswalk_frame *frames)
{
	struct gcswalk_walk_options o = GCSWALK_WALK_OPTIONS_INIT;
	gcswalk_walk *w;
	size_t n = 0;
	int ret;

	o.method = method;
	o.flags = flags;
	o.max_frames = FZ_MAX_FRAMES;
	o.symbolizer = s;
	if (gcswalk_walk_begin(&w, t, index, &o) != GCSWALK_OK)
		return 0;
	while ((ret = gcswalk_walk_next(w, &frames[n])) == GCSWALK_OK) {
		(void)gcswalk_frame_kind_name(frames[n].kind);
		(void)gcswalk_source_name(frames[n].source);
		if (++n > FZ_MAX_FRAMES)
			abort();        /* max_frames must hold */
	}
	if (ret != GCSWALK_END && ret != GCSWALK_CUT)
		abort();
	if (gcswalk_walk_next(w, &frames[n]) != ret)
		abort();                /* END and CUT are sticky */
	gcswalk_walk_free(w);
	return n;
}

static void symbolise(gcswalk_symbolizer *s, const struct gcswalk_frame *frames, size_t n)
{
	size_t i;

	for (i = 0; i < n && i < FZ_MAX_SYMBOLISED; i++) {
		const struct gcswalk_location *loc;
		size_t k;
		int ret = gcswalk_symbolize(s, frames[i].address, gcswalk_frame_is_return(&frames[i]),
					    &loc);

		if (ret != GCSWALK_OK && ret != GCSWALK_E_NO_SYMBOL && ret != GCSWALK_E_NOMEM)
			abort();
		if (ret == GCSWALK_E_NOMEM)
			continue;
		for (k = 0; k < loc->nsymbols; k++)
			if (loc->symbols[k].line < 0)
				abort();
	}
}

static void exercise_thread(gcswalk_target *t, size_t index, gcswalk_symbolizer *s,
			    struct gcswalk_frame *frames, struct gcswalk_record_check *checks)
{
	struct gcswalk_thread_info info;
	unsigned char buf[64];
	size_t n, count = 0, got = 0;
	int ret;

	if (gcswalk_target_thread(t, index, &info) != GCSWALK_OK)
		abort();
	if (gcswalk_target_thread_index(t, info.tid) < 0)
		abort();        /* a listed thread can be found by its tid */
	if (info.have_registers) {
		(void)gcswalk_target_read(t, info.sp, buf, sizeof(buf), &got);
		if (got > sizeof(buf))
			abort();
	}
	if (info.have_gcs)
		(void)gcswalk_target_read(t, info.gcs.gcspr, buf, sizeof(buf), NULL);
	n = walk(t, index, GCSWALK_METHOD_GCS, GCSWALK_WALK_LR, NULL, frames);
	if (s)
		symbolise(s, frames, n);
	(void)walk(t, index, GCSWALK_METHOD_FP, 0, NULL, frames);
	if (s)
		(void)walk(t, index, GCSWALK_METHOD_CFI, 0, s, frames);
	ret = gcswalk_verify(t, index, checks, FZ_MAX_FRAMES, &count);
	if ((ret == GCSWALK_END || ret == GCSWALK_CUT) && count > FZ_MAX_FRAMES)
		abort();
}

/* The facts a core records besides threads and files: the fatal signal
 * (NT_SIGINFO), the GCS and vDSO regions, and the vDSO's ELF image, which
 * is parsed from the dumped memory. */
static void exercise_facts(gcswalk_target *t)
{
	struct gcswalk_signal_info si = { .size = sizeof(si) };
	const struct gcswalk_elf_symbol *syms;
	const unsigned char *id;
	size_t i, n, nsyms, id_size;
	uint64_t start, image_size;

	if (gcswalk_target_fatal_signal(t, &si) == GCSWALK_OK &&
	    si.thread_index >= gcswalk_target_thread_count(t))
		abort();        /* the signalled thread is one of the target's */
	n = gcswalk_target_region_count(t);
	for (i = 0; i <= n; i++) {
		struct gcswalk_region r = { .size = sizeof(r) };

		if ((gcswalk_target_region(t, i, &r) == GCSWALK_OK) != (i < n))
			abort();
		if (i < n && r.end < r.start)
			abort();
	}
	if (gcswalk_target_vdso(t, &start, &image_size, &syms, &nsyms, &id, &id_size) ==
	    GCSWALK_OK) {
		for (i = 0; i < nsyms; i++)
			if (!syms[i].name)
				abort();
	}
}

void fz_exercise_target(gcswalk_target *t)
{
	struct gcswalk_frame *frames = calloc(FZ_MAX_FRAMES + 1, sizeof(*frames));
	struct gcswalk_record_check *checks = calloc(FZ_MAX_FRAMES, sizeof(*checks));
	gcswalk_symbolizer *s = NULL;
	size_t i, n = gcswalk_target_thread_count(t);

	if (!frames || !checks)
		goto out;
	(void)gcswalk_target_pid(t);
	(void)gcswalk_target_errmsg(t);
	exercise_facts(t);
	/* A symboliser only over files it is harmless to open; without one the
	 * walks and checks still run. */
	if (exercise_mappings(t) && gcswalk_symbolizer_new(&s, t, NULL) != GCSWALK_OK)
		s = NULL;
	for (i = 0; i < n && i < FZ_MAX_THREADS; i++)
		exercise_thread(t, i, s, frames, checks);
	if (gcswalk_target_thread(t, n, &(struct gcswalk_thread_info){ 0 }) != GCSWALK_E_INVALID)
		abort();
	gcswalk_symbolizer_free(s);
out:
	free(frames);
	free(checks);
}
