// SPDX-License-Identifier: MIT
/*
 * gcsprof record: sample every thread of a process tree through ptrace and
 * libgcswalk.
 *
 * The target is seized (PTRACE_SEIZE) with clone, fork, vfork and exec
 * events, so that threads and processes created later are traced too. At
 * each tick the threads to sample (running ones; all of them with --wall)
 * are interrupted with PTRACE_INTERRUPT; when they have stopped, each
 * stopped thread's chain is taken from its GCS through the process's
 * libgcswalk target (GCSWALK_ATTACH_STOPPED: the library only reads; one
 * per process, refreshed per sample, see record_sample.c), the process's
 * new file mappings are written with their build-ids, and the threads are
 * resumed. Every other stop is passed straight through:
 * signals are delivered, group-stops stay stopped (PTRACE_LISTEN), so the
 * target behaves as it would untraced.
 *
 * Signals for gcsprof itself (SIGCHLD, SIGINT, SIGTERM, SIGHUP) are
 * blocked and taken synchronously with sigtimedwait(), which also times
 * the ticks: no handlers, no global state.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "record.h"

static const char *const fallback_choices[] = { "none", "fp", "cfi", NULL };
static const char *const tunable_choices[] = { "0", "1", "2", "3", NULL };

#define OPT(field) offsetof(struct record_opts, field)
static const struct gp_option record_options[] = {
	{ "freq", 'F', GP_OPT_UINT, OPT(hz), "HZ", "samples per second per thread (default 99)",
	  1, 10000, NULL },
	{ "output", 'o', GP_OPT_STRING, OPT(output), "FILE", "profile file (default gcsprof.data)",
	  0, 0, NULL },
	{ "wall", 0, GP_OPT_FLAG, OPT(wall), NULL,
	  "sample every thread whatever its state (wall-clock profile)", 0, 0, NULL },
	{ "pid", 'p', GP_OPT_STRING, OPT(pid), "PID", "attach to a running process", 0, 0, NULL },
	{ "fallback", 0, GP_OPT_STRING, OPT(fallback), "none|fp|cfi",
	  "sample threads without GCS with a fallback unwinder (labelled)", 0, 0,
	  fallback_choices },
	{ "gcs-tunable", 0, GP_OPT_STRING, OPT(gcs_tunable), "0-3",
	  "glibc.cpu.aarch64_gcs for a launched command (default 2)", 0, 0, tunable_choices },
	{ "quiet", 'q', GP_OPT_FLAG, OPT(quiet), NULL, "no status line", 0, 0, NULL },
};
#undef OPT

static void record_init(void *p)
{
	struct record_opts *o = p;

	o->hz = 99;
	o->output = "gcsprof.data";
	o->fallback = "none";
	o->gcs_tunable = "2";
}

/* ---- Status line ---------------------------------------------------- */

static void status_line(struct recorder *r, uint64_t now, int final)
{
	double secs = (double)(now - r->start_ns) / 1e9;

	if (!r->tty)
		return;
	if (final) {
		fputs("\r\033[K", stderr);
		return;
	}
	if (now - r->last_status_ns < 250000000u)
		return;
	r->last_status_ns = now;
	fprintf(stderr, "\r\033[Kgcsprof: %.1f s, %llu samples, %zu threads, %.0f samples/s", secs,
		(unsigned long long)r->nsamples, rec_live_threads(r),
		secs > 0 ? (double)r->nsamples / secs : 0.0);
}

/* ---- The command ---------------------------------------------------- */

/*
 * The time to the next tick: exponentially distributed around the period
 * (ticks as a Poisson process, cut at 4 periods), so that ticks never run
 * in step with a periodic target, which would give some code paths more
 * samples than their share of the time. This matters most when taking a
 * sample costs more than a period (under emulation): the target then runs
 * only between samples, and a fixed gap would alias with its loops.
 */
static uint64_t next_interval(struct recorder *r, uint64_t period)
{
	double u, t;

	r->rng ^= r->rng << 13;
	r->rng ^= r->rng >> 7;
	r->rng ^= r->rng << 17;
	u = ((double)(r->rng >> 11) + 1.0) / 9007199254740993.0;   /* (0, 1] */
	t = -log(u);
	if (t > 4.0)
		t = 4.0;
	return (uint64_t)(t * (double)period) + 1;
}

