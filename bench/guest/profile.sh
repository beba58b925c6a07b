#!/bin/sh
# The profiling half of bench/: every method on every workload, in this
# one boot, each run REPEAT times. Runs in the QEMU guest (bench/run boots
# it) and prints one raw line a run:
#   prof|WORKLOAD|PARAM|METHOD|REP|SAMPLES|CPU_S|IN|EXACT|WORK|BASE|BYTES|POST_NS
# SAMPLES taken; CPU_S the CPU time they stand for (the rate asked is HZ a
# second of it); IN the samples in scope and EXACT those with the true
# chain (lib.sh: judge); WORK the work the target did while profiled and
# BASE without a profiler (rounds, or for a fixed job 1e12 / its ns), so
# the slowdown is 1 - WORK / BASE; BYTES the recording on disk; POST_NS
# the post-processing (gcsprof report, perf script) of it. A method that
# cannot run here prints "fail|WORKLOAD|PARAM|METHOD|why" instead.
#
# Environment: HZ (default 499), SECONDS_EACH (3), REPEAT (5), QUICK (1:
# fewer workloads, for CI's check that the pipeline works), WORKLOADS (a
# list such as "split depth:8": those alone; bench/run --workloads).
# On a riscv64 guest (bench/run --arch riscv64) the same methods run on
# the riscv64 builds of the split and depth workloads (lib.sh), sampling
# on cpu-clock where the CPU cannot sample cycles; eu-stackprof, absent
# there, fails with its reason.
set -u
B=/opt/gcsprof/bench
SECS=${SECONDS_EACH:-3}
# shellcheck source=lib.sh
. "$B/lib.sh"
bench_setup "${BENCH_DIR:-/tmp/bench}"
rm -f raw.txt

# riscv64 has the split and depth workloads alone: bench-busy and
# bench-timed are not built for it, and Debian's gzip pushes nothing onto
# the Zicfiss shadow stack (sid's riscv64 packages are not built for it).
if [ -n "${WORKLOADS:-}" ]; then
	workloads=$WORKLOADS
elif [ "$ARCH" = riscv64 ] && [ "$QUICK" = 1 ]; then
	workloads="split depth:8 depth:512"
elif [ "$ARCH" = riscv64 ]; then
	workloads="split depth:8 depth:64 depth:512 depth:2000"
elif [ "$QUICK" = 1 ]; then
	workloads="split depth:8 depth:512 busy:4 gzip"
else
	workloads="split depth:8 depth:64 depth:512 depth:2000 busy:1 busy:4 busy:16 busy:64 gzip"
fi
methods=$METHODS

# run_target WORKLOAD PARAM OUT [PROFILER...]: runs the workload (under
# the profiler's command line if given), its output in OUT, and sets
# work (see the header) and cpu_s.
run_target() {
	w=$1 p=$2 out=$3
	shift 3
	# shellcheck disable=SC2046 # the command line, split on purpose
	run_workload "$w" "$out" "$@" env $GCS_ENV $(target "$w" "$p")
}

# mode_of WORKLOAD PARAM: judge's mode and parameter for the workload.
mode_of() {
	case $1 in
	split) echo "split 0" ;;
	depth) echo "depth $2" ;;
	busy) echo "busy 0" ;;
	gzip) echo "ref $dir/gzip.edges" ;;
	esac
}

# gcs_chains: whether this kernel takes perf's user chains from the GCS
# (the methods that need it say why not on stderr).
gcs_chains() {
	[ -e $SYSCTL_GCS ] && return 0
	echo "this kernel takes no call chains from the shadow stack ($FEATURE)" >&2
	return 1
}

