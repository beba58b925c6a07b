// SPDX-License-Identifier: MIT
/*
 * gcsprof inspect CORE: every thread's chain from its GCS, symbolised with
 * source lines (inspect_chain.c); the fatal signal; and a cross-check of
 * each thread's stack (link register, frame records) against its GCS,
 * reporting where they disagree: the stack was overwritten there
 * (inspect_verify.c). The shadow stack and the register a refused return
 * used go by their architecture's names (arm64: GCS, the link register;
 * riscv64: Zicfiss, t0).
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gcswalk.h>

#include "gcsprof.h"
#include "inspect.h"

struct inspect_opts {
	const char *exe;
	const char *sysroot;
	unsigned max_frames;
};

#define OPT(field) offsetof(struct inspect_opts, field)
static const struct gp_option inspect_options[] = {
	{ "exe", 'e', GP_OPT_STRING, OPT(exe), "FILE",
	  "the crashed program, if not where the core says", 0, 0, NULL, 0 },
	{ "sysroot", 0, GP_OPT_STRING, OPT(sysroot), "DIR",
	  "look for the mapped files under DIR (e.g. the guest's root)", 0, 0, NULL, 0 },
	{ "max-frames", 0, GP_OPT_UINT, OPT(max_frames), "N",
	  "show at most N frames per thread, and say how many more (default: all)", 1, 1u << 30,
	  NULL, 0 },
};
#undef OPT

struct fatal {
	int signo, code;
	uint64_t addr;
	int found;
};

/* The fatal signal the core records (libgcswalk reads its NT_SIGINFO). */
static void read_fatal_signal(const gcswalk_target *t, struct fatal *fs)
{
	struct gcswalk_signal_info si = { .size = sizeof(si) };

	memset(fs, 0, sizeof(*fs));
	if (gcswalk_target_fatal_signal(t, &si) != GCSWALK_OK)
		return;
	fs->signo = si.signo;
	fs->code = si.code;
	fs->addr = si.address;
	fs->found = 1;
}

static const char *signal_name(int sig)
{
	static const char *const names[] = {
		[SIGSEGV] = "SIGSEGV", [SIGBUS] = "SIGBUS", [SIGILL] = "SIGILL",
		[SIGABRT] = "SIGABRT", [SIGFPE] = "SIGFPE", [SIGTRAP] = "SIGTRAP",
		[SIGQUIT] = "SIGQUIT", [SIGKILL] = "SIGKILL", [SIGTERM] = "SIGTERM",
		[SIGSYS] = "SIGSYS", [SIGINT] = "SIGINT",
	};

	if (sig > 0 && (size_t)sig < sizeof(names) / sizeof(names[0]) && names[sig])
		return names[sig];
	return "signal";
}

/* A symbolising target for the core with the executable replaced by EXE. */
static int exe_target(gcswalk_target *core, const char *exe, gcswalk_target **out)
{
	size_t n = gcswalk_target_mapping_count(core), i;
	struct gcswalk_mapping *maps = calloc(n + 1, sizeof(*maps));
	const char *first = NULL;
	char *msg = NULL;
	int ret;

	if (!maps)
		return GCSWALK_E_NOMEM;
	for (i = 0; i < n; i++) {
		if (gcswalk_target_mapping(core, i, &maps[i]) != GCSWALK_OK) {
			free(maps);
			return GCSWALK_E_INVALID;
		}
		if (i == 0)
			first = maps[i].path;
		if (first && strcmp(maps[i].path, first) == 0)
			maps[i].path = exe;
	}
	ret = gcswalk_target_open_mappings(out, gcswalk_target_pid(core), maps, n, &msg);
	free(msg);
	free(maps);
	return ret;
}

/* The core, opened, and a symboliser for it (with --exe, on a target
 * whose executable is that file; with --sysroot, made absolute in
 * *SYSROOT, to free). 0, or an exit status. */
static int open_core(const struct inspect_opts *o, const char *path, gcswalk_target **t,
		     gcswalk_target **symt, gcswalk_symbolizer **sym, char **sysroot)
{
	struct gcswalk_symbolizer_options so = GCSWALK_SYMBOLIZER_OPTIONS_INIT;
	char *msg = NULL;
	int ret;

	if (o->exe && access(o->exe, R_OK) != 0)
		return gp_error(GP_EXIT_INPUT, "inspect: cannot read %s: %s", o->exe, strerror(errno));
	if (access(path, R_OK) != 0)
		return gp_error(errno == EACCES ? GP_EXIT_PERMISSION : GP_EXIT_INPUT,
				"inspect: cannot read %s: %s", path, strerror(errno));
	ret = gcswalk_target_open_core(t, path, &msg);
	if (ret < 0) {
		int st = ret == GCSWALK_E_IO ? GP_EXIT_INPUT : gp_exit_for_gcswalk(ret);

		if (ret == GCSWALK_E_NOT_CORE && gp_looks_like_profile(path))
			ret = gp_error(st, "inspect: %s is a gcsprof profile, not a core dump: read it "
				       "with 'gcsprof report %s'", path, path);
		else
			ret = gp_error(st, "inspect: %s: %s (%s)", path, gcswalk_strerror(ret),
				       msg ? msg : "");
		free(msg);
		return ret;
	}
	if (o->sysroot) {
		ret = gp_sysroot_resolve("inspect", o->sysroot, sysroot);
		if (ret)
			return ret;
	}
	so.sysroot = *sysroot;
	if (o->exe && exe_target(*t, o->exe, symt) != GCSWALK_OK)
		gp_warn("cannot use %s for symbols", o->exe);
	if (gcswalk_symbolizer_new(sym, *symt ? *symt : *t, &so) != GCSWALK_OK)
		gp_warn("no symbols: %s", gcswalk_target_errmsg(*symt ? *symt : *t));
	return 0;
}

