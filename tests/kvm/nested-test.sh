#!/bin/sh
# A guest inside the guest: run in a vm/run guest booted at EL2 with KVM and
# the VMM (vm/run --el2 --vmm), it starts an inner guest with sid's QEMU
# and -accel kvm: the project kernel (/opt/vmm/Image) and a small
# initramfs of a static busybox, a GCS canary, the GCS probe, the GCS
# kselftests (the series' and, where staged, upstream's), gcsprof with a program to dump a core and one to record
# (tests/kvm/inner-gcsprof.sh), and their libraries (tests/kvm/inner-init
# runs them). TAP:
# KVM in the outer guest, the inner guest's run, whether it has GCS, each
# inner test, the inner kernel's log free of warnings, and with
# --outer-load the outer guest's own gcs-stress, run at the same time,
# unaffected.
#
# The canary (gcs-canary: enable GCS, one call) runs first. If it returns,
# GCS works in the guest and every inner test must pass (or, without GCS,
# skip); the second canary checks that a mismatched return faults. If the
# canary never returns, the emulator cannot run GCS accesses in a guest
# (sid's QEMU 11.1.3: docs/kernel.md, "GCS in KVM guests"): the GCS-using
# tests are then reported as skipped, with that reason, not run. Under the
# QEMU built with the project's patches (vm/run passes
# gcsprof.qemu_gcs_stage2=1 on the outer kernel's command line when it
# uses it) that hang is a failure instead.
#
# Usage: nested-test.sh [--smp N] [--append ARGS] [--gcs expected|absent|any]
#                       [--outer-load] [--test-timeout S]
#   --gcs           whether the inner guest must have GCS (expected, the
#                   default), must not (absent: arm64.nogcs in --append,
#                   say), or may have it or not (any: the outer kernel's
#                   KVM decides)
#   --outer-load    run the GCS stress test in this (outer) guest while the
#                   inner guest runs its tests
#   --test-timeout  seconds each inner test may take (300)
# shellcheck source=../tap.sh
. /opt/gcsprof/tests/tap.sh

smp=2 append="" gcs=expected outer_load=0 test_timeout=300
while [ $# -gt 0 ]; do
	case $1 in
	--smp) smp=$2; shift ;;
	--append) append=$2; shift ;;
	--gcs) gcs=$2; shift ;;
	--outer-load) outer_load=1 ;;
	--test-timeout) test_timeout=$2; shift ;;
	*) echo "nested-test.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
case $gcs in expected | absent | any) ;; *) echo "nested-test.sh: --gcs $gcs?" >&2; exit 2 ;; esac

tests=/opt/gcsprof/tests ks=/opt/gcsprof/kselftest
work=/tmp/nested root=/tmp/nested/root
rm -rf "$work"
mkdir -p "$root/bin" "$root/inner" "$root/proc" "$root/sys" "$root/dev" "$root/tmp"

if [ ! -c /dev/kvm ]; then
	dmesg | grep -i kvm | sed 's/^/# /'
	not_ok "the outer kernel offers KVM (/dev/kvm; booted at EL2?)"
	tap_done
fi
mode=$(dmesg | grep -m1 -o 'kvm \[[0-9]*\]: .*mode initiali[sz]ed' | sed 's/^kvm \[[0-9]*\]: //')
ok "the outer kernel offers KVM (${mode:-mode not logged})"

