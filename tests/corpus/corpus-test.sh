#!/bin/sh
# gcsprof inspect's verdicts on the corpus, in the guest, TAP output. Each
# program runs to its core; inspect must claim no corruption for the
# healthy ones (and say neutrally which frames the GCS cannot vouch for),
# and flag each real corruption at the right frame, named as the chain
# names it. Exit: 0 all passed, 1 a failure, 4 skipped (no GCS here).
set -u
C=/opt/gcsprof/tests/corpus
work=${GCSPROF_TEST_DIR:-/tmp/corpus-test.$$}
mkdir -p "$work" && cd "$work" || exit 1
# shellcheck source=../tap.sh
. "$(dirname "$0")/../tap.sh"

if ! grep -qw gcs /proc/cpuinfo; then
	echo "1..0 # SKIP this CPU or kernel has no GCS (no gcs in /proc/cpuinfo)"
	exit 4
fi

# One scenario a line: kind, name, GCS (forced by glibc, or "self": the
# program enables it), the status it dies with (134 SIGABRT, 139
# SIGSEGV), the function whose frame inspect must name as corrupt ("-":
# none), and the neutral note inspect must give ("older": frames older
# than the GCS, "other": frames on another stack, "-": none).
scenarios='
healthy abort-deep       forced 134 - -
healthy recursion        forced 134 - -
healthy threads-syscalls forced 134 - -
healthy enable-main      self   134 - older
healthy enable-thread    self   134 - older
healthy gcs-switch       forced 134 - other
healthy ucontext         forced 134 - -
healthy sigaltstack      forced 134 - -
healthy nested-signals   forced 134 - -
healthy leaf-handler     forced 139 - -
healthy leaf-thread      forced 134 - -
healthy longjmp          forced 134 - -
healthy no-fp            forced 134 - -
healthy mixed-fp         forced 134 - -
healthy cxx-exception    forced 134 - -
corrupt overflow-record  forced 139 level2 -
corrupt overflow-canary  forced 134 level2 -
corrupt overwritten-lr   forced 134 b -
corrupt fp-into-heap     forced 134 c -
corrupt use-after-return forced 134 b -
corrupt gcs-fault        forced 139 hijack -
corrupt wild-pointer     forced 139 - -
'

# The thread that received the signal: its part of inspect's output.
first_thread() { # first_thread OUT
	sed -n '/the one that received the signal/,/^$/p' "$1"
}

# run KIND-NAME GCS: the program's status, its core left as KIND-NAME.core.
run_to_core() {
	rm -f core core.* "$1.core"
	if [ "$2" = forced ]; then
		# shellcheck disable=SC3045 # dash and busybox sh have ulimit -c
		(ulimit -c unlimited; GLIBC_TUNABLES=glibc.cpu.aarch64_gcs=3 exec "$C/$1") \
			>"$1.out" 2>&1
	else
		# shellcheck disable=SC3045
		(ulimit -c unlimited; exec "$C/$1") >"$1.out" 2>&1
	fi
	rc=$?
	c=$(first_core)
	[ -n "$c" ] && mv "$c" "$1.core"
	return $rc
}

rm -f table.txt
while read -r kind name gcs want fn note; do
	[ -n "$kind" ] || continue
	p=$kind-$name
	if [ ! -x "$C/$p" ]; then
		skip "$p: not built (no cross compiler for it)"
		continue
	fi
	echo "# --- $p"
	run_to_core "$p" "$gcs"
	rc=$?
	check "$p dies with status $want ($rc)" [ "$rc" -eq "$want" ]
	if [ ! -e "$p.core" ]; then
		not_ok "$p dumped a core"
		show "$p.out"
		continue
	fi
	status_is 0 "inspect $p.core" gcsprof inspect "$p.core"
	mv out.txt "$p.txt"
	verdict=$(grep -m1 'STACK CORRUPTION' "$p.txt" || grep -m1 '^verdict:' "$p.txt")
	echo "# verdict: $verdict"
	first_thread "$p.txt" | grep -E 'stack:|note:' | show
	if [ "$fn" = - ]; then
		check "$p: no corruption claimed" sh -c "! grep -q 'STACK CORRUPTION' $p.txt"
		check "$p: the verdict says so" grep -qx 'verdict: no stack corruption found' "$p.txt"
		check "$p: the crashed thread's stack was checked" \
			sh -c "first_thread() { sed -n '/the one that received/,/^\$/p' \"\$1\"; }
				first_thread $p.txt | grep -q 'frame records\\{0,1\\} agrees\\{0,1\\} with the GCS'"
	else
		claim=$(grep -m1 'STACK CORRUPTION in frame #' "$p.txt")
		num=$(echo "$claim" | sed -n 's/.*STACK CORRUPTION in frame #\([0-9]*\) (\([^)]*\)).*/\1/p')
		got=$(echo "$claim" | sed -n 's/.*STACK CORRUPTION in frame #\([0-9]*\) (\([^)]*\)).*/\2/p')
		check "$p: corruption claimed in $fn's frame (frame #${num:-?}, $got)" [ "$got" = "$fn" ]
		check "$p: frame #${num:-?} of the crashed thread's chain is $fn" \
			sh -c "sed -n '/the one that received/,/^\$/p' $p.txt |
				grep -qE '^  #${num:-x} +0x[0-9a-f]+ $fn(\\+| )'"
	fi
	case $note in
	older)
		check "$p: frames older than the GCS said so" grep -q 'older than the GCS' "$p.txt" ;;
	other)
		check "$p: frames on another stack said so" grep -q 'on another stack' "$p.txt" ;;
	*)
		check "$p: no frames called older than the GCS or on another stack" \
			sh -c "! grep -qE 'older than the GCS|on another stack' $p.txt" ;;
	esac
	# The explanation each corruption must get.
	why=
	case $p in
	corrupt-overflow-record) why='the link register holds 0x4141414141414141 but' ;;
	corrupt-overflow-canary) why='holds return address 0x0000414141414141, but the GCS says level2 returns' ;;
	corrupt-gcs-fault) why='the link register holds 0x[0-9a-f]* (evil) but' ;;
	corrupt-overwritten-lr) why='holds return address 0x0000dead0000bee0, but the GCS says b returns' ;;
	corrupt-use-after-return) why='holds return address 0x0000424242424242, but the GCS says b returns' ;;
	corrupt-fp-into-heap) why='links to 0x[0-9a-f]*, below it, .*saved frame pointer was overwritten' ;;
	esac
	[ -n "$why" ] && check "$p: explained: $why" grep -q "STACK CORRUPTION in frame #[0-9]* ($fn): .*$why" "$p.txt"
	case $name in
	overflow-record | gcs-fault)
		check "$p: the fatal signal is a GCS check (SEGV_CPERR)" \
			grep -q '^fatal signal: 11 (SIGSEGV) from a GCS check' "$p.txt" ;;
	wild-pointer)
		check "$p: the fatal signal is a plain SIGSEGV (SEGV_MAPERR)" \
			grep -q '^fatal signal: 11 (SIGSEGV), code 1,' "$p.txt" ;;
	esac
	echo "$p: ${verdict:-?}" >>table.txt
done <<EOF_SCENARIOS
$scenarios
EOF_SCENARIOS
echo "# --- verdicts"
[ -e table.txt ] && show table.txt
tap_done
