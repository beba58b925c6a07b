// SPDX-License-Identifier: MIT
/*
 * gcsprof record: sample the call chains of every thread of a process
 * tree into a profile file (docs/profile-format.md), by one of two
 * methods (record.h): perf, where the kernel takes the chains from the
 * GCS and the target never stops, or ptrace, which stops each thread to
 * walk its GCS. This file is the command around them: the options, the
 * choice of method, the file's header and trailer, and the launched
 * command's exit status, which record passes through as its own.
 *
 * Signals for gcsprof itself (SIGCHLD, SIGINT, SIGTERM, SIGHUP) are
 * blocked and taken synchronously (sigtimedwait, or a signalfd for the
 * perf method): no handlers, no global state.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "record.h"

/* In the order of enum rec_fallback and enum rec_method_opt. */
const char *const rec_fallback_names[] = { "none", "fp", "cfi", NULL };
static const char *const method_choices[] = { "auto", "perf", "ptrace", NULL };
static const char *const tunable_choices[] = { "0", "1", "2", "3", NULL };

#define OPT(field) offsetof(struct record_opts, field)
static const struct gp_option record_options[] = {
	{ "freq", 'F', GP_OPT_UINT, OPT(hz), "HZ", "samples per second of CPU time, per thread (default 99)",
	  1, 10000, NULL, 0 },
	{ "output", 'o', GP_OPT_STRING, OPT(output), "FILE", "profile file (default gcsprof.data)",
	  0, 0, NULL, 0 },
	{ "wall", 0, GP_OPT_FLAG, OPT(wall), NULL,
	  "sample every thread whatever its state (wall-clock profile)", 0, 0, NULL, 0 },
	{ "pid", 'p', GP_OPT_STRING, OPT(pid), "PID", "attach to a running process", 0, 0, NULL, 0 },
	{ "fallback", 0, GP_OPT_CHOICE, OPT(fallback), NULL,
	  "sample threads without GCS with a fallback unwinder (labelled)", 0, 0,
	  GP_NAMES(rec_fallback_names) },
	{ "gcs-tunable", 0, GP_OPT_STRING, OPT(gcs_tunable), NULL,
	  "glibc.cpu.aarch64_gcs for a launched command (riscv64: GCSPROF_SHADOW_STACK, "
	  "with libgcsprof-shstk.so preloaded; default 2)", 0, 0,
	  GP_NAMES(tunable_choices) },
	{ "method", 0, GP_OPT_CHOICE, OPT(method), NULL,
	  "perf: the kernel's GCS call chains, target never stopped; ptrace: stop and walk each "
	  "thread; auto (default): perf where the kernel can", 0, 0, GP_NAMES(method_choices) },
	{ "mmap-pages", 'm', GP_OPT_UINT, OPT(mmap_pages), "PAGES",
	  "perf method: ring buffer pages per CPU, a power of two (default 128)", 1, 65536, NULL, 0 },
	{ "quiet", 'q', GP_OPT_FLAG, OPT(quiet), NULL, "no status line", 0, 0, NULL, 0 },
};
#undef OPT

static void record_init(void *p)
{
	struct record_opts *o = p;

	o->hz = 99;
	o->output = "gcsprof.data";
	o->fallback = REC_FALLBACK_NONE;
	o->gcs_tunable = "2";
	o->method = REC_ASK_AUTO;
}

/*
 * The method to sample with, and the event for perf. --method perf asks
 * for it and fails where it cannot be had; auto takes it where the kernel
 * gives GCS call chains, and says once why not when it looked usable.
 */
static int choose_method(const struct record_opts *o, enum rec_method *method,
			 const char **event)
{
	const char *why = NULL;
	int asked = o->method == REC_ASK_PERF, quiet_fallback = 0;
	int status = GP_EXIT_UNSUPPORTED;

	*method = REC_METHOD_PTRACE;
	*event = NULL;
	if (o->method == REC_ASK_PTRACE)
		return 0;
	if (o->wall) {
		why = "perf samples threads only while they run, so --wall needs --method ptrace";
		quiet_fallback = 1;
	} else if (o->fallback == REC_FALLBACK_CFI) {
		why = "the kernel unwinds threads without GCS by frame records only, so "
		      "--fallback cfi needs --method ptrace";
		quiet_fallback = 1;
	} else if ((status = rec_perf_usable(&why, event)) == 0) {
		*method = REC_METHOD_PERF;
		return 0;
	}
	if (asked)
		return gp_error(quiet_fallback ? GP_EXIT_UNSUPPORTED : status,
				"record: --method perf: %s", why);
	if (!quiet_fallback)
		gp_warn("sampling with ptrace (every sample stops the target): %s", why);
	return 0;
}

