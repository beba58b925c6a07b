/* SPDX-License-Identifier: MIT */
/*
 * gzip (zlib's deflate, in gzip's wrapper) for the profile: the recorder
 * writes its profile plain and compresses it in place once the recording
 * has ended.
 */
#ifndef GCSPROF_GZIP_FILE_H
#define GCSPROF_GZIP_FILE_H

#include <stdio.h>

/*
 * Replace the regular file PATH by its gzip at LEVEL (zlib's 1-9): written beside it,
 * then renamed over it, so PATH is at every moment either the whole plain
 * file or the whole gzip. 0 when done; 1 when PATH is not a regular file
 * (a device, a pipe: left as it is); -1 with errno set on failure, PATH
 * untouched.
 */
int gp_gzip_in_place(const char *path, int level);

#endif
