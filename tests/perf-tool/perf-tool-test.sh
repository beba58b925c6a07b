#!/bin/sh
# The groups are called by name ("t_$group"), which shellcheck cannot see.
# shellcheck disable=SC2317
# Its variables hold counts, names and fixed paths, never spaces.
# shellcheck disable=SC2086
# perf's own tool on GCS call chains, read the way people read them:
# `perf record -g` of a GCS-enabled program built -O2 -fomit-frame-pointer,
# then `perf script` and `perf report --stdio` (folded call graphs, caller
# and callee order), frame by frame, with two perfs:
#   new  /opt/gcsprof/perf-gcs/bin/perf: 6.12's tools/perf with the series
#        (patch 45: no leaf's caller added to a chain taken from the GCS;
#        vm/pieces/perf-gcs)
#   deb  Debian's perf on PATH (7.2), without that fix
# Where the kernel takes chains from the GCS (kernel.perf_callchain_gcs=1)
# every chain in the workload's paths is exact with the new perf, and with
# Debian's the leaf's caller shows twice wherever the leaf keeps its return
# address in LR. With the sysctl at 0 (the control) and on a kernel without
# GCS chains (the reference kernel) the chains are frame records: not exact,
# and both perfs print the same chains from the same file.
#
# Groups: split (gcsprof's split workload: main -> path_a -> burn_a, 3:1
# with path_b -> burn_b) and depth (bench's: main -> 24 x descend -> burn,
# a recursion whose repeated frames are all real).
#
# Usage: perf-tool-test.sh [split|depth|all]    TAP; 4 (skip) without GCS
set -u
T=/opt/gcsprof/tests
NEW=/opt/gcsprof/perf-gcs/bin/perf
GCS3=glibc.cpu.aarch64_gcs=3
SYSCTL=/proc/sys/kernel/perf_callchain_gcs
DEPTH=24
# Samples in the paths a view needs for its verdict to mean something:
# 4 s at 499 Hz gave 70 to 480 of them here, fewer the more the host was
# loaded (QEMU's guest then runs slower than the clock).
MIN=40
RUN_SECONDS=4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
# shellcheck source=../tap.sh
. "$(dirname "$0")/../tap.sh"
awk() { if command -v mawk >/dev/null; then mawk "$@"; else busybox awk "$@"; fi; }
gcs_or_skip

# perf_of WHO : the perf binary of "new" or "deb".
perf_of() { if [ "$1" = new ]; then echo $NEW; else echo perf; fi; }

# script_chains FILE WHO COMM : `perf script` (no -D) of COMM's samples,
# one chain a line, root first; a frame without a symbol is "?".
script_chains() {
	$(perf_of $2) script -i "$1" --comms "$3" --no-inline -F ip,sym,dso 2>/dev/null |
		awk 'function flush(  i, s) { if (!n) return
			for (i = n; i >= 1; i--) s = s (i < n ? ";" : "") f[i]
			print s; n = 0 }
		/^\t/ { x = $2; if (x == "[unknown]" || x ~ /^0x/) x = "?"; f[++n] = x; next }
		/^$/ { flush() }
		END { flush() }'
}

# report_chains FILE WHO COMM ORDER : `perf report --stdio --no-children`
# with folded call graphs in ORDER (caller or callee), one chain a line,
# root first, repeated by its count; a frame without a symbol is "?".
report_chains() {
	$(perf_of $2) report -i "$1" --comms "$3" --stdio --no-children --no-inline \
		-g folded,0,$4,count 2>/dev/null |
		awk -v order=$4 '/^[0-9]+ / { n = split($2, f, ";"); s = ""
			for (i = 1; i <= n; i++) {
				x = order == "callee" ? f[n + 1 - i] : f[i]
				if (x ~ /^0x/ || x == "[unknown]") x = "?"
				s = s (i > 1 ? ";" : "") x
			}
			for (i = 0; i < $1; i++) print s }'
}

