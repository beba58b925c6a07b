#!/bin/sh
# The GCS probe on a kernel booted at EL2 (vm/run --el2): first proof that
# the kernel did start at EL2, where it must configure the EL2 traps
# itself for EL0 to use GCS, then the probe's own TAP.
if ! dmesg | grep -q 'started at EL2'; then
	echo "probe-at-el2: the kernel did not start at EL2:" >&2
	dmesg | grep -i 'started at EL' >&2
	exit 1
fi
echo "# $(dmesg | grep -m1 'started at EL2' | sed 's/^\[[^]]*\] //')"
exec /opt/gcsprof/tests/gcs-probe
