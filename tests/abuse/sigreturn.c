// SPDX-License-Identifier: MIT
/*
 * abuse-sigreturn: a signal handler forges its own signal frame, and the
 * kernel must refuse what would let a thread escape GCS: a missing or wrong
 * signal cap, GCSPR_EL0 moved away from it, GCS turned on, a locked feature
 * changed, unknown feature bits. A refused sigreturn is a SIGSEGV; what is
 * allowed (turning GCS off where it is not locked) must work.
 *
 * Each case runs in its own traced child (abuse_run), so that the SIGSEGV
 * is seen with its si_code even when the child cannot take it.
 *
 * Usage: abuse-sigreturn [--never-gcs-child]
 * The option is how the program re-executes itself for the one case that
 * needs a thread that never had GCS.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <ucontext.h>

#include "abuse.h"

/* The gcs_context record of the signal frame (upstream's layout). */
#define GCS_MAGIC 0x47435300
struct gcs_record {
	struct _aarch64_ctx head;
	uint64_t gcspr;
	uint64_t features_enabled;
	uint64_t reserved;
};

enum forge {
	FORGE_NONE,
	FORGE_GCSPR_UP,          /* GCSPR at the entry above the cap */
	FORGE_GCSPR_MISALIGNED,  /* GCSPR 4 bytes off the cap */
	FORGE_GCSPR_UNMAPPED,    /* GCSPR at an unmapped page */
	FORGE_GCSPR_ORDINARY,    /* GCSPR at a well-formed cap in ordinary memory */
	FORGE_CAP_TOKEN_TYPE,    /* the cap given a token type (a switch cap) */
	FORGE_CAP_OTHER_PAGE,    /* the cap naming another page */
	FORGE_DISABLE,           /* features_enabled 0 */
	FORGE_ENABLE,            /* features_enabled ENABLE on a thread without GCS */
	FORGE_ADD_WRITE,         /* features_enabled ENABLE|WRITE */
	FORGE_UNKNOWN_BIT,       /* features_enabled ENABLE | bit 3 */
};

/* What the handler was asked to do and what it saw (the child's own copy). */
static enum forge forge_mode;
static int frame_seen;       /* a gcs_context record was found (or inserted) */
static int cap_ok;           /* the record's gcspr held a signal cap */
static uint64_t *ordinary_cap; /* FORGE_GCSPR_ORDINARY's page */
static uint64_t unmapped_page;

/* The gcs_context record in the frame, following extra_context; or NULL. */
static struct gcs_record *find_gcs_record(ucontext_t *uc, struct _aarch64_ctx **terminator)
{
	unsigned char *p = (unsigned char *)uc->uc_mcontext.__reserved;
	unsigned char *end = p + sizeof(uc->uc_mcontext.__reserved);

	*terminator = NULL;
	while (p + sizeof(struct _aarch64_ctx) <= end) {
		struct _aarch64_ctx *h = (struct _aarch64_ctx *)p;

		if (h->magic == 0) {
			*terminator = h;
			return NULL;
		}
		if (h->magic == GCS_MAGIC)
			return (struct gcs_record *)h;
		if (h->magic == EXTRA_MAGIC) {
			struct extra_context *x = (struct extra_context *)h;

			p = (unsigned char *)(uintptr_t)x->datap;
			end = p + x->size;
			continue;
		}
		if (h->size < sizeof(*h))
			return NULL;
		p += h->size;
	}
	return NULL;
}

/*
 * Where a kernel leaves the record out (GCS was never on), add one in
 * place of the terminator, if the frame has room for it and a new
 * terminator: the kernel must then judge the forged record like any other.
 */
static struct gcs_record *insert_gcs_record(ucontext_t *uc, struct _aarch64_ctx *term)
{
	unsigned char *base = (unsigned char *)uc->uc_mcontext.__reserved;
	unsigned char *at = (unsigned char *)term;
	struct gcs_record *g = (struct gcs_record *)term;

	if (!term || at < base ||
	    at + sizeof(*g) + sizeof(struct _aarch64_ctx) > base + sizeof(uc->uc_mcontext.__reserved))
		return NULL;
	memset(g, 0, sizeof(*g));
	g->head.magic = GCS_MAGIC;
	g->head.size = sizeof(*g);
	memset(at + sizeof(*g), 0, sizeof(struct _aarch64_ctx));
	return g;
}