# tally CHAINS PATHS EXACT : "X D O N": of the N chains in the workload's
# paths (matching the extended regex PATHS), X match EXACT, D would match
# it with the leaf's caller dropped once (that frame twice), O neither.
tally() {
	grep -E "$2" "$1" | awk -v re="$3" '{ n++
		if ($0 ~ re) { x++; next }
		k = split($0, f, ";"); s = ""
		for (i = 1; i <= k; i++) if (i != k - 1) s = s (s == "" ? "" : ";") f[i]
		if (k > 2 && f[k - 1] == f[k - 2] && s ~ re) d++; else o++ }
		END { print x + 0, d + 0, o + 0, n + 0 }'
}

# views FILE WHO COMM : the chains of FILE through WHO's perf script and
# report in both orders, in FILE.WHO.{script,caller,callee}.
views() {
	script_chains "$1" $2 "$3" >"$1.$2.script"
	report_chains "$1" $2 "$3" caller >"$1.$2.caller"
	report_chains "$1" $2 "$3" callee >"$1.$2.callee"
}

# record FILE WHO CMD... : perf record -g of CMD with GCS on, by WHO's perf.
record() {
	rec_file=$1 rec_who=$2
	shift 2
	$(perf_of $rec_who) record -q -e cycles:u -g -F 499 -o "$rec_file" -- \
		env GLIBC_TUNABLES=$GCS3 "$@" >/dev/null 2>"$rec_file.err"
	rec_rc=$?
	[ $rec_rc = 0 ] || { not_ok "$rec_who perf record of $* exited $rec_rc"; show "$rec_file.err"; }
}

# asks_gcspr FILE : the recording asked for GCSPR_EL0 (user register 47)
# besides LR (30): sample_regs_user 0x800040000000. lacks_gcspr: it did not.
asks_gcspr() {
	$NEW evlist -v -i "$1" 2>/dev/null | grep -q 'sample_regs_user: 0x800040000000'
}
lacks_gcspr() { ! asks_gcspr "$1"; }

# same_file A B : A and B have the same contents (the guest has no cmp).
same_file() { [ "$(cksum <"$1")" = "$(cksum <"$2")" ]; }

# counts CHAINS : x d o n of tally (below) for the current PATHS and EXACT.
counts() {
	# shellcheck disable=SC2046 # four numbers
	set -- $(tally "$1" "$PATHS" "$EXACT")
	x=$1 d=$2 o=$3 n=$4
}

view_name() {
	case $1 in
	script) echo script ;;
	caller) echo "report (caller order)" ;;
	callee) echo "report (callee order)" ;;
	esac
}

# each_view CHECK FILE WHO WHAT [ARG] : CHECK FILE WHO WHAT [ARG] for each
# view of FILE read by WHO's perf, with v (the view), vn (WHAT and the
# view's name) and the view's counts (x d o n) set.
each_view() {
	ev_check=$1
	shift
	for v in script caller callee; do
		counts "$1.$2.$v"
		vn="$3, perf $(view_name $v)"
		$ev_check "$@"
	done
}

# exact_view: every chain in the paths exact; their numbers in ns.
exact_view() {
	check "$vn: every chain in the paths is exact ($x of $n)" [ "$n" -ge $MIN -a "$x" -eq "$n" ]
	ns="$ns $n"
}

# check_exact FILE WHO WHAT : with WHO's perf, every chain in the paths is
# exact in perf script and both orders of perf report, the same samples.
check_exact() {
	ns=
	each_view exact_view "$@"
	# shellcheck disable=SC2046 # three numbers
	set -- "$3" $ns
	check "$1: perf script and perf report show the same samples ($2, $3, $4)" \
		[ "$2" -eq "$3" -a "$2" -eq "$4" ]
}

