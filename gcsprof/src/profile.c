// SPDX-License-Identifier: MIT
/*
 * The profile file, version 1 (docs/profile-format.md). One record per
 * line, fields separated by one space, strings %XX-escaped:
 *
 *   gcsprof-profile 1
 *   hz HZ
 *   mode cpu|wall
 *   command ESCAPED
 *   date ISO-8601-UTC                      (when, where, on what kernel)
 *   host ESCAPED
 *   kernel ESCAPED
 *   cpus N
 *   max-stack DEPTH BY                     (perf)
 *   mapping ASID PID START END OFFSET BUILDID|- PATH
 *   sample TIME PID TID STATE ASID NAME FLAGS FRAME...
 *   throttle THROTTLES UNTHROTTLES         (perf)
 *   lost REASON COUNT
 *   end DURATION SAMPLES MAPPINGS
 *
 * Numbers are decimal, except addresses and offsets (hex, no prefix).
 * A frame is a kind letter followed by a hex address.
 */
#include <ctype.h>
#include <stddef.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "gcsprof.h"
#include "profile.h"

int gp_write_escaped(FILE *f, const char *s)
{
	if (!s || !*s)
		return fputs("%00", f) < 0 ? -1 : 0;   /* empty: a lone NUL escape */
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c <= ' ' || c == '%' || c >= 0x7f) {
			if (fprintf(f, "%%%02X", c) < 0)
				return -1;
		} else if (fputc(c, f) == EOF)
			return -1;
	}
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
	return 0;
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

int gp_profile_write_sample(FILE *f, const struct gp_rsample *s, const struct gp_frame *frames)
{
	/* One letter a flag; readers look for the letters they know. */
	const char *flags = s->fallback ? (s->cut ? "fc" : "f") : (s->cut ? "c" : "-");
	size_t i;

	if (fprintf(f, "sample %" PRIu64 " %d %d %c %u ", s->time_ns, s->pid, s->tid,
		    s->state ? s->state : '?', s->asid) < 0 ||
	    gp_write_escaped(f, s->thread) != 0 || fprintf(f, " %s", flags) < 0)
		return -1;
	for (i = 0; i < s->nframes; i++)
		if (fprintf(f, " %c%" PRIx64, frames[i].kind, frames[i].address) < 0)
			return -1;
	return fputc('\n', f) == EOF ? -1 : 0;
}

int gp_profile_write_trailer(FILE *f, uint64_t duration_ns, const struct gp_count *lost,
			     size_t nlost, uint64_t nsamples, uint64_t nmappings)
{
	size_t i;

	for (i = 0; i < nlost; i++) {
		if (fputs("lost ", f) < 0 || gp_write_escaped(f, lost[i].reason) != 0 ||
		    fprintf(f, " %" PRIu64 "\n", lost[i].count) < 0)
			return -1;
	}
	if (fprintf(f, "end %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", duration_ns, nsamples,
		    nmappings) < 0)
		return -1;
	return 0;
}

/* ---- Reading -------------------------------------------------------- */

struct reader {
	const char *path;
	size_t lineno;
	char *cursor;             /* the rest of the current line */
	int bad;
};

static int bad(struct reader *r, const char *what)
{
	if (!r->bad)
		gp_error(GP_EXIT_BAD_PROFILE, "%s:%zu: bad profile: %s", r->path, r->lineno, what);
	r->bad = 1;
	return -1;
}

/* The next space-separated field, NUL-terminated in place, or NULL. */
static char *field(struct reader *r)
{
	char *s = r->cursor, *e;

	if (!s || !*s)
		return NULL;
	e = strchr(s, ' ');
	if (e) {
		*e = '\0';
		r->cursor = e + 1;
	} else
		r->cursor = s + strlen(s);
	return s;
}