static int finish_file(struct recorder *r)
{
	uint64_t nmappings = r->nseen;
	size_t i;
	int ret = 0;

	for (i = 0; i < LOST_NLOST; i++)
		r->lost[i].reason = (char *)rec_lost_names[i];
	if (!r->write_failed &&
	    gp_profile_write_trailer(r->out, rec_now_ns() - r->start_ns, r->lost, LOST_NLOST,
				     r->nsamples, nmappings) != 0)
		rec_write_failed(r);
	if (fclose(r->out) != 0 && !r->write_failed)
		rec_write_failed(r);
	r->out = NULL;
	if (r->write_failed)
		ret = GP_EXIT_OUTPUT;
	return ret;
}

static char *join_command(char **argv, int argc)
{
	size_t len = 1;
	char *s;
	int i;

	for (i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = malloc(len);
	if (!s)
		return NULL;
	s[0] = '\0';
	for (i = 0; i < argc; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

static int record_run(void *p, int argc, char **argv)
{
	const struct record_opts *o = p;
	struct recorder r;
	sigset_t old_mask;
	char *command = NULL;
	pid_t pid = 0;
	int ret = 0, stop_sig = 0, i;
	uint64_t period, next;

	memset(&r, 0, sizeof(r));
	r.o = o;
	r.exec_err_fd = -1;
	if (!o->pid && argc == 0)
		return gp_error(GP_EXIT_USAGE, "record: give a command to run or -p PID");
	if (o->pid && argc > 0)
		return gp_error(GP_EXIT_USAGE, "record: give either -p PID or a command, not both");
	if (o->pid) {
		char *end;
		long v = strtol(o->pid, &end, 10);

		if (*end || end == o->pid || v <= 0 || v > INT_MAX)
			return gp_error(GP_EXIT_USAGE, "record: -p: '%s' is not a process id", o->pid);
		pid = (pid_t)v;
	}
#if !defined(__aarch64__)
	(void)ret;
	return gp_error(GP_EXIT_UNSUPPORTED,
			"record: recording needs an arm64 system with GCS (this is not arm64)");
#endif
	if (!gp_kernel_has_gcs() && strcmp(o->fallback, "none") == 0)
		return gp_error(GP_EXIT_KERNEL_NO_GCS,
				"record: this CPU or kernel has no GCS (no HWCAP_GCS in AT_HWCAP)");
	r.out_path = o->output;
	r.out = fopen(o->output, "w");
	if (!r.out)
		return gp_error(GP_EXIT_OUTPUT, "cannot write %s: %s", o->output, strerror(errno));
	command = o->pid ? NULL : join_command(argv, argc);
	if (o->pid && asprintf(&command, "pid %d", (int)pid) < 0)
		command = NULL;
	if (!command) {
		fclose(r.out);
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	}
	if (gp_profile_write_header(r.out, o->hz, o->wall ? "wall" : "cpu", command) != 0) {
		free(command);
		rec_write_failed(&r);
		fclose(r.out);
		return GP_EXIT_OUTPUT;
	}
	free(command);
	r.tty = !o->quiet && isatty(STDERR_FILENO);
	sigemptyset(&r.sigs);
	sigaddset(&r.sigs, SIGCHLD);
	sigaddset(&r.sigs, SIGINT);
	sigaddset(&r.sigs, SIGTERM);
	sigaddset(&r.sigs, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &r.sigs, &old_mask) != 0) {
		fclose(r.out);
		return gp_error(GP_EXIT_SYSTEM, "sigprocmask: %s", strerror(errno));
	}
	r.start_ns = rec_now_ns();
	ret = o->pid ? rec_attach_pid(&r, pid) : rec_launch(&r, argv, &old_mask);
	if (ret == 0 && o->pid)
		ret = rec_check_target_gcs(&r, pid);
	if (ret) {
		/* Nothing recorded yet: leave a valid, empty profile. */
		rec_detach_all(&r);
		(void)finish_file(&r);
		goto out;
	}

	period = 1000000000u / o->hz;
	r.rng = rec_now_ns() | 1;
	next = rec_now_ns() + next_interval(&r, period);
	for (;;) {
		uint64_t now;

		ret = rec_drain_events(&r);
		if (ret || r.write_failed || stop_sig)
			break;
		if (r.child ? r.child_done : rec_live_threads(&r) == 0)
			break;
		now = rec_now_ns();
		status_line(&r, now, 0);
		if (now >= next) {
			ret = rec_sample_round(&r, &stop_sig);
			if (ret)
				break;
			/* Late (the round took longer than the gap): skip the
			 * missed ticks and count the next gap from now, after
			 * the round, so the target always runs for a whole gap
			 * between two samples. Counted from before the round,
			 * an expensive sample would be followed at once by the
			 * next, and the two would land next to each other. */
			next += next_interval(&r, period);
			now = rec_now_ns();
			if (next < now)
				next = now + next_interval(&r, period);
			continue;
		}
		if (rec_wait_signal(&r, next - now, &stop_sig))
			break;
	}
	status_line(&r, rec_now_ns(), 1);
	rec_detach_all(&r);
	rec_report_no_gcs(&r);
	i = finish_file(&r);
	if (!ret)
		ret = i;
	if (r.child && !r.child_done && stop_sig && r.stop_from_process)
		/* Someone signalled gcsprof alone: the command gets the same
		 * signal, as both would from the terminal's Ctrl-C. */
		(void)kill(r.child, stop_sig);
	if (r.child && !r.child_done) {
		/* Wait for the command; a second signal ends gcsprof at once,
		 * leaving the command running. */
		for (;;) {
			int st;
			pid_t w = waitpid(r.child, &st, WNOHANG);

			if (w == r.child && (WIFEXITED(st) || WIFSIGNALED(st))) {
				r.child_done = 1;
				r.child_status = st;
				break;
			}
			if (w < 0 && errno != EINTR)
				break;
			stop_sig = 0;
			if (rec_wait_signal(&r, 100000000u, &stop_sig))
				break;
		}
	}
	if (r.child && r.child_done && !r.exec_seen) {
		int e = 0;

		if (read(r.exec_err_fd, &e, sizeof(e)) == (ssize_t)sizeof(e) && e) {
			ret = gp_error(e == ENOENT ? GP_EXIT_EXEC : 126, "cannot run %s: %s", argv[0],
				       strerror(e));
			goto out;
		}
	}
	if (ret == 0 && r.child && r.child_done) {
		if (WIFEXITED(r.child_status))
			ret = WEXITSTATUS(r.child_status);
		else if (WIFSIGNALED(r.child_status))
			ret = 128 + WTERMSIG(r.child_status);
	} else if (ret == 0 && r.child && stop_sig)
		ret = 128 + stop_sig;
out:
	if (r.exec_err_fd >= 0)
		close(r.exec_err_fd);
	for (i = 0; (size_t)i < r.nseen; i++)
		free(r.seen[i].path);
	free(r.seen);
	for (i = 0; (size_t)i < r.nthreads; i++)
		rec_thread_release(&r.threads[i]);
	free(r.threads);
	for (i = 0; (size_t)i < r.nprocs; i++) {
		rec_process_release(&r.procs[i]);
		free(r.procs[i].name);
	}
	free(r.procs);
	free(r.frames);
	(void)sigprocmask(SIG_SETMASK, &old_mask, NULL);
	return ret;
}

const struct gp_command gp_cmd_record = {
	.name = "record",
	.synopsis = "[-F HZ] [-o FILE] [--wall] [--fallback fp|cfi] (-p PID | [--] COMMAND [ARGS...])",
	.summary = "sample the call chains of a process from their GCS into a profile file",
	.options = record_options,
	.noptions = sizeof(record_options) / sizeof(record_options[0]),
	.min_args = 0,
	.max_args = -1,
	.stop_at_operand = 1,
	.run = record_run,
	.opts_size = sizeof(struct record_opts),
	.init = record_init,
};

