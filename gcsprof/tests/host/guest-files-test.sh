#!/bin/sh
# A profile and a core made in the guest (reference kernel), read on this
# host: report with --sysroot gives the same top functions as in the
# guest, and inspect shows the smashed program's true chain and the
# corruption. TAP; 4 (skip) without an arm64 build or GCS in the guest.
# Usage: guest-files-test.sh VM_RUN STAGE GCSPROF WORKDIR [PPROF_CHECK]
set -u
vm_run=$1 stage=$2 gp=$3 work=$4 pprof_check=${5:-}
. "$(dirname "$0")/../../../tests/tap.sh"
here=$(cd "$(dirname "$0")" && pwd)

if [ ! -x "$stage/bin/gcsprof" ]; then
	echo "1..0 # SKIP no arm64 build in $stage (scripts/build makes it)"
	exit 4
fi
rm -rf "$work" && mkdir -p "$work" || exit 1
"$vm_run" --kernel reference --stage "$stage" --share "$work" --timeout 900 -- \
	/opt/gcsprof/tests/gcsprof-guest-test.sh for_host >"$work.log" 2>&1
rc=$?
case $rc in
0) ;;
4) echo "1..0 # SKIP the guest has no GCS"; exit 4 ;;
*) echo "# the guest run failed ($rc):"; sed 's/^/# /' "$work.log"; exit 1 ;;
esac
cd "$work" || exit 1
mkdir -p root/opt && ln -sfn "$stage" root/opt/gcsprof

"$gp" report split.data --sysroot "$work/root" -o split.host.txt
check "report on the host" [ $? -eq 0 ]
sed 's/^/# /' split.host.txt | head -n 14
top() { grep -E '^ +[0-9.]+% +[0-9.]+% ' "$1" | head -n 8 | sed 's/ (.*//' | awk '{print $NF}'; }
check "the same top functions as in the guest" [ "$(top split.host.txt)" = "$(top split.guest.txt)" ]
check "path_a on the host" grep -q ' path_a ' split.host.txt
"$gp" report split.data --sysroot "$work/root" -f folded -o split.host.folded
check "the same folded stacks as in the guest" cmp -s split.host.folded split.guest.folded
# The bundle gcsprof archive made in the guest reports here as it is:
# no sysroot, no copy of the guest's root.
"$gp" report split.archive -f folded -o split.archive.folded 2>archive.err
check "a bundle from gcsprof archive reports on the host" [ $? -eq 0 ]
check "without a warning about missing files" sh -c '! grep -q "not on this machine" archive.err'
check "the same folded stacks as in the guest" cmp -s split.archive.folded split.guest.folded
"$gp" report split.data --sysroot "$work/root" -f pprof -o split.pb.gz
check "pprof on the host" [ $? -eq 0 ]
self_top=$(grep -E '^ +[0-9.]+% +[0-9.]+% ' split.host.txt | head -n 1 | awk '{print $4}')
if [ -n "$pprof_check" ]; then
	"$pprof_check" split.pb.gz >pprof-check.txt
	check "the pprof output is a valid Profile" [ $? -eq 0 ]
	check "pprof's top function by self is the text report's ($self_top)" \
		[ "$(head -n 1 pprof-check.txt | cut -d' ' -f2)" = "$self_top" ]
fi
if command -v go >/dev/null 2>&1; then
	go tool pprof -top split.pb.gz >pprof.txt 2>&1
	check "go tool pprof reads it, path_a in its top" grep -q path_a pprof.txt
else
	skip "no 'go' (Debian's golang-go) for go tool pprof"
fi
"$gp" report split.data --sysroot "$work/root" -f svg -o split.svg
check "svg on the host" grep -q path_a split.svg
if command -v python3 >/dev/null 2>&1; then
	"$gp" report split.data --sysroot "$work/root" -f speedscope -o split.speedscope.json
	python3 "$here/speedscope-check.py" split.speedscope.json >speedscope.txt
	check "speedscope of a real profile: valid by its schema" [ $? -eq 0 ]
	show speedscope.txt | head -n 6
	check "its heaviest leaf is the text report's top function by self ($self_top)" \
		[ "$(sed -n 2p speedscope.txt | cut -d' ' -f3)" = "$self_top" ]
	"$gp" report split.data --sysroot "$work/root" -f firefox -o split.firefox.json
	python3 "$here/firefox-check.py" split.firefox.json >firefox.txt
	check "Firefox Profiler format of a real profile: what its importer needs" [ $? -eq 0 ]
	show firefox.txt | head -n 6
	check "its heaviest leaf the same, in the program" \
		[ "$(sed -n 2p firefox.txt | cut -d' ' -f3-)" = "$self_top [gcsprof-split]" ]
	# shellcheck disable=SC2016 # an awk program
	check "its samples on the timeline, within the recording" \
		awk '/^thread / { exit !($5 > 0 && $6 > $5) }' firefox.txt
	python3 "$here/svg-check.py" split.svg >svg.txt
	check "the interactive SVG of a real profile" [ $? -eq 0 ]
	if command -v node >/dev/null 2>&1; then
		python3 "$here/svg-check.py" split.svg --search path_ --node node >svg.txt
		check "its script on a real graph: zoom, search path_ ($(tail -n 1 svg.txt))" [ $? -eq 0 ]
	fi
