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
/* A line of /proc/PID/maps; NAME (not NUL-terminated) is what follows
 * the inode, NAME_LEN 0 for an anonymous mapping. */
struct gw_proc_map {
	uint64_t lo, hi, offset;
	const char *name;
	size_t name_len;
};
/* FN for every well-formed line of maps TEXT (NUL-terminated, changed in
 * place), until it returns < 0; malformed lines are skipped. */
GW_HIDDEN int gw_proc_parse_maps(char *text, int (*fn)(void *arg, const struct gw_proc_map *m),
				 void *arg);
/* /proc/PID/task/TID/comm without its newline, malloc'd; NULL if gone. */
GW_HIDDEN char *gw_proc_thread_name(pid_t pid, pid_t tid);
/* Whether TID is (still) listed among PID's threads; 0 with errno. */
GW_HIDDEN int gw_proc_has_thread(pid_t pid, pid_t tid);
/* The GCS and vDSO regions of T's process from smaps, into T. */
GW_HIDDEN int gw_proc_load_regions(struct gcswalk_target *t);

#endif
