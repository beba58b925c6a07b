#!/bin/sh
# Ring overruns at the highest rate asked (10 kHz), 2000 frames deep.
cd /tmp || exit 1
echo 4096 >/proc/sys/kernel/perf_event_max_stack
echo 1 >/proc/sys/kernel/perf_callchain_gcs
B=/opt/gcsprof/bench
export GLIBC_TUNABLES=glibc.cpu.aarch64_gcs=3
for m in "" "--defer"; do
	for hz in 10000 2000; do
		echo "== gcsprof $m -F $hz"
		gcsprof record -q --method perf $m -F $hz -o d.data -- $B/bench-depth 1 2000 >/dev/null
		gcsprof report d.data 2>&1 | grep -iE "^comment|samples" | head -5
	done
done
for hz in 10000 2000; do
	echo "== perf record -g -F $hz"
	perf record -e cycles:u --call-graph fp -F $hz -o p.data -- $B/bench-depth 1 2000 2>&1 >/dev/null | tail -3
	perf report -i p.data --stats 2>/dev/null | grep -iE "lost|SAMPLE  "
done
