// SPDX-License-Identifier: MIT
/*
 * gcsprof record: the status line (status_line.h).
 */
#include <stdio.h>
#include <unistd.h>

#include "status_line.h"

void rec_status_init(struct rec_status *s, int quiet, uint64_t start_ns)
{
	s->tty = !quiet && isatty(STDERR_FILENO);
	s->start_ns = start_ns;
	s->last_ns = 0;
}

void rec_status_show(struct rec_status *s, uint64_t now_ns, uint64_t nsamples, size_t threads)
{
	double secs = (double)(now_ns - s->start_ns) / 1e9;

	if (!s->tty || now_ns - s->last_ns < 250000000u)
		return;
	s->last_ns = now_ns;
	fprintf(stderr, "\r\033[Kgcsprof: %.1f s, %llu samples, %zu threads, %.0f samples/s", secs,
		(unsigned long long)nsamples, threads, secs > 0 ? (double)nsamples / secs : 0.0);
}

void rec_status_clear(const struct rec_status *s)
{
	if (s->tty)
		fputs("\r\033[K", stderr);
}
