// SPDX-License-Identifier: MIT
/*
 * gcsprof record, perf method: the kernel takes each sample's user call
 * chain from the thread's GCS (kernel.perf_callchain_gcs) and writes it to
 * a ring buffer; the target is never stopped, and gcsprof needs no ptrace.
 *
 * One event per CPU for each task we are given (the launched command, or
 * every thread of a process with -p), with inherit set, so that every
 * thread and process the target creates later is sampled too. Each CPU's
 * events share one ring buffer (PERF_EVENT_IOC_SET_OUTPUT). A launched
 * command is held before its exec until its events are open, and they
 * start at the exec (enable_on_exec): the profile begins with the
 * program, as with the ptrace method. Sampling is by frequency, on CPU
 * cycles where there is a PMU and on cpu-clock otherwise, so that a
 * sample stands for an equal share of CPU time whatever the number of
 * threads.
 *
 * The loop waits in poll() on the rings and a signalfd for gcsprof's own
 * signals (blocked by record.c), copies out what the rings hold, sorts it
 * by time and hands it to record_perf_records.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "record_perf.h"

/* Ring size per CPU in pages (--mmap-pages, else the default), halved
 * while the kernel refuses (an unprivileged user's perf_event_mlock_kb),
 * down to the least. */
#define RING_PAGES_DEFAULT 128
#define RING_PAGES_MIN 8
/* How long the loop sleeps at most: the latency of the status line, of
 * noticing that an attached process is gone, and of reading the rings
 * when they fill slowly. */
#define POLL_MS 100

struct event_kind {
	const char *name;
	uint32_t type;
	uint64_t config;
};

/* In order of preference: cycles count only while a thread runs, and
 * work under QEMU's TCG too; cpu-clock is there without a PMU. */
static const struct event_kind event_kinds[] = {
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
};
#define NKINDS (sizeof(event_kinds) / sizeof(event_kinds[0]))

static int sys_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static void fill_attr(struct perf_event_attr *a, const struct event_kind *k, unsigned hz,
		      int at_exec, unsigned max_stack)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = k->type;
	a->config = k->config;
	a->freq = 1;
	a->sample_freq = hz;
	/* record_perf_records.c parses the fields in this order, and
	 * record_perf_limits.c counts their size. */
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
			 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN |
			 PERF_SAMPLE_REGS_USER;
	a->sample_max_stack = (uint16_t)max_stack;
	/* GCSPR_EL0, 0 when the chain came from frame records. */
	a->sample_regs_user = 1ULL << GP_PERF_REG_GCSPR;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	a->exclude_callchain_kernel = 1;
	a->inherit = 1;
	a->mmap = 1;
	a->mmap2 = 1;
	a->build_id = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->sample_id_all = 1;
	/* Time stamps on gcsprof's own clock. */
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->watermark = 1;
	/* Wake up at a quarter of the smallest ring we may get. */
	a->wakeup_watermark = 1024;
	a->disabled = at_exec;
	a->enable_on_exec = at_exec;
}

static const struct event_kind *kind_named(const char *name)
{
	size_t i;

	for (i = 0; i < NKINDS; i++)
		if (name && strcmp(event_kinds[i].name, name) == 0)
			return &event_kinds[i];
	return &event_kinds[0];
}

/* Why not, when the sysctl is there but 0: perf's chains would then come
 * from frame records for every thread, GCSPR or not, and are not exact. */
#define CALLCHAIN_GCS_OFF                                                                  \
	"kernel.perf_callchain_gcs is 0: the kernel walks frame records, which are not exact " \
	"(sysctl -w kernel.perf_callchain_gcs=1 turns its GCS call chains on)"

int rec_perf_usable(const char **why, const char **event)
{
	static char msg[160];
	struct perf_event_attr a;
	size_t i;
	int fd, err = 0;

	*event = NULL;
	switch (gcswalk_system_perf_callchains()) {
	case 1:
		break;
	case 0:
		*why = CALLCHAIN_GCS_OFF;
		return GP_EXIT_UNSUPPORTED;
	default:
		snprintf(msg, sizeof(msg), "this kernel takes no call chains from the %s (no "
			 "kernel.perf_callchain_gcs)", rec_shadow_stack_name());
		*why = msg;
		return GP_EXIT_UNSUPPORTED;
	}
	/* The same event on ourselves: permission, PMU, the GCSPR register. */
	for (i = 0; i < NKINDS; i++) {
		fill_attr(&a, &event_kinds[i], 99, 1, 0);
		a.inherit = 0;
		fd = sys_perf_event_open(&a, 0, -1);
		if (fd >= 0) {
			close(fd);
			*event = event_kinds[i].name;
			return 0;
		}
		if (!err || err == ENOENT || err == EOPNOTSUPP || err == ENODEV)
			err = errno;
	}
	snprintf(msg, sizeof(msg), "perf_event_open: %s%s", strerror(err),
		 err == EACCES || err == EPERM ?
		 " (see /proc/sys/kernel/perf_event_paranoid, or run as root)" : "");
	*why = msg;
	return err == EACCES || err == EPERM ? GP_EXIT_PERMISSION : GP_EXIT_UNSUPPORTED;
}

