# shellcheck shell=sh
# TAP helpers shared by the project's shell tests, on the host and in the
# guest (POSIX sh: dash and busybox too). Source it, then:
#   ok DESC, not_ok DESC          one result
#   skip REASON                   one result that could not be had here
#   check DESC CMD...             CMD's success is the result
#   status_is WANT DESC CMD...    CMD's exit status must be WANT; its output
#                                 goes to out.txt and err.txt in the current
#                                 folder, and is shown when the check fails
#   show FILE...                  FILE as TAP comments
#   tap_done                      the plan, then exit: 0 if all passed, else 1
#   first_core                    the first core file in the current folder
tap_n=0
tap_failed=0

ok() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n - $*"
}

not_ok() {
	tap_n=$((tap_n + 1))
	tap_failed=$((tap_failed + 1))
	echo "not ok $tap_n - $*"
}

skip() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n # SKIP $*"
}

check() {
	tap_desc=$1
	shift
	if "$@"; then ok "$tap_desc"; else not_ok "$tap_desc"; fi
}

show() {
	sed 's/^/# /' "$@"
}

status_is() {
	tap_want=$1 tap_desc=$2
	shift 2
	"$@" >out.txt 2>err.txt
	tap_got=$?
	if [ "$tap_got" -eq "$tap_want" ]; then
		ok "$tap_desc (status $tap_got)"
	else
		not_ok "$tap_desc (status $tap_got, expected $tap_want)"
		sed 's/^/# stdout: /' out.txt | head -n 20
		sed 's/^/# stderr: /' err.txt | head -n 20
	fi
}

tap_done() {
	echo "1..$tap_n"
	if [ "$tap_failed" -ne 0 ]; then
		echo "# $tap_failed of $tap_n failed"
		exit 1
	fi
	exit 0
}

# tap_groups "ALL GROUPS" [GROUP...]: run the test groups named (all of
# them when none is, or "all"), each the function t_GROUP after a comment
# line naming it, then end the TAP stream.
tap_groups() {
	tap_all=$1
	shift
	tap_list=${*:-all}
	[ "$tap_list" = all ] && tap_list=$tap_all
	for tap_g in $tap_list; do
		echo "# --- $tap_g"
		"t_$tap_g"
	done
	tap_done
}

# on_debug_kernel: true on the debug kernel (KASAN, lockdep; vm/run puts
# gcsprof.debug_kernel=1 on its command line, which the kernel ignores).
# tests/debug-kernel.h is its C twin.
on_debug_kernel() {
	grep -q 'gcsprof.debug_kernel=1' /proc/cmdline
}

# gcs_or_skip: in the guest, the TAP header where this CPU and kernel have
# GCS; elsewhere the whole test's skip line, and exit 4.
gcs_or_skip() {
	if ! grep -q '^Features.* gcs' /proc/cpuinfo; then
		echo "1..0 # SKIP no gcs in /proc/cpuinfo: this CPU or kernel has no GCS"
		exit 4
	fi
	echo "TAP version 13"
}

# first_core: the name of the first core file ("core" or "core.PID", the
# kernel's default core_pattern) in the current folder; nothing if none.
first_core() {
	for tap_c in core core.*; do
		[ -e "$tap_c" ] && { echo "$tap_c"; return; }
	done
}

# share_libc: in the guest, copy the dynamic loader and the C library
# into /share/root (at their paths and at the files they link to), so that
# a host reading cores and profiles made here has the guest's own copies.
share_libc() {
	for tap_f in /lib/ld-linux-aarch64.so.1 /lib/aarch64-linux-gnu/libc.so.6 \
		/lib/ld-linux-riscv64-lp64d.so.1 /lib/riscv64-linux-gnu/libc.so.6; do
		[ -e "$tap_f" ] || continue
		tap_r=$(readlink -f "$tap_f")
		mkdir -p "/share/root$(dirname "$tap_f")" "/share/root$(dirname "$tap_r")"
		cp "$tap_r" "/share/root$tap_f"
		cp "$tap_r" "/share/root$tap_r"
	done
}
