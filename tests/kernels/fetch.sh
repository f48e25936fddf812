#!/usr/bin/env bash
# Fetch one listed kernel (tests/kernels/kernels.list) into the cache and
# print its directory, ~/.cache/spulse/kernels/<release>/.
#
# usage: fetch.sh [--headers] ID     e.g. fetch.sh 7.2
#
# The newest <series> kernel of <flavour> in <suite> is resolved at run time
# through a private apt config (~/.cache/spulse/apt/<suite>/; the host's
# sources are never used or changed). Downloaded with apt-get download and
# unpacked with dpkg-deb -x (nothing is installed):
#   old packaging: linux-image-<rel>-unsigned (or linux-image-<rel>)
#   new packaging (7.x): linux-binary-unsigned-<rel>, linux-modules-<rel>,
#                        linux-base-<rel> (linux-image-<rel> is a meta-package)
#   headers: linux-headers-<rel> and what it depends on of -common(-rt),
#            linux-kbuild-*, linux-base-<rel>
# The directory then holds the unpacked tree plus kernel.env (REL, VMLINUZ,
# MODULES, CONFIG, KDIR, PACKAGES, HOSTDEPS, SUITE) and a .complete stamp; the
# headers' Makefile is made relative so the tree works at any path.
# --headers fetches only the headers (enough to build the module; stamp
# .headers, VMLINUZ and MODULES empty); a later fetch without it adds the
# image. One
# fetcher at a time per release (flock); by-id/<ID> links to the last
# release fetched for ID (used when the archive cannot be reached).
set -euo pipefail
kl_prog=fetch
# shellcheck source=tests/kernels/lib.sh
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

headers_only=
if [ "${1:-}" = --headers ]; then
	headers_only=1
	shift
fi
[ $# -eq 1 ] || { sed -n '5p' "$0" | sed 's/^# //' >&2; exit 2; }
kl_entry "$1"
kroot=$kl_cache/kernels
mkdir -p "$kroot/by-id"

kl_apt_update "$K_SUITE"
rel=$(kl_resolve)
if [ -z "$rel" ]; then
	kl_apt_update "$K_SUITE" force
	rel=$(kl_resolve)
fi
if [ -z "$rel" ]; then
	if [ -f "$kroot/by-id/$K_ID/.complete" ] ||
		{ [ -n "$headers_only" ] && [ -f "$kroot/by-id/$K_ID/.headers" ]; }; then
		echo "fetch: no $K_SERIES $K_FLAVOUR kernel in $K_SUITE's lists; using the cached $(readlink "$kroot/by-id/$K_ID")" >&2
		readlink -f "$kroot/by-id/$K_ID"
		exit 0
	fi
	kl_die "$K_ID: no linux-headers-$K_SERIES.*-$K_FLAVOUR in $K_SUITE (has the suite moved on? update $kl_list)"
fi
dir=$kroot/$rel
# have: what is already there covers this request
have() {
	[ -f "$dir/.complete" ] || { [ -n "$headers_only" ] && [ -f "$dir/.headers" ]; }
}
if have; then
	ln -sfn "../$rel" "$kroot/by-id/$K_ID"
	echo "$dir"
	exit 0
fi

exec 9> "$kroot/.lock-$rel"
flock 9
if have; then
	ln -sfn "../$rel" "$kroot/by-id/$K_ID"
	echo "$dir"
	exit 0
fi

# The package set for this release: the headers ...
hpkgs=("linux-headers-$rel")
while read -r d; do
	case $d in
	linux-headers-*|linux-kbuild-*|linux-base-*) hpkgs+=("$d") ;;
	esac
done < <(kl_depends "linux-headers-$rel")
# The rest of the headers' dependencies (the compiler they were built with:
# gcc-12, gcc-16-for-host, linux-compiler-gcc-10-x86, ...), for chroots.
hostdeps=$(kl_depends "linux-headers-$rel" | grep -Ev '^linux-(headers|kbuild|base|image)(-|$)' | tr '\n' ' ')
# ... and the image's, in order of preference (a mirror may list a package
# it does not have: the next choice is tried then).
icands=()
if kl_pkg_exists "linux-binary-unsigned-$rel"; then
	icands+=("linux-binary-unsigned-$rel linux-modules-$rel linux-base-$rel")
fi
if kl_pkg_exists "linux-binary-$rel"; then
	icands+=("linux-binary-$rel linux-modules-$rel linux-base-$rel")
fi
for c in "linux-image-$rel-unsigned" "linux-image-$rel"; do
	if kl_pkg_exists "$c" && ! kl_depends "$c" | grep -q "^linux-binary-"; then
		icands+=("$c")
	fi
