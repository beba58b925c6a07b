# shellcheck shell=bash
# The kernel source tree the series applies to: Debian's linux-source-6.12,
# unpacked once into the cache as a git repository whose first commit (tag
# "pristine") is the untouched tarball. Resetting to that commit and
# applying the series with "git am" gives exact patched trees, and git
# rewrites only the files that differ, so incremental builds stay correct
# and short. Sourced by kernel/build and kernel/check-series.
#
# kernel_select_mainline switches every name below to the mainline series
# (kernel/upstream/) on sid's linux-source-7.2 from the mainline-source
# piece; the functions then work on that tree alike. kernel_select_arch
# riscv64 builds the same tree for riscv64 instead of arm64, in an output
# folder of its own.

KERNEL_PACKAGE=linux-source-6.12
KERNEL_TARBALL=/usr/src/linux-source-6.12.tar.xz
KERNEL_TREE=$GCSPROF_CACHE/linux-6.12
KERNEL_OUT=$GCSPROF_CACHE/linux-6.12-out
KERNEL_SERIES_DIR=$GCSPROF_TOP/kernel/patches
KERNEL_VERSION_FILE=
KERNEL_ARCH=arm64
KERNEL_CROSS=aarch64-linux-gnu-
KERNEL_MAKE=(make -s "ARCH=$KERNEL_ARCH" "CROSS_COMPILE=$KERNEL_CROSS"
	KBUILD_BUILD_USER=gcsprof KBUILD_BUILD_HOST=qemu
	KBUILD_BUILD_TIMESTAMP="2026-01-01 00:00:00 UTC")

kernel_source_version() {
	if [ -n "$KERNEL_VERSION_FILE" ]; then
		cat "$KERNEL_VERSION_FILE"
		return
	fi
	dpkg-query -W -f='${Version}' "$KERNEL_PACKAGE" 2>/dev/null ||
		die "$KERNEL_PACKAGE is not installed (run scripts/deps)"
}

# kernel_select_mainline : work on sid's linux-source-7.2 and the series of
# kernel/upstream/ instead (the tarball, its Debian version and Debian's
# config for it come from the mainline-source piece).
kernel_select_mainline() {
	local src
	src=$("$GCSPROF_TOP/vm/pieces/mainline-source") || die "cannot fetch the mainline source"
	KERNEL_PACKAGE=linux-source-7.2
	KERNEL_TARBALL=$src/linux-source.tar.xz
	KERNEL_VERSION_FILE=$src/version
	# shellcheck disable=SC2034 # for kernel/build, which sources this file
	KERNEL_MAINLINE_CONFIG=$src/config
	KERNEL_TREE=$GCSPROF_CACHE/linux-7.2
	KERNEL_OUT=$GCSPROF_CACHE/linux-7.2-out
	KERNEL_SERIES_DIR=$GCSPROF_TOP/kernel/upstream
}

# kernel_select_arch riscv64 : build for riscv64 (bookworm's
# gcc-riscv64-linux-gnu 12) into an output folder of its own; the tree
# and the series stay the same. The kernel's own name for the architecture
# is riscv (ARCH=riscv, arch/riscv/boot/Image).
kernel_select_arch() {
	case $1 in
	arm64) return 0 ;;
	riscv64) ;;
	*) die "unknown kernel architecture '$1' (arm64 or riscv64)" ;;
	esac
	KERNEL_ARCH=riscv
	KERNEL_CROSS=riscv64-linux-gnu-
	KERNEL_OUT=$KERNEL_OUT-riscv64
	KERNEL_MAKE[2]=ARCH=$KERNEL_ARCH
	KERNEL_MAKE[3]=CROSS_COMPILE=$KERNEL_CROSS
}

# kernel_tree_ready : unpack the pristine tree unless present for this
# package version.
kernel_tree_ready() {
	local ver tmp
	ver=$(kernel_source_version)
	if [ -f "$KERNEL_TREE/.pristine-version" ] &&
		[ "$(cat "$KERNEL_TREE/.pristine-version")" = "$ver" ]; then
		return 0
	fi
	[ -f "$KERNEL_TARBALL" ] || die "$KERNEL_TARBALL missing (run scripts/deps)"
	say "unpacking $KERNEL_PACKAGE $ver into $KERNEL_TREE (once)"
	mkdir -p "$GCSPROF_CACHE"
	tmp=$(mktemp -d "$GCSPROF_CACHE/.${KERNEL_TREE##*/}.tmp.XXXXXX")
	tar -xJf "$KERNEL_TARBALL" -C "$tmp" --strip-components=1 ||
		{ rm -rf "$tmp"; die "cannot unpack $KERNEL_TARBALL"; }
	(
		cd "$tmp" &&
		git init -q &&
		git config user.name "gcsprof kernel build" &&
		git config user.email "build@gcsprof.invalid" &&
		git config gc.auto 0 &&
		git add -A -f . &&
		git commit -q -m "$KERNEL_PACKAGE $ver (pristine)" &&
		git tag pristine
	) || { rm -rf "$tmp"; die "cannot make a git repository of the kernel tree"; }
	printf '%s\n' "$ver" >"$tmp/.pristine-version"
	# .pristine-version is ours, not the tree's: keep git from seeing it.
	printf '.pristine-version\n' >>"$tmp/.git/info/exclude"
	# Debian's tarball carries a .gitignore that ignores everything at the
	# top level (hence -f above); "git clean" must not rely on it either.
	rm -rf "$KERNEL_TREE" "$KERNEL_OUT"
	mv "$tmp" "$KERNEL_TREE"
}

