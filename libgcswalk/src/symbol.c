// SPDX-License-Identifier: MIT
/*
 * Symbolisation through elfutils libdwfl. The target's file mappings (live:
 * /proc/PID/maps; core: NT_FILE) are reported as modules, each file looked
 * for under the sysroot first; separate debug files come from the
 * debuginfo path and, when DEBUGINFOD_URLS is set, from debuginfod
 * (libdwfl's standard callbacks do that). Inlined frames come from the
 * DWARF scopes around the address. Results are cached per address.
 */
#define _GNU_SOURCE
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

struct cache_entry {
	struct cache_entry *next;
	uint64_t address;
	int return_address;
	int status;
	struct gcswalk_location loc;
	struct gcswalk_symbol *symbols;
};

struct gcswalk_symbolizer {
	struct gcswalk_target *t;
	Dwfl *dwfl;
	Dwfl_Callbacks callbacks;
	char *debuginfo_path;
	char *sysroot;
	struct cache_entry **buckets;
	size_t nbuckets, count;
	int state_attached;
};

/* ---- The CFI unwinder's thread state, over the same Dwfl ------------ */

/* Thread arguments are pointers to our struct gw_thread. */
static pid_t cfi_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct gcswalk_target *t = arg;
	struct gw_thread *prev = *thread_argp;
	size_t i = prev ? (size_t)(prev - t->threads) + 1 : 0;

	(void)dwfl;
	if (i >= t->nthreads)
		return 0;
	*thread_argp = &t->threads[i];
	return t->threads[i].tid;
}

static bool cfi_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	struct gcswalk_target *t = arg;
	size_t i;

	(void)dwfl;
	for (i = 0; i < t->nthreads; i++) {
		if (t->threads[i].tid == tid) {
			*thread_argp = &t->threads[i];
			return true;
		}
	}
	return false;
}

static bool cfi_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct gcswalk_target *t = arg;
	uint64_t v;
	size_t got;

	(void)dwfl;
	if (t->be->read(t, addr, &v, sizeof(v), &got) != GCSWALK_OK)
		return false;
	*result = v;
	return true;
}

static bool cfi_set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	struct gw_thread *th = thread_arg;

	if (!th || !th->regs.valid)
		return false;
	if (!dwfl_thread_state_registers(thread, 0, th->regs.ndwarf, th->regs.dwarf))
		return false;
	dwfl_thread_state_register_pc(thread, th->regs.pc);
	return true;
}

static const Dwfl_Thread_Callbacks cfi_callbacks = {
	.next_thread = cfi_next_thread,
	.get_thread = cfi_get_thread,
	.memory_read = cfi_memory_read,
	.set_initial_registers = cfi_set_initial_registers,
	.detach = NULL,
	.thread_detach = NULL,
};

struct unwind_call {
	int (*frame)(void *arg, uint64_t pc);
	void *arg;
	int frames;
};

static int unwind_frame(Dwfl_Frame *state, void *arg)
{
	struct unwind_call *u = arg;
	Dwarf_Addr pc;

	if (!dwfl_frame_pc(state, &pc, NULL))
		return DWARF_CB_ABORT;
	u->frames++;
	return u->frame(u->arg, pc) ? DWARF_CB_ABORT : DWARF_CB_OK;
}

int gw_symbolizer_unwind(gcswalk_symbolizer *s, struct gcswalk_target *t, struct gw_thread *th,
			 int (*frame)(void *arg, uint64_t pc), void *arg)
{
	struct unwind_call u = { frame, arg, 0 };

	if (s->t != t)
		return gw_fail(t, GCSWALK_E_INVALID, "the symboliser belongs to another target");
	/* The thread state is attached once per Dwfl, on first use. */
	if (!s->state_attached) {
		if (!dwfl_attach_state(s->dwfl, NULL, t->pid ? t->pid : th->tid, &cfi_callbacks, t))
			return gw_fail(t, GCSWALK_E_DWFL, "dwfl_attach_state: %s", dwfl_errmsg(-1));
		s->state_attached = 1;
	}
	/* libdwfl reports the end of some stacks as an error (its own
	 * documentation says to treat that as the end): the frames found
	 * until then are the result. */
	(void)dwfl_getthread_frames(s->dwfl, th->tid, unwind_frame, &u);
	if (u.frames == 0)
		return gw_fail(t, GCSWALK_E_DWFL, "CFI unwind of thread %d: %s", (int)th->tid,
			       dwfl_errmsg(-1));
	return GCSWALK_OK;
}