/* ---- Status line ---------------------------------------------------- */

void rec_status_line(struct recorder *r, uint64_t now, size_t threads, int final)
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
		(unsigned long long)r->nsamples, threads,
		secs > 0 ? (double)r->nsamples / secs : 0.0);
}

void rec_flush_file(struct recorder *r, uint64_t now)
{
	if (r->write_failed || now - r->last_flush_ns < 100000000u)
		return;
	r->last_flush_ns = now;
	if (fflush(r->out) != 0)
		rec_write_failed(r);
}

/* ---- The command ---------------------------------------------------- */

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

/* The -p operand, checked. */
static int parse_pid(const char *arg, pid_t *pid)
{
	char *end;
	long v = strtol(arg, &end, 10);

	if (*end || end == arg || v <= 0 || v > INT_MAX)
		return gp_error(GP_EXIT_USAGE, "record: -p: '%s' is not a process id", arg);
	*pid = (pid_t)v;
	return 0;
}

/*
 * Everything before sampling: the command line checked, the method
 * chosen, the profile's header written, gcsprof's signals blocked (saved
 * in *OLD_MASK). On failure nothing is left open.
 */
static int record_setup(struct recorder *r, int argc, char **argv, pid_t *pid,
			sigset_t *old_mask)
{
	const struct record_opts *o = r->o;
	struct gcswalk_arch_info arch = { .size = sizeof(arch) };
	const char *event = NULL;
	char *command;
	int ret;

	if (!o->pid && argc == 0)
		return gp_error(GP_EXIT_USAGE, "record: give a command to run or -p PID");
	if (o->pid && argc > 0)
		return gp_error(GP_EXIT_USAGE, "record: give either -p PID or a command, not both");
	if (o->mmap_pages & (o->mmap_pages - 1))
		return gp_error(GP_EXIT_USAGE, "record: --mmap-pages: %u is not a power of two",
				o->mmap_pages);
	if (o->pid && (ret = parse_pid(o->pid, pid)) != 0)
		return ret;
	if (gcswalk_system_arch(&arch) != GCSWALK_OK)
		return gp_error(GP_EXIT_UNSUPPORTED, "record: recording needs an arm64 system with "
				"GCS or a riscv64 one with Zicfiss (this is neither)");
	if (gcswalk_system_gcs() != GCSWALK_OK && o->fallback == REC_FALLBACK_NONE)
		return gp_error(GP_EXIT_KERNEL_NO_GCS, "record: this CPU or kernel has no %s (%s)",
				arch.shadow_stack, strcmp(arch.name, "arm64") == 0 ?
					"no HWCAP_GCS in AT_HWCAP" :
					"the kernel gives no shadow stack to user space");
	ret = choose_method(o, &r->method, &event);
	if (ret)
		return ret;
	r->event = event;
	r->hz = o->hz;
	if (r->method == REC_METHOD_PERF) {
		int max_hz = gcswalk_system_perf_max_sample_rate();

		if (max_hz > 0 && r->hz > (unsigned)max_hz) {
			/* perf_event_open would refuse it with a bare EINVAL. */
			gp_warn("-F %u is above kernel.perf_event_max_sample_rate (%d; the kernel "
				"lowers it when sampling takes long): sampling at %d Hz", r->hz,
				max_hz, max_hz);
			r->hz = (unsigned)max_hz;
		}
	}
	r->out_path = o->output;
	r->out = fopen(o->output, "w");
	if (!r->out)
		return gp_error(GP_EXIT_OUTPUT, "cannot write %s: %s", o->output, strerror(errno));
	command = o->pid ? NULL : join_command(argv, argc);
	if (o->pid && asprintf(&command, "pid %d", (int)*pid) < 0)
		command = NULL;
	if (!command)
		ret = gp_error(GP_EXIT_SYSTEM, "out of memory");
	else if (gp_profile_write_header(r->out, r->hz, o->wall ? "wall" : "cpu", command,
					 r->method == REC_METHOD_PERF ? "perf" : "ptrace",
					 event) != 0)
		ret = (rec_write_failed(r), GP_EXIT_OUTPUT);
	free(command);
	if (!ret && rec_vdso_load(&r->vdso) != 0)
		ret = GP_EXIT_SYSTEM;
	if (!ret && rec_vdso_write(r->out, &r->vdso) != 0)
		ret = (rec_write_failed(r), GP_EXIT_OUTPUT);
	if (!ret) {
		r->tty = !o->quiet && isatty(STDERR_FILENO);
		sigemptyset(&r->sigs);
		sigaddset(&r->sigs, SIGCHLD);
		sigaddset(&r->sigs, SIGINT);
		sigaddset(&r->sigs, SIGTERM);
		sigaddset(&r->sigs, SIGHUP);
		if (sigprocmask(SIG_BLOCK, &r->sigs, old_mask) != 0)
			ret = gp_error(GP_EXIT_SYSTEM, "sigprocmask: %s", strerror(errno));
	}
	if (ret) {
		fclose(r->out);
		r->out = NULL;
	}
	return ret;
}

