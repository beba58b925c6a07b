#!/bin/sh
# The kernel's perf user call chains on riscv64 (kernel/patches 0056,
# 0057), in the riscv guest, TAP output; KERNEL (project or reference)
# says what this kernel must do. rv-perf-chains samples gcsprof's 3:1
# split workload (-O2 -fomit-frame-pointer, its shadow stack on) and
# judges every chain against the code's own.
#
#   project:   kernel.perf_callchain_gcs is there and 1; every chain is
#              exact, the split 3:1, ssp sampled (PERF_REG_RISCV_SSP); at 0
#              the chains are the frame record walk's again (ssp still
#              sampled); a program without a shadow stack: frame records,
#              ssp 0.
#   reference: sid's 7.2 has no shadow stack call chains: no sysctl, the
#              ssp register refused, and not one chain exact (the frame
#              record walk: the PC, ra, then whatever s0 points at).
#
# Usage: rv-perf-chains-test.sh project|reference
# Exit: 0 all passed, 1 a failure, 4 skipped (no Zicfiss in this CPU).
set -u
T=/opt/gcsprof/tests/riscv64
kernel=${1:-}
# shellcheck source=../../tap.sh
. "$(dirname "$0")/tap.sh"
sysctl=/proc/sys/kernel/perf_callchain_gcs

if ! grep -q 'zicfiss' /proc/cpuinfo; then
	echo "1..0 # SKIP this CPU has no Zicfiss"
	exit 4
fi

chains() { # chains DESC ARGS...: rv-perf-chains' verdict, its lines shown
	desc=$1
	shift
	if "$T/rv-perf-chains" "$@" >out.txt 2>err.txt; then ok "$desc"; else not_ok "$desc"; fi
	show out.txt err.txt
}

cd "$(mktemp -d)" || exit 1
case $kernel in
project)
	check "kernel.perf_callchain_gcs is there and 1" grep -qx 1 "$sysctl"
	chains "every chain from the shadow stack exact, the split 3:1, ssp sampled" \
		--chains shstk --ssp set "$T/gcsprof-split"
	echo 0 >"$sysctl"
	chains "kernel.perf_callchain_gcs=0: frame records, not one chain exact; ssp still sampled" \
		--chains frames --ssp set "$T/gcsprof-split"
	echo 1 >"$sysctl"
	chains "no shadow stack: frame records, ssp 0" \
		--chains frames --ssp zero "$T/gcsprof-split-plain"
	;;
reference)
	check "no kernel.perf_callchain_gcs" test ! -e "$sysctl"
	chains "frame records: not one chain exact; the ssp register refused" \
		--chains frames --ssp refused "$T/gcsprof-split"
	;;
*)
	echo "usage: rv-perf-chains-test.sh project|reference" >&2
	exit 2
	;;
esac
tap_done
