// SPDX-License-Identifier: MIT
/*
 * A stdio stream that writes gzip (gzip_file.h), through glibc's
 * fopencookie: stdio buffers, zlib deflates each buffer it is handed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "gzip_file.h"

/* stdio's buffer: deflate sees this much at a time, and a sync flush (a
 * few bytes) ends each such piece. */
#define STREAM_BUFFER (64 * 1024)

struct gz_cookie {
	int fd;
	z_stream z;
	unsigned char out[STREAM_BUFFER];
};

/* Write N bytes of BUF to FD whole. */
static int write_all(int fd, const unsigned char *buf, size_t n)
{
	while (n) {
		ssize_t w = write(fd, buf, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			return -1;
		}
		buf += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Deflate what Z holds with FLUSH, writing every byte out. */
static int deflate_out(struct gz_cookie *c, int flush)
{
	int st;

	do {
		c->z.next_out = c->out;
		c->z.avail_out = sizeof(c->out);
		st = deflate(&c->z, flush);
		if (st == Z_STREAM_ERROR) {
			errno = EINVAL;
			return -1;
		}
		if (write_all(c->fd, c->out, sizeof(c->out) - c->z.avail_out) != 0)
			return -1;
	} while (c->z.avail_out == 0 || (flush == Z_FINISH && st != Z_STREAM_END));
	return 0;
}

static ssize_t gz_write(void *cookie, const char *buf, size_t size)
{
	struct gz_cookie *c = cookie;
	size_t done = 0;

	/* avail_in is 32 bits: hand a larger write over in pieces. */
	while (done < size) {
		size_t piece = size - done > (1u << 30) ? (1u << 30) : size - done;

		c->z.next_in = (unsigned char *)(buf + done);
		c->z.avail_in = (unsigned)piece;
		if (deflate_out(c, Z_SYNC_FLUSH) != 0)
			return -1;
		done += piece;
	}
	return (ssize_t)size;
}

static int gz_close(void *cookie)
{
	struct gz_cookie *c = cookie;
	int ret = 0;

	c->z.next_in = NULL;
	c->z.avail_in = 0;
	if (deflate_out(c, Z_FINISH) != 0)
		ret = -1;
	deflateEnd(&c->z);
	if (close(c->fd) != 0)
		ret = -1;
	free(c);
	return ret;
}

FILE *gp_gzip_create(const char *path, int level)
{
	static const cookie_io_functions_t io = { NULL, gz_write, NULL, gz_close };
	struct gz_cookie *c = calloc(1, sizeof(*c));
	FILE *f;

	if (!c)
		return NULL;
	/* windowBits 15 + 16: deflate in gzip's wrapper, which zcat reads. */
	if (deflateInit2(&c->z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	c->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (c->fd < 0) {
		int e = errno;

		deflateEnd(&c->z);
		free(c);
		errno = e;
		return NULL;
	}
	f = fopencookie(c, "w", io);
	if (!f || setvbuf(f, NULL, _IOFBF, STREAM_BUFFER) != 0) {
		int e = errno;

		if (f)
			fclose(f);       /* closes the cookie too */
		else
			gz_close(c);
		errno = e;
		return NULL;
	}
	return f;
}
