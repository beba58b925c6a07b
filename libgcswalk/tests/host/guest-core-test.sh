#!/bin/sh
# Make a core of gcswalk-target in the guest (on KERNEL: project or
# reference), bring it back with the files it maps, and check it on this
# host.
#
# Usage: guest-core-test.sh VM_RUN KERNEL STAGE WORK CHECKER
# Exit: the checker's status; 4 (skip) without an arm64 build or without
# GCS in the guest; 1 if the guest run fails.
set -u
vm_run=$1 kernel=$2 stage=$3 work=$4 checker=$5

if [ ! -x "$stage/tests/gcswalk-guest-test" ]; then
	echo "1..0 # SKIP no arm64 build in $stage (scripts/build makes it)"
	exit 4
fi
rm -rf "$work" && mkdir -p "$work" || exit 1
"$vm_run" --kernel "$kernel" --stage "$stage" --share "$work" --timeout 600 -- \
	/opt/gcsprof/tests/gcswalk-guest-test --core-for-host /share >"$work.log" 2>&1
rc=$?
case $rc in
0) ;;
4)
	echo "1..0 # SKIP the guest ($kernel kernel) has no GCS"
	exit 4
	;;
*)
	echo "# the guest run failed with status $rc; its output:"
	sed 's/^/# /' "$work.log"
	exit 1
	;;
esac
exec "$checker" "$work"