# kernel_series_files : the patch files named by the series file
# (kernel/patches/series), in order, as paths; blank lines and "#"
# comments are ignored.
kernel_series_files() {
	local line dir=${KERNEL_SERIES_DIR#"$GCSPROF_TOP"/}
	while IFS= read -r line || [ -n "$line" ]; do
		line=${line%%#*}
		line=$(printf '%s' "$line" | tr -d '[:space:]')
		[ -n "$line" ] || continue
		[ -f "$KERNEL_SERIES_DIR/$line" ] ||
			die "$dir/series names $line, which does not exist"
		printf '%s\n' "$KERNEL_SERIES_DIR/$line"
	done <"$KERNEL_SERIES_DIR/series"
}

# kernel_tree_reset : the working tree back to pristine, on branch "series".
kernel_tree_reset() {
	git -C "$KERNEL_TREE" am --abort >/dev/null 2>&1 || true
	if ! git -C "$KERNEL_TREE" checkout -q -f -B series pristine ||
		! git -C "$KERNEL_TREE" clean -q -fd; then
		die "cannot reset $KERNEL_TREE to pristine"
	fi
}

# kernel_apply PATCH : apply one patch of the series as a commit.
kernel_apply() {
	git -C "$KERNEL_TREE" am -q --keep-cr "$1" >/dev/null 2>&1 || {
		git -C "$KERNEL_TREE" am --abort >/dev/null 2>&1
		die "patch ${1##*/} does not apply"
	}
}

# kernel_distro_config : Debian's own 6.12 arm64 configuration (cloud-arm64
# flavour), from linux-config-6.12:arm64, unpacked once into the cache; its
# path on stdout.
kernel_distro_config() {
	local xz=/usr/src/linux-config-6.12/config.arm64_none_cloud-arm64.xz
	local out=$GCSPROF_CACHE/debian-6.12-cloud-arm64.config
	[ -f "$xz" ] || die "$xz missing (linux-config-6.12:arm64; run scripts/deps)"
	mkdir -p "$GCSPROF_CACHE"
	if [ ! -f "$out" ] || [ "$xz" -nt "$out" ]; then
		xz -dc "$xz" >"$out.tmp" || die "cannot unpack $xz"
		mv "$out.tmp" "$out" || die "cannot write $out"
	fi
	printf '%s\n' "$out"
}

# kernel_configure [FRAGMENT...] : tinyconfig, or the configuration file
# named by KERNEL_BASE_CONFIG when set, plus the fragments (default: every
# kernel/config/*.config), then check that each option the fragments ask
# for took effect (Kconfig drops options whose dependencies are unmet
# without failing).
kernel_configure() {
	local frags=("$@") line sym want got
	[ $# -gt 0 ] || frags=("$GCSPROF_TOP"/kernel/config/*.config)
	mkdir -p "$KERNEL_OUT"
	if [ -n "${KERNEL_BASE_CONFIG:-}" ]; then
		cp "$KERNEL_BASE_CONFIG" "$KERNEL_OUT/.config" ||
			die "cannot copy $KERNEL_BASE_CONFIG"
	else
		"${KERNEL_MAKE[@]}" -C "$KERNEL_TREE" O="$KERNEL_OUT" tinyconfig >/dev/null ||
			die "make tinyconfig failed"
	fi
	(cd "$KERNEL_TREE" && ARCH=$KERNEL_ARCH CROSS_COMPILE=$KERNEL_CROSS \
		scripts/kconfig/merge_config.sh -m -O "$KERNEL_OUT" "$KERNEL_OUT/.config" "${frags[@]}") \
		>/dev/null || die "merging kernel/config fragments failed"
	"${KERNEL_MAKE[@]}" -C "$KERNEL_TREE" O="$KERNEL_OUT" olddefconfig >/dev/null ||
		die "make olddefconfig failed"
	cat "${frags[@]}" | while IFS= read -r line; do
		case $line in CONFIG_*=*) ;; *) continue ;; esac
		sym=${line%%=*} want=${line#*=}
		got=$(grep -E "^($sym=|# $sym is not set)" "$KERNEL_OUT/.config" || true)
		case $want:$got in
		n:"# $sym is not set" | n:) ;;
		*:"$sym=$want") ;;
		*) die "kernel config: $sym=$want requested but got '${got:-unset}' (unmet dependency?)" ;;
		esac
	done
}

# kernel_make TARGET... : build in the out-of-tree folder with ccache.
kernel_make() {
	CCACHE_DIR=${CCACHE_DIR:-$GCSPROF_CACHE/ccache} CCACHE_BASEDIR=$KERNEL_TREE \
		"${KERNEL_MAKE[@]}" -C "$KERNEL_TREE" O="$KERNEL_OUT" \
		CC="ccache ${KERNEL_CROSS}gcc" -j"$(nproc)" "$@"
}
