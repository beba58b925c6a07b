#!/bin/sh
# gcswalk_self() must be async-signal-safe and allocation-free: the object
# that implements it may call nothing but the system-call wrappers it needs
# and the library's own allocation-free helpers (the arch back end's
# register read and classifier, gw_mark_sigreturn, and the maps scanner),
# and the maps scanner's object calls nothing at all. Sanitizer hooks of
# the ASan+UBSan build are allowed.
#
# Usage: self-alloc-free.sh NM OBJECT...   (the library's objects)
set -u
nm=$1
shift
self='' scan=''
for o in "$@"; do
	case $o in
	*/self.c.o) self=$o ;;
	*/maps-scan.c.o) scan=$o ;;
	esac
done
echo "1..2"
# calls OBJECT ALLOWED: the undefined symbols of OBJECT not ALLOWED.
calls() {
	"$nm" -u "$1" | awk '{print $NF}' |
		grep -v -E "^($2|_GLOBAL_OFFSET_TABLE_|__stack_chk_fail|__stack_chk_guard)\$|^__(asan|ubsan|sanitizer)_"
}
check() {
	n=$1 obj=$2 allowed=$3 what=$4
	if [ -z "$obj" ]; then
		echo "not ok $n no $what object among the objects"
		return 1
	fi
	bad=$(calls "$obj" "$allowed")
	if [ -n "$bad" ]; then
		echo "# ${obj##*/} calls: $bad"
		echo "not ok $n $what calls only allocation-free, async-signal-safe functions"
		return 1
	fi
	echo "ok $n $what calls only allocation-free, async-signal-safe functions"
}
rc=0
check 1 "$self" 'open|open64|read|close|__errno_location|gw_arch_native|gw_arch_self_supported|gw_arch_self_gcspr|gw_mark_sigreturn|gw_maps_find_feed' \
	"the self walk" || rc=1
# Not even memset or memcpy (which a compiler may make of a struct copy).
check 2 "$scan" 'gw_maps_head_feed' "the maps scanner" || rc=1
exit $rc
