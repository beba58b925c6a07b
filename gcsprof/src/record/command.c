// SPDX-License-Identifier: MIT
/*
 * gcsprof record: sample the call chains of every thread of a process
 * tree into a profile file (docs/profile-format.md), by one of two
 * methods (recording.h): perf, where the kernel takes the chains from the
 * GCS and the target never stops, or ptrace, which stops each thread to
 * walk its GCS. This file is the command around them: the options, the
 * choice of method, the file's header, and the launched command's exit
 * status, which record passes through as its own.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gcsprof.h"
#include "clock.h"
#include "recording.h"

/* The methods, in auto's order of preference. */
static const struct rec_method *const methods[] = { &rec_method_perf, &rec_method_ptrace };
#define NMETHODS (sizeof(methods) / sizeof(methods[0]))

/* In the order of enum rec_fallback and enum rec_method_ask. */
static const char *const fallback_choices[] = { "none", "fp", "cfi", NULL };
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
	  "sample threads without a shadow stack (GCS, Zicfiss) with a fallback unwinder "
	  "(labelled)", 0, 0, GP_NAMES(fallback_choices) },
	{ "gcs-tunable", 0, GP_OPT_STRING, OPT(gcs_tunable), NULL,
	  "glibc.cpu.aarch64_gcs for a launched command (riscv64: GCSPROF_SHADOW_STACK, "
	  "with libgcsprof-shstk.so preloaded; default 2)", 0, 0,
	  GP_NAMES(tunable_choices) },
	{ "method", 0, GP_OPT_CHOICE, OPT(method), NULL,
	  "perf: the kernel's call chains from the shadow stack, target never stopped; ptrace: stop "
	  "and walk each thread; auto (default): perf where the kernel can", 0, 0,
	  GP_NAMES(method_choices) },
	{ "mmap-pages", 'm', GP_OPT_UINT, OPT(mmap_pages), "PAGES",
	  "perf method: ring buffer pages per CPU, a power of two (default: room for 0.4 s of "
	  "samples of the deepest chain asked, 128 to 4096)", 1, 65536, NULL, 0 },
	{ "defer", 0, GP_OPT_FLAG, OPT(defer), NULL,
	  "perf method: hold the samples in memory and write them when the recording ends, as "
	  "perf record does (the command loses less CPU time; a recorder killed mid-run keeps none "
	  "of them)", 0, 0, NULL, 0 },
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

static const struct rec_method *method_named(const char *name)
{
	size_t i;

	for (i = 0; i < NMETHODS; i++)
		if (strcmp(methods[i]->name, name) == 0)
			return methods[i];
	return NULL;
}

/*
 * The method to sample with, and its event. --method NAME asks for one
 * and fails where it cannot be had; auto takes the first usable, saying
 * once why it passed one over, unless for a documented choice of options.
 */