static int unescape(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (*s == '%') {
			int hi, lo;

			if (!isxdigit((unsigned char)s[1]) || !isxdigit((unsigned char)s[2]))
				return -1;
			hi = isdigit((unsigned char)s[1]) ? s[1] - '0' : (tolower(s[1]) - 'a' + 10);
			lo = isdigit((unsigned char)s[2]) ? s[2] - '0' : (tolower(s[2]) - 'a' + 10);
			if (hi * 16 + lo)
				*w++ = (char)(hi * 16 + lo);
			s += 2;
		} else
			*w++ = *s;
	}
	*w = '\0';
	return 0;
}

static char *str_field(struct reader *r)
{
	char *s = field(r), *d;

	if (!s || unescape(s) != 0)
		return NULL;
	d = strdup(s);
	if (!d)
		r->bad = 2;
	return d;
}

static int num_field(struct reader *r, int base, uint64_t *v)
{
	char *s = field(r), *end;
	unsigned long long x;

	if (!s || !*s || *s == '-' || *s == '+' || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	x = strtoull(s, &end, base);
	if (errno || *end)
		return -1;
	*v = x;
	return 0;
}

static int int_field(struct reader *r, int *v)
{
	uint64_t x;

	if (num_field(r, 10, &x) != 0 || x > INT32_MAX)
		return -1;
	*v = (int)x;
	return 0;
}

static int parse_mapping(struct reader *r, struct gp_rprofile *p)
{
	struct gp_rmapping m = { 0 };
	uint64_t asid;
	char *bid;
	void *n;

	if (num_field(r, 10, &asid) != 0 || asid > UINT32_MAX || int_field(r, &m.pid) != 0 ||
	    num_field(r, 16, &m.start) != 0 || num_field(r, 16, &m.end) != 0 ||
	    num_field(r, 16, &m.offset) != 0 || m.end <= m.start)
		return bad(r, "malformed mapping");
	m.asid = (unsigned)asid;
	bid = field(r);
	if (!bid)
		return bad(r, "mapping without build-id field");
	if (strcmp(bid, "-") != 0) {
		size_t len = strlen(bid), i;

		if (len % 2 || len == 0 || len > 128)
			return bad(r, "malformed build-id");
		m.build_id = malloc(len / 2);
		if (!m.build_id)
			return bad(r, "out of memory");
		for (i = 0; i < len / 2; i++) {
			unsigned v;

			if (!isxdigit((unsigned char)bid[2 * i]) ||
			    !isxdigit((unsigned char)bid[2 * i + 1]) ||
			    sscanf(bid + 2 * i, "%2x", &v) != 1) {
				free(m.build_id);
				return bad(r, "malformed build-id");
			}
			m.build_id[i] = (unsigned char)v;
		}
		m.build_id_size = len / 2;
	}
	m.path = str_field(r);
	if (!m.path || *r->cursor) {
		free(m.build_id);
		free(m.path);
		return bad(r, "malformed mapping path");
	}
	n = gp_grow(p->mappings, &p->mappings_cap, p->nmappings + 1, sizeof(m));
	if (!n) {
		free(m.build_id);
		free(m.path);
		return bad(r, "out of memory");
	}
	p->mappings = n;
	p->mappings[p->nmappings++] = m;
	return 0;
}

static int parse_sample(struct reader *r, struct gp_rprofile *p)
{
	struct gp_rsample s = { 0 };
	uint64_t t, asid;
	char *state, *flags, *f;
	void *n;

	if (num_field(r, 10, &t) != 0 || int_field(r, &s.pid) != 0 || int_field(r, &s.tid) != 0)
		return bad(r, "malformed sample");
	state = field(r);
	if (!state || strlen(state) != 1 || num_field(r, 10, &asid) != 0 || asid > UINT32_MAX)
		return bad(r, "malformed sample");
	s.time_ns = t;
	s.state = state[0];
	s.asid = (unsigned)asid;
	s.thread = str_field(r);
	flags = field(r);
	if (!s.thread || !flags) {
		free(s.thread);
		return bad(r, "malformed sample");
	}
	s.fallback = strchr(flags, 'f') != NULL;
	s.cut = strchr(flags, 'c') != NULL;
	s.first_frame = p->nframes;
	while ((f = field(r)) != NULL) {
		struct gp_frame fr;
		char *end;

		if (!strchr("PRSF", f[0]) || f[0] == '\0' || !isxdigit((unsigned char)f[1])) {
			free(s.thread);
			return bad(r, "malformed frame");
		}
		errno = 0;
		fr.kind = f[0];
		fr.address = strtoull(f + 1, &end, 16);
		if (errno || *end) {
			free(s.thread);
			return bad(r, "malformed frame address");
		}
		n = gp_grow(p->frames, &p->frames_cap, p->nframes + 1, sizeof(fr));
		if (!n) {
			free(s.thread);
			return bad(r, "out of memory");
		}
		p->frames = n;
		p->frames[p->nframes++] = fr;
	}
	s.nframes = p->nframes - s.first_frame;
	n = gp_grow(p->samples, &p->samples_cap, p->nsamples + 1, sizeof(s));
	if (!n) {
		free(s.thread);
		return bad(r, "out of memory");
	}
	p->samples = n;
	p->samples[p->nsamples++] = s;
	return 0;
}

static int parse_lost(struct reader *r, struct gp_rprofile *p)
{
	struct gp_count c;
	void *n;

	c.reason = str_field(r);
	if (!c.reason || num_field(r, 10, &c.count) != 0) {
		free(c.reason);
		return bad(r, "malformed lost record");
	}
	n = gp_grow(p->lost, &p->lost_cap, p->nlost + 1, sizeof(c));
	if (!n) {
		free(c.reason);
		return bad(r, "out of memory");
	}
	p->lost = n;
	p->lost[p->nlost++] = c;
	return 0;
}

static int parse_max_stack(struct reader *r, struct gp_rprofile *p)
{
	uint64_t v;

	if (num_field(r, 10, &v) != 0 || v == 0 || v > UINT32_MAX)
		return bad(r, "malformed max-stack record");
	free(p->max_stack_by);
	p->max_stack_by = str_field(r);
	if (!p->max_stack_by)
		return r->bad ? -1 : bad(r, "malformed max-stack record");   /* bad 2: no memory */
	p->max_stack = (unsigned)v;
	return 0;
}

static int parse_throttle(struct reader *r, struct gp_rprofile *p)
{
	if (num_field(r, 10, &p->throttles) != 0 || num_field(r, 10, &p->unthrottles) != 0)
		return bad(r, "malformed throttle record");
	p->has_throttle = 1;
	return 0;
}

static int parse_vdso_symbol(struct reader *r, struct gp_rprofile *p)
{
	struct gp_rsymbol s;
	void *n;

	if (num_field(r, 16, &s.offset) != 0 || num_field(r, 16, &s.size) != 0 ||
	    s.offset + s.size < s.offset)
		return bad(r, "malformed vdso-symbol record");
	s.name = str_field(r);
	if (!s.name)
		return bad(r, "malformed vdso-symbol record");
	n = gp_grow(p->vdso_symbols, &p->vdso_symbols_cap, p->nvdso_symbols + 1, sizeof(s));
	if (!n) {
		free(s.name);
		return bad(r, "out of memory");
	}
	p->vdso_symbols = n;
	p->vdso_symbols[p->nvdso_symbols++] = s;
	return 0;
}

/* A string record: its one field, replacing an earlier one. */
static int parse_string(struct reader *r, char **slot, const char *what)
{
	free(*slot);
	*slot = str_field(r);
	if (!*slot)
		return r->bad ? -1 : bad(r, what);   /* bad 2: no memory */
	return 0;
}

static int parse_hz(struct reader *r, struct gp_rprofile *p)
{
	uint64_t v;

	if (num_field(r, 10, &v) != 0 || v == 0 || v > 100000)
		return bad(r, "malformed hz");
	p->hz = (unsigned)v;
	return 0;
}

static int parse_cpus(struct reader *r, struct gp_rprofile *p)
{
	uint64_t v;

	if (num_field(r, 10, &v) != 0 || v == 0 || v > 1000000)
		return bad(r, "malformed cpus record");
	p->cpus = (unsigned)v;
	return 0;
}

/* date YYYY-MM-DDTHH:MM:SS.mmmZ, UTC: kept as written and as epoch ms. */
static int parse_date(struct reader *r, struct gp_rprofile *p)
{
	struct tm tm = { 0 };
	unsigned ms;
	time_t t;
	char z;

	if (parse_string(r, &p->date, "malformed date record") != 0)
		return -1;
	if (strlen(p->date) != 24 ||
	    sscanf(p->date, "%4d-%2d-%2dT%2d:%2d:%2d.%3u%c", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
		   &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms, &z) != 8 || z != 'Z' ||
	    tm.tm_year < 1970 || tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 ||
	    tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60)
		return bad(r, "malformed date record");
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	t = timegm(&tm);
	if (t < 0)
		return bad(r, "malformed date record");
	p->start_unix_ms = (uint64_t)t * 1000 + ms;
	return 0;
}

static int parse_end(struct reader *r, struct gp_rprofile *p)
{
	uint64_t ns, nm;

	if (num_field(r, 10, &p->duration_ns) != 0 || num_field(r, 10, &ns) != 0 ||
	    num_field(r, 10, &nm) != 0)
		return bad(r, "malformed end record");
	if (ns != p->nsamples || nm != p->nmappings)
		return bad(r, "sample or mapping count differs from the end record");
	return 0;
}

/* The records, by keyword: a parser, or a string field of the profile. */
static const struct record_kind {
	const char *keyword;
	int (*parse)(struct reader *, struct gp_rprofile *);
	size_t string;            /* offset of a char * field when parse is NULL */
	const char *malformed;
} record_kinds[] = {
	{ "sample", parse_sample, 0, NULL },
	{ "mapping", parse_mapping, 0, NULL },
	{ "lost", parse_lost, 0, NULL },
	{ "vdso-symbol", parse_vdso_symbol, 0, NULL },
	{ "max-stack", parse_max_stack, 0, NULL },
	{ "throttle", parse_throttle, 0, NULL },
	{ "hz", parse_hz, 0, NULL },
	{ "cpus", parse_cpus, 0, NULL },
	{ "date", parse_date, 0, NULL },
	{ "end", parse_end, 0, NULL },
	{ "mode", NULL, offsetof(struct gp_rprofile, mode), "malformed mode" },
	{ "method", NULL, offsetof(struct gp_rprofile, method), "malformed method" },
	{ "event", NULL, offsetof(struct gp_rprofile, event), "malformed event" },
	{ "command", NULL, offsetof(struct gp_rprofile, command), "malformed command" },
	{ "host", NULL, offsetof(struct gp_rprofile, host), "malformed host record" },
	{ "kernel", NULL, offsetof(struct gp_rprofile, kernel), "malformed kernel record" },
};

/* The first line: the magic and a version this reader knows. */
static int parse_magic(struct reader *r, struct gp_rprofile *p, const char *kw)
{
	uint64_t v;

	if (strcmp(kw, GP_PROFILE_MAGIC) != 0) {
		gp_error(GP_EXIT_BAD_PROFILE, "%s: not a gcsprof profile", r->path);
		r->bad = 1;
		return -1;
	}
	if (num_field(r, 10, &v) != 0)
		return bad(r, "malformed version");
	if (v != GP_PROFILE_VERSION) {
		gp_error(GP_EXIT_BAD_PROFILE, "%s: profile format version %llu, this gcsprof reads "
			 "version %d", r->path, (unsigned long long)v, GP_PROFILE_VERSION);
		r->bad = 1;
		return -1;
	}
	p->version = (unsigned)v;
	return 0;
}

/* One line, its newline removed. Sets *ENDED at the end record. */
static int parse_line(struct reader *r, struct gp_rprofile *p, char *line, size_t len, int *ended)
{
	const char *kw;
	size_t i;

	if (memchr(line, '\0', len))
		return bad(r, "binary data");
	if (*ended)
		return bad(r, "data after the end record");
	r->cursor = line;
	kw = field(r);
	if (!kw)
		return bad(r, "empty line");
	if (r->lineno == 1)
		return parse_magic(r, p, kw);
	for (i = 0; i < sizeof(record_kinds) / sizeof(record_kinds[0]); i++) {
		const struct record_kind *k = &record_kinds[i];

		if (strcmp(kw, k->keyword) != 0)
			continue;
		if (strcmp(kw, "end") == 0)
			*ended = 1;
		if (k->parse)
			return k->parse(r, p);
		return parse_string(r, (char **)((char *)p + k->string), k->malformed);
	}
	return 0;       /* unknown records are for later versions */
}

/* Every line of F; returns whether the end record was seen. */
static int read_lines(struct reader *r, struct gp_rprofile *p, FILE *f)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int ended = 0;

	while ((len = getline(&line, &cap, f)) >= 0) {
		r->lineno++;
		if (len == 0 || line[len - 1] != '\n') {
			ended = 0;      /* a last line without its newline: cut short */
			break;
		}
		line[len - 1] = '\0';
		if (parse_line(r, p, line, (size_t)len - 1, &ended) != 0)
			break;
	}
	free(line);
	return ended;
}

