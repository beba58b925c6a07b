// SPDX-License-Identifier: MIT
/*
 * pprof-check FILE: read a gzipped perftools.profiles.Profile, check that
 * its ids and string indexes are consistent, and print the functions by
 * flat (self) sample count, "count name" per line, most first: what
 * `go tool pprof -top` would list, for hosts without Go. With --roots,
 * the outermost frames instead (the threads, with report --per-thread);
 * with --comments, the profile's comments, "comment TEXT" per line; with
 * --functions, the function table, "function NAME" per line, and the
 * profile's start, "time_nanos N".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "profile.pb-c.h"

struct row {
	const char *name;
	long long count;
};

static int by_count(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->name, y->name);
}

static int fail(const char *what)
{
	fprintf(stderr, "pprof-check: %s\n", what);
	return 1;
}

int main(int argc, char **argv)
{
	Perftools__Profiles__Profile *p;
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0, i, j;
	struct row *rows;
	gzFile gz;
	int n, roots = 0, comments = 0, functions = 0;

	if (argc == 3 && strcmp(argv[1], "--roots") == 0) {
		roots = 1;
		argv++;
	} else if (argc == 3 && strcmp(argv[1], "--comments") == 0) {
		comments = 1;
		argv++;
	} else if (argc == 3 && strcmp(argv[1], "--functions") == 0) {
		functions = 1;
		argv++;
	} else if (argc != 2)
		return fail("usage: pprof-check [--roots | --comments | --functions] FILE");
	gz = gzopen(argv[1], "rb");
	if (!gz)
		return fail("cannot open the file");
	for (;;) {
		if (len == cap) {
			unsigned char *nb;

			cap = cap ? cap * 2 : 65536;
			nb = realloc(buf, cap);
			if (!nb)
				return fail("out of memory");
			buf = nb;
		}
		n = gzread(gz, buf + len, (unsigned)(cap - len));
		if (n < 0)
			return fail("not valid gzip");
		if (n == 0)
			break;
		len += (size_t)n;
	}
	gzclose(gz);
	p = perftools__profiles__profile__unpack(NULL, len, buf);
	free(buf);
	if (!p)
		return fail("not a valid Profile message");
	if (p->n_string_table == 0 || p->string_table[0][0] != '\0')
		return fail("string_table[0] is not \"\"");
	if (p->n_sample_type == 0)
		return fail("no sample types");
	for (i = 0; i < p->n_comment; i++)
		if (p->comment[i] <= 0 || (size_t)p->comment[i] >= p->n_string_table)
			return fail("bad comment string index");
	if (comments) {
		for (i = 0; i < p->n_comment; i++)
			printf("comment %s\n", p->string_table[p->comment[i]]);
		perftools__profiles__profile__free_unpacked(p, NULL);
		return fflush(stdout) == 0 ? 0 : 1;
	}
	rows = calloc(p->n_function + 1, sizeof(*rows));
	if (!rows)
		return fail("out of memory");
	for (i = 0; i < p->n_function; i++) {
		const Perftools__Profiles__Function *f = p->function[i];

		if (f->id != i + 1 || f->name < 0 || (size_t)f->name >= p->n_string_table)
			return fail("bad function id or name index");
		rows[i].name = p->string_table[f->name];
	}
	if (functions) {
		for (i = 0; i < p->n_function; i++)
			printf("function %s\n", rows[i].name);
		printf("time_nanos %lld\n", (long long)p->time_nanos);
	}
	for (i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Location *l = p->location[i];

		if (l->id != i + 1 || l->mapping_id > p->n_mapping)
			return fail("bad location id or mapping id");
		for (j = 0; j < l->n_line; j++)
			if (l->line[j]->function_id == 0 || l->line[j]->function_id > p->n_function)
				return fail("bad function id in a line");
	}
	for (i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		const Perftools__Profiles__Location *l;

		if (s->n_value != p->n_sample_type)
			return fail("a sample has the wrong number of values");
		if (s->n_location_id == 0)
			continue;
		if (s->location_id[0] == 0 || s->location_id[0] > p->n_location)
			return fail("bad location id in a sample");
		if (s->location_id[s->n_location_id - 1] == 0 ||
		    s->location_id[s->n_location_id - 1] > p->n_location)
			return fail("bad location id in a sample");
		l = p->location[s->location_id[roots ? s->n_location_id - 1 : 0] - 1];
		if (l->n_line)
			rows[l->line[0]->function_id - 1].count += s->value[0];
	}
	qsort(rows, p->n_function, sizeof(*rows), by_count);
	for (i = 0; !functions && i < p->n_function && rows[i].count; i++)
		printf("%lld %s\n", rows[i].count, rows[i].name);
	free(rows);
	perftools__profiles__profile__free_unpacked(p, NULL);
	return fflush(stdout) == 0 ? 0 : 1;
}
