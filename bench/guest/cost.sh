#!/bin/sh
# The cost half of bench/, for a guest under QEMU's instruction counting
# (bench/run --icount; it runs under plain TCG too, where the PMU counts
# no instructions and only the times mean something). Every method on
# every workload as profile.sh runs them, REPEAT times, each with the
# target's instructions and the recorder's counted apart, then the
# kernel's call-chain cost at each depth. Prints one raw line a run:
#
#   clock|SHIFT      the guest's clock: 2^SHIFT ns an instruction ("-": not
#                    counted, plain TCG)
#   cost|WORKLOAD|PARAM|METHOD|REP|SAMPLES|CPU_S|WORK|BASE|TGT_U|TGT_K|BASE_U|BASE_K|REC_U|REC_K|REC_NS|BYTES
#     WORK and BASE as profile.sh's (rounds, or 1e12 / ns for gzip);
#     TGT_U and TGT_K the target's user and kernel instructions while
#     sampled, BASE_U and BASE_K unprofiled (the mean of the runs before and
#     after the methods); REC_U, REC_K and REC_NS the recorder's own
#     instructions and CPU time (perf stat --no-inherit: the recorder's
#     process, not the target it starts); BYTES the recording on disk.
#   chain|DEPTH|CHAIN|REP|SAMPLES|WORK|TGT_U|TGT_K|BYTES
#     bench-sampler (the least of recorders: it reads no sample) sampling
#     bench-depth-fp (frame records kept, so that the frame-record walk
#     has frames to walk) on cpu-clock, a timer: the kernel takes the
#     chain in the timer's interrupt, whose instructions the PMU counts in
#     the target (a PMU overflow stops the PMU while it is handled, so
#     with cycles:u the chain's cost would not be seen).
#     CHAIN: none (no chain: the sampling's own cost), gcs (user chain from
#     the GCS), fp (the frame-record walk, kernel.perf_callchain_gcs=0),
#     dwarf-8k and dwarf-64k (the stack copied into the sample). The
#     chain's kernel cost a sample is (TGT_K - none's TGT_K) / SAMPLES.
# A field the PMU cannot count here is "-". A method that cannot run prints
# "fail|WORKLOAD|PARAM|METHOD|why".
#
# Environment: HZ (499), SECONDS_EACH (1), REPEAT (5), QUICK (1: fewer
# workloads and depths), WORKLOADS (a list such as "split depth:8"),
# CHAINS (the chains' kinds, "none gcs fp dwarf-8k dwarf-64k": none is
# needed for the others' figures).
set -u
B=/opt/gcsprof/bench
SECS=${SECONDS_EACH:-1}
# shellcheck source=lib.sh
. "$B/lib.sh"
bench_setup "${BENCH_DIR:-/tmp/bench-cost}"

# start: the target is true(1), so the recorder's run is its start and
# end alone, which the figures take from its cost a sample.
if [ "$QUICK" = 1 ]; then
	workloads="start split depth:8 depth:512"
	depths="8 512"
else
	workloads="start split depth:8 depth:64 depth:512 depth:2000 busy:1 busy:4 busy:16 busy:64 gzip"
	depths="8 64 512 2000"
fi
# WORKLOADS (bench/run --workloads) chooses: the depths of its depth:N
# are the chains' (start is always measured).
if [ -n "${WORKLOADS:-}" ]; then
	workloads="start $WORKLOADS"
	depths=$(echo "$WORKLOADS" | tr ' ' '\n' | sed -n 's/^depth:\([0-9]*\)$/\1/p' | tr '\n' ' ')
fi
methods=$METHODS
chains=${CHAINS:-none gcs fp dwarf-8k dwarf-64k}
# task-clock too: perf stat refuses to run when it can count nothing (the
# PMU counts no instructions under plain TCG).
COUNT=instructions:u,instructions:k,task-clock

# counted FILE EVENT: EVENT's count in perf stat -x, output FILE ("-" when
# it was not counted: no such event here).
counted() {
	v=$(awk -F, -v e="$2" '$3 == e { print $1; exit }' "$1" 2>/dev/null)
	case $v in '' | *[!0-9.]*) echo - ;; *) echo "${v%%.*}" ;; esac
}

# task_ns FILE: task-clock in ns from perf stat -x, output (it prints ms).
task_ns() {
	awk -F, '$3 ~ /^task-clock/ && $1 ~ /^[0-9.]+$/ { printf "%.0f\n", $1 * 1e6; f = 1; exit }
	END { if (!f) print "-" }' "$1" 2>/dev/null
}

