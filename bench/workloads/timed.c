// SPDX-License-Identifier: MIT
/*
 * Runs a command and prints how long it ran, from its fork to its exit,
 * on stderr: "timed: NS ns". Under a profiler this is the target's own run
 * time, without the profiler's start and finish, for the slowdown of a
 * fixed job (bench's gzip). Exits with the command's status.
 * Usage: bench-timed COMMAND [ARG...]
 */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

int main(int argc, char **argv)
{
	double t0, t1;
	pid_t pid;
	int st;

	if (argc < 2) {
		fprintf(stderr, "usage: bench-timed COMMAND [ARG...]\n");
		return 2;
	}
	t0 = seconds_now();
	pid = fork();
	if (pid < 0) {
		perror("bench-timed: fork");
		return 1;
	}
	if (pid == 0) {
		execvp(argv[1], argv + 1);
		perror("bench-timed: exec");
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid) {
		perror("bench-timed: waitpid");
		return 1;
	}
	t1 = seconds_now();
	fprintf(stderr, "timed: %.0f ns\n", (t1 - t0) * 1e9);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