# perf_method KEY WORKLOAD PARAM CALLGRAPH GCS(0|1): perf record, then
# perf script into folded chains (KEY.folded).
perf_method() {
	name=$1 w=$2 p=$3 cg=$4
	[ "$5" = 0 ] || gcs_chains || return 1
	[ -e $SYSCTL_GCS ] && echo "$5" >$SYSCTL_GCS
	run_target "$w" "$p" "$name.out" perf record -q -e "$PERF_EVENT" --call-graph "$cg" -F "$HZ" \
		-o "$name.data" --
	rc=$?
	[ -e $SYSCTL_GCS ] && echo 1 >$SYSCTL_GCS
	[ $rc = 0 ] || { tail -n 2 "$name.out.err" >&2; return 1; }
	t0=$(now_ns)
	perf script -i "$name.data" --max-stack 4096 --no-inline -F ip,sym,dsoff >"$name.txt" 2>/dev/null
	post_ns=$(($(now_ns) - t0))
	perf_folded "$name.txt" "$name.folded"
	bytes=$(stat -c %s "$name.data")
	rm -f "$name.data" "$name.txt"
}

# gcsprof_method KEY WORKLOAD PARAM METHOD
gcsprof_method() {
	name=$1 w=$2 p=$3
	[ "$4" != perf ] || gcs_chains || return 1
	# shellcheck disable=SC2086 # $5: an option, or nothing
	run_target "$w" "$p" "$name.out" gcsprof record -q --method "$4" ${5:-} -F "$HZ" \
		-o "$name.data" -- || { tail -n 2 "$name.out.err" >&2; return 1; }
	t0=$(now_ns)
	gcsprof report "$name.data" -f folded -o "$name.folded" 2>/dev/null
	post_ns=$(($(now_ns) - t0))
	bytes=$(stat -c %s "$name.data")
	rm -f "$name.data"
}

# eu-stackprof unwinds as it samples (DWARF, from an 8 KB stack copy, at
# its own fixed 1000 Hz: it has no rate option) and prints no symbols,
# only each frame's address (-vvv). A chain cannot be checked name by
# name: it counts as exact at most when it has the true chain's length
# (truelen: the length of gcsprof's most common chain in scope) and no address
# still carrying a pointer authentication code (the arm64 unwinder of
# elfutils 0.196 does not strip it from the return addresses of
# PAC-built code, and the unwind goes astray there).
eu_method() {
	name=$1 w=$2 p=$3
	if ! command -v eu-stackprof >/dev/null; then
		# Debian's riscv64 elfutils does not ship it.
		echo "no eu-stackprof in this $ARCH guest" >&2
		return 1
	fi
	if [ "$w" = gzip ] || [ -z "${truelen:-}" ]; then
		echo "no symbols in its output to check this workload's chains against" >&2
		return 1
	fi
	run_target "$w" "$p" "$name.out" eu-stackprof -vvv -n 4096 -- ||
		{ tail -n 2 "$name.out.err" >&2; return 1; }
	post_ns=0 bytes=0
	awk -v want="$truelen" '
	function flush() { if (n) { total++; if (n == want && !bad) good++ } n = 0; bad = 0 }
	/^find_dwfl / { flush(); next }
	/^\* frame / {
		n++
		if (match($0, /raw_pc=[0-9a-f]+/) && RLENGTH - 7 > 12) bad = 1
	}
	END { flush(); print total + 0, good + 0 }' "$name.out.err" >"$name.judged"
	rm -f "$name.out.err"
}

# truelen_of FOLDED: the number of frames (as judge counts them) of the
# most common chain of gcsprof's in scope, the true length for
# eu-stackprof's bound.
truelen_of() {
	[ "$w" = gzip ] && return
	awk "$CLEAN_AWK"'{
		n = $NF; $NF = ""; line = $0; sub(/ +$/, "", line)
		m = frames(line, 0)
		if (m && f[m] ~ /^(burn|burn_a|burn_b|worker)$/) len[m] += n
	}
	END { for (k in len) if (len[k] > best) { best = len[k]; b = k } if (b) print b }' "$1"
}