/* ---- Setting up ------------------------------------------------------ */

/* The online CPUs, from /sys (ranges like "0-3,6"), else 0..N-1. */
static int online_cpus(int **cpus, size_t *n)
{
	char buf[512], *p;
	size_t cap = 0;
	ssize_t len = -1;
	int fd = open("/sys/devices/system/cpu/online", O_RDONLY | O_CLOEXEC);

	*cpus = NULL;
	*n = 0;
	if (fd >= 0) {
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	if (len <= 0) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);

		snprintf(buf, sizeof(buf), "0-%ld", c > 0 ? c - 1 : 0);
	} else {
		buf[len] = '\0';
	}
	for (p = buf; *p && *p != '\n';) {
		char *end;
		long lo = strtol(p, &end, 10), hi = lo, c;

		if (end == p || lo < 0)
			break;
		if (*end == '-')
			hi = strtol(end + 1, &end, 10);
		for (c = lo; c <= hi && c < 4096; c++) {
			int *g = gp_grow(*cpus, &cap, *n + 1, sizeof(**cpus));

			if (!g)
				return -1;
			*cpus = g;
			(*cpus)[(*n)++] = (int)c;
		}
		p = *end == ',' ? end + 1 : end;
		if (*end != ',')
			break;
	}
	return *n ? 0 : -1;
}

static int map_ring(struct perf_ring *rg, int fd, unsigned asked)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t pages, least = asked && asked < RING_PAGES_MIN ? asked : RING_PAGES_MIN;

	for (pages = asked ? asked : RING_PAGES_DEFAULT; pages >= least; pages /= 2) {
		void *m = mmap(NULL, (pages + 1) * (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED,
			       fd, 0);

		if (m != MAP_FAILED) {
			rg->fd = fd;
			rg->meta = m;
			rg->data = (unsigned char *)m + page;
			rg->size = pages * (uint64_t)page;
			return 0;
		}
		if (errno != EPERM && errno != ENOMEM)
			break;
	}
	return -1;
}

/* Open the events of task TID, one per CPU, into the CPUs' rings. */
static int open_task_events(struct recorder *r, pid_t tid)
{
	struct perf_rec *pr = r->perf;
	size_t i;

	for (i = 0; i < pr->nrings; i++) {
		struct perf_ring *rg = &pr->rings[i];
		int fd = sys_perf_event_open(&pr->attr, tid, rg->cpu), *g;

		if (fd < 0)
			return -errno;
		g = gp_grow(pr->fds, &pr->fds_cap, pr->nfds + 1, sizeof(*g));
		if (!g) {
			close(fd);
			return -ENOMEM;
		}
		pr->fds = g;
		pr->fds[pr->nfds++] = fd;
		if (rg->fd < 0) {
			if (map_ring(rg, fd, r->o->mmap_pages) != 0)
				return -errno;
		} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, rg->fd) != 0) {
			return -errno;
		}
	}
	return 0;
}

/* Thousands of threads with -p take an event per CPU each. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* ---- Launching and attaching ---------------------------------------- */

static int perf_launch(struct recorder *r, char **argv, const sigset_t *old_mask)
{
	int release, ret = rec_spawn(r, argv, old_mask, &release), err;

	if (ret)
		return ret;
	if (!perf_process(r, r->child) || !perf_thread(r, r->child, r->child, NULL)) {
		err = ENOMEM;
		goto fail;
	}
	err = -open_task_events(r, r->child);
	if (err)
		goto fail;
	close(release);          /* the command goes on to its exec */
	return 0;
fail:
	close(release);
	kill(r->child, SIGKILL);
	(void)waitpid(r->child, NULL, 0);
	r->child = 0;
	return gp_error(err == EACCES || err == EPERM ? GP_EXIT_PERMISSION : GP_EXIT_SYSTEM,
			"cannot sample the command with perf: %s", strerror(err));
}

