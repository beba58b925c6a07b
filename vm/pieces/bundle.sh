# shellcheck shell=bash
# Helpers for the pieces that carry a Debian sid arm64 program into the
# guest apart from the guest root (vm/pieces/vmm, vm/pieces/bpftrace): the
# program is run through its own dynamic loader with exactly the libraries
# it needs (their closure by DT_NEEDED), not the guest root's, which was
# extracted at another time and need not match them. Sourced after
# scripts/lib.sh.

# bundle_extract ROOT PACKAGES LOG : Debian sid arm64 PACKAGES (comma
# separated) and their dependencies, extracted without emulation into ROOT.
bundle_extract() {
	mmdebstrap --architectures=arm64 --variant=extract --include="$2" \
		--aptopt='Acquire::Check-Valid-Until "false"' \
		--aptopt='APT::Install-Recommends "false"' \
		sid "$1" "$GCSPROF_MIRROR" >"$3" 2>&1 ||
		{ tail -n 5 "$3" >&2; say "mmdebstrap of sid's arm64 $2 failed"; return 1; }
}

# bundle_needed FILE... : the DT_NEEDED names of the given ELF files.
bundle_needed() {
	aarch64-linux-gnu-readelf -d "$@" 2>/dev/null |
		sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p' | sort -u
}

# bundle_find_lib ROOT NAME : the path of library NAME in the extracted ROOT.
bundle_find_lib() {
	local d
	for d in usr/lib/aarch64-linux-gnu usr/lib lib/aarch64-linux-gnu lib; do
		if [ -e "$1/$d/$2" ]; then
			printf '%s\n' "$1/$d/$2"
			return 0
		fi
	done
	return 1
}

# bundle_program ROOT DEST PROGRAM WRAPPER : copy ROOT's PROGRAM (a path
# under ROOT) to DEST/bin, the arm64 loader and PROGRAM's library closure
# to DEST/lib, and write DEST/bin/WRAPPER, which runs PROGRAM through
# them. DEST is the folder as it is on the host; the guest sees it at
# GUEST_DEST (a variable the caller sets).
bundle_program() {
	local root=$1 dest=$2 prog=$3 wrapper=$4 name path todo n done_list=""
	local base=${prog##*/}
	mkdir -p "$dest/bin" "$dest/lib"
	cp "$root/$prog" "$dest/bin/$base" || { say "the extracted packages lack $prog"; return 1; }
	cp -L "$root/usr/lib/ld-linux-aarch64.so.1" "$dest/lib/" ||
		{ say "no arm64 dynamic loader in the extracted packages"; return 1; }
	# The closure of DT_NEEDED, breadth first.
	todo=$(bundle_needed "$dest/bin/$base")
	while [ -n "$todo" ]; do
		n=""
		for name in $todo; do
			case " $done_list " in *" $name "*) continue ;; esac
			done_list="$done_list $name"
			path=$(bundle_find_lib "$root" "$name") ||
				{ say "library $name of $base not found"; return 1; }
			cp -L "$path" "$dest/lib/$name"
			n="$n $(bundle_needed "$dest/lib/$name" | tr '\n' ' ')"
		done
		todo=$n
	done
	cat >"$dest/bin/$wrapper" <<WRAPPER
#!/bin/sh
# $base with its own loader and libraries (vm/pieces/bundle.sh).
exec $GUEST_DEST/lib/ld-linux-aarch64.so.1 --library-path $GUEST_DEST/lib \\
	$GUEST_DEST/bin/$base "\$@"
WRAPPER
	chmod 755 "$dest/bin/$wrapper"
}

# bundle_pack DIR CPIO : DIR's contents as an uncompressed cpio, owned by
# root, to be appended to the guest's initramfs.
bundle_pack() {
	(cd "$1" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) >"$2" ||
		{ say "packing $2 failed"; return 1; }
}
