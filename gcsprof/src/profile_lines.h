/* SPDX-License-Identifier: MIT */
/*
 * The lines of a profile file, as its reader takes them: through zlib's
 * gz reader, so that a gzip file (what the recorder writes) and a plain
 * one (version 1, or version 2 after zcat) read alike. A line may hold any
 * byte but the newline (the reader refuses NULs itself); a line longer
 * than GP_LINES_MAX is an error, so that a small hostile file that inflates
 * to a huge line cannot take all memory.
 */
#ifndef GCSPROF_PROFILE_LINES_H
#define GCSPROF_PROFILE_LINES_H

#include <stddef.h>

#define GP_LINES_MAX ((size_t)64 << 20)

struct gp_lines;

enum gp_lines_status {
	GP_LINES_OK,               /* a line (its newline replaced by NUL) */
	GP_LINES_LAST,             /* the file's last bytes, without a newline: cut short */
	GP_LINES_END,              /* no more lines */
	GP_LINES_CUT,              /* the compressed stream ends before its end: truncated */
	GP_LINES_CORRUPT,          /* compressed data that does not inflate */
	GP_LINES_TOO_LONG,         /* a line longer than GP_LINES_MAX */
	GP_LINES_ERROR,            /* a read error (errno) or out of memory (errno ENOMEM) */
};

/* Open PATH ("-": standard input). NULL with errno set. */
struct gp_lines *gp_lines_open(const char *path);
/* The next line: *LINE and *LEN (without the newline) stay valid until
 * the next call. GP_LINES_OK or GP_LINES_LAST with a line, else none. */
enum gp_lines_status gp_lines_next(struct gp_lines *l, char **line, size_t *len);
/* zlib's word on the last error (GP_LINES_CORRUPT). */
const char *gp_lines_why(struct gp_lines *l);
void gp_lines_close(struct gp_lines *l);

#endif
