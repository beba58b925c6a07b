// SPDX-License-Identifier: MIT
/*
 * Signals under the recorder: sends itself SIGUSR1 ten times while busy
 * and counts the handler's runs, forks a child named "forked-child" that
 * burns a second in child_work() (its samples must be in the profile) and
 * reaps it, then exits with status 3 if everything arrived (1 if not), or,
 * with the argument "kill", dies of SIGTERM. Usage: gcsprof-signals [kill]
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

static volatile sig_atomic_t got;
volatile uint64_t sink;

static void on_usr1(int sig)
{
	(void)sig;
	got++;
}

/* The forked child's work: a second of CPU in a function of its own. */
NOINLINE void child_work(void)
{
	sink += spin_for(1.0);
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	pid_t child;
	int i, st;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	if (sigaction(SIGUSR1, &sa, NULL) != 0)
		return 1;
	/* Busy for 0.4 s of clock time, so a CPU profile at 99 Hz sees the
	 * parent however fast the machine: a fixed amount of work took a few
	 * tenths of a second under emulation on one host and too little for
	 * any sample on a faster one. */
	for (i = 0; i < 10; i++) {
		sink += spin_for(0.04);
		if (kill(getpid(), SIGUSR1) != 0)
			return 1;
	}
	child = fork();
	if (child < 0)
		return 1;
	if (child == 0) {
		if (prctl(PR_SET_NAME, "forked-child") != 0)
			_exit(1);
		child_work();
		KEEP_FRAME();
		_exit(7);
	}
	if (waitpid(child, &st, 0) != child || !WIFEXITED(st) || WEXITSTATUS(st) != 7) {
		fprintf(stderr, "signals: child status %#x\n", st);
		return 1;
	}
	if (argc > 1 && strcmp(argv[1], "kill") == 0)
		raise(SIGTERM);
	printf("signals: %d of 10 SIGUSR1 delivered\n", (int)got);
	return got == 10 ? 3 : 1;
}
