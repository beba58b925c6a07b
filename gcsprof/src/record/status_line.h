/* SPDX-License-Identifier: MIT */
/*
 * gcsprof record: the status line on a terminal (stderr), at most four
 * times a second: time, samples, threads, rate. Nothing when stderr is
 * not a terminal or with -q.
 */
#ifndef GCSPROF_RECORD_STATUS_LINE_H
#define GCSPROF_RECORD_STATUS_LINE_H

#include <stddef.h>
#include <stdint.h>

struct rec_status {
	int tty;                   /* show it */
	uint64_t start_ns, last_ns;
};

void rec_status_init(struct rec_status *s, int quiet, uint64_t start_ns);
void rec_status_show(struct rec_status *s, uint64_t now_ns, uint64_t nsamples, size_t threads);
/* Clear the line, at the end. */
void rec_status_clear(const struct rec_status *s);

#endif
