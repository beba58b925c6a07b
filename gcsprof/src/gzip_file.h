/* SPDX-License-Identifier: MIT */
/*
 * gzip (zlib's deflate, in gzip's wrapper) for the profile. A stdio stream
 * that writes gzip, which writers print into as into any FILE: each time
 * stdio hands its buffer over (when full, or at fflush) the data is
 * deflated with a sync flush, so that what is on disk after an fflush
 * always inflates to every byte written before it; fclose writes gzip's
 * trailer and closes the file. And a file compressed in place, as the
 * recorder compresses its profile once the recording has ended.
 */
#ifndef GCSPROF_GZIP_FILE_H
#define GCSPROF_GZIP_FILE_H

#include <stdio.h>

/* Create (or truncate) PATH for writing gzip at LEVEL (zlib's 1-9). NULL
 * with errno set on failure. */
FILE *gp_gzip_create(const char *path, int level);
/* The same on FD, open for writing (closed by fclose, or on failure). */
FILE *gp_gzip_fdopen(int fd, int level);
/*
 * Replace the regular file PATH by its gzip at LEVEL: written beside it,
 * then renamed over it, so PATH is at every moment either the whole plain
 * file or the whole gzip. 0 when done; 1 when PATH is not a regular file
 * (a device, a pipe: left as it is); -1 with errno set on failure, PATH
 * untouched.
 */
int gp_gzip_in_place(const char *path, int level);

#endif
