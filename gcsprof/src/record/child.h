/* SPDX-License-Identifier: MIT */
/*
 * gcsprof record: the command gcsprof launches. It is forked and held
 * before its exec until the method is ready for it (traced, or its perf
 * events open), then released; a failed exec comes back through a pipe,
 * so that record can say why with the shell's statuses. Its exit status
 * becomes record's own.
 */
#ifndef GCSPROF_RECORD_CHILD_H
#define GCSPROF_RECORD_CHILD_H

#include <signal.h>
#include <sys/types.h>

struct rec_child {
	pid_t pid;                 /* 0: none (-p, or not started) */
	int done;                  /* it has exited: status is its wait status */
	int status;
	int exec_seen;             /* it reached its exec */
	int exec_err_fd;           /* the exec's errno comes here; -1: none */
};

void rec_child_init(struct rec_child *c);
/* Fork ARGV with its shadow stack asked for by TUNABLE (env.h:
 * GLIBC_TUNABLES, or riscv64's enabler) and OLD_MASK as its signal
 * mask, held before its exec until *RELEASE_FD is closed. 0, or an exit
 * status (one line said). */
int rec_child_spawn(struct rec_child *c, char **argv, const char *tunable,
		    const sigset_t *old_mask, int *release_fd);
/* Release the held child (close RELEASE_FD) into its exec. */
void rec_child_release(int release_fd);
/* The method could not take the held child: release, kill and reap it. */
void rec_child_abandon(struct rec_child *c, int release_fd);
/* Reap the child if it has exited (WNOHANG). */
void rec_child_poll(struct rec_child *c);
/* Its wait status STATUS, taken by someone else (a ptrace waitpid). */
void rec_child_exited(struct rec_child *c, int status);
/* The errno of a failed exec, 0 if it did not fail. */
int rec_child_exec_error(const struct rec_child *c);
void rec_child_free(struct rec_child *c);

#endif
