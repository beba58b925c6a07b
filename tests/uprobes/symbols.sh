# shellcheck shell=sh
# Where a symbol of a program is, for probes set by address or file
# offset (the kernel's uprobe_events takes PATH:OFFSET). Sourced by the
# uprobe tests and bench/guest/uprobe-cost.sh; uses nm and readelf.

# address_of PROGRAM SYMBOL: SYMBOL's address in PROGRAM (0x...).
address_of() {
	nm "$1" | while read -r ao_a _t ao_s; do [ "$ao_s" = "$2" ] && echo "0x$ao_a"; done | head -n 1
}

# file_offset PROGRAM SYMBOL: SYMBOL's offset in the file PROGRAM, from
# its address and the LOAD segment holding it.
file_offset() {
	fo_addr=$(address_of "$1" "$2")
	[ -n "$fo_addr" ] || return 1
	readelf -lW "$1" | while read -r ty off va _pa fsz _rest; do
		[ "$ty" = LOAD ] || continue
		if [ $((fo_addr)) -ge $((va)) ] && [ $((fo_addr)) -lt $((va + fsz)) ]; then
			printf '0x%x\n' $((fo_addr - va + off))
		fi
	done
}