static char *join(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *r = malloc(la + lb + 1);

	if (r) {
		memcpy(r, a, la);
		memcpy(r + la, b, lb + 1);
	}
	return r;
}

/* The path to open for PATH: under the sysroot if it exists there. */
static char *locate(const gcswalk_symbolizer *s, const char *path)
{
	if (s->sysroot) {
		char *p = join(s->sysroot, path);

		if (!p)
			return NULL;
		if (access(p, R_OK) == 0)
			return p;
		free(p);
	}
	return strdup(path);
}

static int by_path_then_start(const void *a, const void *b)
{
	const struct gw_mapping *x = *(const struct gw_mapping *const *)a;
	const struct gw_mapping *y = *(const struct gw_mapping *const *)b;
	int c = strcmp(x->path, y->path);

	if (c)
		return c;
	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * A file this machine does not have (not under the sysroot, not at its
 * path) whose build-id the target knows (a caller's, such as a profile's):
 * a module of that build-id over [FIRST->start, HIGH), which libdwfl's
 * find_elf looks up in the debuginfo path's .build-id folders and, with
 * DEBUGINFOD_URLS set, from debuginfod. Without a build-id it is left
 * out: its addresses get the mapping's path and no symbols.
 */
static void report_by_build_id(gcswalk_symbolizer *s, const struct gw_mapping *first,
			       uint64_t high)
{
	const unsigned char *id;
	Dwfl_Module *mod;
	size_t size;

	if (gcswalk_target_mapping_build_id(s->t, (size_t)(first - s->t->maps), &id, &size) !=
	    GCSWALK_OK)
		return;
	mod = dwfl_report_module(s->dwfl, first->path, first->start, high);
	/* Without its build-id (out of memory) the module finds no file:
	 * the same as leaving it out. */
	if (mod)
		(void)dwfl_module_report_build_id(mod, id, size, 0);
}

/* One mapped file: FIRST is its lowest mapping at file offset 0, HIGH the
 * end of its last mapping. */
static int report_file(gcswalk_symbolizer *s, const struct gw_mapping *first, uint64_t high)
{
	char *file = locate(s, first->path);

	if (!file)
		return gw_fail(s->t, GCSWALK_E_NOMEM, "out of memory");
	/* A file we cannot use (not ELF, another file by now) is left out:
	 * its addresses get the mapping's path and no symbols. */
	if (access(file, R_OK) == 0)
		(void)dwfl_report_elf(s->dwfl, first->path, file, -1, first->start, false);
	else
		report_by_build_id(s, first, high);
	free(file);
	return GCSWALK_OK;
}

/*
 * One module per mapped file, placed by its lowest mapping at file offset
 * 0. Sorted, so that a core with a million NT_FILE entries costs
 * n log n, not n squared.
 */
static int report_modules(gcswalk_symbolizer *s)
{
	struct gcswalk_target *t = s->t;
	const struct gw_mapping **all;
	size_t i, j;
	int ret = GCSWALK_OK;

	all = calloc(t->nmaps ? t->nmaps : 1, sizeof(*all));
	if (!all)
		return gw_fail(t, GCSWALK_E_NOMEM, "out of memory");
	for (i = 0; i < t->nmaps; i++)
		all[i] = &t->maps[i];
	qsort(all, t->nmaps, sizeof(*all), by_path_then_start);
	dwfl_report_begin(s->dwfl);
	for (i = 0; i < t->nmaps && ret == GCSWALK_OK; i = j) {
		const struct gw_mapping *first = NULL;
		uint64_t high = 0;

		for (j = i; j < t->nmaps && strcmp(all[j]->path, all[i]->path) == 0; j++) {
			if (!first && all[j]->offset == 0)
				first = all[j];
			if (first && all[j]->end > high)
				high = all[j]->end;
		}
		if (first)
			ret = report_file(s, first, high);
	}
	free(all);
	if (dwfl_report_end(s->dwfl, NULL, NULL) != 0 && ret == GCSWALK_OK)
		ret = gw_fail(t, GCSWALK_E_DWFL, "dwfl_report_end: %s", dwfl_errmsg(-1));
	return ret;
}

int gcswalk_symbolizer_new(gcswalk_symbolizer **out, gcswalk_target *t,
			   const struct gcswalk_symbolizer_options *opts)
{
	struct gcswalk_symbolizer_options def = GCSWALK_SYMBOLIZER_OPTIONS_INIT;
	gcswalk_symbolizer *s;
	int ret, want_sysroot = 0;

	if (out)
		*out = NULL;
	if (!out || !t)
		return GCSWALK_E_INVALID;
	gw_clear_error(t);
	/* The caller's options over the defaults: an older caller's smaller
	 * struct leaves the later fields at their defaults. */
	if (opts && gw_sized_in(&def, sizeof(def), opts, opts->size, GW_SYMBOLIZER_OPTIONS_SIZE_1_0) < 0)
		return gw_fail(t, GCSWALK_E_INVALID, "symboliser options of %zu bytes (this library: %zu)",
			       opts->size, sizeof(def));
	opts = &def;
	s = calloc(1, sizeof(*s));
	if (!s)
		return gw_fail(t, GCSWALK_E_NOMEM, "out of memory");
	s->t = t;
	s->nbuckets = 1024;
	s->buckets = calloc(s->nbuckets, sizeof(*s->buckets));
	if (opts->sysroot && opts->sysroot[0]) {
		want_sysroot = 1;
		s->sysroot = strdup(opts->sysroot);
	} else if (t->be->file_path) {
		/* The back end's view of the files (a live process's own root:
		 * another mount namespace, a chroot): look there first. */
		want_sysroot = 1;
		s->sysroot = t->be->file_path(t, "");
	}
	if (opts->debuginfo_path)
		s->debuginfo_path = strdup(opts->debuginfo_path);
	else if (s->sysroot) {
		char *a = join(":.debug:", s->sysroot);

		s->debuginfo_path = a ? join(a, "/usr/lib/debug:/usr/lib/debug") : NULL;
		free(a);
	} else
		s->debuginfo_path = strdup(":.debug:/usr/lib/debug");
	if (!s->buckets || !s->debuginfo_path || (want_sysroot && !s->sysroot)) {
		gcswalk_symbolizer_free(s);
		return gw_fail(t, GCSWALK_E_NOMEM, "out of memory");
	}
	s->callbacks.find_elf = dwfl_build_id_find_elf;
	s->callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
	s->callbacks.section_address = dwfl_offline_section_address;
	s->callbacks.debuginfo_path = &s->debuginfo_path;
	s->dwfl = dwfl_begin(&s->callbacks);
	if (!s->dwfl) {
		ret = gw_fail(t, GCSWALK_E_DWFL, "dwfl_begin: %s", dwfl_errmsg(-1));
		gcswalk_symbolizer_free(s);
		return ret;
	}
	ret = report_modules(s);
	if (ret < 0) {
		gcswalk_symbolizer_free(s);
		return ret;
	}
	*out = s;
	return GCSWALK_OK;
}

/*
 * The CFI's rule for the return address at PC, in the module that maps it
 * (.eh_frame, else .debug_frame): no rule that saves it somewhere (the
 * register still holds it: a function that saved nothing, or a prologue
 * before the save) is 1; a saved one 0; no module or no CFI for PC -1.
 * *LO and *HI get the bounds of PC's FDE, its function.
 */
int gw_symbolizer_ra_live(gcswalk_symbolizer *s, uint64_t pc, uint64_t *lo, uint64_t *hi)
{
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, pc);
	Dwarf_Frame *frame = NULL;
	Dwarf_Op mem[3], *ops = NULL;
	Dwarf_Addr bias = 0, start, end;
	Dwarf_CFI *cfi = NULL;
	size_t nops = 0;
	int col, ret = -1;

	if (mod)
		cfi = dwfl_module_eh_cfi(mod, &bias);
	if (mod && !cfi)
		cfi = dwfl_module_dwarf_cfi(mod, &bias);
	if (!cfi || dwarf_cfi_addrframe(cfi, pc - bias, &frame) != 0)
		return -1;
	col = dwarf_frame_info(frame, &start, &end, NULL);
	if (col >= 0 && dwarf_frame_register(frame, col, mem, &ops, &nops) == 0) {
		*lo = start + bias;
		*hi = end + bias;
		ret = nops == 0;
	}
	free(frame);
	return ret;
}