/* What is left to say once every line is read. */
static int finish(struct reader *r, struct gp_rprofile *p, int ended)
{
	if (r->bad) {
		gp_profile_free(p);
		return r->bad == 2 ? GP_EXIT_SYSTEM : GP_EXIT_BAD_PROFILE;
	}
	if (r->lineno == 0 || p->version == 0) {
		gp_profile_free(p);
		return gp_error(GP_EXIT_BAD_PROFILE, "%s: not a gcsprof profile%s", r->path,
				r->lineno == 0 ? " (empty file)" : "");
	}
	if (!p->mode)
		p->mode = strdup("cpu");
	if (!p->mode) {
		gp_profile_free(p);
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	}
	if (!ended) {
		/* Every complete record before the cut stays usable: what a
		 * recorder killed mid-run or a full disk left is reported. */
		p->truncated = 1;
		return gp_error(GP_EXIT_TRUNCATED,
				"%s: truncated profile (no end record after line %zu: was recording "
				"interrupted?): using its %zu complete sample(s)",
				r->path, r->lineno, p->nsamples);
	}
	return 0;
}

int gp_profile_read(struct gp_rprofile *p, const char *path)
{
	const int is_stdin = strcmp(path, "-") == 0;
	struct reader r = { is_stdin ? "standard input" : path, 0, NULL, 0 };
	int ended, err;
	FILE *f;

	memset(p, 0, sizeof(*p));
	f = is_stdin ? stdin : fopen(path, "r");
	if (!f)
		return gp_error(errno == EACCES ? GP_EXIT_PERMISSION : GP_EXIT_INPUT,
				"cannot read profile %s: %s", path, strerror(errno));
	ended = read_lines(&r, p, f);
	err = ferror(f) ? errno : 0;
	if (!is_stdin)
		fclose(f);
	if (err && !r.bad) {
		gp_profile_free(p);
		return gp_error(GP_EXIT_INPUT, "cannot read profile %s: %s", r.path, strerror(err));
	}
	return finish(&r, p, ended);
}

void gp_profile_free(struct gp_rprofile *p)
{
	size_t i;

	for (i = 0; i < p->nsamples; i++)
		free(p->samples[i].thread);
	for (i = 0; i < p->nmappings; i++) {
		free(p->mappings[i].path);
		free(p->mappings[i].build_id);
	}
	for (i = 0; i < p->nlost; i++)
		free(p->lost[i].reason);
	for (i = 0; i < p->nvdso_symbols; i++)
		free(p->vdso_symbols[i].name);
	free(p->vdso_symbols);
	free(p->samples);
	free(p->frames);
	free(p->mappings);
	free(p->lost);
	free(p->mode);
	free(p->command);
	free(p->method);
	free(p->event);
	free(p->max_stack_by);
	free(p->date);
	free(p->host);
	free(p->kernel);
	memset(p, 0, sizeof(*p));
}