# duplicate_view ... MUST: each chain in the paths exact or with the
# leaf's caller twice, nothing else; with MUST=1, the duplicate on at least
# one sample.
duplicate_view() {
	check "$vn: $d of $n chains with the leaf's caller twice, $x exact, $o otherwise" \
		[ "$n" -ge $MIN -a "$o" -eq 0 ]
	[ "$4" = 1 ] && check "$vn: the duplicate is there ($d of $n)" [ "$d" -gt 0 ]
}

# not_exact_view: the chains are frame records: not every one exact.
not_exact_view() {
	check "$vn: frame records, not every chain exact ($x of $n)" [ "$n" -ge $MIN -a "$x" -lt "$n" ]
}

# frame_records_view FILE new WHAT: the chains are frame records, and
# Debian's perf prints the same chains from FILE.
frame_records_view() {
	not_exact_view
	check "$vn: the new perf prints what Debian's does" same_file "$1.new.$v" "$1.deb.$v"
}

# both_perfs NAME CMD... : the tests of one workload on this kernel.
both_perfs() {
	name=$1
	shift
	comm=${1##*/}
	if [ ! -x $NEW ]; then
		not_ok "no $NEW (the CTest test perf-gcs.stage puts it in the stage)"
		return
	fi
	if [ -e $SYSCTL ]; then
		echo 1 >$SYSCTL
		for who in new deb; do
			record $name-$who.data $who "$@"
			views $name-$who.data $who "$comm"
		done
		check "the new perf asks for GCSPR_EL0 where the kernel takes GCS chains" \
			asks_gcspr $name-new.data
		check_exact $name-new.data new "$name, new perf"
		must=0
		[ "$name" = split ] && must=1
		each_view duplicate_view $name-deb.data deb "$name, Debian's perf" $must
		# Which perf records matters as much as which one reads: the
		# samples must carry GCSPR_EL0. (The other way round cannot be
		# tried: 6.12's perf calls 7.2's files an incompatible format.)
		views $name-new.data deb "$comm"
		each_view duplicate_view $name-new.data deb "$name, Debian's perf reading the new perf's file" $must
		echo 0 >$SYSCTL
		record $name-fp.data new "$@"
		echo 1 >$SYSCTL
		check "with kernel.perf_callchain_gcs=0 the new perf does not ask for GCSPR_EL0" \
			lacks_gcspr $name-fp.data
		views $name-fp.data new "$comm"
		views $name-fp.data deb "$comm"
		each_view frame_records_view $name-fp.data new "$name, kernel.perf_callchain_gcs=0"
	else
		echo "# this kernel has no kernel.perf_callchain_gcs: its chains are frame records"
		record $name.data new "$@"
		check "the new perf asks for no GCSPR_EL0 here" lacks_gcspr $name.data
		views $name.data new "$comm"
		views $name.data deb "$comm"
		each_view frame_records_view $name.data new "$name"
		record $name-deb.data deb "$@"
		views $name-deb.data deb "$comm"
		each_view not_exact_view $name-deb.data deb "$name, Debian's perf recording"
	fi
	for f in "$name"*.script; do
		echo "# $f: the most frequent chains in the paths"
		grep -E "$PATHS" "$f" | sort | uniq -c | sort -rn | head -n 3 | show
	done
}

t_split() {
	PATHS='(^|;)(path|burn)_[ab]$'
	EXACT='^_start;__libc_start_main;\?;main;path_(a(;burn_a)?|b(;burn_b)?)$'
	both_perfs split $T/gcsprof-split $RUN_SECONDS
}

t_depth() {
	PATHS='(^|;)burn(;clock_gettime(;__kernel_clock_gettime)?)?$'
	d=descend r=
	i=0
	while [ $i -lt $DEPTH ]; do r="$r;$d"; i=$((i + 1)); done
	EXACT="^_start;__libc_start_main;\\?;main$r;burn(;clock_gettime(;__kernel_clock_gettime)?)?\$"
	both_perfs depth /opt/gcsprof/bench/bench-depth $RUN_SECONDS $DEPTH
}

tap_groups "split depth" "$@"