# method KEY WORKLOAD PARAM: one run of a method, leaving its chains in
# KEY.folded (eu-stackprof: its judged "SAMPLES EXACT" in KEY.judged) and
# bytes and post_ns set; fails with the reason on stderr.
method() {
	case $1 in
	gcsprof-perf) gcsprof_method "$1" "$2" "$3" perf ;;
	gcsprof-perf-defer) gcsprof_method "$1" "$2" "$3" perf --defer ;;
	gcsprof-ptrace) gcsprof_method "$1" "$2" "$3" ptrace ;;
	perf-fp) perf_method "$1" "$2" "$3" fp 0 ;;
	perf-fp-gcs) perf_method "$1" "$2" "$3" fp 1 ;;
	perf-dwarf-8k) perf_method "$1" "$2" "$3" dwarf,8192 0 ;;
	perf-dwarf-64k) perf_method "$1" "$2" "$3" dwarf,65528 0 ;;
	eu-stackprof) eu_method "$1" "$2" "$3" ;;
	esac
}

# emit LINE: a raw line, kept in raw.txt; printed now unless it is gzip's,
# which is judged at the end.
emit() {
	echo "$1" >>raw.txt
	case $1 in "prof|gzip|"*) ;; *) echo "$1" ;; esac
}

emit "info|$(uname -r)|$(nproc)|$HZ|$SECS|$REPEAT|$(date -u +%Y-%m-%dT%H:%MZ)|$(perf version 2>/dev/null | cut -d' ' -f3)|$ARCH|$PERF_EVENT"
for wp in $workloads; do
	split_workload "$wp"
	echo "bench: $w $p" >&2
	rep=1
	while [ "$rep" -le "$REPEAT" ]; do
		# An unprofiled run in every repetition: the emulated CPU's
		# speed drifts with the host's load.
		run_target "$w" "$p" base.out || { cat base.out.err >&2; exit 1; }
		base1=$work
		truelen='' lines=''
		for m in $methods; do
			if ! method "$m" "$w" "$p" 2>why.txt; then
				emit "fail|$w|$p|$m|$(tr '\n|' '  ' <why.txt | cut -c1-200)"
				continue
			fi
			if [ "$m" = eu-stackprof ]; then
				read -r samples exact <"$m.judged"
				in_scope=$samples
			else
				samples=$(awk '{ n += $NF } END { print n + 0 }' "$m.folded")
				if [ "$w" = gzip ]; then
					# Judged at the end, against the reference.
					cp "$m.folded" "gzip.$m.$rep.folded"
					in_scope=- exact=-
				else
					# shellcheck disable=SC2046 # mode and parameter
					read -r in_scope exact <<-EOF
					$(judge $(mode_of "$w" "$p") "$m.folded")
					EOF
				fi
				[ -z "$truelen" ] && [ "${m#gcsprof}" != "$m" ] && truelen=$(truelen_of "$m.folded")
			fi
			lines="$lines
prof|$w|$p|$m|$rep|$samples|$cpu_s|$in_scope|$exact|$work|@BASE@|$bytes|$post_ns"
		done
		# A second unprofiled run after the methods: the baseline is the
		# mean of the two, against the emulated CPU's drift meanwhile.
		run_target "$w" "$p" base.out || { cat base.out.err >&2; exit 1; }
		base=$(((base1 + work) / 2))
		for line in $lines; do
			emit "$(echo "$line" | sed "s/@BASE@/$base/")"
		done
		lines=
		rep=$((rep + 1))
	done
done

# The real program's chains come back with the results (folded/), for
# anyone who wants to see where the methods differ.
case " $workloads " in *" gzip "*) ;; *) exit 0 ;; esac
mkdir -p "$OLDPWD/folded" && cp gzip.*.folded "$OLDPWD/folded/" 2>/dev/null

# The real program's chains: judged against the steps of perf dwarf
# 64 KB's complete chains over every repetition (gzip's stack is shallow:
# a 64 KB copy holds it whole, so DWARF unwinding is the reference here).
{ echo "^prog;gzip"; edges gzip.perf-dwarf-64k.*.folded; } >gzip.edges
grep '^prof|gzip|' raw.txt | while IFS='|' read -r _ w p m rep samples cpu_s _ _ work base bytes post_ns; do
	read -r in_scope exact <<-EOF
	$(judge ref gzip.edges "gzip.$m.$rep.folded")
	EOF
	echo "prof|$w|$p|$m|$rep|$samples|$cpu_s|$in_scope|$exact|$work|$base|$bytes|$post_ns"
done