static int attach_error(int err, pid_t pid)
{
	if (err == EACCES || err == EPERM)
		return gp_error(GP_EXIT_PERMISSION,
				"not permitted to sample process %d (see "
				"/proc/sys/kernel/perf_event_paranoid, or run as root)", (int)pid);
	return gp_error(GP_EXIT_SYSTEM, "perf_event_open for process %d: %s", (int)pid,
			strerror(err));
}

/*
 * Open events on every thread of PID. Threads created while we do are
 * found by reading the task list again until it has nothing new; one
 * created by a thread whose events were already open is then sampled
 * twice, and record_perf_records.c counts only one of the two.
 */
static int perf_attach(struct recorder *r, pid_t pid)
{
	gcswalk_target *t = NULL;
	struct process *p;
	char *msg = NULL;
	size_t i, n;
	int ret, round, fresh;

	if (kill(pid, 0) != 0 && errno == ESRCH)
		return gp_error(GP_EXIT_NO_PROCESS, "no process %d", (int)pid);
	if (rec_tgid_of(pid) != pid)
		return gp_error(GP_EXIT_NO_PROCESS, "no process %d (not a process id)", (int)pid);
	ret = gcswalk_target_open_pid(&t, pid, GCSWALK_ATTACH_NONE, 0, &msg);
	if (ret < 0) {
		ret = gp_error(gp_exit_for_gcswalk(ret), "cannot read process %d: %s%s%s", (int)pid,
			       gcswalk_strerror(ret), msg ? ": " : "", msg ? msg : "");
		free(msg);
		return ret;
	}
	if (r->o->fallback == REC_FALLBACK_NONE && !rec_region_start(t, GCSWALK_REGION_GCS)) {
		gcswalk_target_close(t);
		return gp_error(GP_EXIT_TARGET_NO_GCS,
				"process %d runs without %s: start it with %s, or use --fallback fp",
				(int)pid, rec_shadow_stack_name(), rec_shadow_stack_hint());
	}
	p = perf_process(r, pid);
	ret = p ? 0 : gp_error(GP_EXIT_SYSTEM, "out of memory");
	if (p)
		p->vdso = rec_region_start(t, GCSWALK_REGION_VDSO);
	n = gcswalk_target_mapping_count(t);
	for (i = 0; i < n && !ret; i++) {
		struct gcswalk_mapping m;
		const unsigned char *id;
		size_t id_size;

		if (gcswalk_target_mapping(t, i, &m) != GCSWALK_OK || !m.path)
			continue;
		if (gcswalk_target_mapping_build_id(t, i, &id, &id_size) != GCSWALK_OK) {
			id = NULL;
			id_size = 0;
		}
		ret = perf_note_mapping(r, p, m.start, m.end, m.offset, m.path, id,
					(unsigned)id_size);
	}
	for (round = 0, fresh = 1; round < 64 && fresh && !ret; round++) {
		int *tids = NULL;
		size_t count, k;

		if (gcswalk_proc_threads((int)pid, &tids, &count) != GCSWALK_OK) {
			ret = gp_error(GP_EXIT_NO_PROCESS, "no process %d", (int)pid);
			break;
		}
		fresh = 0;
		for (k = 0; k < count && !ret; k++) {
			pid_t tid = (pid_t)tids[k];
			struct gcswalk_thread_info info;
			const char *name = NULL;
			int idx, err;

			if (rec_find_thread(r, tid))
				continue;
			idx = gcswalk_target_refresh_thread(t, (int)tid, GCSWALK_REFRESH_NAMES);
			if (idx >= 0 && gcswalk_target_thread(t, (size_t)idx, &info) == GCSWALK_OK)
				name = info.name;
			if (!perf_thread(r, tid, pid, name)) {
				ret = gp_error(GP_EXIT_SYSTEM, "out of memory");
				continue;
			}
			err = -open_task_events(r, tid);
			if (err == ESRCH)
				rec_find_thread(r, tid)->gone = 1;
			else if (err)
				ret = attach_error(err, pid);
			else
				fresh = 1;
		}
		free(tids);
	}
	gcswalk_target_close(t);
	if (!ret && !rec_live_threads(r))
		ret = gp_error(GP_EXIT_NO_PROCESS, "no process %d", (int)pid);
	return ret;
}

/* ---- Reading the rings ----------------------------------------------- */

static void ring_copy(const struct perf_ring *rg, uint64_t pos, void *dst, size_t n)
{
	size_t at = (size_t)(pos & (rg->size - 1)), first = rg->size - at;

	if (first > n)
		first = n;
	memcpy(dst, rg->data + at, first);
	memcpy((unsigned char *)dst + first, rg->data, n - first);
}

