#!/bin/sh
# The kernel-under-attack programs in one guest boot, one TAP result each
# (their own output shown as comments): storm-fuzz, trinity (when the
# guest has it: vm/run --trinity) with as many calls, storm-sample and
# storm-window, for a kernel slow to boot such as the debug kernel
# (scripts/check-storm runs this).
#   run-storm.sh [CALLS [FUZZ_SECONDS [STORM_SECONDS [SEED]]]]
# Defaults: 1000000 calls or 43200 s, a 600 s storm, a random seed.
# Exits 0 if every program passed or skipped, 1 otherwise, 4 without GCS.
set -u
here=$(dirname "$0")
# shellcheck source=../tap.sh
. "$here/../tap.sh"
if ! grep -q '^Features.* gcs' /proc/cpuinfo; then
	echo "1..0 # SKIP no gcs in /proc/cpuinfo: this CPU or kernel has no GCS"
	exit 4
fi
calls=${1:-1000000}
fuzz_seconds=${2:-43200}
storm_seconds=${3:-600}
seed=${4:-0}
echo "TAP version 13"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
run() {
	desc=$1
	shift
	"$@" >out.txt 2>&1
	status=$?
	show out.txt
	case $status in
	0) ok "$desc" ;;
	4) skip "$desc: no GCS, or no GCS call chains" ;;
	*) not_ok "$desc (status $status)" ;;
	esac
}
if [ "$seed" = 0 ]; then
	run "storm-fuzz: $calls calls" "$here/storm-fuzz" --calls "$calls" --seconds "$fuzz_seconds"
else
	run "storm-fuzz: $calls calls, seed $seed" "$here/storm-fuzz" --calls "$calls" \
		--seconds "$fuzz_seconds" --seed "$seed"
fi
if command -v trinity >/dev/null; then
	run "trinity: $calls calls" "$here/trinity.sh" "$calls"
fi
run "storm-sample: $storm_seconds s" "$here/storm-sample" "$storm_seconds"
run "storm-window" "$here/storm-window"
tap_done
