/* SPDX-License-Identifier: MIT */
/*
 * gcsprof record: gcsprof's own signals. SIGCHLD, SIGINT, SIGTERM and
 * SIGHUP are blocked for the whole recording and taken synchronously
 * (sigtimedwait, or a signalfd for the perf method's poll loop): no
 * handlers, no global state. SIGINT, SIGTERM and SIGHUP ask the recording
 * to stop; which one, and whether a process sent it (rather than the
 * terminal, which signals the command too), is kept here.
 */
#ifndef GCSPROF_RECORD_SIGNALS_H
#define GCSPROF_RECORD_SIGNALS_H

#include <signal.h>
#include <stdint.h>

struct rec_signals {
	sigset_t set;              /* the signals taken synchronously */
	sigset_t old_mask;         /* gcsprof's mask before, for the command */
	int stop_sig;              /* the stop signal that came; 0: none */
	int stop_from_process;     /* sent by a process, not the terminal */
};

/* Block the signals (saving the mask). 0, or GP_EXIT_SYSTEM. */
int rec_signals_block(struct rec_signals *s);
void rec_signals_restore(const struct rec_signals *s);
/* Wait up to NS for one of the signals: 1 if it was a stop signal (noted
 * in S), else 0 (SIGCHLD, or the time ran out). */
int rec_signals_wait(struct rec_signals *s, uint64_t ns);
/* A signalfd for the signals (non-blocking), or -1 with errno. */
int rec_signals_fd(const struct rec_signals *s);
/* Take every signal queued on FD: 1 if one was a stop signal. *SIGCHLD
 * is set when a SIGCHLD was among them. */
int rec_signals_read_fd(struct rec_signals *s, int fd, int *sigchld);

#endif
