#!/bin/sh
# GDB's $ variables and the regexps matching them are single-quoted on purpose.
# shellcheck disable=SC2016
# Cores made in the guest (on KERNEL), read on this host by gdb-multiarch,
# which knows no GCS registers: the plugin takes the GCS state from each
# core's NT_ARM_GCS note through libgcswalk, `set sysroot` at a copy of the
# guest's files. The chains must equal the guest GDB's and gcsprof
# inspect's on the same core, frame for frame; the smash must be found, the
# overwritten frame record named, the GCS switch followed, and a core
# without GCS met with one line per command.
# TAP; 4 (skip) without an arm64 build or without GCS in the guest.
# Usage: gdb-cores-test.sh VM_RUN KERNEL STAGE GDB PLUGIN GCSPROF WORKDIR
set -u
vm_run=$1 kernel=$2 stage=$3 gdb=$4 plugin=$5 gp=$6 work=$7
here=$(dirname "$0")
. "$here/../../../tests/tap.sh"
. "$here/../chain-compare.sh"
T=/opt/gcsprof/tests
C=$T/corpus

if [ ! -x "$stage/tests/gdb-guest-test.sh" ]; then
	echo "1..0 # SKIP no arm64 build in $stage (scripts/build makes it)"
	exit 4
fi
rm -rf "$work" && mkdir -p "$work" || exit 1
"$vm_run" --kernel "$kernel" --stage "$stage" --share "$work" --timeout 900 -- \
	/opt/gcsprof/tests/gdb-guest-test.sh for_host >"$work.log" 2>&1
rc=$?
case $rc in
0 | 1) ;;
4) echo "1..0 # SKIP the guest ($kernel kernel) has no GCS"; exit 4 ;;
*) echo "# the guest run failed ($rc):"; sed 's/^/# /' "$work.log"; exit 1 ;;
esac
cd "$work" || exit 1
# The guest's own checks of these cores count here too.
check "the guest's checks of the cores passed" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || grep '^not ok' "$work.log" | show
for f in smash threads deep nogcs lr switch; do
	[ -f $f.core ] || { echo "# the guest made no $f.core"; tap_done; }
done
root=$work/root

g() { # g OUT EXE CORE COMMANDS...
	out=$1 exe=$2 core=$3
	shift 3
	"$gdb" -q -nx -batch -ex "set sysroot $root" -ex "source $plugin" \
		-ex "file $root$exe" -ex "core-file $core" "$@" >"$out" 2>&1
}
same_chains() { # same_chains DESC A B
	chains_of "$2" >"$2.chains"
	chains_of "$3" >"$3.chains"
	n=$(wc -l <"$2.chains")
	if [ "$n" -gt 0 ] && cmp -s "$2.chains" "$3.chains"; then
		ok "$1 ($n lines)"
	else
		not_ok "$1"
		diff "$2.chains" "$3.chains" | head -n 20 | show
	fi
}

g smash.host.txt $T/gcsprof-smash smash.core -ex 'gcs bt' -ex 'gcs verify' \
	-ex 'p $_gcs_verify' -ex 'gcs status'
show smash.host.txt
check "the GCS state from the core's note" grep -q "the core's NT_ARM_GCS note" smash.host.txt
check "gcs bt: the true chain level2 level1 main" \
	sh -c "echo '$(frames_of smash.host.txt)' | grep -q '^level2 level1 main '"
check "gcs verify parts at frame #1, naming level2" \
	grep -q 'overwritten from frame #0 (level2)' smash.host.txt
check "\$_gcs_verify is 1" grep -q '^\$1 = 1$' smash.host.txt
same_chains "smash: the same chain as the guest's GDB 18" smash.host.txt smash.txt
g filter.txt $T/gcsprof-smash smash.core -ex 'info frame-filter' -ex 'echo ==off==\n' -ex bt \
	-ex 'enable frame-filter global gcs' -ex 'echo ==on==\n' -ex bt
show filter.txt
check "the gcs frame filter is off by default" \
	sh -c "sed -n '/==off==/,/==on==/p' filter.txt | grep -q level1 && exit 1; exit 0"
