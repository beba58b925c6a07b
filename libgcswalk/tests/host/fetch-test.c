// SPDX-License-Identifier: MIT
/*
 * Host test: a file that is not on this machine is fetched by its
 * build-id. This program's own mappings, renamed to a path that does not
 * exist, make a target of mappings whose build-id the caller sets (as
 * gcsprof report does from a profile); a debuginfod "server" (a file://
 * URL with debuginfod's layout, DIR/buildid/HEX/executable) holds a copy
 * of this program. Without DEBUGINFOD_URLS the address has no name; with
 * it, the symboliser names the function.
 *
 * Usage: gcswalk-fetch-test   (the server and debuginfod's cache are in a
 *        temporary folder, removed at the end)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gcswalk.h"
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "tap.h"
#pragma GCC diagnostic pop

#define GONE "/nonexistent/gcswalk-fetch-test"

/* The function whose name must come back. */
__attribute__((noinline)) int fetch_marker(int x)
{
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

/* This program's file mappings, from /proc/self/maps, renamed to GONE;
 * the number of them (0 on failure). */
static size_t own_mappings(struct gcswalk_mapping *maps, size_t max)
{
	char exe[4096], *line = NULL;
	size_t cap = 0, n = 0;
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	FILE *f = fopen("/proc/self/maps", "r");

	if (len <= 0 || !f) {
		if (f)
			fclose(f);
		return 0;
	}
	exe[len] = '\0';
	while (n < max && getline(&line, &cap, f) > 0) {
		unsigned long long lo, hi, off;
		int path_at = 0;

		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n", &lo, &hi, &off, &path_at) == 3 &&
		    path_at > 0 && strcmp(line + path_at, exe) == 0)
			maps[n++] = (struct gcswalk_mapping){ lo, hi, off, GONE };
	}
	free(line);
	fclose(f);
	return n;
}

/* A target of MAPS (N) with build-id ID set on them (NULL: none). */
static int open_gone(const struct gcswalk_mapping *maps, size_t n, const unsigned char *id,
		     size_t id_size, gcswalk_target **out)
{
	int ret = gcswalk_target_open_mappings(out, getpid(), maps, n, NULL);

	if (ret == GCSWALK_OK && id)
		ret = gcswalk_target_set_mapping_build_id(*out, 0, id, id_size);
	return ret;
}

/* The name libgcswalk gives fetch_marker's address in T, or NULL. */
static const char *name_of_marker(gcswalk_target *t)
{
	const struct gcswalk_location *loc;
	gcswalk_symbolizer *s = NULL;
	static char name[64];
	const char *r = NULL;

	if (gcswalk_symbolizer_new(&s, t, NULL) != GCSWALK_OK)
		return NULL;
	if (gcswalk_symbolize(s, (uint64_t)(uintptr_t)fetch_marker, 0, &loc) == GCSWALK_OK &&
	    loc->nsymbols && loc->symbols[loc->nsymbols - 1].function) {
		snprintf(name, sizeof(name), "%s", loc->symbols[loc->nsymbols - 1].function);
		r = name;
	}
	gcswalk_symbolizer_free(s);
	return r;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* mkdir -p PATH (modified in place, and restored). */
static int make_dirs(char *path)
{
	char *p;

	for (p = path + 1;; p++) {
		if (*p == '/' || !*p) {
			char c = *p;

			*p = '\0';
			if (mkdir(path, 0755) != 0 && errno != EEXIST)
				return -1;
			*p = c;
			if (!c)
				return 0;
		}
	}
}

static int copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
	char buf[1 << 14];
	size_t n;
	int ok = in && out;

	while (ok && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		ok = fwrite(buf, 1, n, out) == n;
	ok = ok && !ferror(in);
	if (in)
		fclose(in);
	if (out && fclose(out) != 0)
		ok = 0;
	return ok ? 0 : -1;
}

int main(void)
{
	struct gcswalk_mapping maps[64];
	gcswalk_target *gone = NULL;
	unsigned char *id = NULL;
	char work[] = "/tmp/gcswalk-fetch.XXXXXX";
	char *hex = NULL, *dir = NULL, *exe = NULL, *url = NULL, *cache = NULL;
	const unsigned char *got = NULL;
	size_t size = 0, got_size = 0, i, n;
	const char *name;

	unsetenv("DEBUGINFOD_URLS");
	n = own_mappings(maps, sizeof(maps) / sizeof(maps[0]));
	if (!n || gcswalk_file_build_id("/proc/self/exe", &id, &size) != GCSWALK_OK)
		tap_skip_all("this program has no file mapping or no build-id");
	if (!mkdtemp(work))
		tap_skip_all("no temporary folder");
	tap_plan(5);
	hex = calloc(2 * size + 1, 1);
	for (i = 0; hex && i < size; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	if (!hex || asprintf(&dir, "%s/server/buildid/%s", work, hex) < 0 ||
	    make_dirs(dir) != 0 || asprintf(&exe, "%s/executable", dir) < 0 ||
	    copy_file("/proc/self/exe", exe) != 0) {
		tap_result(0, "a copy of this program on the server, in debuginfod's layout");
		goto out;
	}

	tap_result(open_gone(maps, n, id, size, &gone) == GCSWALK_OK &&
		   gcswalk_target_mapping_build_id(gone, n - 1, &got, &got_size) == GCSWALK_OK &&
		   got_size == size && memcmp(got, id, size) == 0,
		   "the build-id set on one mapping is the file's, for each of its mappings");
	gcswalk_target_close(gone);
	gone = NULL;
	tap_result(open_gone(maps, n, NULL, 0, &gone) == GCSWALK_OK && !name_of_marker(gone),
		   "the file not here, no build-id: no name");
	gcswalk_target_close(gone);
	gone = NULL;
	tap_result(open_gone(maps, n, id, size, &gone) == GCSWALK_OK && !name_of_marker(gone),
		   "with its build-id, no DEBUGINFOD_URLS: no name");
	gcswalk_target_close(gone);
	gone = NULL;

	if (asprintf(&url, "file://%s/server", work) < 0 ||
	    asprintf(&cache, "%s/cache", work) < 0 || setenv("DEBUGINFOD_URLS", url, 1) != 0 ||
	    setenv("DEBUGINFOD_CACHE_PATH", cache, 1) != 0) {
		tap_result(0, "DEBUGINFOD_URLS and DEBUGINFOD_CACHE_PATH set");
		goto out;
	}
	tap_result(open_gone(maps, n, NULL, 0, &gone) == GCSWALK_OK && !name_of_marker(gone),
		   "with DEBUGINFOD_URLS, no build-id: no name");
	gcswalk_target_close(gone);
	gone = NULL;
	name = open_gone(maps, n, id, size, &gone) == GCSWALK_OK ? name_of_marker(gone) : NULL;
	if (!name || strcmp(name, "fetch_marker") != 0)
		tap_diag("got %s", name ? name : "(none)");
	tap_result(name && strcmp(name, "fetch_marker") == 0,
		   "with its build-id and DEBUGINFOD_URLS: fetched, the function named");
out:
	gcswalk_target_close(gone);
	if (nftw(work, remove_one, 16, FTW_DEPTH | FTW_PHYS) != 0)
		tap_diag("could not remove %s", work);
	free(id);
	free(hex);
	free(dir);
	free(exe);
	free(url);
	free(cache);
	(void)fetch_marker(0);
	tap_finish();
}
