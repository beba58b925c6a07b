#!/bin/sh
# The series' KVM selftest kvm/aarch64/gcs_migrate (kernel patch 55): a
# guest stopped in the middle of a chain of calls made with GCS on (at EL1,
# then at EL0) is migrated into a new VM through KVM_GET/SET_ONE_REG and a
# copy of its memory, and must return through the whole chain there; with
# the GCS pointer restored one entry off, or the GCS pages left out, its
# first return must fault. Run in a guest booted at EL2 (vm/run --el2).
#
# The selftest's guest uses GCS memory under stage 2, which sid's QEMU
# cannot run (docs/kernel.md, "GCS in KVM guests": every GCS push of a
# guest under stage 2 takes a translation fault, and the test would fail
# after 30 s with its guest stuck in its exception vector). It needs the
# patched QEMU (vm/pieces/qemu-gcs), which vm/run announces on the kernel's
# command line (gcsprof.qemu_gcs_stage2=1); without it the test is skipped,
# saying so. Where KVM offers its guests no GCS (the reference kernel),
# the selftest skips by itself.
#
# Usage: gcs-migrate-test.sh
set -u
test=/opt/gcsprof/kselftest/kvm/aarch64/gcs_migrate
if ! grep -qw 'gcsprof.qemu_gcs_stage2=1' /proc/cmdline; then
	echo "1..0 # SKIP GCS data accesses of a guest never complete under this emulator" \
		"(QEMU TCG: a translation fault on every GCS push under stage 2);" \
		"the patched QEMU (vm/pieces/qemu-gcs) is not cached"
	exit 4
fi
exec "$test"
