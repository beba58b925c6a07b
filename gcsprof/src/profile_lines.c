// SPDX-License-Identifier: MIT
/*
 * The lines of a profile file (profile_lines.h), read in blocks through
 * zlib's gz reader and split at newlines in a buffer that grows to hold
 * the longest line.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "gcsprof.h"
#include "profile_lines.h"

#define BLOCK (64 * 1024)

struct gp_lines {
	gzFile gz;
	char *buf;
	size_t cap, len, pos;      /* bytes in buf; the next line starts at pos */
	int eof, err;
	const char *why;
};

struct gp_lines *gp_lines_open(const char *path)
{
	struct gp_lines *l = calloc(1, sizeof(*l));
	int fd;

	if (!l)
		return NULL;
	/* gzclose closes the descriptor: standard input's is a copy. */
	fd = strcmp(path, "-") == 0 ? dup(0) : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(l);
		return NULL;
	}
	l->gz = gzdopen(fd, "rb");
	if (!l->gz) {
		close(fd);
		free(l);
		errno = ENOMEM;
		return NULL;
	}
	(void)gzbuffer(l->gz, BLOCK);
	return l;
}

/* Read one more block into the buffer (growing it when it is full of one
 * line). 0, or a status. */
static enum gp_lines_status fill(struct gp_lines *l)
{
	int n, zerr;
	char *b;

	if (l->pos) {
		memmove(l->buf, l->buf + l->pos, l->len - l->pos);
		l->len -= l->pos;
		l->pos = 0;
	}
	if (l->len >= GP_LINES_MAX)
		return GP_LINES_TOO_LONG;
	b = gp_grow(l->buf, &l->cap, l->len + BLOCK + 1, 1);
	if (!b) {
		errno = ENOMEM;
		return GP_LINES_ERROR;
	}
	l->buf = b;
	n = gzread(l->gz, l->buf + l->len, BLOCK);
	if (n > 0) {
		l->len += (size_t)n;
		return GP_LINES_OK;
	}
	l->eof = 1;
	l->why = gzerror(l->gz, &zerr);
	if (n == 0 && zerr == Z_BUF_ERROR)
		l->err = GP_LINES_CUT;           /* "unexpected end of file" */
	else if (n < 0)
		l->err = zerr == Z_ERRNO ? GP_LINES_ERROR : zerr == Z_MEM_ERROR ? GP_LINES_ERROR
										: GP_LINES_CORRUPT;
	if (n < 0 && zerr == Z_MEM_ERROR)
		errno = ENOMEM;
	return GP_LINES_OK;
}

enum gp_lines_status gp_lines_next(struct gp_lines *l, char **line, size_t *len)
{
	for (;;) {
		char *nl = l->len > l->pos ? memchr(l->buf + l->pos, '\n', l->len - l->pos) : NULL;
		enum gp_lines_status st;

		if (nl) {
			*nl = '\0';
			*line = l->buf + l->pos;
			*len = (size_t)(nl - *line);
			l->pos = (size_t)(nl - l->buf) + 1;
			return GP_LINES_OK;
		}
		if (l->eof) {
			if (l->err == GP_LINES_CORRUPT || l->err == GP_LINES_ERROR)
				return (enum gp_lines_status)l->err;
			if (l->len > l->pos) {
				l->buf[l->len] = '\0';
				*line = l->buf + l->pos;
				*len = l->len - l->pos;
				l->pos = l->len;
				return GP_LINES_LAST;
			}
			return l->err ? (enum gp_lines_status)l->err : GP_LINES_END;
		}
		st = fill(l);
		if (st != GP_LINES_OK)
			return st;
	}
}

const char *gp_lines_why(struct gp_lines *l)
{
	return l->why ? l->why : "";
}

void gp_lines_close(struct gp_lines *l)
{
	if (!l)
		return;
	(void)gzclose(l->gz);
	free(l->buf);
	free(l);
}
