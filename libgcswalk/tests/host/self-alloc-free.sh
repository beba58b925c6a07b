#!/bin/sh
# gcswalk_self() must be async-signal-safe and allocation-free: the object
# that implements it may call nothing but the system-call wrappers it needs
# and the library's own allocation-free helpers (the arch back end's
# register read and classifier, gw_mark_sigreturn, and the maps scanner),
# and the maps scanner's object calls nothing at all. Sanitizer hooks of
# the ASan+UBSan build are allowed. TAP.
#
# Usage: self-alloc-free.sh NM OBJECT...   (the library's objects)
set -u
nm=$1
shift
# shellcheck source=../../../tests/tap.sh
. "$(dirname "$0")/../../../tests/tap.sh"
self='' scan=''
for o in "$@"; do
	case $o in
	*/self.c.o) self=$o ;;
	*/maps-scan.c.o) scan=$o ;;
	esac
done
# calls_only OBJECT ALLOWED WHAT: OBJECT's undefined symbols are all ALLOWED.
calls_only() {
	if [ -z "$1" ]; then
		not_ok "no $3 object among the objects"
		return
	fi
	bad=$("$nm" -u "$1" | awk '{print $NF}' |
		grep -v -E "^($2|_GLOBAL_OFFSET_TABLE_|__stack_chk_fail|__stack_chk_guard)\$|^__(asan|ubsan|sanitizer)_")
	[ -z "$bad" ] || echo "# ${1##*/} calls: $bad"
	check "$3 calls only allocation-free, async-signal-safe functions" [ -z "$bad" ]
}
calls_only "$self" 'open|open64|read|close|__errno_location|gw_arch_native|gw_arch_self_supported|gw_arch_self_gcspr|gw_mark_sigreturn|gw_maps_find_feed' \
	"the self walk"
# Not even memset or memcpy (which a compiler may make of a struct copy).
calls_only "$scan" 'gw_maps_head_feed' "the maps scanner"
tap_done
