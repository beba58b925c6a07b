// SPDX-License-Identifier: MIT
/*
 * gzip for the profile (gzip_file.h): a file compressed in place through
 * a stdio stream that writes gzip, made with glibc's fopencookie (stdio
 * buffers, zlib deflates each buffer it is handed with a sync flush; fclose
 * writes gzip's trailer and closes the file).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
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

/* A stream writing gzip at LEVEL into FD, open for writing (FD closed by
 * fclose, or on failure). NULL with errno set on failure. */
static FILE *gzip_fdopen(int fd, int level)
{
	static const cookie_io_functions_t io = { NULL, gz_write, NULL, gz_close };
	struct gz_cookie *c = calloc(1, sizeof(*c));
	FILE *f;

	if (!c) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	c->fd = fd;
	/* windowBits 15 + 16: deflate in gzip's wrapper, which zcat reads. */
	if (deflateInit2(&c->z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		close(fd);
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	f = fopencookie(c, "w", io);
	if (!f || setvbuf(f, NULL, _IOFBF, STREAM_BUFFER) != 0) {
		int e = f ? errno : ENOMEM;

		if (f)
			fclose(f);       /* closes the cookie too */
		else
			gz_close(c);
		errno = e;
		return NULL;
	}
	return f;
}

/* A name for a new file beside PATH: its directory, ".NAME.XXXXXX". */
static char *temp_beside(const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t dir = slash ? (size_t)(slash - path) + 1 : 0;
	size_t size = strlen(path) + sizeof(".") + sizeof(".XXXXXX");
	char *t = malloc(size);

	if (!t) {
		errno = ENOMEM;
		return NULL;
	}
	memcpy(t, path, dir);
	snprintf(t + dir, size - dir, ".%s.XXXXXX", path + dir);
	return t;
}

/* Everything IN holds, from where it stands, into the stream OUT. */
static int copy_into(int in, FILE *out)
{
	char *buf = malloc(STREAM_BUFFER);
	int ret = -1;

	if (!buf) {
		errno = ENOMEM;
		return -1;
	}
	for (;;) {
		ssize_t n = read(in, buf, STREAM_BUFFER);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n == 0 ? 0 : -1;
			break;
		}
		if (fwrite(buf, 1, (size_t)n, out) != (size_t)n)
			break;
	}
	free(buf);
	return ret;
}

/* PATH's gzip into the new file TMP (mode MODE); TMP is gone on failure. */
static int compress_to(int in, const char *tmp, int out, mode_t mode, int level)
{
	FILE *gz;
	int e;

	if (fchmod(out, mode) != 0) {
		e = errno;
		close(out);
		goto fail;
	}
	gz = gzip_fdopen(out, level);
	if (!gz) {
		e = errno;
		goto fail;
	}
	if (copy_into(in, gz) != 0) {
		e = errno;
		fclose(gz);
		goto fail;
	}
	if (fclose(gz) == 0)
		return 0;
	e = errno;
fail:
	unlink(tmp);
	errno = e;
	return -1;
}

int gp_gzip_in_place(const char *path, int level)
{
	struct stat st, lst;
	int in, out, ret = -1, e;
	char *tmp = NULL;

	/* A symbolic link is left alone too: renaming over it would replace
	 * the link, not the file it names. */
	if (lstat(path, &lst) != 0)
		return -1;
	if (!S_ISREG(lst.st_mode))
		return 1;
	in = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (in < 0)
		return -1;
	if (fstat(in, &st) != 0)
		goto done;
	if (!S_ISREG(st.st_mode) || st.st_ino != lst.st_ino || st.st_dev != lst.st_dev) {
		ret = 1;
		goto done;
	}
	tmp = temp_beside(path);
	if (!tmp)
		goto done;
	out = mkostemp(tmp, O_CLOEXEC);
	if (out < 0)
		goto done;
	if (compress_to(in, tmp, out, st.st_mode & 07777, level) != 0)
		goto done;
	if (rename(tmp, path) != 0) {
		e = errno;
		unlink(tmp);
		errno = e;
		goto done;
	}
	ret = 0;
done:
	e = errno;
	close(in);
	free(tmp);
	errno = e;
	return ret;
}
