// SPDX-License-Identifier: MIT
/*
 * The profile file's reader, versions 1 and 2 (docs/profile-format.md),
 * gzip-compressed or not (profile_lines.h). Version 1 holds each sample's
 * chain as text, interned here into the stack table as it is read;
 * version 2 lists the table's nodes before the samples that use them.
 * Either way the reader hands the model one shape: samples referring to
 * the nodes of one table.
 */
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gcsprof.h"
#include "profile.h"
#include "profile_lines.h"


struct reader {
	const char *path;
	size_t lineno;
	char *cursor;             /* the rest of the current line */
	int bad;                  /* 1: said, bad profile; 2: out of memory; 3: read error */
	struct gp_frame *frames;  /* version 1: a sample's chain, as read */
	size_t frames_cap;
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

/* A frame field: its kind letter and hex address. */
static int frame_field(const char *f, struct gp_frame *fr)
{
	char *end;

	if (f[0] == '\0' || !strchr("PRSF", f[0]) || !isxdigit((unsigned char)f[1]))
		return -1;
	errno = 0;
	fr->kind = f[0];
	fr->address = strtoull(f + 1, &end, 16);
	return errno || *end ? -1 : 0;
}

/* Version 1: the rest of the line is the chain, interned in the table. */
static int v1_chain(struct reader *r, struct gp_rprofile *p, struct gp_rsample *s)
{
	size_t n = 0;
	char *f;

	while ((f = field(r)) != NULL) {
		struct gp_frame *g = gp_grow(r->frames, &r->frames_cap, n + 1, sizeof(*g));

		if (!g)
			return bad(r, "out of memory");
		r->frames = g;
		if (frame_field(f, &r->frames[n++]) != 0)
			return bad(r, "malformed frame");
	}
	if (gp_stack_intern(&p->stacks, r->frames, n, &s->stack) != 0)
		return bad(r, "out of memory");
	s->nframes = n;
	return 0;
}

/* A decimal number, or "-" for none (*GIVEN 0). */
static int opt_num_field(struct reader *r, uint64_t *v, int *given)
{
	const char *c = r->cursor;

	*v = 0;
	*given = !(c && c[0] == '-' && (c[1] == ' ' || c[1] == '\0'));
	if (!*given)
		return field(r) ? 0 : -1;
	return num_field(r, 10, v);
}

/* Version 2: CPU WEIGHT STACK, the stack a node listed before. */
static int v2_chain(struct reader *r, struct gp_rprofile *p, struct gp_rsample *s)
{
	uint64_t cpu, w, stack;
	int has_cpu, has_w;

	if (opt_num_field(r, &cpu, &has_cpu) != 0 || cpu > INT32_MAX ||
	    opt_num_field(r, &w, &has_w) != 0 || (has_w && w == 0))
		return bad(r, "malformed sample");
	s->cpu = has_cpu ? (int)cpu : -1;
	s->weight = w;
	if (num_field(r, 10, &stack) != 0 || *r->cursor)
		return bad(r, "malformed sample stack");
	if (stack >= p->stacks.n)
		return bad(r, "sample of a stack not listed before it");
	s->stack = (uint32_t)stack;
	s->nframes = p->stacks.nodes[stack].depth;
	return 0;
}

static int parse_sample(struct reader *r, struct gp_rprofile *p)
{
	struct gp_rsample s = { 0 };
	uint64_t t, asid;
	char *state, *flags;
	void *n;

	if (num_field(r, 10, &t) != 0 || int_field(r, &s.pid) != 0 || int_field(r, &s.tid) != 0)
		return bad(r, "malformed sample");
	state = field(r);
	if (!state || strlen(state) != 1 || num_field(r, 10, &asid) != 0 || asid > UINT32_MAX)
		return bad(r, "malformed sample");
	s.time_ns = t;
	s.state = state[0];
	s.asid = (unsigned)asid;
	s.cpu = -1;
	s.thread = str_field(r);
	flags = field(r);
	if (!s.thread || !flags) {
		free(s.thread);
		return bad(r, "malformed sample");
	}
	s.fallback = strchr(flags, 'f') != NULL;
	s.cut = strchr(flags, 'c') != NULL;
	if ((p->version == 1 ? v1_chain(r, p, &s) : v2_chain(r, p, &s)) != 0) {
		free(s.thread);
		return -1;
	}
	n = gp_grow(p->samples, &p->samples_cap, p->nsamples + 1, sizeof(s));
	if (!n) {
		free(s.thread);
		return bad(r, "out of memory");
	}
	p->samples = n;
	p->samples[p->nsamples++] = s;
	return 0;
}

/* Version 2's stack PARENT FRAME: the next node of the table. */
static int parse_stack(struct reader *r, struct gp_rprofile *p)
{
	struct gp_frame fr;
	uint64_t parent;
	char *f;
	int st;

	if (p->version == 1)
		return 0;         /* not a version-1 record: ignored as unknown */
	if (num_field(r, 10, &parent) != 0 || !(f = field(r)) || frame_field(f, &fr) != 0 ||
	    *r->cursor)
		return bad(r, "malformed stack record");
	st = parent > UINT32_MAX ? -1 : gp_stack_add(&p->stacks, (uint32_t)parent, &fr);
	if (st == -1)
		return bad(r, "stack record whose parent is not listed before it");
	if (st != 0)
		return bad(r, "out of memory");
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

/* arch NAME SHADOW-STACK: the recording machine's architecture and its
 * shadow stack's name, as libgcswalk gave them. */
static int parse_arch(struct reader *r, struct gp_rprofile *p)
{
	if (parse_string(r, &p->arch, "malformed arch record") != 0)
		return -1;
	return parse_string(r, &p->shadow_stack, "malformed arch record");
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

/* end DURATION SAMPLES MAPPINGS, and STACKS in version 2: each count
 * checked against what was read. */
static int parse_end(struct reader *r, struct gp_rprofile *p)
{
	uint64_t ns, nm, nst = 0;

	if (num_field(r, 10, &p->duration_ns) != 0 || num_field(r, 10, &ns) != 0 ||
	    num_field(r, 10, &nm) != 0 || (p->version > 1 && num_field(r, 10, &nst) != 0))
		return bad(r, "malformed end record");
	if (ns != p->nsamples || nm != p->nmappings ||
	    (p->version > 1 && nst != p->stacks.n - 1))
		return bad(r, "sample, mapping or stack count differs from the end record");
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
	{ "stack", parse_stack, 0, NULL },
	{ "mapping", parse_mapping, 0, NULL },
	{ "lost", parse_lost, 0, NULL },
	{ "vdso-symbol", parse_vdso_symbol, 0, NULL },
	{ "max-stack", parse_max_stack, 0, NULL },
	{ "throttle", parse_throttle, 0, NULL },
	{ "hz", parse_hz, 0, NULL },
	{ "cpus", parse_cpus, 0, NULL },
	{ "arch", parse_arch, 0, NULL },
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
	if (v < 1 || v > GP_PROFILE_VERSION) {
		gp_error(GP_EXIT_BAD_PROFILE, "%s: profile format version %llu, this gcsprof reads "
			 "versions 1 to %d", r->path, (unsigned long long)v, GP_PROFILE_VERSION);
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

/* Every line of L; returns whether the end record was seen. A stream
 * that ends early (a recording cut short) is a truncated file; one that
 * cannot be read, or does not inflate, is an error said here. */
static int read_lines(struct reader *r, struct gp_rprofile *p, struct gp_lines *l)
{
	enum gp_lines_status st;
	char *line;
	size_t len;
	int ended = 0;

	while ((st = gp_lines_next(l, &line, &len)) == GP_LINES_OK) {
		r->lineno++;
		if (parse_line(r, p, line, len, &ended) != 0)
			return ended;
	}
	if (st == GP_LINES_LAST) {
		r->lineno++;
		return 0;       /* a last line without its newline: cut short */
	}
	if (st == GP_LINES_CUT)
		return ended;   /* whole up to its end record, if it has one */
	if (st == GP_LINES_CORRUPT) {
		r->lineno++;
		bad(r, "compressed data that does not inflate");
	} else if (st == GP_LINES_TOO_LONG) {
		r->lineno++;
		bad(r, "a line longer than 64 MiB");
	} else if (st == GP_LINES_ERROR) {
		gp_error(errno == ENOMEM ? GP_EXIT_SYSTEM : GP_EXIT_INPUT, "cannot read profile %s: %s",
			 r->path, strerror(errno));
		r->bad = errno == ENOMEM ? 2 : 3;
	}
	return ended;
}

/* What is left to say once every line is read. */
static int finish(struct reader *r, struct gp_rprofile *p, int ended)
{
	if (r->bad) {
		gp_profile_free(p);
		return r->bad == 2 ? GP_EXIT_SYSTEM : r->bad == 3 ? GP_EXIT_INPUT : GP_EXIT_BAD_PROFILE;
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
	struct reader r = { is_stdin ? "standard input" : path, 0, NULL, 0, NULL, 0 };
	struct gp_lines *l;
	int ended;

	memset(p, 0, sizeof(*p));
	l = gp_lines_open(path);
	if (!l)
		return gp_error(errno == EACCES ? GP_EXIT_PERMISSION :
				errno == ENOMEM ? GP_EXIT_SYSTEM : GP_EXIT_INPUT,
				"cannot read profile %s: %s", path, strerror(errno));
	if (gp_stack_init(&p->stacks) != 0) {
		gp_lines_close(l);
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	}
	ended = read_lines(&r, p, l);
	gp_lines_close(l);
	free(r.frames);
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
	gp_stack_free(&p->stacks);
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
	free(p->arch);
	free(p->shadow_stack);
	memset(p, 0, sizeof(*p));
}
