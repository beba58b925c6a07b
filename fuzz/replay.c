// SPDX-License-Identifier: MIT
/*
 * A harness without libFuzzer: run LLVMFuzzerTestOneInput once on every
 * file named (folders: on every file in them), as libFuzzer does when
 * given files. This is how the ordinary (gcc) builds replay the corpora as
 * regression tests; a crash, a sanitizer report or abort() fails the test.
 * Usage: HARNESS-replay FILE|DIR...   Exit: 0, or 1 if nothing could be read.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char *data = NULL;
	size_t size = 0, cap = 0, n;

	if (!f) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	do {
		if (size == cap) {
			unsigned char *p = realloc(data, cap ? cap * 2 : 65536);

			if (!p) {
				fprintf(stderr, "replay: %s: out of memory\n", path);
				free(data);
				fclose(f);
				return -1;
			}
			data = p;
			cap = cap ? cap * 2 : 65536;
		}
		n = fread(data + size, 1, cap - size, f);
		size += n;
	} while (n > 0);
	if (ferror(f)) {
		fprintf(stderr, "replay: %s: read error\n", path);
		free(data);
		fclose(f);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(data, size);
	free(data);
	return 0;
}

static int cmp_names(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* PATH, a file or a folder of files; the number of files run, or -1. */
static long replay(const char *path)
{
	struct dirent **names;
	struct stat st;
	long total = 0;
	int n, i;

	if (stat(path, &st) != 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return replay_file(path) == 0 ? 1 : -1;
	n = scandir(path, &names, NULL, cmp_names);
	if (n < 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (i = 0; i < n; i++) {
		char *sub;

		if (names[i]->d_name[0] != '.' && asprintf(&sub, "%s/%s", path, names[i]->d_name) >= 0) {
			long r = replay(sub);

			total = r < 0 || total < 0 ? -1 : total + r;
			free(sub);
		}
		free(names[i]);
	}
	free(names);
	return total;
}

int main(int argc, char **argv)
{
	long total = 0;
	int i;

	for (i = 1; i < argc; i++) {
		long r = replay(argv[i]);

		total = r < 0 || total < 0 ? -1 : total + r;
	}
	if (total <= 0) {
		fprintf(stderr, "replay: %s\n", total < 0 ? "an input could not be read" : "no inputs");
		return 1;
	}
	printf("replay: %ld inputs, no failure\n", total);
	return 0;
}