# counted_run WORKLOAD PARAM OUT [RECORDER...]: the workload under perf
# stat (its instructions into OUT.tgt), under RECORDER if given; sets
# work, cpu_s (lib.sh: work_of), tgt_u and tgt_k.
counted_run() {
	w=$1 p=$2 out=$3
	shift 3
	# shellcheck disable=SC2046 # the command line, split on purpose
	run_workload "$w" "$out" "$@" perf stat -x, -o "$out.tgt" -e $COUNT -- \
		env GLIBC_TUNABLES=$GCS3 $(target "$w" "$p")
	rc=$?
	tgt_u=$(counted "$out.tgt" instructions:u) tgt_k=$(counted "$out.tgt" instructions:k)
	return $rc
}

# recorder KEY: the recorder's command line for a method (its output in
# KEY.data), its own instructions and CPU time counted into KEY.rec.
recorder() {
	key=$1
	set -- perf stat --no-inherit -x, -o "$1.rec" -e $COUNT --
	case $key in
	gcsprof-perf) echo "$* gcsprof record -q --method perf -F $HZ -o $key.data --" ;;
	gcsprof-perf-defer) echo "$* gcsprof record -q --method perf --defer -F $HZ -o $key.data --" ;;
	gcsprof-ptrace) echo "$* gcsprof record -q --method ptrace -F $HZ -o $key.data --" ;;
	perf-fp | perf-fp-gcs) echo "$* perf record -e cycles:u --call-graph fp -F $HZ -o $key.data --" ;;
	perf-dwarf-8k) echo "$* perf record -e cycles:u --call-graph dwarf,8192 -F $HZ -o $key.data --" ;;
	perf-dwarf-64k) echo "$* perf record -e cycles:u --call-graph dwarf,65528 -F $HZ -o $key.data --" ;;
	eu-stackprof) echo "$* eu-stackprof -vvv -n 4096 --" ;;
	esac
}

# samples_of KEY: the samples a method's run kept.
samples_of() {
	case $1 in
	gcsprof-*)
		gcsprof report "$1.data" -f folded -o "$1.folded" 2>/dev/null &&
			awk '{ n += $NF } END { print n + 0 }' "$1.folded"
		;;
	perf-*) sed -n 's/.*(\([0-9]*\) samples).*/\1/p' "$1.out.err" | tail -n 1 ;;
	eu-stackprof) grep -c '^find_dwfl ' "$1.out.err" ;;
	esac
}

# gcs_sysctl 0|1: where the kernel takes perf's user chains of a GCS
# task (fails, saying why, on a kernel that cannot take them from the GCS).
gcs_sysctl() {
	if [ -e $SYSCTL_GCS ]; then
		echo "$1" >$SYSCTL_GCS
	elif [ "$1" = 1 ]; then
		echo "this kernel takes no call chains from the GCS" >&2
		return 1
	fi
}

# cost_run KEY WORKLOAD PARAM: one method's run; sets samples, bytes,
# rec_u, rec_k, rec_ns besides counted_run's figures.
cost_run() {
	key=$1 w=$2 p=$3
	case $key in
	gcsprof-perf | gcsprof-perf-defer | perf-fp-gcs) gcs_sysctl 1 || return 1 ;;
	eu-stackprof) [ "$w" != gzip ] || { echo "no symbols to check gzip's chains against (as profile.sh)" >&2; return 1; } ;;
	*) gcs_sysctl 0 ;;
	esac
	# shellcheck disable=SC2046 # the command line, split on purpose
	counted_run "$w" "$p" "$key.out" $(recorder "$key")
	rc=$?
	gcs_sysctl 1 2>/dev/null
	[ $rc = 0 ] || { tail -n 2 "$key.out.err" >&2; return 1; }
	samples=$(samples_of "$key")
	[ -n "$samples" ] || samples=0
	[ "$samples" -gt 0 ] || [ "$w" = start ] || { echo "no samples" >&2; return 1; }
	bytes=$(stat -c %s "$key.data" 2>/dev/null || echo 0)
	rec_u=$(counted "$key.rec" instructions:u) rec_k=$(counted "$key.rec" instructions:k)
	rec_ns=$(task_ns "$key.rec")
	rm -f "$key.data" "$key.folded" "$key.out.err"
}

# mean A B: their mean, or "-" if either is.
mean() { if [ "$1" = - ] || [ "$2" = - ]; then echo -; else echo $((($1 + $2) / 2)); fi; }