/* Copy the records RG holds into the batch, and give the space back. */
static int ring_read(struct perf_rec *pr, struct perf_ring *rg)
{
	uint64_t head = __atomic_load_n(&rg->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = rg->meta->data_tail;

	while (head - tail >= sizeof(struct perf_event_header)) {
		struct perf_event_header h;
		struct perf_ref *ref;
		unsigned char *b;
		uint64_t t;

		ring_copy(rg, tail, &h, sizeof(h));
		if (h.size < sizeof(h) || h.size % 8 || h.size > head - tail) {
			tail = head;      /* not a record: drop what is left */
			break;
		}
		b = gp_grow(pr->batch, &pr->batch_cap, pr->batch_len + h.size, 1);
		ref = gp_grow(pr->refs, &pr->refs_cap, pr->nrefs + 1, sizeof(*ref));
		if (b)
			pr->batch = b;
		if (ref)
			pr->refs = ref;
		if (!b || !ref)
			return gp_error(GP_EXIT_SYSTEM, "out of memory");
		ring_copy(rg, tail, pr->batch + pr->batch_len, h.size);
		t = perf_record_time((const struct perf_event_header *)(pr->batch + pr->batch_len));
		if (t)
			rg->last_time = t;
		pr->refs[pr->nrefs++] = (struct perf_ref){ rg->last_time, pr->seq++, pr->batch_len,
							   h.size };
		pr->batch_len += h.size;
		pr->bytes += h.size;
		tail += h.size;
	}
	__atomic_store_n(&rg->meta->data_tail, tail, __ATOMIC_RELEASE);
	return 0;
}

static int ref_cmp(const void *a, const void *b)
{
	const struct perf_ref *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Everything the rings hold, in time order. */
static int drain(struct recorder *r)
{
	struct perf_rec *pr = r->perf;
	size_t i;
	int ret = 0;

	pr->batch_len = 0;
	pr->nrefs = 0;
	for (i = 0; i < pr->nrings && !ret; i++)
		if (pr->rings[i].fd >= 0)
			ret = ring_read(pr, &pr->rings[i]);
	qsort(pr->refs, pr->nrefs, sizeof(*pr->refs), ref_cmp);
	for (i = 0; i < pr->nrefs && !ret && !r->write_failed; i++)
		ret = perf_handle_record(r, (const struct perf_event_header *)(pr->batch +
									      pr->refs[i].off));
	return ret;
}

/* ---- The loop --------------------------------------------------------- */

/* With -p: is any process we sample still there? */
static int any_alive(struct recorder *r)
{
	size_t i;

	for (i = 0; i < r->nprocs; i++) {
		struct process *p = &r->procs[i];

		if (p->gone)
			continue;
		if (kill(p->pid, 0) == 0 || errno == EPERM)
			return 1;
		p->gone = 1;
	}
	return 0;
}

/* Take gcsprof's signals from the signalfd: 1 when one asks to stop. */
static int take_signals(struct recorder *r, int *stop_sig)
{
	struct signalfd_siginfo ssi;
	int stop = 0;

	while (read(r->perf->sigfd, &ssi, sizeof(ssi)) == (ssize_t)sizeof(ssi)) {
		siginfo_t si;

		if (ssi.ssi_signo == SIGCHLD) {
			int st;

			if (r->child && !r->child_done && waitpid(r->child, &st, WNOHANG) == r->child &&
			    (WIFEXITED(st) || WIFSIGNALED(st))) {
				r->child_done = 1;
				r->child_status = st;
			}
			continue;
		}
		memset(&si, 0, sizeof(si));
		si.si_signo = (int)ssi.ssi_signo;
		si.si_code = ssi.ssi_code;
		stop |= rec_stop_signal(r, &si, stop_sig);
	}
	return stop;
}

static void disable_events(struct perf_rec *pr)
{
	size_t i;

	for (i = 0; i < pr->nfds; i++)
		(void)ioctl(pr->fds[i], PERF_EVENT_IOC_DISABLE, 0);
}

int rec_perf_run(struct recorder *r, pid_t pid, char **argv, const sigset_t *old_mask,
		 int *stop_sig)
{
	struct pollfd *pfds = NULL;
	struct perf_rec *pr;
	int *cpus = NULL, ret, st;
	size_t i, ncpus = 0, npfds;

	pr = calloc(1, sizeof(*pr));
	if (!pr)
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	r->perf = pr;
	pr->sigfd = -1;
	/* Read again as the events are opened: from here a sample's GCSPR
	 * says where its chain came from. */
	pr->gcs_chains = gcswalk_system_perf_callchains() == 1;
	if (!pr->gcs_chains)
		return gp_error(GP_EXIT_UNSUPPORTED, "record: --method perf: %s", CALLCHAIN_GCS_OFF);
	pr->max_stack = perf_max_stack(&pr->max_stack_by);
	if (pr->max_stack &&
	    gp_profile_write_max_stack(r->out, pr->max_stack, pr->max_stack_by) != 0)
		return rec_write_failed(r), GP_EXIT_OUTPUT;
	fill_attr(&pr->attr, kind_named(r->event), r->hz, !r->o->pid, pr->max_stack);
	raise_fd_limit();
	if (online_cpus(&cpus, &ncpus) != 0) {
		free(cpus);
		return gp_error(GP_EXIT_SYSTEM, "cannot list the online CPUs");
	}
	pr->rings = calloc(ncpus, sizeof(*pr->rings));
	pfds = calloc(ncpus + 1, sizeof(*pfds));
	if (!pr->rings || !pfds) {
		free(cpus);
		free(pfds);
		return gp_error(GP_EXIT_SYSTEM, "out of memory");
	}
	for (i = 0; i < ncpus; i++) {
		pr->rings[i].fd = -1;
		pr->rings[i].cpu = cpus[i];
	}
	pr->nrings = ncpus;
	free(cpus);
	pr->sigfd = signalfd(-1, &r->sigs, SFD_CLOEXEC | SFD_NONBLOCK);
	if (pr->sigfd < 0) {
		free(pfds);
		return gp_error(GP_EXIT_SYSTEM, "signalfd: %s", strerror(errno));
	}

	ret = r->o->pid ? perf_attach(r, pid) : perf_launch(r, argv, old_mask);
	if (ret) {
		free(pfds);
		return ret;
	}
	r->started = 1;

	for (;;) {
		npfds = 0;
		for (i = 0; i < pr->nrings; i++)
			if (pr->rings[i].fd >= 0)
				pfds[npfds++] = (struct pollfd){ .fd = pr->rings[i].fd, .events = POLLIN };
		pfds[npfds++] = (struct pollfd){ .fd = pr->sigfd, .events = POLLIN };
		if (poll(pfds, npfds, POLL_MS) < 0 && errno != EINTR) {
			ret = gp_error(GP_EXIT_SYSTEM, "poll: %s", strerror(errno));
			break;
		}
		(void)take_signals(r, stop_sig);
		ret = drain(r);
		if (ret || r->write_failed || *stop_sig)
			break;
		rec_status_line(r, rec_now_ns(), rec_live_threads(r), 0);
		rec_flush_file(r, rec_now_ns());
		if (r->write_failed)
			break;
		if (r->child ? r->child_done : !any_alive(r))
			break;
	}
	/* What the rings still hold was recorded: keep it. */
	disable_events(pr);
	if (!ret && !r->write_failed)
		ret = drain(r);
	if (r->child && !r->child_done && waitpid(r->child, &st, WNOHANG) == r->child &&
	    (WIFEXITED(st) || WIFSIGNALED(st))) {
		r->child_done = 1;
		r->child_status = st;
	}
	rec_status_line(r, rec_now_ns(), 0, 1);
	rec_report_no_gcs(r);
	if (!ret && !r->write_failed)
		ret = perf_write_summary(r);
	if (gcswalk_system_perf_callchains() != 1)
		gp_warn("kernel.perf_callchain_gcs was set to 0 during the recording: it is read "
			"once, at the start, so chains the kernel walked from frame records after that "
			"are labelled as exact chains from the GCS");
	free(pfds);
	return ret;
}

void rec_perf_release(struct recorder *r)
{
	struct perf_rec *pr = r->perf;
	size_t i, j;

	if (!pr)
		return;
	for (i = 0; i < pr->nrings; i++)
		if (pr->rings[i].meta)
			munmap(pr->rings[i].meta, pr->rings[i].size + (size_t)sysconf(_SC_PAGESIZE));
	for (i = 0; i < pr->nfds; i++)
		close(pr->fds[i]);
	if (pr->sigfd >= 0)
		close(pr->sigfd);
	for (i = 0; i < r->nthreads; i++) {
		free(r->threads[i].name);
		free(r->threads[i].event_ids);
		r->threads[i].name = NULL;
		r->threads[i].event_ids = NULL;
	}
	for (i = 0; i < r->nprocs; i++) {
		for (j = 0; j < r->procs[i].nmaps; j++)
			free(r->procs[i].maps[j].path);
		free(r->procs[i].maps);
		r->procs[i].maps = NULL;
		r->procs[i].nmaps = 0;
	}
	free(pr->rings);
	free(pr->fds);
	free(pr->batch);
	free(pr->refs);
	free(pr);
	r->perf = NULL;
}
