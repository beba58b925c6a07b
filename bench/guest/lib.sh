#!/bin/sh
# Helpers of the guest half of bench/: turning each method's output into
# folded chains (root first, frames joined by ';', a count last) and
# judging them against the ground truth of the workload. Sourced by
# profile.sh; POSIX sh, as the guest's /bin/sh is dash.

# shellcheck disable=SC2034 # for the scripts that source this file
T=/opt/gcsprof/tests
HZ=${HZ:-499}
REPEAT=${REPEAT:-5}
QUICK=${QUICK:-0}
# Every target runs with GCS on, whatever the method: the same program in
# the same state for all. (Run the tools themselves without it: perf and
# elfutils load unmarked libraries.)
# shellcheck disable=SC2034
GCS3=glibc.cpu.aarch64_gcs=3
# The guest's architecture. On riscv64 the workloads are the riscv tests'
# builds (tests/riscv64: -O2 -fomit-frame-pointer with
# -fcf-protection=return, gcsprof-shstk linked in, which turns the Zicfiss
# shadow stack on at start; GCSPROF_SHADOW_STACK=3 says so again), and the
# shadow stack's name in messages is Zicfiss. BW: the folder of
# bench-depth.
# shellcheck disable=SC2034
case $(uname -m) in
riscv64) ARCH=riscv64 FEATURE=Zicfiss T=/opt/gcsprof/tests/riscv64 BW=$T GCS_ENV=GCSPROF_SHADOW_STACK=3 ;;
*) ARCH=arm64 FEATURE=GCS BW=/opt/gcsprof/bench GCS_ENV=GLIBC_TUNABLES=$GCS3 ;;
esac
SYSCTL_GCS=/proc/sys/kernel/perf_callchain_gcs
SYSCTL_STACK=/proc/sys/kernel/perf_event_max_stack
# The profiling methods (bench/README.md says what each is); METHODS in
# the environment (vm/run --env) runs some of them alone.
# shellcheck disable=SC2034
METHODS=${METHODS:-"gcsprof-perf gcsprof-perf-defer gcsprof-ptrace perf-fp perf-fp-gcs perf-dwarf-8k perf-dwarf-64k eu-stackprof"}

# bench_setup DIR: works in DIR (dir), with perf's chains allowed 4096
# entries until the script ends, and the real program's input there.
bench_setup() {
	dir=$1
	mkdir -p "$dir" && cd "$dir" || exit 1
	# Deep chains need a longer limit than perf's 127 entries, for
	# gcsprof's perf method and perf's fp mode alike (both read it).
	old_stack=$(cat $SYSCTL_STACK)
	echo 4096 >$SYSCTL_STACK || exit 1
	trap 'echo "$old_stack" >$SYSCTL_STACK; [ -e $SYSCTL_GCS ] && echo 1 >$SYSCTL_GCS' EXIT
	perf_event
	# The real program's input: 4 MB of text that compresses like source code.
	if ! [ -s gzip.in ]; then
		seq 1 400000 | sed 's/\(.*\)/line \1: the quick brown fox \1/' | head -c 4000000 >gzip.in
	fi
}

# perf_event: sets PERF_EVENT, the event every perf-based method samples
# on: CPU cycles (cycles:u, the emulated PMU) where the CPU can sample
# them, as gcsprof's perf method prefers; cpu-clock:u otherwise (QEMU's
# riscv64 CPU has no Sscofpmf, so no counter overflow to sample on), as
# gcsprof's perf method then does too.
perf_event() {
	if perf record -q -e cycles:u -F "$HZ" -o "$dir/probe.data" -- true >/dev/null 2>&1; then
		PERF_EVENT=cycles:u
	else
		PERF_EVENT=cpu-clock:u
	fi
	rm -f "$dir/probe.data"
}

awk() { if command -v mawk >/dev/null; then mawk "$@"; else busybox awk "$@"; fi; }
now_ns() { date +%s%N; }

# split_workload W:P: sets w (the workload) and p (its parameter, "-"
# when it takes none) from one word of the workloads list.
split_workload() {
	w=${1%%:*} p=${1#*:}
	[ "$p" = "$1" ] && p=-
}

# target WORKLOAD PARAM: the command line of a workload
# (T, B, SECS and dir are the caller's: the tests' and bench's folders,
# the seconds a run, the working folder).
target() {
	case $1 in
	split) echo "$T/gcsprof-split $SECS" ;;
	depth) echo "$BW/bench-depth $SECS $2" ;;
	depth-fp) echo "$B/bench-depth-fp $SECS $2" ;;
	busy) echo "$B/bench-busy $SECS $2" ;;
	gzip) echo "$B/bench-timed gzip -9 -c $dir/gzip.in" ;;
	start) echo true ;;
	esac
}

