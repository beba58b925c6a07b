// SPDX-License-Identifier: MIT
/*
 * /proc parsing for live processes: small files read whole, status fields,
 * the thread list, a thread's stat line, and the GCS and vDSO regions of
 * smaps. Each format has a parser over a buffer (proc.h), apart from the
 * calls that read the kernel's files, so that it can be fuzzed. No ptrace
 * here (that is live.c); the public gcswalk_proc_* calls need no target at
 * all.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "proc.h"

char *gw_proc_read_file(const char *path)
{
	size_t cap = 256, len = 0;
	char *buf = malloc(cap), *n;
	ssize_t r;
	int fd, err = 0;

	if (!buf)
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		free(buf);
		errno = err;
		return NULL;
	}
	for (;;) {
		if (len + 1 >= cap) {
			if (cap > (1u << 28))   /* 256 MiB of /proc text: absurd */
				break;
			n = realloc(buf, cap * 2);
			if (!n)
				break;
			buf = n;
			cap *= 2;
		}
		r = read(fd, buf + len, cap - len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	buf[len] = '\0';
	return buf;
}

long gw_proc_field(const char *text, const char *name, int *c)
{
	const char *p = strstr(text, name);

	*c = 0;
	if (!p)
		return 0;
	p += strlen(name);
	while (*p == ' ' || *p == '\t')
		p++;
	*c = (unsigned char)*p;
	return strtol(p, NULL, 10);
}

long gw_proc_status_field(pid_t pid, const char *name, int *c)
{
	char path[64], *s;
	long value;

	*c = 0;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	s = gw_proc_read_file(path);
	if (!s)
		return 0;
	value = gw_proc_field(s, name, c);
	free(s);
	return value;
}

int gw_proc_is_zombie(pid_t pid)
{
	int c;

	(void)gw_proc_status_field(pid, "\nState:", &c);
	return c == 'Z' || c == 'X';
}

int gw_proc_thread_alive(pid_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d", (int)tid);
	return access(path, F_OK) == 0 && !gw_proc_is_zombie(tid);
}

int gw_proc_status_of_errno(int err)
{
	return err == ENOENT || err == ESRCH ? GCSWALK_E_NO_PROCESS :
	       err == EACCES || err == EPERM ? GCSWALK_E_PERMISSION : GCSWALK_E_SYSTEM;
}

long gw_proc_tid_of(const char *name)
{
	char *end;
	long tid;

	if (!isdigit((unsigned char)name[0]))
		return -1;
	tid = strtol(name, &end, 10);
	return *end || tid <= 0 || tid > INT32_MAX ? -1 : tid;
}

int gw_proc_each_task(pid_t pid, int (*fn)(void *arg, pid_t tid), void *arg)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int ret = GCSWALK_OK;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return gw_proc_status_of_errno(errno);
	while (ret >= 0 && (de = readdir(d)) != NULL) {
		long tid = gw_proc_tid_of(de->d_name);

		if (tid > 0)
			ret = fn(arg, (pid_t)tid);
	}
	closedir(d);
	return ret;
}

static const char *skip_blanks(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* Past the next word, and the blanks after it. */
static const char *skip_word(const char *p)
{
	while (*p && *p != ' ' && *p != '\t')
		p++;
	return skip_blanks(p);
}

int gw_proc_map_line(const char *line, struct gw_proc_map *m)
{
	struct gw_maps_head h = GW_MAPS_HEAD_INIT;
	unsigned long long off;
	const char *p;
	char *end;
	size_t i;

	/* The head as the self walk reads it (maps-scan.c), so that the two
	 * readers cannot disagree on which lines are mappings. */
	for (i = 0; line[i] && !gw_maps_head_feed(&h, line[i]); i++)
		;
	if (!line[i] || h.hi <= h.lo)
		return -1;
	/* After "lo-hi": perms, offset, dev, inode, then the name if any.
	 * strtoull, not sscanf: an offset too large is an error it reports,
	 * where sscanf's behaviour is undefined. */
	p = skip_blanks(line + i);
	if (!*p)
		return -1;
	p = skip_word(p);
	if (!isxdigit((unsigned char)*p))
		return -1;
	errno = 0;
	off = strtoull(p, &end, 16);
	if (errno)
		return -1;
	*m = (struct gw_proc_map){ h.lo, h.hi, off, NULL, 0 };
	p = skip_blanks(end);
	if (*p) {
		p = skip_word(p);               /* dev */
		if (*p) {
			m->name = skip_word(p); /* past the inode */
			m->name_len = strlen(m->name);
		}
	}
	return 0;
}

int gw_proc_parse_maps(char *text, int (*fn)(void *arg, const struct gw_proc_map *m), void *arg)
{
	char *line, *next;
	int ret = GCSWALK_OK;

	for (line = text; *line && ret >= 0; line = next) {
		char *nl = strchr(line, '\n');
		struct gw_proc_map m;

		next = nl ? nl + 1 : line + strlen(line);
		if (nl)
			*nl = '\0';
		if (gw_proc_map_line(line, &m) == 0)
			ret = fn(arg, &m);
	}
	return ret;
}

int gw_proc_has_thread(pid_t pid, pid_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)pid, (int)tid);
	return access(path, F_OK) == 0;
}

