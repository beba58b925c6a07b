#!/bin/sh
# In the guest (fuzz/make-seeds): the /proc text of a GCS process for the
# proc harness's seeds. gcswalk-target parks six threads, one of them on a
# GCS of its own (map_shadow_stack) and one in a signal handler; its
# maps, smaps, status, stat and each thread's stat and status are copied
# into DIR, with the names of its task folder (one per line).
#
# Usage: proc-capture.sh DIR    Exit: 0, 4 without GCS, 1 on failure.
set -u
dir=$1
target=/opt/gcsprof/tests/gcswalk-target
grep -qw gcs /proc/cpuinfo || { echo "proc-capture: no GCS" >&2; exit 4; }
mkdir -p "$dir" || exit 1
$target >"$dir/target.out" 2>&1 &
pid=$!
# The target prints "ready" once every thread is parked.
i=0
until grep -q '^ready' "$dir/target.out" 2>/dev/null; do
	i=$((i + 1))
	[ $i -le 300 ] || { echo "proc-capture: the target never got ready" >&2; kill -9 $pid; exit 1; }
	sleep 0.1
done
p=/proc/$pid
rc=0
for f in maps smaps stat status; do
	cat "$p/$f" >"$dir/$f" || rc=1
done
ls "$p/task" >"$dir/task" || rc=1
for t in "$p"/task/*; do
	cat "$t/stat" >"$dir/task-${t##*/}-stat" || rc=1
	cat "$t/status" >"$dir/task-${t##*/}-status" || rc=1
done
kill -9 $pid
wait $pid 2>/dev/null
rm -f "$dir/target.out"
grep -q ' ss' "$dir/smaps" || { echo "proc-capture: no GCS mapping in smaps" >&2; rc=1; }
exit $rc
