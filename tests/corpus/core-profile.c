// SPDX-License-Identifier: MIT
/*
 * core-profile CORE PROFILE: a core's chains as a gcsprof profile, one
 * sample a thread, so that `gcsprof report` prints the chains `gcsprof
 * inspect` and the GDB plugin's `gcs bt` print (chain-contract-test.sh
 * compares the three). The frames are the code frames libgcswalk names
 * (gcswalk_frame_is_code()), in the profile's kinds: the PC and an
 * interrupted context's PC as P (looked up at their address), a return
 * into the signal trampoline as S, the others as R. The mappings are the
 * core's, with the build-ids it records. Exit 0, or 1 with a line on
 * stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gcswalk.h>

#include "profile.h"

static char profile_kind(const struct gcswalk_frame *f)
{
	switch (f->kind) {
	case GCSWALK_FRAME_PC:
	case GCSWALK_FRAME_INTERRUPTED_PC:
		return GP_FRAME_PC;
	case GCSWALK_FRAME_SIGRETURN:
		return GP_FRAME_SIGRETURN;
	default:
		return GP_FRAME_RETURN;
	}
}

static int write_mappings(FILE *out, gcswalk_target *t, size_t *count)
{
	size_t i, n = gcswalk_target_mapping_count(t);

	*count = 0;
	for (i = 0; i < n; i++) {
		struct gcswalk_mapping m;
		struct gp_rmapping rm;
		const unsigned char *id = NULL;
		size_t id_size = 0;

		if (gcswalk_target_mapping(t, i, &m) != GCSWALK_OK || !m.path)
			continue;
		if (gcswalk_target_mapping_build_id(t, i, &id, &id_size) != GCSWALK_OK)
			id = NULL;
		memset(&rm, 0, sizeof(rm));
		rm.pid = gcswalk_target_pid(t);
		rm.start = m.start;
		rm.end = m.end;
		rm.offset = m.offset;
		rm.path = (char *)m.path;
		rm.build_id = id ? (unsigned char *)id : NULL;
		rm.build_id_size = id ? id_size : 0;
		if (gp_profile_write_mapping(out, &rm) != 0)
			return -1;
		(*count)++;
	}
	return 0;
}

/* Thread I's code frames into *FRAMES (*CAP): their number, (size_t)-1
 * when out of memory; 0 when it has no chain. */
static size_t thread_frames(gcswalk_target *t, size_t i, struct gp_frame **frames, size_t *cap)
{
	struct gcswalk_walk_options wo = GCSWALK_WALK_OPTIONS_INIT;
	struct gcswalk_frame f;
	gcswalk_walk *w = NULL;
	size_t n = 0;

	wo.max_frames = (size_t)1 << 30;
	if (gcswalk_walk_begin(&w, t, i, &wo) < 0)
		return 0;
	while (gcswalk_walk_next(w, &f) == GCSWALK_OK) {
		if (!gcswalk_frame_is_code(&f))
			continue;
		if (n == *cap) {
			struct gp_frame *g = realloc(*frames, (*cap * 2 + 64) * sizeof(*g));

			if (!g) {
				gcswalk_walk_free(w);
				return (size_t)-1;
			}
			*frames = g;
			*cap = *cap * 2 + 64;
		}
		(*frames)[n++] = (struct gp_frame){ f.address, profile_kind(&f) };
	}
	gcswalk_walk_free(w);
	return n;
}

/* Sample S of the chain FRAMES (N): its new stack nodes, then itself. */
static int write_sample(FILE *out, struct gp_stack_table *st, struct gp_rsample *s,
			const struct gp_frame *frames, size_t n)
{
	size_t old = st->n;

	if (gp_stack_intern(st, frames, n, &s->stack) != 0)
		return -1;
	for (; old < st->n; old++)
		if (gp_profile_write_stack(out, st->nodes[old].parent, &st->nodes[old].frame) != 0)
			return -1;
	return gp_profile_write_sample(out, s);
}

static int write_samples(FILE *out, struct gp_stack_table *st, gcswalk_target *t,
			 size_t *count)
{
	struct gp_frame *frames = NULL;
	size_t i, cap = 0, n = gcswalk_target_thread_count(t);
	int ret = 0;

	*count = 0;
	for (i = 0; i < n && !ret; i++) {
		struct gcswalk_thread_info info;
		struct gp_rsample s;
		size_t nf;

		if (gcswalk_target_thread(t, i, &info) != GCSWALK_OK)
			continue;
		nf = thread_frames(t, i, &frames, &cap);
		if (nf == (size_t)-1)
			ret = -1;
		if (nf == 0 || nf == (size_t)-1)
			continue;
		memset(&s, 0, sizeof(s));
		s.pid = gcswalk_target_pid(t);
		s.tid = info.tid;
		s.state = 'R';
		s.thread = (char *)(info.name ? info.name : "");
		s.nframes = nf;
		s.cpu = -1;
		ret = write_sample(out, st, &s, frames, nf);
		(*count)++;
	}
	free(frames);
	return ret;
}

int main(int argc, char **argv)
{
	gcswalk_target *t = NULL;
	struct gp_stack_table st;
	size_t nmappings = 0, nsamples = 0;
	char *msg = NULL, *command = NULL;
	FILE *out;
	int ret;

	if (argc != 3) {
		fprintf(stderr, "usage: core-profile CORE PROFILE\n");
		return 2;
	}
	ret = gcswalk_target_open_core(&t, argv[1], &msg);
	if (ret < 0) {
		fprintf(stderr, "core-profile: %s: %s (%s)\n", argv[1], gcswalk_strerror(ret),
			msg ? msg : "");
		free(msg);
		return 1;
	}
	out = fopen(argv[2], "w");
	if (!out || gp_stack_init(&st) != 0 || asprintf(&command, "core %s", argv[1]) < 0) {
		fprintf(stderr, "core-profile: cannot write %s\n", argv[2]);
		ret = 1;
	} else {
		ret = gp_profile_write_header(out, 1, "cpu", command, "core", NULL) != 0 ||
		      write_mappings(out, t, &nmappings) != 0 ||
		      write_samples(out, &st, t, &nsamples) != 0 ||
		      gp_profile_write_trailer(out, 0, NULL, 0, nsamples, nmappings, st.n - 1) != 0;
		gp_stack_free(&st);
		if (fclose(out) != 0 || ret) {
			fprintf(stderr, "core-profile: cannot write %s\n", argv[2]);
			ret = 1;
		}
		out = NULL;
	}
	if (out)
		fclose(out);
	free(command);
	gcswalk_target_close(t);
	return ret;
}