# add_program PATH : PATH and the libraries it loads, at the same paths
# (a script: itself).
add_program() {
	mkdir -p "$root$(dirname "$1")" && cp -L "$1" "$root$1" || return 1
	[ "$(head -c 4 "$1" | tr -d '\177')" = ELF ] || return 0
	/lib/ld-linux-aarch64.so.1 --list "$1" |
		sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (0x.*/\1/p' |
		while read -r lib; do
			mkdir -p "$root$(dirname "$lib")" && cp -L "$lib" "$root$lib" || exit 1
		done
}

# add_test NAME SECONDS PROGRAM [ARG...] : one line of the inner guest's
# /inner/tests.
add_test() {
	if add_program "$3"; then
		echo "$*" >>"$root/inner/tests"
	else
		not_ok "stage $3 for the inner guest"
	fi
}

if ! cp /opt/vmm/bin/busybox "$root/bin/busybox" || ! cp "$tests/inner-init" "$root/init" ||
	! chmod 755 "$root/init"; then
	not_ok "stage busybox and the inner init"
	tap_done
fi
: >"$root/inner/tests"
add_test canary 60 "$tests/gcs-canary"
add_test mismatch 60 "$tests/gcs-canary" --mismatch
add_test probe "$test_timeout" "$tests/gcs-probe"
add_test libc-gcs "$test_timeout" "$ks/gcs/libc-gcs"
add_test gcs-stress "$test_timeout" "$ks/gcs/gcs-stress"
# Upstream's own GCS kselftests (sid 7.2's tree with kernel/upstream/,
# which kselftest.build-mainline stages in kselftest-mainline) where that
# build was made: the project kernel's ABI must pass them too.
up=/opt/gcsprof/kselftest-mainline/gcs
for t in basic-gcs gcs-locking gcspushm gcsstr; do
	if [ -x "$up/$t" ]; then
		add_test "$t" "$test_timeout" "$up/$t"
	else
		skip "inner $t: not staged ($up is made by the ctest test kselftest.build-mainline)"
	fi
done
# gcsprof in the inner guest (tests/kvm/inner-gcsprof.sh): a core dumped
# there walked with inspect, a recording with the perf method.
if add_program /opt/gcsprof/bin/gcsprof && add_program "$tests/tap.sh" &&
	add_program "$tests/corpus/corrupt-gcs-fault" && add_program "$tests/gcsprof-split"; then
	add_test gcsprof "$test_timeout" "$tests/inner-gcsprof.sh"
else
	not_ok "stage gcsprof and its programs for the inner guest"
fi
planned=$(wc -l <"$root/inner/tests")
(cd "$root" && find . -mindepth 1 | sort | busybox cpio -o -H newc 2>/dev/null) >"$work/inner.cpio" ||
	{ not_ok "pack the inner initramfs"; tap_done; }
echo "# inner initramfs: $(($(wc -c <"$work/inner.cpio") / 1024)) KiB, $planned tests"

outer_pid=
if [ "$outer_load" = 1 ]; then
	(cd /tmp && "$ks/gcs/gcs-stress" >"$work/outer-stress.txt" 2>&1
	 echo $? >"$work/outer-stress.status") &
	outer_pid=$!
fi

start=$(cut -d. -f1 /proc/uptime)
# The inner console streams through, prefixed, so that the rig does not
# take the inner kernel's messages for the outer kernel's.
timeout $((planned * test_timeout + 300)) /opt/vmm/bin/qemu -accel kvm \
	-machine virt,gic-version=3 -cpu host -smp "$smp" -m 512M \
	-nodefaults -display none -no-reboot \
	-kernel /opt/vmm/Image -initrd "$work/inner.cpio" \
	-append "console=ttyAMA0 quiet panic=-1 rdinit=/init $append" \
	-chardev stdio,id=con,signal=off -serial chardev:con </dev/null 2>"$work/qemu-err.txt" |
	sed -u 's/\r$//' | tee "$work/console.txt" | sed -u 's/^/inner| /'
total=$(($(cut -d. -f1 /proc/uptime) - start))
[ -s "$work/qemu-err.txt" ] && sed 's/^/# qemu: /' "$work/qemu-err.txt"

boot=$(sed -n 's/.*@@INNER-BOOTED \([0-9.]*\)@@.*/\1/p' "$work/console.txt")
echo "# inner kernel to user space: ${boot:-never} s (inner clock); whole inner run: $total s"
if grep -q '@@INNER-DONE@@' "$work/console.txt"; then
	ok "the inner guest ran to its end in $total s with $smp vCPU(s)"
else
	not_ok "the inner guest ran to its end (stopped after $total s)"
fi

has_gcs=no
grep -q 'GCS in HWCAP: yes' "$work/console.txt" && has_gcs=yes
case $gcs:$has_gcs in
expected:yes | absent:no | any:*) ok "the inner guest has GCS: $has_gcs (--gcs $gcs)" ;;
*) not_ok "the inner guest has GCS: $has_gcs (--gcs $gcs)" ;;
esac

sed -n 's/.*@@INNER-END \([^ ]*\) \([0-9a-z]*\) \([0-9]*\)@@.*/\1 \2 \3/p' "$work/console.txt" >"$work/results"
canary=$(sed -n 's/^canary \([0-9a-z]*\) .*/\1/p' "$work/results")
hangs="GCS data accesses of a guest never complete under this emulator (QEMU TCG: a translation fault on every GCS push under stage 2)"
# The patched QEMU (vm/pieces/qemu-gcs) is the one that must run them.
fixed=no
grep -qw 'gcsprof.qemu_gcs_stage2=1' /proc/cmdline && fixed=yes
echo "# outer QEMU with the project's GCS stage 2 patches: $fixed"
while read -r name status secs; do
	case $name:$status:$has_gcs:$fixed in
	canary:0:yes:*) ok "inner canary: GCS works at EL0 in the guest (${secs} s)" ;;
	canary:4:no:*) ok "inner canary: no GCS, as the guest's HWCAP says" ;;
	mismatch:0:yes:*) ok "inner mismatch: a mismatched return faults with SEGV_CPERR (${secs} s)" ;;
	canary:137:yes:no) skip "inner canary killed after ${secs} s: $hangs" ;;
	*:skip:yes:no) skip "inner $name not run: $hangs" ;;
	*:0:yes:*) ok "inner $name passed (${secs} s)" ;;
	*:4:no:*) ok "inner $name skipped without GCS (${secs} s)" ;;
	*) not_ok "inner $name: status $status after ${secs} s (GCS in the guest: $has_gcs, canary: ${canary:-none})" ;;
	esac
done <"$work/results"
[ "$(wc -l <"$work/results")" -eq "$planned" ] ||
	not_ok "every inner test reported ($(wc -l <"$work/results") of $planned)"

sed -n '/@@INNER-DMESG@@/,/@@INNER-DMESG-END@@/p' "$work/console.txt" >"$work/dmesg.txt"
if grep -E '\] .*(Kernel panic|Oops|BUG:|WARNING:|Internal error:)' "$work/dmesg.txt" >"$work/trouble.txt"; then
	not_ok "the inner kernel's log is clean"
	sed 's/^/# inner kernel: /' "$work/trouble.txt"
else
	ok "the inner kernel's log is clean"
fi

if [ -n "$outer_pid" ]; then
	wait "$outer_pid"
	if [ "$(cat "$work/outer-stress.status")" = 0 ]; then
		ok "the outer guest's own gcs-stress passed alongside"
	else
		not_ok "the outer guest's own gcs-stress: status $(cat "$work/outer-stress.status")"
		tail -n 20 "$work/outer-stress.txt" | sed 's/^/# outer: /'
	fi
fi
tap_done
