#!/bin/sh
# A guest inside the guest: run in a vm/run guest booted at EL2 with KVM and
# the VMM (vm/run --el2 --vmm), it starts an inner guest with sid's QEMU
# and -accel kvm: the project kernel (/opt/vmm/Image) and a small
# initramfs of a static busybox, the GCS probe, the GCS kselftests and
# their libraries. TAP: one result per inner test, the inner kernel's log
# free of warnings, and with --outer-load the outer's own GCS stress run
# at the same time unaffected.
#
# Usage: nested-test.sh [--smp N] [--append ARGS] [--no-gcs] [--outer-load]
#                       [--test-timeout S]
#   --no-gcs      the inner guest must not have GCS (arm64.nogcs in
#                 --append, say): the probe must skip, not fail
#   --outer-load  run the GCS stress test in this (outer) guest while the
#                 inner guest runs its own
#   --test-timeout  seconds each inner test may take (300)
. /opt/gcsprof/tests/tap.sh

smp=2 append="" no_gcs=0 outer_load=0 inner_timeout=300
while [ $# -gt 0 ]; do
	case $1 in
	--smp) smp=$2; shift ;;
	--append) append=$2; shift ;;
	--no-gcs) no_gcs=1 ;;
	--outer-load) outer_load=1 ;;
	--test-timeout) inner_timeout=$2; shift ;;
	*) echo "nested-test.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done

ks=/opt/gcsprof/kselftest
work=/tmp/nested
root=$work/root
rm -rf "$work"
mkdir -p "$root/bin" "$root/inner" "$root/proc" "$root/sys" "$root/dev" "$root/tmp"

if [ ! -c /dev/kvm ]; then
	echo "# no /dev/kvm in the outer guest: was it booted at EL2 with KVM?"
	dmesg | grep -i kvm | sed 's/^/# /'
	not_ok "the outer kernel offers KVM"
	tap_done
fi
ok "the outer kernel offers KVM ($(dmesg | grep -m1 -o 'kvm \[[0-9]*\]: [A-Za-z]* mode[^,]*' || echo 'mode not logged'))"

# add_program PATH : PATH and the libraries it loads, at the same paths.
add_program() {
	mkdir -p "$root$(dirname "$1")"
	cp -L "$1" "$root$1" || return 1
	/lib/ld-linux-aarch64.so.1 --list "$1" | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (0x.*/\1/p' |
		while read -r lib; do
			mkdir -p "$root$(dirname "$lib")"
			cp -L "$lib" "$root$lib"
		done
}

cp /opt/vmm/bin/busybox "$root/bin/busybox"
cp /opt/gcsprof/tests/inner-init "$root/init"
chmod 755 "$root/init"
ln -s lib "$root/lib64" 2>/dev/null
: >"$root/inner/tests"
add_program /opt/gcsprof/tests/gcs-probe &&
	echo "probe /opt/gcsprof/tests/gcs-probe" >>"$root/inner/tests"
for t in libc-gcs gcs-stress; do
	if [ -x "$ks/gcs/$t" ] && add_program "$ks/gcs/$t"; then
		echo "$t $ks/gcs/$t" >>"$root/inner/tests"
	fi
done
[ "$(wc -l <"$root/inner/tests")" -eq 3 ] ||
	{ not_ok "the inner tests are staged ($(wc -l <"$root/inner/tests") of 3)"; tap_done; }
echo "$inner_timeout" >"$root/inner/test-timeout"
(cd "$root" && find . -mindepth 1 | sort | busybox cpio -o -H newc 2>/dev/null) >"$work/inner.cpio" ||
	{ not_ok "pack the inner initramfs"; tap_done; }
echo "# inner initramfs: $(($(wc -c <"$work/inner.cpio") / 1024)) KiB"

outer_pid=
if [ "$outer_load" = 1 ]; then
	# GCS stress in this guest at the same time, with the inner one.
	(cd /tmp && "$ks/gcs/gcs-stress" >"$work/outer-stress.txt" 2>&1; echo $? >"$work/outer-stress.status") &
	outer_pid=$!
fi

start=$(cut -d. -f1 /proc/uptime)
timeout $((3 * inner_timeout + 300)) /opt/vmm/bin/qemu -accel kvm -machine virt,gic-version=3 -cpu host \
	-smp "$smp" -m 512M -nodefaults -display none -no-reboot \
	-kernel /opt/vmm/Image -initrd "$work/inner.cpio" \
	-append "console=ttyAMA0 quiet panic=-1 rdinit=/init $append" \
	-chardev stdio,id=con,signal=off -serial chardev:con </dev/null 2>"$work/qemu-err.txt" |
	sed -u 's/\r$//' | tee "$work/console.txt" | sed -u 's/^/inner| /'
# The pipeline's status is sed's: QEMU's is told by the console's end.
total=$(($(cut -d. -f1 /proc/uptime) - start))
[ -s "$work/qemu-err.txt" ] && sed 's/^/# qemu: /' "$work/qemu-err.txt"

if ! grep -q '@@INNER-DONE@@' "$work/console.txt"; then
	not_ok "the inner guest ran to its end (stopped after $total s)"
else
	ok "the inner guest ran to its end in $total s with $smp vCPU(s)"
fi
boot=$(tr -d '\r' <"$work/console.txt" | sed -n 's/.*@@INNER-BOOTED \([0-9.]*\)@@.*/\1/p')
echo "# inner kernel to user space: ${boot:-never} s; whole inner run: $total s"

tr -d '\r' <"$work/console.txt" | sed -n 's/.*@@INNER-END \([^ ]*\) \([0-9]*\) \([0-9]*\)@@.*/\1 \2 \3/p' >"$work/results"
while read -r name status secs; do
	case $name:$status:$no_gcs in
	*:0:0) ok "inner $name passed (${secs} s)" ;;
	probe:4:1) ok "inner probe skipped: the inner guest has no GCS (${secs} s)" ;;
	*:4:1) ok "inner $name skipped without GCS (${secs} s)" ;;
	*) not_ok "inner $name: status $status (${secs} s)" ;;
	esac
done <"$work/results"
[ "$(wc -l <"$work/results")" -eq 3 ] || not_ok "every inner test reported ($(wc -l <"$work/results") of 3)"

tr -d '\r' <"$work/console.txt" | sed -n '/@@INNER-DMESG@@/,/@@INNER-DMESG-END@@/p' >"$work/dmesg.txt"
if grep -E '\] .*(Kernel panic|Oops|BUG:|WARNING:|Internal error:)' "$work/dmesg.txt" >"$work/trouble.txt"; then
	not_ok "the inner kernel's log is clean"
	sed 's/^/# inner kernel: /' "$work/trouble.txt"
else
	ok "the inner kernel's log is clean"
fi
if [ "$no_gcs" = 0 ]; then
	check "the inner kernel found GCS" grep -q 'GCS in HWCAP: yes' "$work/console.txt"
else
	check "the inner kernel has no GCS" grep -q 'GCS in HWCAP: no' "$work/console.txt"
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