# run_workload WORKLOAD OUT COMMAND...: runs COMMAND (the workload's
# command line at its end), its output in OUT and OUT.err (gzip's
# compressed output thrown away), and sets work and cpu_s (work_of; 0 when
# it does not say). Returns COMMAND's status.
run_workload() {
	rw_w=$1 rw_out=$2
	shift 2
	rw_t0=$(now_ns)
	if [ "$rw_w" = gzip ]; then
		"$@" >/dev/null 2>"$rw_out.err"
	else
		"$@" >"$rw_out" 2>"$rw_out.err"
	fi
	rw_rc=$?
	work_of "$rw_w" "$rw_out" "$rw_t0" "$(now_ns)"
	[ -n "$work" ] || work=0
	[ -n "$cpu_s" ] || cpu_s=0
	return $rw_rc
}

# work_of WORKLOAD OUT T0 T1: sets work (the target's rounds, or for a
# fixed job 1e12 / its ns) and cpu_s (the CPU time the run stands for)
# from the workload's output OUT (and OUT.err), T0 and T1 its start and
# end (now_ns) should it not say its own run time.
work_of() {
	work='' cpu_s=''
	case $1 in
	split | depth | depth-fp) work=$(sed -n 's/^[a-z]*: \([0-9]*\) rounds$/\1/p' "$2") cpu_s=$SECS ;;
	busy)
		work=$(sed -n 's/^busy: \([0-9]*\) rounds.*/\1/p' "$2")
		cpu_s=$(sed -n 's/.*cpu \([0-9.]*\) s$/\1/p' "$2")
		;;
	gzip)
		# Its own run time (bench-timed), not the profiler's start and end.
		ns=$(sed -n 's/^timed: \([0-9]*\) ns$/\1/p' "$2.err" | tail -n 1)
		[ -n "$ns" ] || ns=$(($4 - $3))
		work=$((1000000000000 / ns)) cpu_s=$(awk -v n="$ns" 'BEGIN { print n / 1e9 }')
		;;
	esac
}

# A frame as judge and edges compare it: the function's name without the
# offset (+0x..) or source (" (...)") a tool adds; where there is no name
# (Debian's binaries are stripped), the file's base name and the offset,
# rounded up to the instruction (perf's DWARF unwinder gives a return
# address minus one, gcsprof and perf's kernel chains the address itself):
# "[unknown] (/usr/bin/gzip+0x3eef)" and "[gzip+0x3ef0]" are one frame.
# The workloads' inlined helpers (common.h: spin, spin_for, seconds_now)
# come out as "": gcsprof shows inlined calls, perf --no-inline does not.
CLEAN_AWK='
function hexval(h,    i, v) {
	v = 0; h = tolower(h)
	for (i = 1; i <= length(h); i++)
		v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
	return v
}
function unnamed(file, off,    v) {
	sub(/.*\//, "", file)
	v = hexval(off); v = v + (4 - v % 4) % 4
	return sprintf("[%s+0x%x]", file, v)
}
function clean(g,    a) {
	sub(/^[ \t]+/, "", g); sub(/[ \t]+$/, "", g)
	if (match(g, /^\[unknown\] \(.*\+0x[0-9a-f]+\)$/)) {
		g = substr(g, 12, length(g) - 12)
		a = g; sub(/\+0x[0-9a-f]+$/, "", a); sub(/.*\+0x/, "", g)
		return unnamed(a, g)
	}
	if (match(g, /^\[.*\+0x[0-9a-f]+\]$/)) {
		g = substr(g, 2, length(g) - 2)
		a = g; sub(/\+0x[0-9a-f]+$/, "", a); sub(/.*\+0x/, "", g)
		return unnamed(a, g)
	}
	sub(/ \(.*\)$/, "", g); sub(/\+0x[0-9a-f]+$/, "", g)
	if (g == "spin" || g == "spin_for" || g == "seconds_now")
		return ""
	return g
}
# frames(LINE): the cleaned frames of a folded line into f[1..], merging
# consecutive repeats when merge is set; returns their number.
function frames(line, merge,    k, raw, i, g, m, prev) {
	k = split(line, raw, ";"); m = 0; prev = "\001"
	for (i = 1; i <= k; i++) {
		g = clean(raw[i])
		if (g == "" || (merge && g == prev)) continue
		f[++m] = g; prev = g
	}
	return m
}'

# perf_folded IN OUT: perf script's blocks (leaf first, one frame a line,
# "ADDR SYMBOL (FILE+OFFSET)" as -F ip,sym,dsoff prints it) as root-first
# folded lines. Kernel frames (perf adds them at a sample taken in a
# system call) are left out: every method here records user chains.
perf_folded() {
	awk 'BEGIN { RS = ""; FS = "\n" } {
		s = ""
		for (i = NF; i >= 1; i--) {
			line = $i; a = line
			sub(/^[ \t]*/, "", a); sub(/ .*/, "", a)
			if (length(a) == 16 && a ~ /^ffff[89a-f]/) continue
			sub(/^[ \t]*[0-9a-f]+ /, "", line)
			if (line == "" || line ~ /^[^ ]+ +[0-9]+ /) continue
			s = s (s == "" ? "" : ";") line
		}
		if (s != "") print s " 1"
	}' "$1" >"$2"
}

