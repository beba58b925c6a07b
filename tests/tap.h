/* SPDX-License-Identifier: MIT */
/*
 * Minimal TAP (Test Anything Protocol) output in the kselftest manner:
 * a plan, one "ok"/"not ok" line per case, "# SKIP" for cases the machine
 * cannot run, and an exit status of 0 (all passed), 1 (a failure) or
 * 4 (everything skipped), which CTest maps through SKIP_RETURN_CODE.
 *
 * Header-only so that each test program stays one file. Output goes
 * through write(2) in tap_vprint() so that cases run after fork() do not
 * duplicate buffered text.
 */
#ifndef GCSPROF_TAP_H
#define GCSPROF_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TAP_EXIT_PASS 0
#define TAP_EXIT_FAIL 1
#define TAP_EXIT_SKIP 4

struct tap_state {
	int planned;
	int run;
	int passed;
	int failed;
	int skipped;
};

static struct tap_state tap;

__attribute__((format(printf, 1, 0)))
static inline void tap_vprint(const char *fmt, va_list ap)
{
	char line[512];
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	size_t len, off = 0;

	if (n < 0)
		return;
	len = (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1;
	while (off < len) {
		ssize_t w = write(STDOUT_FILENO, line + off, len - off);

		if (w <= 0)
			return;
		off += (size_t)w;
	}
}

__attribute__((format(printf, 1, 2)))
static inline void tap_print(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_vprint(fmt, ap);
	va_end(ap);
}

static inline void tap_plan(int n)
{
	tap.planned = n;
	tap_print("TAP version 13\n1..%d\n", n);
}

/* A diagnostic line: "# ..." */
__attribute__((format(printf, 1, 2)))
static inline void tap_diag(const char *fmt, ...)
{
	va_list ap;

	tap_print("# ");
	va_start(ap, fmt);
	tap_vprint(fmt, ap);
	va_end(ap);
	tap_print("\n");
}

static inline void tap_result(int pass, const char *name)
{
	tap.run++;
	if (pass)
		tap.passed++;
	else
		tap.failed++;
	tap_print("%s %d %s\n", pass ? "ok" : "not ok", tap.run, name);
}

static inline void tap_skip(const char *name, const char *why)
{
	tap.run++;
	tap.skipped++;
	tap_print("ok %d %s # SKIP %s\n", tap.run, name, why);
}

/* For a program whose number of cases depends on what it was asked to
 * run (its features): the header now, the plan after the cases
 * (tap_done). */
static inline void tap_start(void)
{
	tap_print("TAP version 13\n");
}

/* Skip the whole program: no plan was printed yet. */
static inline void __attribute__((noreturn)) tap_skip_all(const char *why)
{
	tap_print("TAP version 13\n1..0 # SKIP %s\n", why);
	exit(TAP_EXIT_SKIP);
}

static inline void __attribute__((noreturn)) tap_finish(void)
{
	while (tap.run < tap.planned)
		tap_result(0, "(case not run)");
	tap_print("# totals: pass:%d fail:%d skip:%d\n", tap.passed, tap.failed, tap.skipped);
	if (tap.failed)
		exit(TAP_EXIT_FAIL);
	exit(tap.passed ? TAP_EXIT_PASS : TAP_EXIT_SKIP);
}

/*
 * A program of several features, each a CTest test of its own (the
 * program is run with the feature's name), so that a failure names it:
 * a table of them, the ones ARGV names run, all when it names none.
 */
struct tap_feature {
	const char *name;
	void (*run)(void);
};

/* Is FEATURE among the ones ARGV names (or does it name none)? */
static inline int tap_feature_requested(int argc, char **argv, const char *feature)
{
	int i;

	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], feature) == 0)
			return 1;
	return argc == 1;
}

/* Does every argument name one of the N features? If not, say which are
 * there (on stderr) and return 0. */
static inline int tap_features_known(const struct tap_feature *f, size_t n, int argc, char **argv)
{
	int i, bad = 0;
	size_t k;

	for (i = 1; i < argc; i++) {
		for (k = 0; k < n && strcmp(argv[i], f[k].name) != 0; k++)
			;
		bad |= k == n;
	}
	if (!bad)
		return 1;
	fprintf(stderr, "%s: features:", argv[0]);
	for (k = 0; k < n; k++)
		fprintf(stderr, " %s", f[k].name);
	fputc('\n', stderr);
	return 0;
}

/* Run the features ARGV names, in the table's order. */
static inline void tap_run_features(const struct tap_feature *f, size_t n, int argc, char **argv)
{
	size_t k;

	for (k = 0; k < n; k++)
		if (tap_feature_requested(argc, argv, f[k].name))
			f[k].run();
}

/* The plan, after the cases (tap_start), then as tap_finish. */
static inline void __attribute__((noreturn)) tap_done(void)
{
	tap.planned = tap.run;
	tap_print("1..%d\n", tap.run);
	tap_finish();
}

#endif /* GCSPROF_TAP_H */
