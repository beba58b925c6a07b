// SPDX-License-Identifier: MIT
/*
 * The profile file's writers, version 2 (docs/profile-format.md). One
 * record per line, fields separated by one space, strings %XX-escaped:
 *
 *   gcsprof-profile 2
 *   hz HZ
 *   mode cpu|wall
 *   command ESCAPED
 *   date ISO-8601-UTC                      (when, where, on what kernel)
 *   host ESCAPED
 *   kernel ESCAPED
 *   cpus N
 *   arch NAME SHADOW-STACK                 (arm64 GCS, riscv64 Zicfiss)
 *   max-stack DEPTH BY                     (perf)
 *   mapping ASID PID START END OFFSET BUILDID|- PATH
 *   stack PARENT FRAME                     (node 1, 2, ... of the stack table)
 *   sample TIME PID TID STATE ASID NAME FLAGS CPU WEIGHT STACK
 *   throttle THROTTLES UNTHROTTLES         (perf)
 *   lost REASON COUNT
 *   end DURATION SAMPLES MAPPINGS STACKS
 *
 * Numbers are decimal, except addresses and offsets (hex, no prefix).
 * A frame is a kind letter followed by a hex address. The recorder
 * writes these lines into a gzip stream (gzip_file.h); the reader takes
 * them compressed or not.
 */
#include <stddef.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <gcswalk.h>

#include "gcsprof.h"
#include "profile.h"

/*
 * The lines written at every sample (sample, stack) are put together by
 * hand and handed to stdio in one call each: the recorder writes them while
 * its target runs, and printf's parsing of a format was most of its work a
 * sample (about 5,000 instructions of 7,500). What they print is printf's
 * "%" PRIu64, "%d" and "%" PRIx64, digit for digit.
 */
#define U64_DIGITS 20    /* 18446744073709551615 */

