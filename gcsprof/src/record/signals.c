// SPDX-License-Identifier: MIT
/*
 * gcsprof record: gcsprof's own signals (signals.h).
 */
#include <errno.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "gcsprof.h"
#include "signals.h"

int rec_signals_block(struct rec_signals *s)
{
	memset(s, 0, sizeof(*s));
	sigemptyset(&s->set);
	sigaddset(&s->set, SIGCHLD);
	sigaddset(&s->set, SIGINT);
	sigaddset(&s->set, SIGTERM);
	sigaddset(&s->set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &s->set, &s->old_mask) != 0)
		return gp_error(GP_EXIT_SYSTEM, "sigprocmask: %s", strerror(errno));
	return 0;
}

void rec_signals_restore(const struct rec_signals *s)
{
	(void)sigprocmask(SIG_SETMASK, &s->old_mask, NULL);
}

/* Note a stop signal SIG, with SI_CODE saying who sent it: 1 if it was one. */
static int take(struct rec_signals *s, int sig, int si_code)
{
	if (sig != SIGINT && sig != SIGTERM && sig != SIGHUP)
		return 0;
	s->stop_sig = sig;
	s->stop_from_process = si_code == SI_USER || si_code == SI_QUEUE || si_code == SI_TKILL;
	return 1;
}

int rec_signals_wait(struct rec_signals *s, uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
	siginfo_t si;

	if (sigtimedwait(&s->set, &si, &ts) < 0)
		return 0;
	return take(s, si.si_signo, si.si_code);
}

int rec_signals_fd(const struct rec_signals *s)
{
	return signalfd(-1, &s->set, SFD_CLOEXEC | SFD_NONBLOCK);
}

int rec_signals_read_fd(struct rec_signals *s, int fd, int *sigchld)
{
	struct signalfd_siginfo ssi;
	int stop = 0;

	while (read(fd, &ssi, sizeof(ssi)) == (ssize_t)sizeof(ssi)) {
		if (ssi.ssi_signo == SIGCHLD)
			*sigchld = 1;
		else
			stop |= take(s, (int)ssi.ssi_signo, ssi.ssi_code);
	}
	return stop;
}