void gcswalk_symbolizer_free(gcswalk_symbolizer *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; s->buckets && i < s->nbuckets; i++) {
		struct cache_entry *e = s->buckets[i], *n;

		for (; e; e = n) {
			n = e->next;
			free(e->symbols);
			free(e);
		}
	}
	free(s->buckets);
	if (s->dwfl)
		dwfl_end(s->dwfl);
	free(s->debuginfo_path);
	free(s->sysroot);
	free(s);
}

static size_t hash(uint64_t a, int ra, size_t n)
{
	a ^= (uint64_t)ra;
	a *= 0x9e3779b97f4a7c15ULL;
	return (size_t)(a >> 32) % n;
}

static int grow(gcswalk_symbolizer *s)
{
	size_t n = s->nbuckets * 2, i;
	struct cache_entry **b = calloc(n, sizeof(*b));

	if (!b)
		return -1;
	for (i = 0; i < s->nbuckets; i++) {
		struct cache_entry *e = s->buckets[i], *next;

		for (; e; e = next) {
			size_t h = hash(e->address, e->return_address, n);

			next = e->next;
			e->next = b[h];
			b[h] = e;
		}
	}
	free(s->buckets);
	s->buckets = b;
	s->nbuckets = n;
	return 0;
}

static int push_symbol(struct cache_entry *e, size_t *cap, const struct gcswalk_symbol *sym)
{
	if (e->loc.nsymbols == *cap) {
		size_t n = *cap ? *cap * 2 : 4;
		struct gcswalk_symbol *p = realloc(e->symbols, n * sizeof(*p));

		if (!p)
			return -1;
		e->symbols = p;
		*cap = n;
	}
	e->symbols[e->loc.nsymbols++] = *sym;
	return 0;
}