/*
 * After sampling (which returned RET, and STOP_SIG if a signal ended it):
 * the file's trailer, the stop signal passed on to the command, the
 * command waited for, and the exit status: the command's own.
 */
static int record_finish(struct recorder *r, int ret, int stop_sig, char **argv)
{
	int fret = finish_file(r);

	if (!ret)
		ret = fret;
	if (r->child && !r->child_done && stop_sig && r->stop_from_process)
		/* Someone signalled gcsprof alone: the command gets the same
		 * signal, as both would from the terminal's Ctrl-C. */
		(void)kill(r->child, stop_sig);
	if (r->child && !r->child_done) {
		/* Wait for the command; a second signal ends gcsprof at once,
		 * leaving the command running. */
		for (;;) {
			int st;
			pid_t w = waitpid(r->child, &st, WNOHANG);

			if (w == r->child && (WIFEXITED(st) || WIFSIGNALED(st))) {
				r->child_done = 1;
				r->child_status = st;
				break;
			}
			if (w < 0 && errno != EINTR)
				break;
			stop_sig = 0;
			if (rec_wait_signal(r, 100000000u, &stop_sig))
				break;
		}
	}
	if (r->child && r->child_done && !r->exec_seen) {
		int e = 0;

		if (read(r->exec_err_fd, &e, sizeof(e)) == (ssize_t)sizeof(e) && e)
			return gp_error(e == ENOENT ? GP_EXIT_EXEC : 126, "cannot run %s: %s",
					argv[0], strerror(e));
	}
	if (ret == 0 && r->child && r->child_done) {
		if (WIFEXITED(r->child_status))
			ret = WEXITSTATUS(r->child_status);
		else if (WIFSIGNALED(r->child_status))
			ret = 128 + WTERMSIG(r->child_status);
	} else if (ret == 0 && r->child && stop_sig) {
		ret = 128 + stop_sig;
	}
	return ret;
}

static void record_release(struct recorder *r)
{
	size_t i;

	if (r->exec_err_fd >= 0)
		close(r->exec_err_fd);
	for (i = 0; i < r->nseen; i++)
		free(r->seen[i].path);
	free(r->seen);
	free(r->seen_index);
	rec_perf_release(r);
	rec_ptrace_release(r);
	rec_vdso_free(&r->vdso);
	free(r->frames);
}

static int record_run(void *p, int argc, char **argv)
{
	struct recorder r;
	sigset_t old_mask;
	pid_t pid = 0;
	int ret, stop_sig = 0;

	memset(&r, 0, sizeof(r));
	r.o = p;
	r.exec_err_fd = -1;
	ret = record_setup(&r, argc, argv, &pid, &old_mask);
	if (ret)
		return ret;
	r.start_ns = rec_now_ns();
	if (r.method == REC_METHOD_PERF)
		ret = rec_perf_run(&r, pid, argv, &old_mask, &stop_sig);
	else
		ret = rec_ptrace_run(&r, pid, argv, &old_mask, &stop_sig);
	if (ret && !r.started)
		/* Nothing recorded yet: leave a valid, empty profile. */
		(void)finish_file(&r);
	else
		ret = record_finish(&r, ret, stop_sig, argv);
	record_release(&r);
	(void)sigprocmask(SIG_SETMASK, &old_mask, NULL);
	return ret;
}

const struct gp_command gp_cmd_record = {
	.name = "record",
	.synopsis = "(-p PID | [--] COMMAND [ARGS...])",
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

