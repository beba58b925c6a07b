#!/bin/sh
# The demo: record the bundled 3:1 workload under gcsprof, print the
# report, and leave the profile and an SVG flame graph in /share (vm/run
# --share DIR brings them back to DIR on the host):
#   vm/run --kernel project --share out -- /opt/gcsprof/tests/gcsprof-demo.sh
# then report it on the host with the guest's root as a folder:
#   vm/guest-sysroot --debug out/root
#   build/host/gcsprof/gcsprof report out/demo.data --sysroot out/root
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
cat <<'EOF'

On the host (out: the folder vm/run --share brought these back to), with the
guest's root as a folder (libc6-dbg in it names glibc's own functions):
  vm/guest-sysroot --debug out/root
  build/host/gcsprof/gcsprof report out/demo.data --sysroot out/root
  build/host/gcsprof/gcsprof report out/demo.data --sysroot out/root -g callee --top 5
  build/host/gcsprof/gcsprof report out/demo.data --sysroot out/root -o demo.pb.gz   # go tool pprof
EOF