static void forge_handler(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	struct _aarch64_ctx *term;
	struct gcs_record *g = find_gcs_record(uc, &term);
	uint64_t *cap;

	(void)sig;
	(void)si;
	if (!g && forge_mode == FORGE_ENABLE)
		g = insert_gcs_record(uc, term);
	if (!g)
		return;
	frame_seen = 1;
	cap = (uint64_t *)(uintptr_t)g->gcspr;
	if (g->features_enabled & PR_SHADOW_STACK_ENABLE)
		cap_ok = g->gcspr % 8 == 0 && *cap == (g->gcspr & ~0xfffULL);

	switch (forge_mode) {
	case FORGE_NONE:
		break;
	case FORGE_GCSPR_UP:
		g->gcspr += 8;
		break;
	case FORGE_GCSPR_MISALIGNED:
		g->gcspr += 4;
		break;
	case FORGE_GCSPR_UNMAPPED:
		g->gcspr = unmapped_page;
		break;
	case FORGE_GCSPR_ORDINARY:
		*ordinary_cap = (uint64_t)(uintptr_t)ordinary_cap & ~0xfffULL;
		g->gcspr = (uint64_t)(uintptr_t)ordinary_cap;
		break;
	case FORGE_CAP_TOKEN_TYPE:
		abuse_gcsstr(cap, *cap | 1);
		break;
	case FORGE_CAP_OTHER_PAGE:
		abuse_gcsstr(cap, *cap + 0x1000);
		break;
	case FORGE_DISABLE:
		g->features_enabled = 0;
		break;
	case FORGE_ENABLE:
		g->features_enabled = PR_SHADOW_STACK_ENABLE;
		break;
	case FORGE_ADD_WRITE:
		g->features_enabled |= PR_SHADOW_STACK_WRITE;
		break;
	case FORGE_UNKNOWN_BIT:
		g->features_enabled |= 1ULL << 3;
		break;
	}
}

/* How the child is set up before the signal. */
struct sig_case {
	enum forge forge;
	uint64_t set_status;  /* PR_SET_SHADOW_STACK_STATUS first, if not ~0 */
	uint64_t lock;        /* PR_LOCK_SHADOW_STACK_STATUS first, if not 0 */
	uint64_t want_status; /* the status after a sigreturn that succeeds */
};

/* In the child: set up, take SIGUSR1, and check the state after it. */
static int sig_case_run(void *arg)
{
	const struct sig_case *c = arg;
	struct sigaction sa;
	uint64_t st;

	forge_mode = c->forge;
	if (c->set_status != ~0ULL && abuse_prctl(PR_SET_SHADOW_STACK_STATUS, (long)c->set_status))
		return 10;
	if (c->lock && abuse_prctl(PR_LOCK_SHADOW_STACK_STATUS, (long)c->lock))
		return 11;
	ordinary_cap = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unmapped_page = (uint64_t)(uintptr_t)mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ordinary_cap == MAP_FAILED || unmapped_page == (uint64_t)(uintptr_t)MAP_FAILED ||
	    munmap((void *)(uintptr_t)unmapped_page, 4096) != 0)
		return 12;
	ordinary_cap += 16;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = forge_handler;
	sa.sa_flags = SA_SIGINFO;
	if (sigaction(SIGUSR1, &sa, NULL) != 0)
		return 13;
	raise(SIGUSR1);
	/* Here only if the sigreturn was accepted. */
	if (!frame_seen)
		return 20;
	if (c->want_status & PR_SHADOW_STACK_ENABLE && !cap_ok)
		return 21;
	st = abuse_status();
	if (st != c->want_status) {
		tap_diag("status after sigreturn %#llx, expected %#llx", (unsigned long long)st,
			 (unsigned long long)c->want_status);
		return 22;
	}
	/* Calls and returns still work, checked or not. */
	return abuse_recurse(1000) == 1000 ? 0 : 23;
}

/* In a re-executed image that never had GCS: forge GCS on. */
static int __attribute__((noreturn)) never_gcs_child(void)
{
	struct sig_case c = { FORGE_ENABLE, ~0ULL, 0, 0 };

	_exit(sig_case_run(&c));
}

static int exec_never_gcs(void *arg)
{
	char *const argv[] = { (char *)arg, "--never-gcs-child", NULL };

	execv("/proc/self/exe", argv);
	return 30;
}

#define NONE (~0ULL)
#define EN PR_SHADOW_STACK_ENABLE
#define WR PR_SHADOW_STACK_WRITE

static void refused(const char *name, enum forge f, uint64_t set, uint64_t lock)
{
	struct sig_case c = { f, set, lock, 0 };

	abuse_expect_fault(name, sig_case_run, &c, SIGSEGV, SEGV_ACCERR);
}

static void accepted(const char *name, enum forge f, uint64_t set, uint64_t lock, uint64_t want)
{
	struct sig_case c = { f, set, lock, want };

	abuse_expect_exit0(name, sig_case_run, &c);
}