char *gw_proc_thread_name(pid_t pid, pid_t tid)
{
	char path[96], *name, *nl;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	name = gw_proc_read_file(path);
	if (!name)
		return NULL;
	nl = strchr(name, '\n');
	if (nl)
		*nl = '\0';
	return name;
}

struct tid_list {
	int *tids;
	size_t n, cap;
};

static int add_tid(void *arg, pid_t tid)
{
	struct tid_list *l = arg;
	int *n = gw_grow(l->tids, l->n, &l->cap, sizeof(*n));

	if (!n)
		return GCSWALK_E_NOMEM;
	l->tids = n;
	l->tids[l->n++] = (int)tid;
	return GCSWALK_OK;
}

static int by_value(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

int gcswalk_proc_threads(int pid, int **tids, size_t *count)
{
	struct tid_list l = { NULL, 0, 0 };
	int ret;

	if (tids)
		*tids = NULL;
	if (count)
		*count = 0;
	if (!tids || !count || pid <= 0)
		return GCSWALK_E_INVALID;
	ret = gw_proc_each_task(pid, add_tid, &l);
	if (ret < 0) {
		free(l.tids);
		return ret;
	}
	if (l.n == 0) {
		free(l.tids);
		return GCSWALK_E_NO_PROCESS;    /* every thread exited */
	}
	qsort(l.tids, l.n, sizeof(*l.tids), by_value);
	*tids = l.tids;
	*count = l.n;
	return GCSWALK_OK;
}

/* A stat line is at most ~1.2 KiB (52 numbers and a 16-byte name); more
 * than this is no stat line. */
#define STAT_MAX 4096

/* The fields after the last ')': the name may hold anything, parentheses
 * included. */
int gw_proc_parse_stat(const char *line, char *state, uint64_t *ticks)
{
	const char *p = strrchr(line, ')');
	char *end;
	unsigned long long ut, st;
	int field;

	if (!p || p[1] != ' ' || !p[2])
		return -1;
	*state = p[2];
	p += 3;
	/* P is at the blank after field 3 (the state): each step moves past
	 * the next blank onto the next field, up to utime (14), then stime
	 * (15). */
	for (field = 3; field < 14; field++) {
		p = strchr(p, ' ');
		if (!p)
			return -1;
		p++;
	}
	/* Digits first: strtoull would skip blanks into the next field (an
	 * empty field) and take a sign. */
	if (!isdigit((unsigned char)*p))
		return -1;
	errno = 0;
	ut = strtoull(p, &end, 10);
	if (*end != ' ' || !isdigit((unsigned char)end[1]))
		return -1;
	p = end + 1;
	st = strtoull(p, &end, 10);
	if (errno)
		return -1;
	*ticks = ut + st;
	return 0;
}

static int read_stat(int fd, char *buf, size_t cap)
{
	ssize_t r;

	do
		r = pread(fd, buf, cap - 1, 0);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return gw_proc_status_of_errno(errno);
	if (r == 0)
		return GCSWALK_E_NO_PROCESS;    /* a reaped thread reads empty */
	if ((size_t)r == cap - 1)
		return GCSWALK_E_IO;
	buf[r] = '\0';
	return GCSWALK_OK;
}

int gcswalk_proc_thread(int pid, int tid, int *stat_fd, struct gcswalk_proc_thread *info)
{
	char path[96], buf[STAT_MAX];
	int fd = stat_fd ? *stat_fd : -1, first = fd < 0, ret, c;
	struct gcswalk_proc_thread out;
	uint64_t ticks = 0;
	long hz;
	char state;

	if (pid <= 0 || tid <= 0 || !info || info->size < GW_PROC_THREAD_SIZE_1_0)
		return GCSWALK_E_INVALID;
	/* A local copy of ours, holding what the caller has (tgid and
	 * tracer_pid stay as they are on later calls). */
	memset(&out, 0, sizeof(out));
	memcpy(&out, info, info->size < sizeof(out) ? info->size : sizeof(out));
	out.size = sizeof(out);
	if (fd < 0) {
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return gw_proc_status_of_errno(errno);
	}
	ret = read_stat(fd, buf, sizeof(buf));
	if (ret == GCSWALK_OK && gw_proc_parse_stat(buf, &state, &ticks) != 0)
		ret = GCSWALK_E_IO;
	if (ret == GCSWALK_OK && first) {
		char *status;

		snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
		status = gw_proc_read_file(path);
		if (!status) {
			ret = gw_proc_status_of_errno(errno);
		} else {
			memset(&out, 0, sizeof(out));
			out.size = sizeof(out);
			out.tgid = (int)gw_proc_field(status, "\nTgid:", &c);
			out.tracer_pid = (int)gw_proc_field(status, "\nTracerPid:", &c);
			free(status);
		}
	}
	if (stat_fd && *stat_fd < 0 && ret == GCSWALK_OK)
		*stat_fd = fd;                  /* the caller's to close from now on */
	else if (!stat_fd || *stat_fd != fd)
		close(fd);
	if (ret < 0)
		return ret;
	hz = sysconf(_SC_CLK_TCK);
	out.state = state;
	out.cpu_time_ns = hz > 0 ? ticks * (1000000000ULL / (uint64_t)hz) : 0;
	return gw_sized_out(info, info->size, &out, sizeof(out), GW_PROC_THREAD_SIZE_1_0);
}

int gw_proc_has_flag(const char *s, const char *flag)
{
	size_t n = strlen(flag);

	for (;;) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			return 0;
		if (strncmp(s, flag, n) == 0 && (s[n] == ' ' || s[n] == '\t' || !s[n]))
			return 1;
		while (*s && *s != ' ' && *s != '\t')
			s++;
	}
}

