// SPDX-License-Identifier: MIT
/*
 * Unit tests of the profile file's writers and reader (profile.c,
 * profile_read.c, profile_lines.c, stack_table.c, gzip_file.c): a
 * version-2 profile compressed as the recorder compresses it reads back
 * sample for sample; chains that share outer frames share their stack
 * nodes and a repeated chain adds none; the file cut at every byte is read
 * as truncated with each sample it keeps whole, or refused, never
 * misread; the same file uncompressed reads alike; a version-1 file reads
 * to the same samples; hostile stack references are refused; the sample
 * and stack lines, put together by hand, are what printf would write; the
 * recorder's plain file compressed in place (gp_gzip_in_place) reads
 * alike, keeps its mode and leaves no temporary file, and what is not a
 * regular file is left alone. TAP.
 * Usage: profile-format-test WORKDIR
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../../tests/tap.h"
#include "gcsprof.h"
#include "gzip_file.h"
#include "profile.h"

/* The chains written, innermost first: B shares A's two outer frames,
 * the third sample is A again, D shares A's outermost frame (its leaf is
 * the PC where A has a return address: another node), the last is empty.
 * Nodes: A's 3, B's leaf, D's leaf. */
static const struct gp_frame chain_a[] = { { 0x400100, 'P' }, { 0x400200, 'R' },
					   { 0x7f0010, 'R' } };
static const struct gp_frame chain_b[] = { { 0x400300, 'P' }, { 0x400200, 'R' },
					   { 0x7f0010, 'R' } };
static const struct gp_frame chain_d[] = { { 0x400200, 'P' }, { 0x7f0010, 'R' } };

struct want {
	const struct gp_frame *frames;
	size_t n;
	int tid, cpu;
	uint64_t weight;
};

static const struct want samples[] = {
	{ chain_a, 3, 42, 0, 1000 }, { chain_b, 3, 43, 1, 2000 }, { chain_a, 3, 42, -1, 0 },
	{ chain_d, 2, 42, 1, 3000 }, { chain_a, 0, 44, 0, 10 },
};
#define NSAMPLES (sizeof(samples) / sizeof(samples[0]))

static struct gp_stack_table written;

/* Sample I, after the stack nodes it adds. */
static int write_sample(FILE *f, size_t i)
{
	struct gp_rsample s = { 0 };
	size_t old = written.n;

	s.time_ns = 100 * (i + 1);
	s.pid = 42;
	s.tid = samples[i].tid;
	s.state = 'R';
	s.thread = s.tid == 43 ? "worker thread" : "main";
	s.cpu = samples[i].cpu;
	s.weight = samples[i].weight;
	s.nframes = samples[i].n;
	if (gp_stack_intern(&written, samples[i].frames, samples[i].n, &s.stack) != 0)
		return -1;
	for (; old < written.n; old++)
		if (gp_profile_write_stack(f, written.nodes[old].parent, &written.nodes[old].frame))
			return -1;
	return gp_profile_write_sample(f, &s);
}

static int write_profile(FILE *f)
{
	struct gp_rmapping m = { 0, 42, 0x400000, 0x401000, 0, "/no/such/prog", NULL, 0 };
	struct gp_count lost = { "ring-overrun", 2 };
	size_t i;

	if (gp_profile_write_header(f, 499, "cpu", "prog one", "perf", "cycles") != 0 ||
	    gp_profile_write_mapping(f, &m) != 0)
		return -1;
	for (i = 0; i < NSAMPLES; i++)
		if (write_sample(f, i) != 0)
			return -1;
	return gp_profile_write_trailer(f, 5000, &lost, 1, NSAMPLES, 1, written.n - 1);
}

