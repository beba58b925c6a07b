#!/bin/sh
# The whole GCS abuse suite in one guest boot, one TAP result per group
# (each group's own TAP output shown as comments): for a kernel that is
# slow to boot or to run, such as the debug kernel of issue 13.
#   vm/run --kernel K --stage build/arm64/stage -- /opt/gcsprof/tests/abuse/run-abuse.sh [GROUP...]
# Groups: sigreturn ptrace memory map-shadow-stack process churn (default:
# all). ABUSE_CHURN="THREADS PROCESSES" sizes the churn group.
# Exits 0 if every group passed or skipped, 1 otherwise; 4 without GCS.
set -u
here=$(dirname "$0")
# shellcheck source=../tap.sh
. "$here/../tap.sh"
if ! grep -q '^Features.* gcs' /proc/cpuinfo; then
	echo "1..0 # SKIP no gcs in /proc/cpuinfo: this CPU or kernel has no GCS"
	exit 4
fi
[ "$#" -gt 0 ] || set -- sigreturn ptrace memory map-shadow-stack process churn
echo "TAP version 13"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
for group in "$@"; do
	prog=$here/abuse-$group
	if [ ! -x "$prog" ]; then
		not_ok "$group: no program $prog"
		continue
	fi
	if [ "$group" = churn ]; then
		# shellcheck disable=SC2086 # two numbers, split on purpose
		"$prog" ${ABUSE_CHURN:-} >out.txt 2>&1
	else
		"$prog" >out.txt 2>&1
	fi
	status=$?
	show out.txt
	case $status in
	0) ok "$group" ;;
	4) skip "$group: no GCS" ;;
	*) not_ok "$group (status $status)" ;;
	esac
done
tap_done
