// SPDX-License-Identifier: MIT
/*
 * gcsprof record: the profile file being written (profile_out.h). The
 * only file of the recorder that writes into it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <gcswalk.h>

#include "gcsprof.h"
#include "gzip_file.h"
#include "profile_out.h"

/* zlib's level for the profile: 1 (its fastest) already takes most of
 * what the text repeats, at the least cost to the recorder. */
#define PROFILE_GZIP_LEVEL 1
/* stdio's buffer for the plain text written while the target runs. */
#define PROFILE_BUFFER (64 * 1024)

/* In the order of enum rec_lost: the names of the trailer's "lost" records. */
static const char *const lost_names[REC_LOST_N] = {
	"no-gcs", "thread-gone", "stop-timeout", "walk-error", "group-stopped", "ring-overrun",
};

/* The first failure is said; every later write is skipped. */
static int write_failed(struct rec_out *o)
{
	if (!o->failed)
		gp_error(GP_EXIT_OUTPUT, "cannot write %s: %s", o->path, strerror(errno));
	o->failed = 1;
	return GP_EXIT_OUTPUT;
}

static int checked(struct rec_out *o, int written)
{
	return written == 0 ? 0 : write_failed(o);
}

int rec_out_open(struct rec_out *o, const char *path)
{
	memset(o, 0, sizeof(*o));
	o->path = path;
	if (gp_stack_init(&o->stacks) != 0)
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	o->stacks_written = 1;
	/* Plain text while the target runs, compressed once it has ended
	 * (rec_out_close): deflate is the largest part of the recorder's
	 * work a sample, and on a busy CPU the target pays for all of it. */
	o->f = fopen(path, "we");
	if (o->f && setvbuf(o->f, NULL, _IOFBF, PROFILE_BUFFER) != 0) {
		fclose(o->f);
		o->f = NULL;
		errno = ENOMEM;
	}
	if (!o->f) {
		gp_stack_free(&o->stacks);
		return gp_error(GP_EXIT_OUTPUT, "cannot write %s: %s", path, strerror(errno));
	}
	return 0;
}

int rec_out_header(struct rec_out *o, unsigned hz, const char *mode, const char *command,
		   const char *method, const char *event)
{
	if (o->failed)
		return GP_EXIT_OUTPUT;
	return checked(o, gp_profile_write_header(o->f, hz, mode, command, method, event));
}

int rec_out_vdso(struct rec_out *o, const struct rec_vdso *v)
{
	size_t i;

	o->vdso = v;
	for (i = 0; i < v->nsymbols && !o->failed; i++) {
		const struct rec_vdso_symbol *s = &v->symbols[i];

		if (fprintf(o->f, "vdso-symbol %" PRIx64 " %" PRIx64 " ", s->offset, s->size) < 0 ||
		    gp_write_escaped(o->f, s->name) != 0 || fputc('\n', o->f) == EOF)
			return write_failed(o);
	}
	return o->failed ? GP_EXIT_OUTPUT : 0;
}

int rec_out_max_stack(struct rec_out *o, unsigned max_stack, const char *by)
{
	if (o->failed)
		return GP_EXIT_OUTPUT;
	return checked(o, gp_profile_write_max_stack(o->f, max_stack, by));
}

int rec_out_throttle(struct rec_out *o, uint64_t throttles, uint64_t unthrottles)
{
	if (o->failed)
		return GP_EXIT_OUTPUT;
	return checked(o, gp_profile_write_throttle(o->f, throttles, unthrottles));
}

/*
 * Is M of ASID in the file? If not, note that it is now. The one map's
 * keys are three words: a mapping is five (asid, offset, path, start,
 * end), so it takes two steps: (asid with the top bit set, offset, the
 * path's number) gives a number K, and (K, start, end) says the mapping
 * is in. -1 when out of memory.
 */
static int written_before(struct rec_out *o, unsigned asid, const struct rec_mapping *m)
{
	const uint64_t tag = 1ULL << 63;
	const char *path = gp_strtab_intern(&o->paths, m->path);
	uint64_t k;

	if (!path)
		return -1;
	k = gp_map_get(&o->written, tag | asid, m->offset, gp_string_id(path));
	if (!k) {
		k = ++o->nkeys;
		if (gp_map_put(&o->written, tag | asid, m->offset, gp_string_id(path), k) != 0)
			return -1;
	}
	if (gp_map_get(&o->written, k, m->start, m->end))
		return 1;
	return gp_map_put(&o->written, k, m->start, m->end, 1) != 0 ? -1 : 0;
}

