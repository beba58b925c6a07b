#!/bin/sh
# gcsprof inside the inner guest of tests/kvm/nested-test.sh (a guest
# under KVM in a vm/run guest; busybox sh, nothing else but the staged
# programs and their libraries). TAP:
#   - a GCS-enabled program whose return is refused by the GCS check
#     (the corpus's corrupt-gcs-fault) dumps its core in this guest, and
#     `gcsprof inspect` walks it here: the fatal signal named as a GCS
#     check, the true chain (hijack, caller, main from the GCS), the
#     corruption claimed in hijack's frame;
#   - `gcsprof record --method perf` of the 3:1 split workload (built
#     without frame pointers): the kernel's GCS call chains, every chain
#     through the two paths exact (main, path_X, burn_X and the inlined
#     spin, nothing else), sampling on the
#     PMU's cycles if this guest has a PMU, on cpu-clock otherwise (the
#     chains come from the GCS either way).
# Exit: 0 all passed, 1 a failure, 4 no GCS in this guest.
set -u
T=/opt/gcsprof/tests
gp=/opt/gcsprof/bin/gcsprof
# shellcheck source=../tap.sh
. $T/tap.sh
if ! grep -qw gcs /proc/cpuinfo; then
	echo "1..0 # SKIP no GCS in this guest (no gcs in /proc/cpuinfo)"
	exit 4
fi
work=/tmp/inner-gcsprof
mkdir -p "$work" && cd "$work" || exit 1

# The PMU the guest sees, if any: KVM offers one (PMUv3, its counters
# backed by the host's perf events) only where the host kernel has one.
pmus=
for d in /sys/bus/event_source/devices/*; do
	[ -e "$d" ] && pmus="$pmus${d##*/} "
done
echo "# perf event sources: ${pmus:-none}"
pmu=no
case " $pmus" in *" armv8"*) pmu=yes ;; esac
echo "# a hardware PMU in this guest: $pmu"

# --- a core dumped here, walked here.
rm -f core core.*
# shellcheck disable=SC3045 # busybox sh has ulimit -c
(ulimit -c unlimited; GLIBC_TUNABLES=glibc.cpu.aarch64_gcs=3 exec $T/corpus/corrupt-gcs-fault) \
	>fault.out 2>&1
rc=$?
check "corrupt-gcs-fault dies of SIGSEGV ($rc)" [ "$rc" -eq 139 ]
c=$(first_core)
if [ -z "$c" ]; then
	not_ok "corrupt-gcs-fault dumped a core"
	show fault.out
else
	ok "corrupt-gcs-fault dumped a core ($(($(wc -c <"$c") / 1024)) KiB)"
	status_is 0 "gcsprof inspect $c" "$gp" inspect "$c"
	mv out.txt inspect.txt
	sed -n '/the one that received the signal/,/^$/p' inspect.txt >crashed.txt
	show crashed.txt
	check "the fatal signal is named a GCS check (SEGV_CPERR)" \
		grep -q '^fatal signal: 11 (SIGSEGV) from a GCS check' inspect.txt
	chain=$(sed -n 's/^  #\([0-9]*\) *0x[0-9a-f]* \([A-Za-z_][A-Za-z0-9_]*\).*/\1 \2/p' crashed.txt |
		head -n 3 | tr '\n' ' ')
	check "the crashed thread's chain is #0 hijack, #1 caller, #2 main ($chain)" \
		[ "$chain" = "0 hijack 1 caller 2 main " ]
	check "the corruption is claimed in hijack's frame" \
		grep -q 'STACK CORRUPTION in frame #0 (hijack): .*the link register holds 0x[0-9a-f]* (evil) but' \
		inspect.txt
fi

# --- recordings here with the perf method: 4 s each, until the two
# paths have 100 samples (the rate under nested emulation varies tenfold:
# about 250 in one recording under a VHE host, 20 under nVHE).
# shellcheck disable=SC2016 # an awk program
sum='{ s += $NF } END { print s + 0 }'
: >split.folded
for round in 1 2 3 4; do
	status_is 0 "gcsprof record --method perf of the split workload (run $round)" \
		"$gp" record --method perf -q -F 250 --gcs-tunable 3 -o split.data -- $T/gcsprof-split 4
	show err.txt
	# The profile is gzip (format 2): busybox's zcat reads it.
	event=$(zcat split.data | sed -n 's/^event //p')
	check "the profile says method perf" sh -c "zcat split.data | grep -qx 'method perf'"
	if [ "$pmu" = yes ]; then
		check "sampling on the PMU's cycles ($event)" [ "$event" = cycles ]
	else
		check "no PMU: sampling on cpu-clock ($event)" [ "$event" = cpu-clock ]
	fi
	status_is 0 "gcsprof report --format folded" "$gp" report split.data --format folded -o out.folded
	cat out.folded >>split.folded
	grep -E '(^|;)(path|burn)_[ab](;| )' split.folded >paths.folded
	[ "$(awk "$sum" paths.folded)" -ge 100 ] && break
done
grep -E ';main;path_a(;burn_a(;spin)?)? [0-9]+$|;main;path_b(;burn_b(;spin)?)? [0-9]+$' \
	paths.folded >exact.folded
total=$(awk "$sum" split.folded) inpaths=$(awk "$sum" paths.folded) exact=$(awk "$sum" exact.folded)
echo "# $round recording(s): $total samples, $inpaths in the two paths, $exact of them" \
	"main;path_X[;burn_X[;spin]]"
sort paths.folded | show
check "samples in the two paths ($inpaths)" [ "$inpaths" -ge 20 ]
check "every chain through the paths is exact ($exact of $inpaths)" [ "$exact" -eq "$inpaths" ]
tap_done