/* A DIE's name, through DW_AT_abstract_origin / DW_AT_specification. */
static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));

	return n ? n : dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
}

static int attr_int(Dwarf_Die *die, unsigned name)
{
	Dwarf_Attribute a;
	Dwarf_Word w;

	if (!dwarf_attr(die, name, &a) || dwarf_formudata(&a, &w) != 0 || w > INT32_MAX)
		return 0;
	return (int)w;
}

/* Fill E's symbols for LOOKUP in MOD: inlined frames innermost first. */
static int describe(Dwfl_Module *mod, uint64_t lookup, struct cache_entry *e)
{
	struct gcswalk_symbol cur = { NULL, NULL, 0, NULL, 0, 0, 0 };
	const char *elf_name;
	GElf_Off off = 0;
	GElf_Sym sym;
	Dwarf_Addr bias = 0;
	Dwarf_Die *cudie, *scopes = NULL;
	Dwfl_Line *line;
	size_t cap = 0;
	int n = 0, i, done = 0, levels = 0;

	elf_name = dwfl_module_addrinfo(mod, lookup, &off, &sym, NULL, NULL, NULL);
	line = dwfl_module_getsrc(mod, lookup);
	if (line)
		cur.file = dwfl_lineinfo(line, NULL, &cur.line, &cur.column, NULL, NULL);
	cudie = dwfl_module_addrdie(mod, lookup, &bias);
	if (cudie)
		n = dwarf_getscopes(cudie, lookup - bias, &scopes);
	for (i = 0; i < n && !done; i++) {
		int tag = dwarf_tag(&scopes[i]);

		if (tag == DW_TAG_inlined_subroutine) {
			Dwarf_Files *files;
			Dwarf_Die *outer = NULL;
			size_t nfiles;
			int idx = attr_int(&scopes[i], DW_AT_call_file), m;

			cur.function = die_name(&scopes[i]);
			cur.inlined = 1;
			cur.function_offset = 0;
			if (push_symbol(e, &cap, &cur) != 0)
				goto nomem;
			/* The caller's position is where this was inlined. */
			cur.file = NULL;
			if (dwarf_getsrcfiles(cudie, &files, &nfiles) == 0 && idx > 0 &&
			    (size_t)idx < nfiles)
				cur.file = dwarf_filesrc(files, (size_t)idx, NULL, NULL);
			cur.line = attr_int(&scopes[i], DW_AT_call_line);
			cur.column = attr_int(&scopes[i], DW_AT_call_column);
			/* The scopes around an inlined instance (dwarf_getscopes
			 * gives the abstract ones): [itself, its caller, ...]. */
			m = dwarf_getscopes_die(&scopes[i], &outer);
			if (m <= 0 || ++levels > 64) {
				free(outer);
				break;
			}
			free(scopes);
			scopes = outer;
			n = m;
			i = 0;                  /* the loop continues at 1 */
		} else if (tag == DW_TAG_subprogram) {
			cur.function = die_name(&scopes[i]);
			if (!cur.function)
				cur.function = elf_name;
			cur.symbol = elf_name;
			cur.function_offset = elf_name ? off : 0;
			cur.inlined = 0;
			if (push_symbol(e, &cap, &cur) != 0)
				goto nomem;
			done = 1;
		}
	}
	free(scopes);
	if (!done && (elf_name || cur.file)) {
		cur.function = elf_name;
		cur.symbol = elf_name;
		cur.function_offset = elf_name ? off : 0;
		cur.inlined = 0;
		if (push_symbol(e, &cap, &cur) != 0)
			return -1;
	}
	return 0;
nomem:
	free(scopes);
	return -1;
}