/* Does sample I of P hold what was written? */
static int sample_is(const struct gp_rprofile *p, size_t i)
{
	const struct gp_rsample *s = &p->samples[i];
	const struct want *w = &samples[i];
	uint32_t node = s->stack;
	size_t j;

	if (s->tid != w->tid || s->time_ns != 100 * (i + 1) || s->nframes != w->n ||
	    strcmp(s->thread, w->tid == 43 ? "worker thread" : "main") != 0)
		return 0;
	if (p->version == 2 && (s->cpu != w->cpu || s->weight != w->weight))
		return 0;
	for (j = 0; j < w->n; j++, node = p->stacks.nodes[node].parent)
		if (!node || p->stacks.nodes[node].frame.address != w->frames[j].address ||
		    p->stacks.nodes[node].frame.kind != w->frames[j].kind)
			return 0;
	return node == 0;
}

static int all_samples(const struct gp_rprofile *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!sample_is(p, i))
			return 0;
	return 1;
}

static char *slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)n)) && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*size = buf ? (size_t)n : 0;
	return buf;
}

static int spill(const char *path, const char *data, size_t n)
{
	FILE *f = fopen(path, "wb");
	int ok = f && fwrite(data, 1, n, f) == n;

	return (f && fclose(f) == 0 && ok) ? 0 : -1;
}

/* Read every cut of the file DATA (N bytes): each a truncated profile
 * with the samples before the cut whole, or refused. */
static void cuts(const char *dir, const char *data, size_t n, const char *what)
{
	char path[4096];
	size_t k, bad = 0, kept_before = 0, refused = 0;

	snprintf(path, sizeof(path), "%s/cut.data", dir);
	for (k = 0; k < n; k++) {
		struct gp_rprofile p;
		int ret;

		if (spill(path, data, k) != 0) {
			bad++;
			break;
		}
		ret = gp_profile_read(&p, path);
		/* Only gzip's own trailer cut: every record is there. */
		if (ret == 0 && p.nsamples != NSAMPLES)
			bad++;
		if (ret == GP_EXIT_TRUNCATED || ret == 0) {
			if (!all_samples(&p, p.nsamples) || p.nsamples > NSAMPLES ||
			    p.nsamples < kept_before)
				bad++;
			kept_before = p.nsamples;
			gp_profile_free(&p);
		} else if (ret == GP_EXIT_BAD_PROFILE) {
			refused++;
		} else {
			bad++;
		}
	}
	tap_diag("%s: %zu cuts, %zu refused (no whole first line), the others truncated", what, n,
		 refused);
	tap_result(bad == 0 && kept_before == NSAMPLES,
		   "every cut: truncated, every sample before the cut whole, or refused");
}

static int read_ok(const char *path, struct gp_rprofile *p)
{
	return gp_profile_read(p, path) == 0;
}

static void hostile(const char *dir)
{
	static const char *const bad[] = {
		/* a parent listed after its child */
		"gcsprof-profile 2\nstack 2 P1\nstack 0 R2\nend 1 0 0 2\n",
		/* a sample of a stack not listed */
		"gcsprof-profile 2\nstack 0 P1\nsample 1 1 1 R 0 t - - - 2\nend 1 1 0 1\n",
		/* the end's stack count wrong */
		"gcsprof-profile 2\nstack 0 P1\nsample 1 1 1 R 0 t - - - 1\nend 1 1 0 2\n",
		/* a frame in a stack record without its kind */
		"gcsprof-profile 2\nstack 0 1\nend 1 0 0 1\n",
		/* a weight of 0 (none is "-") */
		"gcsprof-profile 2\nstack 0 P1\nsample 1 1 1 R 0 t - 0 0 1\nend 1 1 0 1\n",
		/* version 1's frames in a version-2 sample */
		"gcsprof-profile 2\nsample 1 1 1 R 0 t - P1 R2\nend 1 1 0 0\n",
	};
	char path[4096];
	size_t i, refused = 0;

	snprintf(path, sizeof(path), "%s/hostile.data", dir);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct gp_rprofile p;
		int ret;

		if (spill(path, bad[i], strlen(bad[i])) != 0)
			break;
		ret = gp_profile_read(&p, path);
		if (ret == GP_EXIT_BAD_PROFILE)
			refused++;
		else if (ret == 0 || ret == GP_EXIT_TRUNCATED)
			gp_profile_free(&p);
	}
	tap_result(refused == sizeof(bad) / sizeof(bad[0]),
		   "hostile stack references, counts and fields: refused");
}