/* V in BASE (10 or 16, lower case) at P; returns the end. */
static char *put_u64(char *p, uint64_t v, unsigned base)
{
	char tmp[U64_DIGITS];
	size_t n = 0;

	do {
		tmp[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

static char *put_int(char *p, int v)
{
	if (v < 0) {
		*p++ = '-';
		return put_u64(p, -(uint64_t)v, 10);
	}
	return put_u64(p, (uint64_t)v, 10);
}

static int put_line(FILE *f, const char *buf, const char *end)
{
	size_t n = (size_t)(end - buf);

	return fwrite(buf, 1, n, f) == n ? 0 : -1;
}

int gp_write_escaped(FILE *f, const char *s)
{
	if (!s || !*s)
		return fputs("%00", f) < 0 ? -1 : 0;   /* empty: a lone NUL escape */
	while (*s) {
		size_t run = 0;
		unsigned char c;

		/* A run of bytes written as they are, in one call (a thread
		 * name at every sample: usually the whole of it). */
		while ((c = (unsigned char)s[run]) && c > ' ' && c != '%' && c < 0x7f)
			run++;
		if (run && fwrite(s, 1, run, f) != run)
			return -1;
		s += run;
		if (*s) {
			static const char hex[] = "0123456789ABCDEF";
			unsigned char e = (unsigned char)*s++;
			char x[3] = { '%', hex[e >> 4], hex[e & 15] };

			if (fwrite(x, 1, sizeof(x), f) != sizeof(x))
				return -1;
		}
	}
	return 0;
}

/* The recording machine's architecture and its shadow stack's name, as
 * libgcswalk has them, so that a report read on another machine (an
 * x86_64 host) names the feature as the target had it. Left out where
 * libgcswalk has no back end (nothing records there). */
static int write_arch(FILE *f)
{
	struct gcswalk_arch_info a = { .size = sizeof(a) };

	if (gcswalk_system_arch(&a) != GCSWALK_OK)
		return 0;
	if (fputs("arch ", f) == EOF || gp_write_escaped(f, a.name) != 0 || fputc(' ', f) == EOF ||
	    gp_write_escaped(f, a.shadow_stack) != 0 || fputc('\n', f) == EOF)
		return -1;
	return 0;
}

/* When, where and on what kernel: the provenance a report prints. A
 * failing uname() or clock leaves its records out, as in older files. */
static int write_provenance(FILE *f)
{
	struct timespec now;
	struct utsname u;
	struct tm tm;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (clock_gettime(CLOCK_REALTIME, &now) == 0 && gmtime_r(&now.tv_sec, &tm) &&
	    fprintf(f, "date %04d-%02d-%02dT%02d:%02d:%02d.%03ldZ\n", tm.tm_year + 1900,
		    tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		    now.tv_nsec / 1000000) < 0)
		return -1;
	if (uname(&u) == 0) {
		if (fputs("host ", f) == EOF || gp_write_escaped(f, u.nodename) != 0 ||
		    fputs("\nkernel ", f) == EOF || gp_write_escaped(f, u.release) != 0 ||
		    fputc('\n', f) == EOF)
			return -1;
	}
	if (cpus > 0 && fprintf(f, "cpus %ld\n", cpus) < 0)
		return -1;
	return write_arch(f);
}

int gp_profile_write_header(FILE *f, unsigned hz, const char *mode, const char *command,
			    const char *method, const char *event)
{
	if (fprintf(f, "%s %d\nhz %u\nmode %s\nmethod %s\n", GP_PROFILE_MAGIC,
		    GP_PROFILE_VERSION, hz, mode, method) < 0)
		return -1;
	if (event && fprintf(f, "event %s\n", event) < 0)
		return -1;
	if (fputs("command ", f) == EOF || gp_write_escaped(f, command) != 0 ||
	    fputc('\n', f) == EOF)
		return -1;
	return write_provenance(f);
}

int gp_profile_write_max_stack(FILE *f, unsigned max_stack, const char *by)
{
	if (fprintf(f, "max-stack %u ", max_stack) < 0 || gp_write_escaped(f, by) != 0 ||
	    fputc('\n', f) == EOF)
		return -1;
	return 0;
}

int gp_profile_write_throttle(FILE *f, uint64_t throttles, uint64_t unthrottles)
{
	return fprintf(f, "throttle %" PRIu64 " %" PRIu64 "\n", throttles, unthrottles) < 0 ? -1 : 0;
}

int gp_profile_write_mapping(FILE *f, const struct gp_rmapping *m)
{
	size_t i;

	if (fprintf(f, "mapping %u %d %" PRIx64 " %" PRIx64 " %" PRIx64 " ", m->asid, m->pid,
		    m->start, m->end, m->offset) < 0)
		return -1;
	if (!m->build_id_size) {
		if (fputc('-', f) == EOF)
			return -1;
	}
	for (i = 0; i < m->build_id_size; i++)
		if (fprintf(f, "%02x", m->build_id[i]) < 0)
			return -1;
	if (fputc(' ', f) == EOF || gp_write_escaped(f, m->path) != 0 || fputc('\n', f) == EOF)
		return -1;
	return 0;
}

int gp_profile_write_stack(FILE *f, uint32_t parent, const struct gp_frame *frame)
{
	char line[sizeof("stack  x\n") + 2 * U64_DIGITS], *p = line;

	memcpy(p, "stack ", 6);
	p = put_u64(p + 6, parent, 10);
	*p++ = ' ';
	*p++ = frame->kind;
	p = put_u64(p, frame->address, 16);
	*p++ = '\n';
	return put_line(f, line, p);
}

int gp_profile_write_sample(FILE *f, const struct gp_rsample *s)
{
	/* One letter a flag; readers look for the letters they know. */
	const char *flags = s->fallback ? (s->cut ? "fc" : "f") : (s->cut ? "c" : "-");
	/* "sample TIME PID TID STATE ASID " and " FLAGS CPU WEIGHT STACK\n" */
	char head[sizeof("sample     x ") + 4 * U64_DIGITS], *h = head;
	char tail[sizeof(" fc   \n") + 3 * U64_DIGITS], *t = tail;

	memcpy(h, "sample ", 7);
	h = put_u64(h + 7, s->time_ns, 10);
	*h++ = ' ';
	h = put_int(h, s->pid);
	*h++ = ' ';
	h = put_int(h, s->tid);
	*h++ = ' ';
	*h++ = s->state ? s->state : '?';
	*h++ = ' ';
	h = put_u64(h, s->asid, 10);
	*h++ = ' ';
	*t++ = ' ';
	t = stpcpy(t, flags);
	*t++ = ' ';
	if (s->cpu >= 0)
		t = put_int(t, s->cpu);
	else
		*t++ = '-';
	*t++ = ' ';
	if (s->weight)
		t = put_u64(t, s->weight, 10);
	else
		*t++ = '-';
	*t++ = ' ';
	t = put_u64(t, s->stack, 10);
	*t++ = '\n';
	if (put_line(f, head, h) != 0 || gp_write_escaped(f, s->thread) != 0 ||
	    put_line(f, tail, t) != 0)
		return -1;
	return 0;
}

int gp_profile_write_trailer(FILE *f, uint64_t duration_ns, const struct gp_count *lost,
			     size_t nlost, uint64_t nsamples, uint64_t nmappings, uint64_t nstacks)
{
	size_t i;

	for (i = 0; i < nlost; i++) {
		if (fputs("lost ", f) < 0 || gp_write_escaped(f, lost[i].reason) != 0 ||
		    fprintf(f, " %" PRIu64 "\n", lost[i].count) < 0)
			return -1;
	}
	if (fprintf(f, "end %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", duration_ns,
		    nsamples, nmappings, nstacks) < 0)
		return -1;
	return 0;
}