/* smaps: a header line "lo-hi perms offset dev inode [name]" per mapping,
 * then "Key: value" lines, among them "VmFlags: rd wr ... ss ...". */
int gw_proc_parse_smaps(char *text,
			int (*fn)(void *arg, enum gcswalk_region_kind kind, uint64_t lo, uint64_t hi),
			void *arg)
{
	struct gw_proc_map m = { 0, 0, 0, NULL, 0 };
	char *line, *next;
	int ret = GCSWALK_OK, have = 0;

	for (line = text; *line && ret >= 0; line = next) {
		char *nl = strchr(line, '\n');

		next = nl ? nl + 1 : line + strlen(line);
		if (nl)
			*nl = '\0';
		if (strncmp(line, "VmFlags:", 8) == 0) {
			/* One VmFlags line per mapping: a second one belongs to
			 * no header. */
			if (have && gw_proc_has_flag(line + 8, "ss"))
				ret = fn(arg, GCSWALK_REGION_GCS, m.lo, m.hi);
			have = 0;
		} else if (gw_proc_map_line(line, &m) == 0) {
			have = 1;
			if (m.name_len == 6 && memcmp(m.name, "[vdso]", 6) == 0)
				ret = fn(arg, GCSWALK_REGION_VDSO, m.lo, m.hi);
		}
	}
	return ret;
}

static int add_region(void *arg, enum gcswalk_region_kind kind, uint64_t lo, uint64_t hi)
{
	return gw_target_add_region(arg, kind, lo, hi);
}

int gw_proc_load_regions(struct gcswalk_target *t)
{
	char path[64], *text;
	int ret;

	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)t->pid);
	text = gw_proc_read_file(path);
	if (!text)
		return gw_fail_errno(t, gw_proc_status_of_errno(errno), errno, "%s", path);
	ret = gw_proc_parse_smaps(text, add_region, t);
	free(text);
	return ret < 0 ? gw_fail(t, ret, "out of memory") : GCSWALK_OK;
}
