// SPDX-License-Identifier: MIT
/* gcsprof status PID: each thread's shadow-stack state (arm64's GCS,
 * riscv64's Zicfiss), through a short ptrace stop (libgcswalk seizes,
 * reads, and detaches), and the method record would use. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <gcswalk.h>

#include "gcsprof.h"
#include "record/recording.h"

struct status_opts {
	int unused;
};

/* How deep thread I's chain is: its return entries, or -1 (no walk). */
static long chain_depth(gcswalk_target *t, size_t i)
{
	struct gcswalk_frame f;
	gcswalk_walk *w = NULL;
	long depth = 0;

	if (gcswalk_walk_begin(&w, t, i, NULL) != GCSWALK_OK)
		return -1;
	while (gcswalk_walk_next(w, &f) == GCSWALK_OK)
		if (f.kind == GCSWALK_FRAME_RETURN || f.kind == GCSWALK_FRAME_SIGRETURN)
			depth++;
	gcswalk_walk_free(w);
	return depth;
}

static const char *on_off(uint64_t bits, uint64_t bit)
{
	return bits & bit ? "on" : "off";
}

/*
 * One thread's line. The columns are the architecture's: arm64's GCS
 * modes (push, write), riscv64's landing pads (Zicfilp) beside its
 * shadow stack (Zicfiss); the pointer is GCSPR_EL0 or ssp.
 */
static void print_thread(FILE *fp, gcswalk_target *t, size_t i, const struct gcswalk_arch_info *a)
{
	struct gcswalk_thread_info info;
	int riscv = strcmp(a->name, "riscv64") == 0;
	long depth;

	if (gcswalk_target_thread(t, i, &info) != GCSWALK_OK)
		return;
	if (!info.have_gcs) {
		fprintf(fp, "%8d  %-16s no %s state (kernel without %s)\n", info.tid,
			info.name ? info.name : "?", a->shadow_stack, a->shadow_stack);
		return;
	}
	depth = chain_depth(t, i);
	fprintf(fp, "%8d  %-16s %-*s %-6s ", info.tid, info.name ? info.name : "?",
		riscv ? 7 : 4, on_off(info.gcs.features_enabled, GCSWALK_GCS_ENABLE),
		(riscv ? info.gcs.features_locked & GCSWALK_GCS_ENABLE : info.gcs.features_locked) ?
			"yes" : "no");
	if (riscv)
		fprintf(fp, "%-12s ", on_off(info.gcs.features_enabled, GCSWALK_LANDING_PADS));
	else
		fprintf(fp, "%-5s %-5s ", on_off(info.gcs.features_enabled, GCSWALK_GCS_PUSH),
			on_off(info.gcs.features_enabled, GCSWALK_GCS_WRITE));
	fprintf(fp, "0x%016" PRIx64 " ", info.gcs.gcspr);
	if (depth >= 0)
		fprintf(fp, "%ld\n", depth);
	else
		fprintf(fp, "-\n");
}

static int status_run(void *p, int argc, char **argv)
{
	struct gcswalk_arch_info a = { .size = sizeof(a) };
	gcswalk_target *t = NULL;
	const struct record_opts record_defaults = { 0 };
	const char *why = NULL, *event = NULL;
	char *msg = NULL, *end;
	struct gp_out out;
	long pid;
	size_t i, n;
	int ret, quiet;

	(void)p;
	(void)argc;
	pid = strtol(argv[0], &end, 10);
	if (*end || end == argv[0] || pid <= 0 || pid > 0x7fffffff)
		return gp_error(GP_EXIT_USAGE, "status: '%s' is not a process id", argv[0]);
	if (gcswalk_system_arch(&a) != GCSWALK_OK)
		return gp_error(GP_EXIT_UNSUPPORTED,
				"status: needs an arm64 or riscv64 system (this is neither)");
	ret = gcswalk_target_open_pid(&t, (int)pid, GCSWALK_ATTACH_SEIZE, 0, &msg);
	if (ret < 0) {
		ret = gp_error(gp_exit_for_gcswalk(ret), "status: %s: %s", gcswalk_strerror(ret),
			       msg ? msg : "");
		free(msg);
		return ret;
	}
	ret = gp_out_open(&out, NULL);
	if (ret) {
		gcswalk_target_close(t);
		return ret;
	}
	fprintf(out.fp, "process %ld", pid);
	if (gcswalk_system_gcs() != GCSWALK_OK)
		fprintf(out.fp, " (this CPU or kernel has no %s)", a.shadow_stack);
	fputc('\n', out.fp);
	if (strcmp(a.name, "riscv64") == 0)
		fprintf(out.fp, "%8s  %-16s %-7s %-6s %-12s %-18s %s\n", "tid", "name", "zicfiss",
			"locked", "landing-pads", "ssp", "depth");
	else
		fprintf(out.fp, "%8s  %-16s %-4s %-6s %-5s %-5s %-18s %s\n", "tid", "name", "gcs",
			"locked", "push", "write", "gcspr", "depth");
	n = gcswalk_target_thread_count(t);
	for (i = 0; i < n; i++)
		print_thread(out.fp, t, i, &a);
	gcswalk_target_close(t);
	/* What record's auto would choose, with the default options. */
	if (rec_method_perf.usable(&record_defaults, &event, &why, &quiet) == 0)
		fprintf(out.fp, "record would sample with perf (%s event): the kernel takes the "
			"chains from the %s, the target is never stopped\n", event, a.shadow_stack);
	else
		fprintf(out.fp, "record would sample with %s (%s): %s\n", rec_method_ptrace.name,
			rec_method_ptrace.cost, why);
	return gp_out_close(&out);
}

const struct gp_command gp_cmd_status = {
	.name = "status",
	.synopsis = "PID",
	.summary = "show the shadow-stack state (GCS, Zicfiss) of each thread of a process",
	.options = NULL,
	.noptions = 0,
	.min_args = 1,
	.max_args = 1,
	.run = status_run,
	.opts_size = sizeof(struct status_opts),
	.init = NULL,
};
