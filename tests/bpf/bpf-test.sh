#!/bin/sh
# The groups are called by name ("t_$group"), which shellcheck cannot see.
# shellcheck disable=SC2317
# Its variables hold pids, numbers and fixed paths, never spaces.
# shellcheck disable=SC2086
# BPF's user stacks of a GCS-enabled program built -O2
# -fomit-frame-pointer (gcsprof's split workload), taken by bpftrace
# (Debian's, vm/run --bpftrace): `profile:hz:99 { @[ustack] = count(); }`
# and a uprobe on burn_a with ustack. BPF takes user stacks through the
# kernel's perf call-chain code (bpf_get_stackid and bpf_get_stack call
# get_perf_callchain), so on a kernel that takes perf's chains from the
# GCS (kernel.perf_callchain_gcs, the series' patches 35-36) every stack
# is the exact chain; with the sysctl at 0, and on the reference kernel,
# which walks frame records, they are not: the control.
#
# Usage: bpf-test.sh [profile|uprobe|all]    TAP; 4 (skip) without GCS
set -u
T=/opt/gcsprof/tests
GCS3=glibc.cpu.aarch64_gcs=3
SYSCTL=/proc/sys/kernel/perf_callchain_gcs
work=$(mktemp -d)
trap 'kill $wl 2>/dev/null; rm -rf "$work"' EXIT
wl=
cd "$work" || exit 1
# shellcheck source=../tap.sh
. "$(dirname "$0")/../tap.sh"
awk() { if command -v mawk >/dev/null; then mawk "$@"; else busybox awk "$@"; fi; }
gcs_or_skip

# The chain of the split workload in its paths, root first: _start,
# __libc_start_main, libc's __libc_start_call_main (unnamed: Debian's
# libc has no symbol for it), main, one path, and that path's burn unless
# the stack was taken in the path itself.
exact='^_start;__libc_start_main;\?;main;path_(a(;burn_a)?|b(;burn_b)?)$'
at_entry='^_start;__libc_start_main;\?;main;path_a;burn_a$'

# bpftrace's printed map of ustack keys as one line per stack, root
# first, frames without their +offset (a frame bpftrace could not name
# is "?"), then a space and the count.
stacks() { # stacks OUTPUT
	awk '/^@\[$/ { n = 0; next }
	/^\]: [0-9]+$/ { s = ""; for (i = n; i >= 1; i--) s = s (i < n ? ";" : "") f[i]
		print s, $2; n = -1; next }
	n >= 0 && NF == 1 { x = $1; sub(/\+[0-9]+$/, "", x)
		if (x ~ /^0x/ || x ~ /^\[/) x = "?"; f[++n] = x }' "$1"
}

# tally STACKS REGEX: "N of M": how many of the stacks taken in the paths
# (leaf a path or burn function) match REGEX, weighted by their counts.
tally() {
	awk -v re="$2" '$1 ~ /(^|;)(path|burn)_[ab]$/ { m += $2; if ($1 ~ re) x += $2 }
		END { print x + 0, m + 0 }' "$1"
}

# run_bpftrace NAME PROGRAM: bpftrace PROGRAM while the split workload
# runs (it outlives bpftrace, so that bpftrace can name its frames when it
# prints at exit); stacks in NAME.stacks.
run_bpftrace() {
	env GLIBC_TUNABLES=$GCS3 $T/gcsprof-split 600 >/dev/null 2>&1 &
	wl=$!
	timeout 300 bpftrace -e "$2" >"$1.out" 2>"$1.err"
	rb_rc=$?
	kill $wl 2>/dev/null
	wait $wl 2>/dev/null
	wl=
	stacks "$1.out" >"$1.stacks"
	sort -k2 -rn "$1.stacks" | head -n 6 | show
	[ $rb_rc = 0 ] || { not_ok "bpftrace for $1 exited $rb_rc"; show "$1.err"; }
}

# check_exact NAME REGEX WHAT: with the kernel's GCS chains, every stack
# in the paths matches REGEX; with frame records (sysctl 0, or a kernel
# without it) not every one does.
check_exact() {
	# shellcheck disable=SC2046 # two numbers
	set -- "$1" "$2" "$3" $(tally "$1.stacks" "$2")
	if [ -e $SYSCTL ] && [ "$(cat $SYSCTL)" = 1 ]; then
		check "$3: every stack is the exact chain ($4 of $5)" [ "$5" -ge 20 -a "$4" -eq "$5" ]
	else
		check "$3, frame records: not every stack is exact ($4 of $5)" [ "$5" -ge 20 -a "$4" -lt "$5" ]
	fi
}

both_ways() { # both_ways NAME WHAT PROGRAM REGEX
	if [ -e $SYSCTL ]; then
		echo 1 >$SYSCTL
		run_bpftrace "$1" "$3"
		check_exact "$1" "$4" "$2"
		echo 0 >$SYSCTL
		run_bpftrace "$1-fp" "$3"
		check_exact "$1-fp" "$4" "$2 with kernel.perf_callchain_gcs=0"
		echo 1 >$SYSCTL
	else
		echo "# this kernel has no kernel.perf_callchain_gcs: its BPF stacks are frame records"
		run_bpftrace "$1" "$3"
		check_exact "$1" "$4" "$2"
	fi
}

t_profile() {
	both_ways profile "bpftrace profile:hz:99 ustack" \
		"profile:hz:99 /comm == \"gcsprof-split\"/ { @[ustack] = count(); } interval:s:5 { exit(); }" \
		"$exact"
}

t_uprobe() {
	both_ways uprobe "bpftrace uprobe on burn_a, ustack" \
		"uprobe:$T/gcsprof-split:burn_a { @[ustack] = count(); } interval:s:5 { exit(); }" \
		"$at_entry"
}

if ! command -v bpftrace >/dev/null; then
	echo "1..0 # SKIP no bpftrace (vm/run --bpftrace adds it)"
	exit 4
fi
tap_groups "profile uprobe" "$@"