/*
 * D1, D2: a case where the kernels differ; PROJECT_REFUSES says which way
 * the project kernel goes, the reference kernel's way is given as
 * REF_SIGNAL (0: accepted with REF_STATUS) and REF_CODE. REF_UNSAFE: the
 * case harms other processes on the reference kernel, which runs it only
 * with ABUSE_UNSAFE_CASES set.
 */
static void diverges(const char *name, const char *finding, enum forge f, uint64_t lock,
		     int project_refuses, uint64_t project_status, int ref_signal, int ref_code,
		     uint64_t ref_status, int ref_unsafe)
{
	struct sig_case c = { f, NONE, lock, 0 };

	if (abuse_filtered(name))
		return;
	abuse_diverges(finding);
	if (!abuse_project_kernel() && ref_unsafe && !getenv("ABUSE_UNSAFE_CASES")) {
		tap_skip(name, "harms other processes on the reference kernel: "
			       "ABUSE_UNSAFE_CASES=1 runs it");
		return;
	}
	if (abuse_project_kernel()) {
		c.want_status = project_status;
		if (project_refuses)
			abuse_expect_fault(name, sig_case_run, &c, SIGSEGV, SEGV_ACCERR);
		else
			abuse_expect_exit0(name, sig_case_run, &c);
	} else {
		c.want_status = ref_status;
		if (ref_signal)
			abuse_expect_fault(name, sig_case_run, &c, ref_signal, ref_code);
		else
			abuse_expect_exit0(name, sig_case_run, &c);
	}
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--never-gcs-child") == 0)
		never_gcs_child();
	ABUSE_ENABLE_GCS_OR_SKIP();
	tap_plan(17);

	accepted("untouched frame: gcs_context holds a signal cap, sigreturn pops it", FORGE_NONE,
		 NONE, 0, EN);
	accepted("untouched frame with ENABLE locked", FORGE_NONE, NONE, EN, EN);
	refused("cap missing: GCSPR moved up one entry", FORGE_GCSPR_UP, NONE, 0);
	/* D1: the reference kernel leaves bits [2:0] to the hardware, which drops them. */
	diverges("GCSPR moved 4 bytes off the cap", "D1", FORGE_GCSPR_MISALIGNED, 0, 1, 0, 0, 0, EN,
		 0);
	refused("GCSPR moved to an unmapped page", FORGE_GCSPR_UNMAPPED, NONE, 0);
	/*
	 * D4: the reference kernel spins for ever, SIGKILL or not, on the GCS
	 * store that invalidates this cap: run there only when asked.
	 */
	if (abuse_project_kernel() || getenv("ABUSE_UNSAFE_CASES")) {
		abuse_diverges("D4");
		refused("GCSPR moved to a well-formed cap in ordinary memory",
			FORGE_GCSPR_ORDINARY, NONE, 0);
	} else {
		abuse_diverges("D4");
		tap_skip("GCSPR moved to a well-formed cap in ordinary memory",
			 "livelocks the reference kernel: ABUSE_UNSAFE_CASES=1 runs it");
	}
	refused("cap rewritten with a token type (GCSSTR)", FORGE_CAP_TOKEN_TYPE, EN | WR, 0);
	refused("cap rewritten to name another page (GCSSTR)", FORGE_CAP_OTHER_PAGE, EN | WR, 0);
	/* D2: the reference kernel still checks returns, and the cap is not popped. */
	diverges("GCS turned off by sigreturn (not locked)", "D2", FORGE_DISABLE, 0, 0, 0, SIGSEGV,
		 SEGV_CPERR, 0, 1);
	accepted("WRITE turned on by sigreturn (not locked)", FORGE_ADD_WRITE, NONE, 0, EN | WR);
	refused("GCS turned off by sigreturn with ENABLE locked", FORGE_DISABLE, NONE, EN);
	refused("WRITE turned on by sigreturn with WRITE locked", FORGE_ADD_WRITE, NONE, WR);
	refused("unknown feature bit 3 in gcs_context", FORGE_UNKNOWN_BIT, NONE, 0);
	refused("GCS turned on by sigreturn after prctl turned it off", FORGE_ENABLE, 0, 0);
	refused("GCS turned on by sigreturn with ENABLE locked off", FORGE_ENABLE, 0, EN);
	abuse_expect_fault("GCS turned on by sigreturn in a thread that never had GCS",
			   exec_never_gcs, argv[0], SIGSEGV, SEGV_ACCERR);
	diverges("GCS turned off by sigreturn with only WRITE locked", "D2", FORGE_DISABLE, WR, 0, 0,
		 SIGSEGV, SEGV_CPERR, 0, 1);
	tap_finish();
}