# judge MODE PARAM FOLDED: prints "IN EXACT": the samples in scope (whose
# innermost frame is the workload's own hot function) and, of those, the
# ones whose whole chain is the true one, frames compared as clean gives
# them.
# The root: _start, where the chain starts; on riscv64 also main's return
# into libc's start code alone above main, which is where the shadow
# stack ends (sid's riscv64 glibc pushes nothing onto it: docs/riscv.md).
#  split: _start ... main, path_a, burn_a (or the b path). Consecutive
#         repeats of a frame are merged first: perf's fp mode adds a leaf's
#         caller from the link register even when the kernel's chain (the
#         GCS) already holds it; split has no recursion to hide.
#  depth: _start ... main, PARAM descend frames, burn. No merging.
#  busy:  two frames of libc (the thread's entry and start_thread), worker.
#  ref:   the samples with a frame in the program ("^prog;NAME" in the
#         file PARAM) are in scope; exact if the chain is complete (from
#         one of the program's entries, "^root;FRAME") and every caller ->
#         callee step in it is one of PARAM's, made by edges from the
#         reference method's chains. The step into the leaf is not judged:
#         the leaf is the sampled instruction, wherever it fell, and an
#         unnamed one cannot be matched across runs. Repeats are merged
#         as in split.
judge() {
	awk -v mode="$1" -v param="$2" -v arch="$ARCH" "$CLEAN_AWK"'
	# rooted(MAIN): whether the frames above main (at MAIN) are a root.
	function rooted(at) {
		return f[1] == "_start" || (arch == "riscv64" && at == 2 &&
			(f[1] ~ /^\[libc\.so\.6\+/ || f[1] == "__libc_start_call_main"))
	}
	BEGIN {
		if (mode == "ref")
			while ((getline line < param) > 0)
				if (line ~ /^\^root;/) root[substr(line, 7)] = 1
				else if (line ~ /^\^prog;/) prog = "[" substr(line, 7) "+"
				else want[line] = 1
	}
	{
		n = 1
		if ($NF ~ /^[0-9]+$/) { n = $NF; $NF = "" }
		line = $0; sub(/ +$/, "", line)
		m = frames(line, mode == "split" || mode == "ref")
		if (m == 0) next
		good = 0
		if (mode == "split") {
			if (f[m] != "burn_a" && f[m] != "burn_b") next
			good = m >= 3 && f[m - 2] == "main" && rooted(m - 2) &&
				f[m - 1] == (f[m] == "burn_a" ? "path_a" : "path_b")
		} else if (mode == "depth") {
			if (f[m] != "burn") next
			d = param + 0
			good = m >= d + 2 && f[m - d - 1] == "main" && rooted(m - d - 1)
			for (i = m - d; good && i < m; i++)
				good = f[i] == "descend"
		} else if (mode == "busy") {
			if (f[m] != "worker") next
			good = m == 3 && f[1] ~ /^\[libc\.so\.6\+/ && f[2] ~ /^\[libc\.so\.6\+/
		} else if (mode == "ref") {
			for (i = 1; i <= m && index(f[i], prog) != 1; i++)
				;
			if (i > m) next
			good = f[1] in root
			for (i = 1; good && i < m - 1; i++)
				good = (f[i] ";" f[i + 1]) in want
		}
		in_scope += n
		if (good) exact += n
	}
	END { print in_scope + 0, exact + 0 }' "$3"
}

# edges FOLDED...: the reference of judge's ref mode: "^root;FRAME" for
# each entry of the program (the roots of at least 2% of the chains: the
# program's _start, the dynamic loader's), then the caller -> callee steps
# ("caller;callee", one a line) of the chains from those roots.
edges() {
	awk "$CLEAN_AWK"'{
		n = 1
		if ($NF ~ /^[0-9]+$/) { n = $NF; $NF = "" }
		line = $0; sub(/ +$/, "", line)
		m = frames(line, 1)
		if (m == 0) next
		chains[++c] = line; roots[f[1]] += n; total += n
	}
	END {
		for (r in roots) if (roots[r] * 50 >= total) { print "^root;" r; ok[r] = 1 }
		for (j = 1; j <= c; j++) {
			m = frames(chains[j], 1)
			if (!(f[1] in ok)) continue
			for (i = 1; i < m; i++) if (!((f[i] ";" f[i + 1]) in seen)) {
				seen[f[i] ";" f[i + 1]] = 1
				print f[i] ";" f[i + 1]
			}
		}
	}' "$@"
}