else
	skip "no python3 for the speedscope, Firefox Profiler and SVG checks"
fi

# The guest's root as a folder (vm/guest-sysroot), with and without
# libc6-dbg: sid's libc is stripped of its local functions, which the
# report says once and its debug package in the sysroot names.
check "the header says where and when the profile was made" \
	grep -q '^# recorded: [0-9-]* [0-9:]* UTC on gcsprof-guest (Linux [^,]*, [0-9]* CPUs\{0,1\})$' split.host.txt
if grep -q '\[libc.so.6+0x' split.host.txt; then
	check "without libc6-dbg, glibc's local functions unnamed: said once, with the fix" \
		grep -q '^# unnamed: .*install its debug package (e.g. libc6-dbg) in the sysroot, where it lands in usr/lib/debug' split.host.txt
else
	not_ok "sid's libc was expected to leave some frames unnamed without its debug file"
fi
sysroot_tool=$(dirname "$vm_run")/guest-sysroot
if "$sysroot_tool" --debug --stage "$stage" "$work/sysroot" >sysroot.log 2>&1; then
	cmp -s "$work/sysroot/usr/lib/aarch64-linux-gnu/libc.so.6" \
		"$work/root/usr/lib/aarch64-linux-gnu/libc.so.6"
	same_libc=$?
	"$gp" report split.data --sysroot "$work/sysroot" -o split.debug.txt 2>debug.err
	check "report with the guest root as a folder (vm/guest-sysroot --debug)" [ $? -eq 0 ]
	show split.debug.txt | head -n 14
	if [ $same_libc -eq 0 ]; then
		check "libc6-dbg in the sysroot's usr/lib/debug names __libc_start_call_main" \
			grep -q ' __libc_start_call_main' split.debug.txt
		check "no frame of libc unnamed, and no hint" sh -c \
			'! grep -q "\[libc.so.6+0x" split.debug.txt && ! grep -q "^# unnamed" split.debug.txt'
		check "nor a warning about the files" [ ! -s debug.err ]
		check "the same hottest function as in the guest" \
			[ "$(top split.debug.txt | head -n 1)" = "$(top split.guest.txt | head -n 1)" ]
	else
		skip "the guest's libc and the libc6-dbg piece's differ (extracted at other times)"
	fi
else
	not_ok "vm/guest-sysroot --debug: $(tail -n 1 sysroot.log)"
fi
"$gp" report split.data -f folded -o /dev/null 2>nosysroot.err
# shellcheck disable=SC2016 # the inner shell expands it
check "without --sysroot: one line says it was recorded elsewhere, with the fix" sh -c \
	'[ "$(wc -l <nosysroot.err)" -eq 1 ] &&
	 grep -q "this profile was recorded on gcsprof-guest (Linux .*give --sysroot DIR" nosysroot.err'
show nosysroot.err

"$gp" inspect smash.core --sysroot "$work/root" >smash.host.txt 2>&1
check "inspect on the host" [ $? -eq 0 ]
sed 's/^/# /' smash.host.txt
check "the true chain: level2, level1, main" \
	sh -c "grep -o ' level2\| level1\| main' smash.host.txt | tr -d ' ' | tr '\n' ' ' |
		grep -q 'level2 level1 main'"
check "the corruption is reported" grep -q 'STACK CORRUPTION' smash.host.txt
check "the GCS fault is named" grep -q SEGV_CPERR smash.host.txt
"$gp" inspect smash.core --exe "$work/root/opt/gcsprof/tests/gcsprof-smash" >exe.txt 2>&1
check "--exe finds the program's symbols" grep -q level1 exe.txt
"$gp" inspect smash.core --sysroot "$work/no-such-root" >/dev/null 2>err.txt
rc=$?
check "inspect with a --sysroot that does not exist: status 75, one line ($rc)" sh -c \
	"[ $rc -eq 75 ] && [ \"\$(wc -l <err.txt)\" -eq 1 ] && grep -q 'no-such-root: no such folder' err.txt"
head -c 4096 smash.core >trunc.core
"$gp" inspect trunc.core >/dev/null 2>err.txt
rc=$?
check "a truncated core: status 70 or 71 ($rc: $(cat err.txt))" [ $rc -eq 70 -o $rc -eq 71 ]
tap_done
