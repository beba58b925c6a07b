// SPDX-License-Identifier: MIT
/* gcsprof status PID: each thread's GCS state, through a short ptrace
 * stop (libgcswalk seizes, reads, and detaches), and the method record
 * would use. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <gcswalk.h>

#include "gcsprof.h"
#include "record/recording.h"

struct status_opts {
	int unused;
};

static int status_run(void *p, int argc, char **argv)
{
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
#if !defined(__aarch64__)
	return gp_error(GP_EXIT_UNSUPPORTED, "status: needs an arm64 system (this is not arm64)");
#endif
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
	fprintf(out.fp, "process %ld%s\n", pid,
		gcswalk_system_gcs() == GCSWALK_OK ? "" : " (this CPU or kernel has no GCS)");
	fprintf(out.fp, "%8s  %-16s %-4s %-6s %-5s %-5s %-18s %s\n", "tid", "name", "gcs",
		"locked", "push", "write", "gcspr", "depth");
	n = gcswalk_target_thread_count(t);
	for (i = 0; i < n; i++) {
		struct gcswalk_thread_info info;
		gcswalk_walk *w = NULL;
		struct gcswalk_frame f;
		size_t depth = 0;
		int r;

		if (gcswalk_target_thread(t, i, &info) != GCSWALK_OK)
			continue;
		if (!info.have_gcs) {
			fprintf(out.fp, "%8d  %-16s %s\n", info.tid, info.name ? info.name : "?",
				"no GCS state (kernel without GCS)");
			continue;
		}
		r = gcswalk_walk_begin(&w, t, i, NULL);
		if (r == GCSWALK_OK) {
			while (gcswalk_walk_next(w, &f) == GCSWALK_OK)
				if (f.kind == GCSWALK_FRAME_RETURN || f.kind == GCSWALK_FRAME_SIGRETURN)
					depth++;
			gcswalk_walk_free(w);
		}
		fprintf(out.fp, "%8d  %-16s %-4s %-6s %-5s %-5s 0x%016" PRIx64 " ", info.tid,
			info.name ? info.name : "?",
			info.gcs.features_enabled & GCSWALK_GCS_ENABLE ? "on" : "off",
			info.gcs.features_locked ? "yes" : "no",
			info.gcs.features_enabled & GCSWALK_GCS_PUSH ? "on" : "off",
			info.gcs.features_enabled & GCSWALK_GCS_WRITE ? "on" : "off", info.gcs.gcspr);
		if (r == GCSWALK_OK)
			fprintf(out.fp, "%zu\n", depth);
		else
			fprintf(out.fp, "-\n");
	}
	gcswalk_target_close(t);
	/* What record's auto would choose, with the default options. */
	if (rec_method_perf.usable(&record_defaults, &event, &why, &quiet) == 0)
		fprintf(out.fp, "record would sample with perf (%s event): the kernel takes the "
			"chains from the GCS, the target is never stopped\n", event);
	else
		fprintf(out.fp, "record would sample with %s (%s): %s\n", rec_method_ptrace.name,
			rec_method_ptrace.cost, why);
	return gp_out_close(&out);
}

const struct gp_command gp_cmd_status = {
	.name = "status",
	.synopsis = "PID",
	.summary = "show the GCS state of each thread of a process",
	.options = NULL,
	.noptions = 0,
	.min_args = 1,
	.max_args = 1,
	.run = status_run,
	.opts_size = sizeof(struct status_opts),
	.init = NULL,
};