static int choose_method(struct recording *rec, const struct rec_method **chosen)
{
	const struct record_opts *o = rec->o;
	const char *why = NULL, *passed = NULL;
	size_t i;
	int quiet = 0, status;

	if (o->method != REC_ASK_AUTO) {
		*chosen = method_named(method_choices[o->method]);
		status = (*chosen)->usable(o, &rec->event, &why, &quiet);
		if (status)
			return gp_error(status, "record: --method %s: %s", (*chosen)->name, why);
		return 0;
	}
	for (i = 0; i < NMETHODS; i++) {
		*chosen = methods[i];
		if (methods[i]->usable(o, &rec->event, &why, &quiet) == 0)
			break;
		if (!passed && !quiet)
			passed = why;
	}
	if (i == NMETHODS)
		return gp_error(GP_EXIT_UNSUPPORTED, "record: no method can record here: %s", why);
	if (passed)
		gp_warn("sampling with %s (%s): %s", (*chosen)->name, (*chosen)->cost, passed);
	return 0;
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

/* The command line checked: the -p operand into REC->pid, or the command. */
static int check_command_line(struct recording *rec, int argc, char **argv)
{
	const struct record_opts *o = rec->o;
	char *end;
	long v;

	if (!o->pid && argc == 0)
		return gp_error(GP_EXIT_USAGE, "record: give a command to run or -p PID");
	if (o->pid && argc > 0)
		return gp_error(GP_EXIT_USAGE, "record: give either -p PID or a command, not both");
	if (o->mmap_pages & (o->mmap_pages - 1))
		return gp_error(GP_EXIT_USAGE, "record: --mmap-pages: %u is not a power of two",
				o->mmap_pages);
	if (!o->pid) {
		rec->argv = argv;
		return 0;
	}
	v = strtol(o->pid, &end, 10);
	if (*end || end == o->pid || v <= 0 || v > INT_MAX)
		return gp_error(GP_EXIT_USAGE, "record: -p: '%s' is not a process id", o->pid);
	rec->pid = (pid_t)v;
	return 0;
}

/* The profile's header (the method's NAME) and the vDSO's symbols. */
static int write_header(struct recording *rec, int argc, const char *name)
{
	char *command = NULL;
	int ret;

	if (rec->pid) {
		if (asprintf(&command, "pid %d", (int)rec->pid) < 0)
			command = NULL;
	} else {
		command = join_command(rec->argv, argc);
	}
	if (!command)
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	ret = rec_out_header(&rec->out, rec->hz, rec->o->wall ? "wall" : "cpu", command, name,
			     rec->event);
	free(command);
	if (!ret)
		ret = rec_vdso_load(&rec->vdso);
	if (!ret)
		ret = rec_out_vdso(&rec->out, &rec->vdso);
	return ret;
}

/*
 * Everything before sampling: the command line checked, the method
 * chosen, the profile's header written, gcsprof's signals blocked. On
 * failure nothing is left open.
 */
static int record_setup(struct recording *rec, int argc, char **argv,
			const struct rec_method **method)
{
	const struct record_opts *o = rec->o;
	struct gcswalk_arch_info arch = { .size = sizeof(arch) };
	int ret = check_command_line(rec, argc, argv);

	if (ret)
		return ret;
	if (gcswalk_system_arch(&arch) != GCSWALK_OK)
		return gp_error(GP_EXIT_UNSUPPORTED, "record: recording needs an arm64 system with "
				"GCS or a riscv64 one with Zicfiss (this is neither)");
	if (gcswalk_system_gcs() != GCSWALK_OK && o->fallback == REC_FALLBACK_NONE)
		return gp_error(GP_EXIT_KERNEL_NO_GCS, "record: this CPU or kernel has no %s (%s)",
				arch.shadow_stack, strcmp(arch.name, "arm64") == 0 ?
					"no HWCAP_GCS in AT_HWCAP" :
					"the kernel gives no shadow stack to user space");
	ret = choose_method(rec, method);
	if (ret)
		return ret;
	if (o->defer && *method != &rec_method_perf)
		gp_warn("--defer: the %s method writes each sample as it takes it", (*method)->name);
	rec->hz = (*method)->rate ? (*method)->rate(o->hz) : o->hz;
	ret = rec_out_open(&rec->out, o->output);
	if (ret)
		return ret;
	ret = write_header(rec, argc, (*method)->name);
	/* On disk at once: a recorder killed before its first write-through
	 * (or holding everything, --defer) still leaves a profile. */
	if (!ret)
		rec_out_flush(&rec->out, rec_now_ns());
	if (!ret)
		ret = rec_signals_block(&rec->sigs);
	if (ret)
		rec_out_discard(&rec->out);
	return ret;
}

/* Wait for the command; a second signal ends gcsprof at once, leaving the
 * command running. */
static void wait_command(struct recording *rec)
{
	struct rec_child *c = &rec->child;

	while (!c->done) {
		int st;
		pid_t w = waitpid(c->pid, &st, WNOHANG);

		if (w == c->pid && (WIFEXITED(st) || WIFSIGNALED(st))) {
			rec_child_exited(c, st);
			break;
		}
		if (w < 0 && errno != EINTR)
			break;
		rec->sigs.stop_sig = 0;
		if (rec_signals_wait(&rec->sigs, 100000000u))
			break;
	}
}

/* The command's own exit status (STOP_SIG: the signal that ended the
 * recording, 0 if none), or RET when it is not 0. */
static int command_status(const struct rec_child *c, int ret, int stop_sig)
{
	if (ret != 0 || !c->pid)
		return ret;
	if (c->done && WIFEXITED(c->status))
		return WEXITSTATUS(c->status);
	if (c->done && WIFSIGNALED(c->status))
		return 128 + WTERMSIG(c->status);
	if (!c->done && stop_sig)
		return 128 + stop_sig;
	return ret;
}

/*
 * After sampling (which returned RET): the file's trailer, the stop
 * signal passed on to the command, the command waited for, and the exit
 * status: the command's own.
 */
static int record_finish(struct recording *rec, int ret)
{
	struct rec_child *c = &rec->child;
	int fret = rec_out_close(&rec->out, rec_now_ns() - rec->start_ns), e;
	int stop_sig = rec->sigs.stop_sig;

	if (!ret)
		ret = fret;
	if (c->pid && !c->done && stop_sig && rec->sigs.stop_from_process)
		/* Someone signalled gcsprof alone: the command gets the same
		 * signal, as both would from the terminal's Ctrl-C. */
		(void)kill(c->pid, stop_sig);
	if (c->pid && !c->done) {
		wait_command(rec);
		stop_sig = rec->sigs.stop_sig;
	}
	if (c->pid && c->done && !c->exec_seen && (e = rec_child_exec_error(c)) != 0)
		return gp_error(e == ENOENT ? GP_EXIT_EXEC : 126, "cannot run %s: %s", rec->argv[0],
				strerror(e));
	return command_status(c, ret, stop_sig);
}

static int record_run(void *p, int argc, char **argv)
{
	const struct rec_method *method = NULL;
	struct recording rec;
	int ret;

	memset(&rec, 0, sizeof(rec));
	rec.o = p;
	rec_child_init(&rec.child);
	ret = record_setup(&rec, argc, argv, &method);
	if (ret) {
		rec_vdso_free(&rec.vdso);
		return ret;
	}
	rec.start_ns = rec_now_ns();
	rec_status_init(&rec.status, rec.o->quiet, rec.start_ns);
	ret = method->run(&rec);
	if (ret && !rec.started)
		/* Nothing recorded yet: leave a valid, empty profile. */
		(void)rec_out_close(&rec.out, rec_now_ns() - rec.start_ns);
	else
		ret = record_finish(&rec, ret);
	method->release(&rec);
	rec_target_free(&rec.target);
	rec_child_free(&rec.child);
	rec_vdso_free(&rec.vdso);
	rec_signals_restore(&rec.sigs);
	return ret;
}

const struct gp_command gp_cmd_record = {
	.name = "record",
	.synopsis = "(-p PID | [--] COMMAND [ARGS...])",
	.summary = "sample the call chains of a process from their shadow stack (GCS, Zicfiss) "
		   "into a profile file",
	.options = record_options,
	.noptions = sizeof(record_options) / sizeof(record_options[0]),
	.min_args = 0,
	.max_args = -1,
	.stop_at_operand = 1,
	.run = record_run,
	.opts_size = sizeof(struct record_opts),
	.init = record_init,
};