/* Version 1 of the same samples: the chains as text, interned as read. */
static void version_1(const char *dir)
{
	static const char v1[] =
		"gcsprof-profile 1\nhz 499\nmode cpu\ncommand prog%20one\n"
		"mapping 0 42 400000 401000 0 - /no/such/prog\n"
		"sample 100 42 42 R 0 main - P400100 R400200 R7f0010\n"
		"sample 200 42 43 R 0 worker%20thread - P400300 R400200 R7f0010\n"
		"sample 300 42 42 R 0 main - P400100 R400200 R7f0010\n"
		"sample 400 42 42 R 0 main - P400200 R7f0010\n"
		"sample 500 42 44 R 0 main -\n"
		"end 5000 5 1\n";
	struct gp_rprofile p;
	char path[4096];

	snprintf(path, sizeof(path), "%s/v1.data", dir);
	if (spill(path, v1, sizeof(v1) - 1) != 0 || !read_ok(path, &p)) {
		tap_result(0, "version 1 reads");
		tap_result(0, "version 1's chains interned as version 2 stores them");
		return;
	}
	tap_result(p.version == 1 && p.nsamples == NSAMPLES && all_samples(&p, NSAMPLES) &&
		   p.samples[0].cpu == -1 && p.samples[0].weight == 0,
		   "version 1 reads: the same samples, no CPU or weight");
	tap_result(p.stacks.n == written.n && p.samples[0].stack == p.samples[2].stack,
		   "version 1's chains interned as version 2 stores them");
	gp_profile_free(&p);
}

/* The lines put together by hand are printf's, to the digit: the widest
 * numbers, a negative one, the fields written "-" and an escaped name. */
static void exact_lines(void)
{
	struct gp_rsample s = { .time_ns = UINT64_MAX, .pid = -7, .tid = 2147483647, .state = 'R',
				.asid = 4294967295u, .thread = "a b%", .stack = 4294967295u,
				.cpu = -1, .weight = 0, .fallback = 1, .cut = 1 };
	struct gp_frame fr = { UINT64_MAX, 'P' };
	char buf[512] = "";
	FILE *f = fmemopen(buf, sizeof(buf) - 1, "w");
	int ok = f != NULL;

	if (ok) {
		ok = gp_profile_write_sample(f, &s) == 0 && gp_profile_write_stack(f, 0, &fr) == 0;
		s = (struct gp_rsample){ .time_ns = 0, .pid = 0, .tid = 1, .state = 0, .thread = "",
					 .stack = 1, .cpu = 3, .weight = 18446744073709551615u };
		fr = (struct gp_frame){ 0x400a0c, 'R' };
		ok = ok && gp_profile_write_sample(f, &s) == 0 &&
		     gp_profile_write_stack(f, 4294967295u, &fr) == 0;
		ok = fclose(f) == 0 && ok;
	}
	tap_result(ok && strcmp(buf, "sample 18446744073709551615 -7 2147483647 R 4294967295 a%20b%25 "
				"fc - - 4294967295\n"
				"stack 0 Pffffffffffffffff\n"
				"sample 0 0 1 ? 0 %00 - 3 18446744073709551615 1\n"
				"stack 4294967295 R400a0c\n") == 0,
		   "sample and stack lines as printf would write them");
}

/* Files in DIR whose name starts with PREFIX. */
static int count_named(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
	closedir(d);
	return n;
}

