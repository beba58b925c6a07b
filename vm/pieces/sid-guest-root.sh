# shellcheck shell=bash
# Sourced by the guest-root pieces of architectures other than arm64
# (vm/pieces/guest-root-riscv64): extract Debian sid for ARCH without
# emulation, trim it and pack it as the uncompressed cpio vm/run boots.
# vm/pieces/guest-root does the same for arm64 in its own words (its
# inputs are kept as they are, so that the arm64 root is not rebuilt).

# sid_guest_root DIR ARCH TRIPLET LOADER LOG : DIR/root.cpio from the
# packages of vm/guest-root.packages, for Debian architecture ARCH (GNU
# triplet TRIPLET), whose dynamic loader is /usr/lib/LOADER.
sid_guest_root() {
	local dir=$1 arch=$2 triplet=$3 loader=$4 log=$5 root=$1/root pkgs d
	pkgs=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$GCSPROF_TOP/vm/guest-root.packages" |
		tr -s '[:space:]' ',')
	pkgs=${pkgs%,}
	say "extracting Debian sid $arch for the guest (log: $log)"
	mmdebstrap --architectures="$arch" --variant=extract --include="$pkgs" \
		--aptopt='Acquire::Check-Valid-Until "false"' \
		sid "$root" "$GCSPROF_MIRROR" >"$log" 2>&1 ||
		{ tail -n 5 "$log" >&2; say "mmdebstrap of the sid $arch guest root failed"; return 1; }
	# The extract variant runs no maintainer scripts: make the merged-/usr
	# links and mount points ourselves.
	for d in bin lib sbin; do
		[ -e "$root/$d" ] || ln -s "usr/$d" "$root/$d"
	done
	mkdir -p "$root"/{proc,sys,dev,tmp,run,root,share,opt}
	# Every byte of the initramfs is unpacked at each boot: no documentation,
	# translations, linker, simulator, perl modules or python tests, and
	# only the Unicode charset converters.
	rm -rf "$root"/usr/share/{doc,man,info,locale,lintian,perl} \
		"$root/usr/lib/$triplet/perl" "$root/usr/lib/$triplet/perl-base" \
		"$root"/var/cache/apt "$root"/var/lib/apt/lists \
		"$root/usr/bin/$triplet-"{run,ld,ld.bfd,ld.gold,gprofng*} "$root/usr/lib/$triplet/ldscripts" \
		"$root"/usr/lib/python3*/{test,pydoc_data,idlelib,tkinter}
	find "$root/usr/lib/$triplet/gconv" -name '*.so' \
		! -name 'UTF-*' ! -name 'UNICODE.so' ! -name 'ISO8859-1.so' -delete
	printf 'gcsprof-guest\n' >"$root/etc/hostname"
	printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n' >"$root/etc/passwd"
	printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
	if [ ! -x "$root/usr/bin/gdb" ] || [ ! -e "$root/usr/lib/$loader" ]; then
		say "guest root lacks gdb or the $arch dynamic loader"
		return 1
	fi
	(cd "$root" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc --quiet) >"$dir/root.cpio" ||
		{ say "packing the guest root failed"; return 1; }
	rm -rf "$root"
}
