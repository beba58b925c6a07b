#!/bin/sh
# The target's user instructions under perf record -g and under
# gcsprof record --defer, against an unprofiled run: where gcsprof's
# extra instructions a sample went (bench/README.md). In a counted guest:
#   vm/run --icount 0 --smp 1 --mem 3G --kernel project --share DIR -- sh /share/gap.sh
cd /tmp || exit 1
awk() { if command -v mawk >/dev/null; then mawk "$@"; else busybox awk "$@"; fi; }
echo 4096 >/proc/sys/kernel/perf_event_max_stack
echo 1 >/proc/sys/kernel/perf_callchain_gcs
echo 0 >/proc/sys/kernel/randomize_va_space
T=/opt/gcsprof/tests B=/opt/gcsprof/bench
export GLIBC_TUNABLES=glibc.cpu.aarch64_gcs=3
run() { # run NAME TARGET RECORDER...: the target's instructions:u
	name=$1 tgt=$2
	shift 2
	# shellcheck disable=SC2086 # the target's command line, split on purpose
	"$@" perf stat -x, -o st.txt -e instructions:u -- $tgt >/dev/null 2>rec.err
	u=$(awk -F, '$3 == "instructions:u" { print $1 }' st.txt)
	echo "$name user=$u $(grep -o '([0-9]* samples)' rec.err | tail -n 1)"
}
for tgt in "$B/bench-depth 4 8" "$T/gcsprof-split 4" "$B/bench-depth 1 2000"; do
	echo "== $tgt"
	for _ in 1 2; do
		run base "$tgt"
		run perf-g "$tgt" perf record -e cycles:u --call-graph fp -F 499 -o p.data --
		run gcsprof-defer "$tgt" gcsprof record -q --method perf --defer -F 499 -o g.data --
		echo "gcsprof samples: $(gcsprof report g.data -f folded 2>/dev/null | awk '{ n += $NF } END { print n }')"
	done
done
