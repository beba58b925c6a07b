#!/bin/sh
# Make a core of gcswalk-target in the guest (on KERNEL: project or
# reference), bring it back with the files it maps, and check it on this
# host; then again with the target's debug information coming from
# debuginfod (DEBUGINFOD_URLS) instead of the executable, and with the
# executable itself coming from debuginfod, found by the build-id the core
# keeps of it.
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
"$checker" "$work" || exit 1

# Again with the target's executable stripped, its debug information served
# by a debuginfod "server" (a file:// URL with the build-id layout): the
# same chains, file and line included, must come from debuginfod.
echo "# the same core, the target's debug information from debuginfod"
dbg=$work.debuginfod
rm -rf "$dbg" && mkdir -p "$dbg" && cp -r "$work" "$dbg/core" || exit 1
exe=$dbg/core/sysroot/opt/gcsprof/tests/gcswalk-target
id=$(eu-readelf -n "$exe" | awk '/Build ID:/ { print $3 }')
if [ -z "$id" ] || ! eu-strip -f "$dbg/debuginfo" "$exe"; then
	echo "# cannot strip $exe or find its build-id"
	exit 1
fi
mkdir -p "$dbg/server/buildid/$id" && mv "$dbg/debuginfo" "$dbg/server/buildid/$id/debuginfo" || exit 1
if "$checker" "$dbg/core" >"$dbg/without.log" 2>&1; then
	echo "# the stripped executable still gave every line without debuginfod: the check proves nothing"
	exit 1
fi
DEBUGINFOD_URLS=file://$dbg/server DEBUGINFOD_CACHE_PATH=$dbg/cache "$checker" "$dbg/core" || exit 1

# Again with the executable missing from the sysroot altogether: the
# library reads its build-id from the page of it the core keeps, and
# debuginfod serves the whole file by that build-id.
echo "# the same core, the target's executable missing here, fetched from debuginfod"
gone=$work.gone
rm -rf "$gone" && mkdir -p "$gone" && cp -r "$work" "$gone/core" || exit 1
exe=$gone/core/sysroot/opt/gcsprof/tests/gcswalk-target
id=$(eu-readelf -n "$exe" | awk '/Build ID:/ { print $3 }')
if [ -z "$id" ] || ! mkdir -p "$gone/server/buildid/$id" ||
	! mv "$exe" "$gone/server/buildid/$id/executable"; then
	echo "# cannot move $exe to the server"
	exit 1
fi
if "$checker" "$gone/core" >"$gone/without.log" 2>&1; then
	echo "# the core was symbolised without its executable: the check proves nothing"
	exit 1
fi
DEBUGINFOD_URLS=file://$gone/server DEBUGINFOD_CACHE_PATH=$gone/cache exec "$checker" "$gone/core"