int rec_out_mapping(struct rec_out *o, unsigned asid, pid_t pid, const struct rec_mapping *m)
{
	struct gp_rmapping rm;
	unsigned char *read_id = NULL;
	int seen, ret = 0;

	if (o->failed)
		return GP_EXIT_OUTPUT;
	seen = written_before(o, asid, m);
	if (seen < 0)
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	if (seen)
		return 0;
	memset(&rm, 0, sizeof(rm));
	rm.asid = asid;
	rm.pid = pid;
	rm.start = m->start;
	rm.end = m->end;
	rm.offset = m->offset;
	rm.path = m->path;
	rm.build_id = m->build_id_size ? m->build_id : NULL;
	rm.build_id_size = m->build_id_size;
	if (!rm.build_id_size &&
	    gcswalk_proc_build_id((int)pid, m->path, &read_id, &rm.build_id_size) == GCSWALK_OK)
		rm.build_id = read_id;
	o->nmappings++;
	if (gp_profile_write_mapping(o->f, &rm) != 0)
		ret = write_failed(o);
	free(read_id);
	return ret;
}

int rec_out_vdso_mapping(struct rec_out *o, unsigned asid, pid_t pid, uint64_t start)
{
	struct rec_mapping m;

	if (!o->vdso || !rec_vdso_mapping(o->vdso, start, &m))
		return 0;
	return rec_out_mapping(o, asid, pid, &m);
}

/* The nodes interned since the last call, parents first, into the file;
 * then whether chain STACK's mappings are still to be handed over (as
 * rec_out_stack returns it). */
static int stack_written(struct rec_out *o, unsigned asid, uint64_t generation, uint32_t stack)
{
	for (; o->stacks_written < o->stacks.n; o->stacks_written++) {
		const struct gp_stack_node *node = &o->stacks.nodes[o->stacks_written];

		if (gp_profile_write_stack(o->f, node->parent, &node->frame) != 0)
			return -write_failed(o);
	}
	if (gp_map_get(&o->chains_mapped, asid, stack, generation))
		return 0;
	if (gp_map_put(&o->chains_mapped, asid, stack, generation, 1) != 0)
		return -gp_error(GP_EXIT_SYSTEM, "out of memory");
	return 1;
}

int rec_out_stack(struct rec_out *o, const struct gp_frame *frames, size_t n, unsigned asid,
		  uint64_t generation, uint32_t *stack)
{
	if (o->failed)
		return -GP_EXIT_OUTPUT;
	if (gp_stack_intern(&o->stacks, frames, n, stack) != 0)
		return -gp_error(GP_EXIT_SYSTEM, "out of memory");
	return stack_written(o, asid, generation, *stack);
}

int rec_out_stack_under(struct rec_out *o, uint32_t callers, const struct gp_frame *frame,
			unsigned asid, uint64_t generation, uint32_t *stack)
{
	if (o->failed)
		return -GP_EXIT_OUTPUT;
	if (gp_stack_intern_under(&o->stacks, callers, frame, stack) != 0)
		return -gp_error(GP_EXIT_SYSTEM, "out of memory");
	return stack_written(o, asid, generation, *stack);
}

int rec_out_sample(struct rec_out *o, const struct gp_rsample *s)
{
	if (o->failed)
		return GP_EXIT_OUTPUT;
	if (gp_profile_write_sample(o->f, s) != 0)
		return write_failed(o);
	o->nsamples++;
	return 0;
}

void rec_out_flush(struct rec_out *o, uint64_t now_ns)
{
	if (o->failed || now_ns - o->last_flush_ns < 100000000u)
		return;
	o->last_flush_ns = now_ns;
	if (fflush(o->f) != 0)
		(void)write_failed(o);
}

static void release(struct rec_out *o)
{
	gp_map_free(&o->written);
	gp_strtab_free(&o->paths);
	gp_map_free(&o->chains_mapped);
	gp_stack_free(&o->stacks);
	o->f = NULL;
}

int rec_out_close(struct rec_out *o, uint64_t duration_ns)
{
	struct gp_count lost[REC_LOST_N];
	size_t i;

	for (i = 0; i < REC_LOST_N; i++)
		lost[i] = (struct gp_count){ (char *)lost_names[i], o->lost[i] };
	if (!o->failed &&
	    gp_profile_write_trailer(o->f, duration_ns, lost, REC_LOST_N, o->nsamples,
				     o->nmappings, o->stacks.n - 1) != 0)
		(void)write_failed(o);
	if (fclose(o->f) != 0 && !o->failed)
		(void)write_failed(o);
	/* A file that failed keeps what it has, as it is: plain text reads. */
	if (!o->failed && gp_gzip_in_place(o->path, PROFILE_GZIP_LEVEL) < 0)
		gp_warn("left %s uncompressed (it reads as it is): %s", o->path, strerror(errno));
	release(o);
	return o->failed ? GP_EXIT_OUTPUT : 0;
}

void rec_out_discard(struct rec_out *o)
{
	if (o->f)
		fclose(o->f);
	release(o);
}