done
[ -n "$headers_only" ] || [ ${#icands[@]} -gt 0 ] ||
	kl_die "$K_ID: no image package for $rel in $K_SUITE"

tmp=$(mktemp -d "$kroot/fetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# download PKG...: apt-get download into $tmp; once more after a refresh of
# stale lists (the archive dropped the old version)
download() {
	echo "fetch: $K_ID = $rel from $K_SUITE: $*" >&2
	(cd "$tmp" && apt-get "${KL_APT[@]}" -q download "$@" >&2) && return 0
	kl_apt_update "$K_SUITE" force
	(cd "$tmp" && apt-get "${KL_APT[@]}" -q download "$@" >&2)
}
if [ ! -f "$dir/.headers" ]; then
	download "${hpkgs[@]}" || kl_die "$K_ID: apt-get download failed for ${hpkgs[*]}"
fi
ipkgs=()
if [ -z "$headers_only" ]; then
	for c in "${icands[@]}"; do
		# shellcheck disable=SC2086 # words
		if download $c; then
			read -r -a ipkgs <<< "$c"
			break
		fi
		echo "fetch: $c: download failed; trying the next choice" >&2
	done
	[ ${#ipkgs[@]} -gt 0 ] || kl_die "$K_ID: could not download an image for $rel (tried: ${icands[*]})"
fi
want=("${hpkgs[@]}" "${ipkgs[@]}")
# Unpacked in place (under the lock); the stamps are written last, so an
# interrupted fetch is redone over what it left.
mkdir -p "$dir"
for f in "$tmp"/*.deb; do
	dpkg-deb -x "$f" "$dir"
done

r=$dir
find_one() { # find_one DESCRIPTION CANDIDATE...: first existing candidate
	local what=$1 c
	shift
	for c in "$@"; do
		[ -e "$r/$c" ] && { echo "$c"; return 0; }
	done
	kl_die "$K_ID ($rel): no $what in ${want[*]} (looked for: $*)"
}
kdir=$(find_one "headers" "usr/src/linux-headers-$rel/Makefile")
kdir=${kdir%/Makefile}
vmlinuz=
modules=
if [ -z "$headers_only" ] || [ -f "$dir/.complete" ]; then
	vmlinuz=$(find_one vmlinuz "boot/vmlinuz-$rel" "usr/lib/modules/$rel/vmlinuz.unsigned" \
		"usr/lib/modules/$rel/vmlinuz" "lib/modules/$rel/vmlinuz")
	modules=$(find_one "modules.builtin" "lib/modules/$rel/modules.builtin" "usr/lib/modules/$rel/modules.builtin")
	modules=${modules%/modules.builtin}
	[ -d "$r/$modules/kernel" ] || kl_die "$K_ID ($rel): no modules in $modules"
fi
config=$(find_one config "boot/config-$rel" "usr/lib/modules/$rel/config" \
	"lib/modules/$rel/config" "usr/src/linux-headers-$rel/.config")

# Debian's headers Makefile names the -common tree (and, from 7.x, the
# output tree) by absolute /usr/src/ paths; make them relative to itself.
mk=$r/$kdir/Makefile
if grep -q '^[^_].*/usr/src/' "$mk"; then
	sed -i -e '/^__spulse_hdr :=/d' "$mk"
	sed -i -e '1i __spulse_hdr := $(realpath $(dir $(lastword $(MAKEFILE_LIST))))' \
		-e 's|/usr/src/|$(__spulse_hdr)/../|g' "$mk"
fi
# Absolute symlinks would point into the host; none are expected.
bad=$(find "$r/usr/src" "$r/usr/lib" -maxdepth 4 -type l -lname '/*' 2>/dev/null | head -n3)
[ -z "$bad" ] || echo "fetch: warning: absolute symlinks in $rel: $bad" >&2

{
	printf 'REL=%q\n' "$rel"
	printf 'SUITE=%q\n' "$K_SUITE"
	printf 'VMLINUZ=%q\n' "${vmlinuz:+$dir/$vmlinuz}"
	printf 'MODULES=%q\n' "${modules:+$dir/$modules}"
	printf 'CONFIG=%q\n' "$dir/$config"
	printf 'KDIR=%q\n' "$dir/$kdir"
	printf 'PACKAGES=%q\n' "${hpkgs[*]}${vmlinuz:+ ${ipkgs[*]}}"
	printf 'HOSTDEPS=%q\n' "${hostdeps% }"
} > "$dir/kernel.env.new"
mv -f "$dir/kernel.env.new" "$dir/kernel.env"
echo "$rel" > "$dir/.version"
touch "$dir/.headers"
[ -z "$vmlinuz" ] || touch "$dir/.complete"
ln -sfn "../$rel" "$kroot/by-id/$K_ID"
echo "fetch: $K_ID ready in $dir ($(du -sh "$dir" | cut -f1)$([ -n "$vmlinuz" ] || echo ', headers only'))" >&2
echo "$dir"
