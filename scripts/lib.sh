# shellcheck shell=bash
# Helpers shared by the project's shell scripts: messages, the cache folder,
# and "pieces" (cached build products rebuilt only when their inputs change).
#
# A piece is a folder under the cache holding a file .inputs, the hash of
# everything it was built from. It is built in a temporary sibling and
# renamed into place only when complete, so an interrupted build never
# leaves a half piece that a later run would trust. A lock per piece lets
# two runs share the cache without building the same piece twice.

# shellcheck disable=SC2034 # for the scripts that source this file
GCSPROF_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GCSPROF_CACHE=${GCSPROF_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gcsprof}
# Debian mirror for the sid pieces; the host's own apt sources name the
# same archive, so a private mirror set there is followed here too.
GCSPROF_MIRROR=${GCSPROF_MIRROR:-$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*debian\)$/\1/p' \
	/etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)}
GCSPROF_MIRROR=${GCSPROF_MIRROR:-http://deb.debian.org/debian}

say() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }
die() { printf '%s: error: %s\n' "${0##*/}" "$*" >&2; exit 1; }

# hash_inputs ARG... : one hash over strings and the contents of files
# (arguments that name existing files are read, others are hashed as text).
hash_inputs() {
	local a
	for a in "$@"; do
		if [ -f "$a" ]; then
			printf 'file %s\n' "${a##*/}"
			cat "$a"
		else
			printf 'text %s\n' "$a"
		fi
	done | sha256sum | cut -c1-16
}

# piece_fresh NAME HASH : true when the piece exists and was built from HASH.
piece_fresh() {
	[ -f "$GCSPROF_CACHE/$1/.inputs" ] && [ "$(cat "$GCSPROF_CACHE/$1/.inputs")" = "$2" ]
}

# piece_build NAME HASH FUNCTION [ARGS...] : unless fresh, run
# FUNCTION TMPDIR ARGS... and publish TMPDIR as the piece on success.
piece_build() {
	local name=$1 hash=$2 fn=$3 dir tmp lock
	shift 3
	dir=$GCSPROF_CACHE/$name
	mkdir -p "$GCSPROF_CACHE"
	piece_fresh "$name" "$hash" && return 0
	lock=$GCSPROF_CACHE/.$name.lock
	exec {lockfd}>"$lock"
	flock "$lockfd"
	# Another run may have built it while we waited for the lock.
	if piece_fresh "$name" "$hash"; then
		exec {lockfd}>&-
		return 0
	fi
	tmp=$(mktemp -d "$GCSPROF_CACHE/.$name.tmp.XXXXXX")
	# A subshell, so that a die inside FUNCTION still cleans up here.
	if ! ("$fn" "$tmp" "$@"); then
		rm -rf "$tmp"
		exec {lockfd}>&-
		die "building $name failed"
	fi
	printf '%s\n' "$hash" >"$tmp/.inputs"
	rm -rf "$dir.old"
	[ -e "$dir" ] && mv "$dir" "$dir.old"
	mv "$tmp" "$dir"
	rm -rf "$dir.old"
	exec {lockfd}>&-
}
