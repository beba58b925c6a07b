#!/bin/sh
# The demo: record the bundled 3:1 workload under gcsprof, print the
# report, and leave the profile and an SVG flame graph in /share (vm/run
# --share DIR brings them back to DIR on the host):
#   vm/run --kernel project --share out -- /opt/gcsprof/tests/gcsprof-demo.sh
set -u
out=/share
[ -d "$out" ] || out=.
if ! grep -qw gcs /proc/cpuinfo; then
	echo "gcsprof demo: this CPU or kernel has no GCS" >&2
	exit 4
fi
gcsprof record -q --gcs-tunable 3 -o "$out/demo.data" -- /opt/gcsprof/tests/gcsprof-split 4 ||
	exit 1
gcsprof report "$out/demo.data" || exit 1
gcsprof report "$out/demo.data" -f svg -o "$out/demo.svg" || exit 1
echo "flame graph: demo.svg"
