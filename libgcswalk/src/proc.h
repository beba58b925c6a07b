/* SPDX-License-Identifier: MIT */
/* proc.c: /proc parsing shared by the live back end and the public
 * gcswalk_proc_* calls. */
#ifndef GCSWALK_PROC_H
#define GCSWALK_PROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "internal.h"

/* A small /proc file, whole, NUL-terminated, malloc'd; NULL with errno. */
GW_HIDDEN char *gw_proc_read_file(const char *path);
/* Field NAME (e.g. "\nTracerPid:") of /proc/PID/status: its first
 * character into *C (0 if missing), its value as a number back (0). */
GW_HIDDEN long gw_proc_status_field(pid_t pid, const char *name, int *c);
GW_HIDDEN int gw_proc_is_zombie(pid_t pid);
/* A thread that exited but was not reaped yet is a zombie: gone too. */
GW_HIDDEN int gw_proc_thread_alive(pid_t tid);
/* The status for an errno of opening a /proc file. */
GW_HIDDEN int gw_proc_status_of_errno(int err);
/* FN for every thread of PID (/proc/PID/task) until it returns < 0. */
GW_HIDDEN int gw_proc_each_task(pid_t pid, int (*fn)(void *arg, pid_t tid), void *arg);
/*
 * Buffer parsers, one per kind of /proc text: the calls above and below
 * run them on what the kernel wrote, fuzz/proc-fuzz.c on hostile text.
 * Text arguments are NUL-terminated unless a length is given.
 */

/* Field NAME (e.g. "\nTracerPid:") of status TEXT: its first character
 * into *C (0 if missing), its value as a number back (0). */
GW_HIDDEN long gw_proc_field(const char *text, const char *name, int *c);
/* The state (field 3) and utime + stime (fields 14 and 15, in clock
 * ticks) of a stat LINE; 0, or -1 if it is no stat line. */
GW_HIDDEN int gw_proc_parse_stat(const char *line, char *state, uint64_t *ticks);
/* A directory entry of /proc/PID/task as a tid, or -1. */
GW_HIDDEN long gw_proc_tid_of(const char *name);
/* Whether the blank-separated list S (smaps VmFlags) holds the word FLAG. */
GW_HIDDEN int gw_proc_has_flag(const char *s, const char *flag);

/* A line of /proc/PID/maps; NAME (not NUL-terminated) is what follows
 * the inode, NAME_LEN 0 for an anonymous mapping. */
struct gw_proc_map {
	uint64_t lo, hi, offset;
	const char *name;
	size_t name_len;
};
/* One maps LINE (or smaps header line), without its newline, into *M
 * (NAME points into LINE); 0, or -1 if it is not well-formed. */
GW_HIDDEN int gw_proc_map_line(const char *line, struct gw_proc_map *m);
/* FN for every well-formed line of maps TEXT (NUL-terminated, changed in
 * place), until it returns < 0; malformed lines are skipped. */
GW_HIDDEN int gw_proc_parse_maps(char *text, int (*fn)(void *arg, const struct gw_proc_map *m),
				 void *arg);
/* FN for every GCS mapping ("ss" in its VmFlags) and the vDSO of smaps
 * TEXT (NUL-terminated, changed in place), until it returns < 0. */
GW_HIDDEN int gw_proc_parse_smaps(char *text,
				  int (*fn)(void *arg, enum gcswalk_region_kind kind, uint64_t lo,
					    uint64_t hi),
				  void *arg);

/*
 * maps-scan.c: the "lo-hi " head of maps lines, one character at a time,
 * for readers that cannot hold a line (the self walk, in a signal
 * handler). Calls nothing: async-signal-safe.
 */
struct gw_maps_head {
	uint64_t lo, hi;
	unsigned state, digits;
};
#define GW_MAPS_HEAD_INIT { 0, 0, 0, 0 }
/* Feed C; 1 when C is the blank that ends a line's well-formed "lo-hi"
 * (LO and HI then hold it; HI > LO is not checked), else 0. A newline
 * starts the next line. */
GW_HIDDEN int gw_maps_head_feed(struct gw_maps_head *h, char c);
/* The end of the first mapping of maps text that holds ADDR, found in
 * text fed in chunks of any size. */
struct gw_maps_find {
	uint64_t addr, end;             /* END: 0 until found */
	struct gw_maps_head head;
};
/* Feed N bytes; 1 once the mapping is found (END), else 0. */
GW_HIDDEN int gw_maps_find_feed(struct gw_maps_find *f, const char *buf, size_t n);

/* /proc/PID/task/TID/comm without its newline, malloc'd; NULL if gone. */
GW_HIDDEN char *gw_proc_thread_name(pid_t pid, pid_t tid);
/* Whether TID is (still) listed among PID's threads; 0 with errno. */
GW_HIDDEN int gw_proc_has_thread(pid_t pid, pid_t tid);
/* The GCS and vDSO regions of T's process from smaps, into T. */
GW_HIDDEN int gw_proc_load_regions(struct gcswalk_target *t);

#endif