/* The recorder's end: its plain file, PLAIN, compressed in place. */
static void in_place(const char *dir, const char *plain)
{
	char path[4096], link[4096];
	struct gp_rprofile p;
	struct stat st;
	size_t size = 0;
	char *data = slurp(plain, &size);
	int ok;

	snprintf(path, sizeof(path), "%s/in-place.data", dir);
	snprintf(link, sizeof(link), "%s/in-place.link", dir);
	ok = data && spill(path, data, size) == 0 && chmod(path, 0640) == 0 &&
	     gp_gzip_in_place(path, 1) == 0;
	free(data);
	size = 0;
	data = ok ? slurp(path, &size) : NULL;
	tap_result(data && size > 2 && (unsigned char)data[0] == 0x1f &&
		   (unsigned char)data[1] == 0x8b && stat(path, &st) == 0 &&
		   (st.st_mode & 0777) == 0640 && count_named(dir, ".in-place.data.") == 0,
		   "a plain profile compressed in place: gzip, its mode kept, no file left over");
	free(data);
	tap_result(read_ok(path, &p) && p.nsamples == NSAMPLES && all_samples(&p, NSAMPLES) &&
		   (gp_profile_free(&p), 1), "and it reads back sample for sample");
	(void)unlink(link);
	tap_result(symlink("in-place.data", link) == 0 && gp_gzip_in_place(link, 1) == 1 &&
		   lstat(link, &st) == 0 && S_ISLNK(st.st_mode) &&
		   gp_gzip_in_place("/dev/null", 1) == 1 &&
		   gp_gzip_in_place("/nonexistent/x.data", 1) == -1,
		   "a link or a device is left alone; a missing file fails");
}

int main(int argc, char **argv)
{
	char gz[4096], plain[4096];
	struct gp_rprofile p;
	char *data = NULL;
	size_t size = 0;
	FILE *f;

	if (argc != 2) {
		fprintf(stderr, "usage: profile-format-test WORKDIR\n");
		return 2;
	}
	tap_plan(14);
	exact_lines();
	snprintf(gz, sizeof(gz), "%s/v2.data", argv[1]);
	snprintf(plain, sizeof(plain), "%s/v2-plain.data", argv[1]);
	if (gp_stack_init(&written) != 0)
		return 1;
	f = fopen(gz, "w");
	tap_result(f && write_profile(f) == 0 && fclose(f) == 0 && gp_gzip_in_place(gz, 1) == 0 &&
		   (data = slurp(gz, &size)) && size > 2 && (unsigned char)data[0] == 0x1f &&
		   (unsigned char)data[1] == 0x8b,
		   "version 2 written plain, then compressed in place as the recorder does: a gzip file");
	tap_result(written.n - 1 == 5,
		   "chains sharing outer frames share nodes; a repeated chain adds none (5 nodes)");
	if (read_ok(gz, &p)) {
		tap_result(p.version == 2 && p.nsamples == NSAMPLES && all_samples(&p, NSAMPLES) &&
			   p.stacks.n == written.n && p.nmappings == 1 && p.nlost == 1 &&
			   p.duration_ns == 5000 && strcmp(p.command, "prog one") == 0,
			   "read back: every sample's chain, thread, time, CPU and weight");
		tap_result(p.samples[0].stack == p.samples[2].stack &&
			   p.samples[4].stack == 0 && p.samples[4].nframes == 0,
			   "the same chain is the same node; an empty chain is node 0");
		gp_profile_free(&p);
	} else {
		tap_result(0, "read back");
		tap_result(0, "the same chain is the same node");
	}
	f = fopen(plain, "w");
	gp_stack_free(&written);
	if (gp_stack_init(&written) != 0)
		return 1;
	tap_result(f && write_profile(f) == 0 && fclose(f) == 0 && read_ok(plain, &p) &&
		   p.nsamples == NSAMPLES && all_samples(&p, NSAMPLES) && (gp_profile_free(&p), 1),
		   "version 2 uncompressed (as zcat prints it) reads alike");
	/* Each cut says it is truncated, in one line: not here. */
	if (!freopen("/dev/null", "w", stderr))
		return 1;
	if (data)
		cuts(argv[1], data, size, "gzip");
	else
		tap_result(0, "cuts of the gzip file");
	free(data);
	data = slurp(plain, &size);
	if (data)
		cuts(argv[1], data, size, "plain");
	else
		tap_result(0, "cuts of the plain file");
	free(data);
	hostile(argv[1]);
	version_1(argv[1]);
	in_place(argv[1], plain);
	gp_stack_free(&written);
	tap_finish();
}