check "enabled, GDB's bt follows the GCS past the smash: level1, main" \
	sh -c "sed -n '/==on==/,\$p' filter.txt | grep -q 'level1 \[from the GCS\]' &&
		sed -n '/==on==/,\$p' filter.txt | grep -q 'main \[from the GCS\]'"
check "and drops GDB's bogus frame" \
	sh -c "! sed -n '/==on==/,\$p' filter.txt | grep -q 0x4141414141414141"
"$gp" inspect smash.core --sysroot "$root" >smash.inspect.host.txt 2>&1
same_chains "smash: the same as gcsprof inspect on this host" smash.host.txt smash.inspect.host.txt

g threads.bt.txt $T/gcsprof-threads threads.core -ex 'echo ==off==\n' -ex 'thread apply all bt' \
	-ex 'enable frame-filter global gcs' -ex 'echo ==on==\n' -ex 'thread apply all bt'
sed -n '/==off==/,/==on==/p' threads.bt.txt >threads.bt.off
sed -n '/==on==/,$p' threads.bt.txt >threads.bt.on
check "threads: where GDB's unwind is sound the filter changes no frame" \
	[ -n "$(bt_frames_of threads.bt.off)" -a "$(bt_frames_of threads.bt.off)" = "$(bt_frames_of threads.bt.on)" ]
g threads.host.txt $T/gcsprof-threads threads.core -ex 'thread apply all gcs bt'
check "threads: every thread's chain (4)" [ "$(grep -c 'frames from the GCS' threads.host.txt)" -eq 4 ]
same_chains "threads: the same chains as the guest's GDB 18" threads.host.txt threads.txt
"$gp" inspect threads.core --sysroot "$root" >threads.inspect.host.txt 2>&1
same_chains "threads: the same as gcsprof inspect on this host" threads.host.txt \
	threads.inspect.host.txt

g deep.host.txt $T/gcsprof-deep deep.core -ex 'gcs bt'
check "deep: the recursion in one line" grep -qE 'the same frame (199[0-9]|20[0-9][0-9]) more times' \
	deep.host.txt
same_chains "deep: the same chain as the guest's GDB 18" deep.host.txt deep.txt
# A core of a program without GCS: its note (or none) says so.
eval g nogcs.host.txt $C/healthy-abort-deep nogcs.core "$nogcs_core_commands"
show nogcs.host.txt
nogcs_core_checks nogcs.host.txt

g lr.host.txt $C/corrupt-overwritten-lr lr.core -ex 'gcs verify' -ex 'p $_gcs_verify'
show lr.host.txt
check "overwritten-lr: gcs verify parts at a's frame, #6" grep -q 'they part at frame #6$' lr.host.txt
check "overwritten-lr: GDB's #6 is the address d wrote" grep -q '^  GDB: #6 *0x0000dead0000bee0 ??' lr.host.txt
check "overwritten-lr: b's frame record named" \
	grep -q "the frame record at 0x[0-9a-f]* (frame #5's, b) holds return address 0x0000dead0000bee0, which is not on the GCS: GDB took frame #6 from it" lr.host.txt
check "overwritten-lr: the same verdict as the guest's GDB 18" \
	[ "$(grep '^  \(GCS\|GDB\|the frame record\)' lr.host.txt)" = "$(grep '^  \(GCS\|GDB\|the frame record\)' lr.txt)" ]
check "overwritten-lr: \$_gcs_verify is 6" grep -q '^\$1 = 6$' lr.host.txt

g switch.host.txt $C/healthy-gcs-switch switch.core -ex 'gcs bt' -ex 'gcs verify'
show switch.host.txt
check "gcs-switch: gcs bt shows the switch" grep -q '^  ---- GCS switch: this stack was left here' switch.host.txt
check "gcs-switch: and goes on to switch_away and main" \
	sh -c "sed -n '/GCS switch/,/: GDB.s unwind/p' switch.host.txt | grep -q '^  #8 *0x[0-9a-f]* main+'"
same_chains "gcs-switch: the same chain as the guest's GDB 18" switch.host.txt switch.txt
check "gcs-switch: gcs verify agrees" grep -q ': agree$' switch.host.txt

for f in smash threads deep lr switch; do
	check "$f: no Python traceback" sh -c "! grep -q 'Traceback\|File \"' $f.host.txt"
done
tap_done