/*
 * An address in the vDSO, which is in no file: its function from the
 * target's vDSO image (read from the process or the core once, vdso.c).
 * 1 when named, 0 when the address is not in the vDSO, -1 out of memory.
 */
static int describe_vdso(gcswalk_symbolizer *s, uint64_t lookup, struct cache_entry *e)
{
	const struct gcswalk_elf_symbol *syms = NULL, *best = NULL;
	struct gcswalk_symbol cur = { NULL, NULL, 0, NULL, 0, 0, 0 };
	uint64_t start = 0, size = 0, off;
	size_t n = 0, i, cap = 0;

	if (gcswalk_target_vdso(s->t, &start, &size, &syms, &n, NULL, NULL) != GCSWALK_OK ||
	    lookup < start || lookup - start >= size)
		return 0;
	off = lookup - start;
	/* Symbols in offset order: the last one at or below OFF, if OFF is
	 * inside it (a symbol of size 0 covers up to the next one). */
	for (i = 0; i < n && syms[i].offset <= off; i++)
		best = &syms[i];
	if (best && best->size && off - best->offset >= best->size)
		best = NULL;
	e->loc.module = "[vdso]";
	if (!best)
		return 1;
	cur.function = best->name;
	cur.symbol = best->name;
	cur.function_offset = off - best->offset;
	return push_symbol(e, &cap, &cur) == 0 ? 1 : -1;
}

int gcswalk_symbolize(gcswalk_symbolizer *s, uint64_t address, int return_address,
		      const struct gcswalk_location **location)
{
	struct cache_entry *e;
	Dwfl_Module *mod;
	uint64_t lookup;
	size_t h;

	if (!s || !location)
		return GCSWALK_E_INVALID;
	return_address = return_address != 0;
	h = hash(address, return_address, s->nbuckets);
	for (e = s->buckets[h]; e; e = e->next) {
		if (e->address == address && e->return_address == return_address) {
			*location = &e->loc;
			return e->status;
		}
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return gw_fail(s->t, GCSWALK_E_NOMEM, "out of memory");
	lookup = return_address && address >= 4 ? address - 4 : address;
	e->address = address;
	e->return_address = return_address;
	e->loc.address = address;
	e->loc.lookup_address = lookup;
	mod = dwfl_addrmodule(s->dwfl, lookup);
	/* A module spans its segments and the gaps between them, where
	 * something else (the vDSO, another library) may be mapped: only a
	 * mapping of the module's own file counts. */
	if (mod) {
		const struct gw_mapping *m = gw_target_find_mapping(s->t, lookup);
		const char *name = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);

		if (!m || !name || strcmp(m->path, name) != 0)
			mod = NULL;
	}
	if (mod) {
		const unsigned char *bits;
		GElf_Addr vaddr, start;
		Dwarf_Addr bias = 0;
		int len;

		e->loc.module = dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, NULL, NULL);
		if (dwfl_module_getelf(mod, &bias))
			e->loc.module_bias = bias;
		len = dwfl_module_build_id(mod, &bits, &vaddr);
		if (len > 0) {
			e->loc.build_id = bits;
			e->loc.build_id_size = (size_t)len;
		}
		if (describe(mod, lookup, e) != 0) {
			free(e->symbols);
			free(e);
			return gw_fail(s->t, GCSWALK_E_NOMEM, "out of memory");
		}
		e->status = GCSWALK_OK;
	} else {
		const struct gw_mapping *m = gw_target_find_mapping(s->t, lookup);
		int vdso = m ? 0 : describe_vdso(s, lookup, e);

		if (vdso < 0) {
			free(e->symbols);
			free(e);
			return gw_fail(s->t, GCSWALK_E_NOMEM, "out of memory");
		}
		/* Known mapping, file not available: the module, no symbols. */
		if (!vdso)
			e->loc.module = m ? m->path : NULL;
		e->status = m || vdso ? GCSWALK_OK : GCSWALK_E_NO_SYMBOL;
	}
	e->loc.symbols = e->symbols;
	if (s->count + 1 > s->nbuckets * 2 && grow(s) == 0)
		h = hash(address, return_address, s->nbuckets);
	e->next = s->buckets[h];
	s->buckets[h] = e;
	s->count++;
	*location = &e->loc;
	return e->status;
}