/* The words for T's architecture, in C. */
static void set_words(gcswalk_target *t, struct inspect_chain *c)
{
	struct gcswalk_arch_info arch = { .size = sizeof(arch) };

	c->ss = "GCS";
	c->feature = "GCS";
	c->ret_reg = "the link register";
	if (gcswalk_target_arch(t, &arch) == GCSWALK_OK && strcmp(arch.name, "arm64") != 0) {
		c->ss = "shadow stack";
		c->feature = arch.shadow_stack;
		/* GCC's riscv epilogues check the saved return in t0. */
		c->ret_reg = "t0 (the return address sspopchk checked)";
	}
}

/* The core's first lines: the process, its threads, the fatal signal. */
static void print_header(FILE *f, const char *path, gcswalk_target *t,
			 const struct inspect_chain *c)
{
	size_t n = gcswalk_target_thread_count(t);
	struct fatal fs;

	read_fatal_signal(t, &fs);
	fprintf(f, "core %s: process %d, %zu thread%s\n", path, gcswalk_target_pid(t), n,
		n == 1 ? "" : "s");
	if (!fs.found)
		return;
	fprintf(f, "fatal signal: %d (%s)", fs.signo, signal_name(fs.signo));
	if (fs.signo == SIGSEGV && fs.code == GCSWALK_SEGV_CPERR)
		fprintf(f, " from a %s check (SEGV_CPERR): a return address did not match the %s",
			c->feature, c->ss);
	fprintf(f, ", code %d, address 0x%" PRIx64 "\n", fs.code, fs.addr);
}

/* Thread I: its chain, and its stack checked. *CORRUPT is set if the
 * check found corruption. 0, or an exit status. */
static int inspect_thread(FILE *f, const struct inspect_opts *o, gcswalk_target *t, size_t i,
			  gcswalk_symbolizer *sym, struct inspect_chain *c, int *corrupt)
{
	struct gcswalk_thread_info info;
	int status;

	if (gcswalk_target_thread(t, i, &info) != GCSWALK_OK)
		return 0;
	fprintf(f, "\nthread %d%s%s%s%s:\n", info.tid, info.name ? " (" : "",
		info.name ? info.name : "", info.name ? ")" : "",
		i == 0 ? ", the one that received the signal" : "");
	if (inspect_walk(t, i, sym, c, &status) != 0)
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	if (status < 0) {
		fprintf(f, "  no %s chain: %s (%s)\n", c->feature, gcswalk_strerror(status),
			gcswalk_target_errmsg(t));
		return 0;
	}
	inspect_print_chain(f, sym, c, o->max_frames);
	if (status == GCSWALK_CUT)
		fprintf(f, "  ... the chain goes deeper than %zu frames\n", INSPECT_ALL_FRAMES);
	*corrupt |= inspect_check_thread(f, t, i, sym, c);
	return 0;
}

static int inspect_run(void *p, int argc, char **argv)
{
	const struct inspect_opts *o = p;
	gcswalk_target *t = NULL, *symt = NULL;
	gcswalk_symbolizer *sym = NULL;
	struct inspect_chain chain = { 0 };
	struct gp_out out;
	char *sysroot = NULL;
	size_t i, n;
	int ret, corrupt = 0;

	(void)argc;
	ret = open_core(o, argv[0], &t, &symt, &sym, &sysroot);
	if (!ret)
		ret = gp_out_open(&out, NULL);
	if (ret)
		goto done;
	set_words(t, &chain);
	print_header(out.fp, argv[0], t, &chain);
	n = gcswalk_target_thread_count(t);
	for (i = 0; i < n && !ret; i++)
		ret = inspect_thread(out.fp, o, t, i, sym, &chain, &corrupt);
	if (ret)
		(void)gp_out_close(&out);
	else {
		if (corrupt)
			fprintf(out.fp, "\nverdict: STACK CORRUPTION (above). The chains come from the "
					"%s, which the overwritten stack cannot change: they are the "
					"true call chains.\n", chain.ss);
		else
			fprintf(out.fp, "\nverdict: no stack corruption found\n");
		ret = gp_out_close(&out);
	}
done:
	free(sysroot);
	inspect_chain_free(&chain);
	gcswalk_symbolizer_free(sym);
	gcswalk_target_close(symt);
	gcswalk_target_close(t);
	return ret;
}

const struct gp_command gp_cmd_inspect = {
	.name = "inspect",
	.synopsis = "CORE",
	.summary = "show every thread's call chain from a core dump's GCS and find stack corruption",
	.options = inspect_options,
	.noptions = sizeof(inspect_options) / sizeof(inspect_options[0]),
	.min_args = 1,
	.max_args = 1,
	.run = inspect_run,
	.opts_size = sizeof(struct inspect_opts),
	.init = NULL,
};
