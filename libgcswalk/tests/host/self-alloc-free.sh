#!/bin/sh
# gcswalk_self() must be async-signal-safe and allocation-free: the object
# that implements it may call nothing but the system-call wrappers it needs
# and the library's own allocation-free helpers (the arch back end's
# register read and classifier, gw_mark_sigreturn). Sanitizer hooks of the
# ASan+UBSan build are allowed. TAP.
#
# Usage: self-alloc-free.sh NM OBJECT...   (the library's objects)
set -u
nm=$1
shift
# shellcheck source=../../../tests/tap.sh
. "$(dirname "$0")/../../../tests/tap.sh"
obj=
for o in "$@"; do
	case $o in
	*/self.c.o) obj=$o ;;
	esac
done
check "self.c.o is among the objects" [ -n "$obj" ]
[ -n "$obj" ] || tap_done
bad=$("$nm" -u "$obj" | awk '{print $NF}' | grep -v -E \
	'^(open|open64|read|close|__errno_location|gw_arch_native|gw_arch_self_supported|gw_arch_self_gcspr|gw_mark_sigreturn|_GLOBAL_OFFSET_TABLE_|__stack_chk_fail|__stack_chk_guard)$|^__(asan|ubsan|sanitizer)_')
[ -z "$bad" ] || echo "# self.c.o calls: $bad"
check "the self walk calls only allocation-free, async-signal-safe functions" [ -z "$bad" ]
tap_done
