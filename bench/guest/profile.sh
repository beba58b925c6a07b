#!/bin/sh
# Every way of taking call chains, side by side in one guest run, on one
# -O2 -fomit-frame-pointer workload (gcsprof-split: main -> path_a ->
# burn_a three times out of four, main -> path_b -> burn_b once) at one
# sampling rate. Prints one raw line per method and repetition.
#
# Runs in the QEMU guest (bench/methods boots it, and makes the table from
# the raw lines this prints: "raw|NAME|SAMPLES|SECONDS|IN_PATHS|EXACT|
# ROUNDS|BASELINE_ROUNDS|BYTES|POST_NS", one per method and repetition).
# Environment: HZ (default 499), SECONDS_EACH (default 5), REPEAT
# (default 1).
#
# Figures, per method:
#  - samples/s: samples taken, over the workload's run time;
#  - exact: the share of the samples in the two paths (a chain that names
#    burn_a or burn_b) whose chain is the true one, _start ... main ->
#    path_X -> burn_X (consecutive repeats of a frame are merged first: perf
#    adds the leaf's caller again from the link register);
#  - slowdown: rounds of work the workload did, against a run without a
#    profiler (same time);
#  - bytes/sample: the recording's file size over its samples;
#  - post-processing: gcsprof report (folded) or perf script, per sample.
#
# "perf fp (frame records)" is perf record -g with the kernel told to walk
# frame records (kernel.perf_callchain_gcs=0), as every other kernel does;
# "perf fp (GCS)" is the same command with this kernel's GCS call chains.
set -u
T=/opt/gcsprof/tests
HZ=${HZ:-499}
SECS=${SECONDS_EACH:-5}
REPEAT=${REPEAT:-1}
GCS3=glibc.cpu.aarch64_gcs=3
SYSCTL=/proc/sys/kernel/perf_callchain_gcs
work=${BENCH_DIR:-/tmp/bench}
mkdir -p "$work" && cd "$work" || exit 1
awk() { if command -v mawk >/dev/null; then mawk "$@"; else busybox awk "$@"; fi; }
now_ns() { date +%s%N; }
rounds_of() { sed -n 's/^split: \([0-9]*\) rounds$/\1/p' "$1"; }

# exact FILE: "IN EXACT" from chains given one per line, root first, frames
# joined by ';', an optional count last (folded stacks).
exact() {
	awk '{
		n = 1
		if ($NF ~ /^[0-9]+$/) { n = $NF; $NF = "" }
		k = split($0, f, ";")
		s = ""; prev = ""
		for (i = 1; i <= k; i++) {
			g = f[i]; sub(/ +$/, "", g); sub(/ \(.*\)$/, "", g)
			if (g != prev) s = s ";" g
			prev = g
		}
		if (s !~ /;burn_[ab](;|$)/) next
		in_paths += n
		if (s ~ /^;_start;/ && (s ~ /;main;path_a;burn_a(;|$)/ || s ~ /;main;path_b;burn_b(;|$)/))
			good += n
	} END { print in_paths + 0, good + 0 }' "$1"
}

# perf script's blocks (leaf first) as root-first folded lines.
perf_folded() {
	awk 'BEGIN { RS = ""; FS = "\n" } {
		s = ""
		for (i = NF; i >= 1; i--) {
			line = $i; sub(/^[ \t]*[0-9a-f]+ /, "", line)
			if (line == "" || line ~ /^[^ ]+ +[0-9]+ /) continue
			s = s (s == "" ? "" : ";") line
		}
		if (s != "") print s " 1"
	}' "$1"
}

row() { # row NAME SAMPLES SECS EXACT_IN EXACT_GOOD ROUNDS BYTES POST_NS
	echo "raw|$1|$2|$3|$4|$5|$6|$base|$7|$8"
}

gcsprof_run() { # gcsprof_run METHOD
	gcsprof record -q --method "$1" -F "$HZ" --gcs-tunable 3 -o g.data -- \
		$T/gcsprof-split "$SECS" >g.out 2>g.err || { cat g.err >&2; return 1; }
	t0=$(now_ns)
	gcsprof report g.data -f folded -o g.folded 2>/dev/null
	t1=$(now_ns)
	# shellcheck disable=SC2046 # two numbers, split on purpose
	set -- $(exact g.folded)
	row "gcsprof $m" "$(grep -c '^sample ' g.data)" "$SECS" "$1" "$2" "$(rounds_of g.out)" \
		"$(stat -c %s g.data)" $((t1 - t0))
}

perf_run() { # perf_run NAME GCS(0|1) CALLGRAPH
	echo "$2" >$SYSCTL
	perf record -q -e cycles:u --call-graph "$3" -F "$HZ" -o p.data -- \
		env GLIBC_TUNABLES=$GCS3 $T/gcsprof-split "$SECS" >p.out 2>p.err
	echo 1 >$SYSCTL
	t0=$(now_ns)
	perf script -i p.data --no-inline -F ip,sym >p.txt 2>/dev/null
	t1=$(now_ns)
	perf_folded p.txt >p.folded
	# shellcheck disable=SC2046 # two numbers, split on purpose
	set -- "$1" $(exact p.folded)
	row "$1" "$(wc -l <p.folded)" "$SECS" "$2" "$3" "$(rounds_of p.out)" "$(stat -c %s p.data)" \
		$((t1 - t0))
}

[ -e $SYSCTL ] || { echo "this kernel takes no call chains from the GCS" >&2; exit 4; }
echo "info|$(uname -r)|$(nproc)|$HZ|$SECS|$REPEAT|$(date -u +%Y-%m-%dT%H:%MZ)"
i=0
while [ $i -lt "$REPEAT" ]; do
	# A run without a profiler in every repetition: the emulated CPU's
	# speed drifts with the host's load.
	env GLIBC_TUNABLES=$GCS3 $T/gcsprof-split "$SECS" >base.out
	base=$(rounds_of base.out)
	for m in perf ptrace; do gcsprof_run $m; done
	perf_run "perf fp (frame records)" 0 fp
	perf_run "perf fp (GCS)" 1 fp
	perf_run "perf dwarf 8 KB" 0 dwarf,8192
	i=$((i + 1))
done