# base_run WORKLOAD PARAM: an unprofiled run; sets base_work, base_u, base_k.
base_run() {
	counted_run "$1" "$2" base.out || { cat base.out.err >&2; exit 1; }
	base_work=$work base_u=$tgt_u base_k=$tgt_k
}

# chain_run DEPTH CHAIN REP: one chain line (see the header), sampled by
# bench-sampler, which asks the kernel for the chain and reads nothing.
chain_run() {
	case $2 in
	none) mode=none ;;
	gcs | fp) mode=chain ;;
	dwarf-8k) mode=stack:8192 ;;
	dwarf-64k) mode=stack:65528 ;;
	esac
	if [ "$2" = gcs ]; then gcs_sysctl 1 || return 1; else gcs_sysctl 0; fi
	counted_run depth-fp "$1" chain.out "$B/bench-sampler" "$HZ" "$mode"
	rc=$?
	gcs_sysctl 1 2>/dev/null
	[ $rc = 0 ] || { tail -n 2 chain.out.err >&2; return 1; }
	# "bench-sampler: N samples, L lost, B bytes"
	# shellcheck disable=SC2046 # three numbers
	set -- "$@" $(sed -n 's/^bench-sampler: \([0-9]*\) samples, \([0-9]*\) lost, \([0-9]*\) bytes$/\1 \2 \3/p' chain.out.err)
	[ $# = 6 ] || { echo "no bench-sampler line" >&2; return 1; }
	[ "$5" = 0 ] || echo "$5 samples lost" >&2
	echo "chain|$1|$2|$3|$4|$work|$tgt_u|$tgt_k|$6"
}

shift_=$(sed -n 's/.*gcsprof\.icount=\([0-9]*\).*/\1/p' /proc/cmdline)
# Counted, one run is like the next but for the guest's randomness: place
# every program at the same addresses (the workloads' page faults and
# caches the same in every run).
if [ -n "$shift_" ]; then
	old_aslr=$(cat /proc/sys/kernel/randomize_va_space)
	echo 0 >/proc/sys/kernel/randomize_va_space
	trap 'echo "$old_stack" >$SYSCTL_STACK; [ -e $SYSCTL_GCS ] && echo 1 >$SYSCTL_GCS; echo "$old_aslr" >/proc/sys/kernel/randomize_va_space' EXIT
fi
emit_info() {
	echo "info|$(uname -r)|$(nproc)|$HZ|$SECS|$REPEAT|$(date -u +%Y-%m-%dT%H:%MZ)|$(perf version 2>/dev/null | cut -d' ' -f3)"
	echo "clock|${shift_:--}"
}
emit_info
# PARTS: "methods chains" by default; one alone to run half.
PARTS=${PARTS:-methods chains}
case " $PARTS " in *" methods "*) ;; *) workloads='' ;; esac
case " $PARTS " in *" chains "*) ;; *) depths='' ;; esac
for wp in $workloads; do
	split_workload "$wp"
	echo "cost: $w $p" >&2
	rep=1
	while [ "$rep" -le "$REPEAT" ]; do
		base_run "$w" "$p"
		b1=$base_work b1u=$base_u b1k=$base_k
		lines=''
		for m in $methods; do
			if ! cost_run "$m" "$w" "$p" 2>why.txt; then
				echo "fail|$w|$p|$m|$(tr '\n|' '  ' <why.txt | cut -c1-200)"
				continue
			fi
			lines="$lines
cost|$w|$p|$m|$rep|$samples|$cpu_s|$work|@BASE@|$tgt_u|$tgt_k|@BU@|@BK@|$rec_u|$rec_k|$rec_ns|$bytes"
		done
		base_run "$w" "$p"
		sub="s/@BASE@/$(((b1 + base_work) / 2))/;s/@BU@/$(mean "$b1u" "$base_u")/;s/@BK@/$(mean "$b1k" "$base_k")/"
		for line in $lines; do
			echo "$line" | sed "$sub"
		done
		rep=$((rep + 1))
	done
done
for d in $depths; do
	echo "cost: chains at depth $d" >&2
	rep=1
	while [ "$rep" -le "$REPEAT" ]; do
		for c in $chains; do
			chain_run "$d" "$c" "$rep" 2>why.txt ||
				echo "fail|chain|$d|$c|$(tr '\n|' '  ' <why.txt | cut -c1-200)"
		done
		rep=$((rep + 1))
	done
done
