#!/bin/sh
# Debian's trinity aimed at the calls the GCS series touches, with GCS on
# in every trinity process: glibc's tunable glibc.cpu.aarch64_gcs=3
# (override: GCS on whether or not the program is marked) is in trinity's
# environment, so its main process starts with GCS and every child it forks
# inherits it. A watcher reads /proc/PID/smaps of each trinity process it
# sees and counts those with a GCS mapping ("ss" in VmFlags).
#   trinity.sh [CALLS]     (default 20000; needs vm/run --trinity)
# Exits 0 if trinity ran its calls and its processes had GCS, 1
# otherwise, 4 without GCS or trinity.
set -u
here=$(dirname "$0")
# shellcheck source=../tap.sh
. "$here/../tap.sh"
if ! grep -q '^Features.* gcs' /proc/cpuinfo; then
	echo "1..0 # SKIP no gcs in /proc/cpuinfo: this CPU or kernel has no GCS"
	exit 4
fi
if ! command -v trinity >/dev/null; then
	echo "1..0 # SKIP no trinity (vm/run --trinity adds it)"
	exit 4
fi
calls=${1:-20000}
echo "TAP version 13"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

# The series' calls, those this trinity knows.
trinity -L >list.txt 2>&1
args=""
for c in prctl map_shadow_stack mmap mprotect munmap mremap madvise clone clone3 fork \
	vfork execve ptrace perf_event_open rt_sigreturn; do
	if grep -q "[[:space:]]$c\$" list.txt || grep -q "[[:space:]]${c}[[:space:]]" list.txt; then
		args="$args -c $c"
	else
		echo "# this trinity does not know $c"
	fi
done

# Is every trinity process running with GCS? (comm, then smaps' VmFlags)
watch_gcs() {
	while [ ! -e finished ]; do
		for d in /proc/[0-9]*; do
			comm=$(cat "$d/comm" 2>/dev/null) || continue
			case $comm in trinity*) ;; *) continue ;; esac
			pid=${d#/proc/}
			if grep -q '^VmFlags:.* ss' "$d/smaps" 2>/dev/null; then
				echo "$pid" >>with-gcs
			elif [ -e "$d/smaps" ]; then
				echo "$pid" >>without-gcs
			fi
		done
		sleep 1
	done
}
touch with-gcs without-gcs
watch_gcs &
watcher=$!
# shellcheck disable=SC2086 # one -c per call, split on purpose
GLIBC_TUNABLES=glibc.cpu.aarch64_gcs=3 trinity --dangerous -q -N "$calls" -C 4 $args \
	>trinity.txt 2>&1
status=$?
touch finished
wait "$watcher"
tail -n 25 trinity.txt | show /dev/stdin
with=$(sort -u with-gcs | wc -l)
without=$(sort -u without-gcs | wc -l)
# One seen without GCS and never with it: trinity's own calls can take it
# away (prctl 75 with 0 turns GCS off and frees it; munmap of the GCS).
bad=$(sort -u without-gcs | while read -r p; do grep -qx "$p" with-gcs || echo "$p"; done | wc -l)
echo "# trinity processes seen: $with with a GCS mapping, $bad never seen with one ($without sightings without)"
if [ "$status" = 0 ]; then ok "trinity made $calls calls (status 0)"; else not_ok "trinity (status $status)"; fi
# The main process and its children start with GCS: at least two seen.
if [ "$with" -ge 2 ]; then
	ok "trinity's processes run with GCS ($with seen with a GCS mapping)"
else
	not_ok "trinity processes with GCS: $with (without: $bad)"
fi
tap_done
