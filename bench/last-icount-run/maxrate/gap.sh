#!/bin/sh
# Where gcsprof --defer's extra instructions a sample go: perf record -g
# asked for what gcsprof's event asks for besides the chain.
cd /tmp || exit 1
awk() { if command -v mawk >/dev/null; then mawk "$@"; else busybox awk "$@"; fi; }
echo 4096 >/proc/sys/kernel/perf_event_max_stack
echo 1 >/proc/sys/kernel/perf_callchain_gcs
echo 0 >/proc/sys/kernel/randomize_va_space
T=/opt/gcsprof/tests B=/opt/gcsprof/bench
export GLIBC_TUNABLES=glibc.cpu.aarch64_gcs=3
run() { # NAME RECORDER...
	name=$1
	shift
	"$@" perf stat -x, -o st.txt -e instructions:u -- $TGT >/dev/null 2>rec.err
	u=$(awk -F, '$3 == "instructions:u" { print $1 }' st.txt)
	echo "$name user=$u $(grep -o '([0-9]* samples)' rec.err | tail -1)"
}
for TGT in "$B/bench-depth 4 8" "$T/gcsprof-split 4" "$B/bench-depth 1 2000"; do echo "== $TGT"; for rep in 1 2; do
	run base
	run perf-g perf record -e cycles:u --call-graph fp -F 499 -o p.data --
	run gcsprof-defer gcsprof record -q --method perf --defer -F 499 -o g.data --
	echo "gcsprof samples: $(gcsprof report g.data -f folded 2>/dev/null | awk '{ n += $NF } END { print n }')"
done; done
