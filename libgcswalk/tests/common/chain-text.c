// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
#include <dirent.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chain-text.h"

void text_free(struct text *t)
{
	free(t->s);
	memset(t, 0, sizeof(*t));
}

void text_printf(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (t->len + (size_t)n + 1 > t->cap) {
		size_t cap = t->cap ? t->cap : 256;
		char *p;

		while (cap < t->len + (size_t)n + 1)
			cap *= 2;
		p = realloc(t->s, cap);
		if (!p)
			return;
		t->s = p;
		t->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(t->s + t->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	t->len += (size_t)n;
}

static const char *base(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;

	return s ? s + 1 : p ? p : "-";
}

static int is_address(enum gcswalk_frame_kind k)
{
	return k == GCSWALK_FRAME_PC || k == GCSWALK_FRAME_LR || k == GCSWALK_FRAME_RETURN ||
	       k == GCSWALK_FRAME_INTERRUPTED_PC;
}

void chain_text(struct text *out, gcswalk_symbolizer *sym, const struct gcswalk_frame *f,
		size_t n, int final, const char *exe, int full)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		const struct gcswalk_location *loc = NULL;
		int ret = GCSWALK_E_NO_SYMBOL;

		if (is_address(f[i].kind) || f[i].kind == GCSWALK_FRAME_SIGRETURN)
			ret = gcswalk_symbolize(sym, f[i].address, gcswalk_frame_is_return(&f[i]), &loc);
		if (!full) {
			if (!is_address(f[i].kind)) {
				text_printf(out, "%s\n", gcswalk_frame_kind_name(f[i].kind));
				continue;
			}
			if (ret != GCSWALK_OK || !loc->module || strcmp(base(loc->module), exe) != 0)
				continue;
			text_printf(out, "%s", gcswalk_frame_kind_name(f[i].kind));
			for (j = 0; j < loc->nsymbols; j++)
				text_printf(out, " %s:%d", loc->symbols[j].function ?
					    loc->symbols[j].function : "?", loc->symbols[j].line);
			text_printf(out, "\n");
			continue;
		}
		text_printf(out, "%s %s %#llx", gcswalk_frame_kind_name(f[i].kind),
			    gcswalk_source_name(f[i].source), (unsigned long long)f[i].address);
		if (ret == GCSWALK_OK && loc) {
			text_printf(out, " %s ", base(loc->module));
			for (j = 0; j < loc->build_id_size; j++)
				text_printf(out, "%02x", loc->build_id[j]);
			if (!loc->build_id_size)
				text_printf(out, "-");
			for (j = 0; j < loc->nsymbols; j++) {
				const struct gcswalk_symbol *s = &loc->symbols[j];

				text_printf(out, " %s%s[%s+%#llx] %s:%d", s->inlined ? "inlined:" : "",
					    s->function ? s->function : "?", s->symbol ? s->symbol : "-",
					    (unsigned long long)s->function_offset, base(s->file),
					    s->line);
			}
		}
		text_printf(out, "\n");
	}
	text_printf(out, "%s\n", final == GCSWALK_CUT ? "cut" : "end");
}

int walk_text(struct text *out, gcswalk_target *t, gcswalk_symbolizer *sym, int tid,
	      const struct gcswalk_walk_options *opts, const char *exe, int full)
{
	struct gcswalk_frame *frames = NULL, f, *p;
	size_t n = 0, cap = 0;
	struct gcswalk_walk_options deep = GCSWALK_WALK_OPTIONS_INIT;
	gcswalk_walk *w;
	int idx = gcswalk_target_thread_index(t, tid), ret;

	text_printf(out, "thread %d\n", tid);
	if (idx < 0) {
		text_printf(out, "error no such thread\n");
		return idx;
	}
	if (!opts) {
		/* Deep enough for every chain of the tests (the deepest is
		 * about 1500 frames; the default limit is 1024). */
		deep.max_frames = 8192;
		opts = &deep;
	}
	ret = gcswalk_walk_begin(&w, t, (size_t)idx, opts);
	if (ret != GCSWALK_OK) {
		text_printf(out, "error %s\n", gcswalk_strerror(ret));
		return ret;
	}
	while ((ret = gcswalk_walk_next(w, &f)) == GCSWALK_OK) {
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			p = realloc(frames, cap * sizeof(*p));
			if (!p)
				break;
			frames = p;
		}
		frames[n++] = f;
	}
	gcswalk_walk_free(w);
	chain_text(out, sym, frames, n, ret, exe, full);
	free(frames);
	return GCSWALK_OK;
}

char *text_block(const char *expect, int tid)
{
	char head[32];
	const char *s, *e;
	size_t hl;

	hl = (size_t)snprintf(head, sizeof(head), "thread %d\n", tid);
	for (s = expect; s; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL) {
		if (strncmp(s, head, hl) == 0)
			break;
	}
	if (!s)
		return NULL;
	for (e = s + hl; *e; e = strchr(e, '\n') ? strchr(e, '\n') + 1 : e + strlen(e)) {
		if (strncmp(e, "thread ", 7) == 0)
			break;
	}
	return strndup(s, (size_t)(e - s));
}

int *text_tids(const char *expect, size_t *n)
{
	const char *s;
	int *tids = NULL, *p;

	*n = 0;
	for (s = expect; s && *s; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL) {
		if (strncmp(s, "thread ", 7) == 0) {
			p = realloc(tids, (*n + 1) * sizeof(*p));
			if (!p)
				break;
			tids = p;
			tids[(*n)++] = atoi(s + 7);
		}
	}
	return tids;
}

char *read_text_file(const char *path)
{
	FILE *f = fopen(path, "r");
	struct text t = { NULL, 0, 0 };
	char buf[4096];
	size_t r;

	if (!f)
		return NULL;
	text_printf(&t, "%s", "");
	while ((r = fread(buf, 1, sizeof(buf), f)) > 0)
		text_printf(&t, "%.*s", (int)r, buf);
	fclose(f);
	return t.s;
}

long read_number_file(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

int count_open_fds(void)
{
	struct dirent *de;
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)) != NULL)
		n += de->d_name[0] != '.';
	closedir(d);
	return n - 1;           /* the directory's own descriptor */
}

int chains_match_text(gcswalk_target *t, gcswalk_symbolizer *sym, const char *expect,
		      const char *exe, const char *what, struct text *why)
{
	size_t n, i;
	int *tids = text_tids(expect, &n), ok = n > 0;

	for (i = 0; i < n; i++) {
		struct text got = { NULL, 0, 0 };
		char *want = text_block(expect, tids[i]);

		walk_text(&got, t, sym, tids[i], NULL, exe, 0);
		if (!want || !got.s || strcmp(want, got.s) != 0) {
			text_printf(why, "%s: thread %d differs; expected:\n%s# got:\n%s", what, tids[i],
				    want ? want : "", got.s ? got.s : "");
			ok = 0;
		}
		free(want);
		text_free(&got);
	}
	free(tids);
	return ok;
}

char *read_until_ready(int fd, char **all)
{
	struct text t = { NULL, 0, 0 };
	char buf[4096];
	ssize_t r;

	text_printf(&t, "%s", "");
	while ((r = read(fd, buf, sizeof(buf))) > 0) {
		text_printf(&t, "%.*s", (int)r, buf);
		if (t.s && strstr(t.s, "ready\n"))
			break;
	}
	if (!t.s || !strstr(t.s, "ready\n")) {
		if (all)
			*all = t.s;
		else
			free(t.s);
		return NULL;
	}
	*strstr(t.s, "ready\n") = '\0';
	return t.s;
}
