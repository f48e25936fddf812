#!/usr/bin/env bash
# Fetch one listed kernel (tests/kernels/kernels.list) into the cache and
# print its directory, ~/.cache/spulse/kernels/<release>/.
#
# usage: fetch.sh ID          e.g. fetch.sh 7.2
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
# headers' Makefile is made relative so the tree works at any path. One
# fetcher at a time per release (flock); by-id/<ID> links to the last
# release fetched for ID (used when the archive cannot be reached).
set -euo pipefail
kl_prog=fetch
# shellcheck source=tests/kernels/lib.sh
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

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
	if [ -f "$kroot/by-id/$K_ID/.complete" ]; then
		echo "fetch: no $K_SERIES $K_FLAVOUR kernel in $K_SUITE's lists; using the cached $(readlink "$kroot/by-id/$K_ID")" >&2
		readlink -f "$kroot/by-id/$K_ID"
		exit 0
	fi
	kl_die "$K_ID: no linux-headers-$K_SERIES.*-$K_FLAVOUR in $K_SUITE (has the suite moved on? update $kl_list)"
fi
dir=$kroot/$rel
if [ -f "$dir/.complete" ]; then
	ln -sfn "../$rel" "$kroot/by-id/$K_ID"
	echo "$dir"
	exit 0
fi

exec 9> "$kroot/.lock-$rel"
flock 9
if [ -f "$dir/.complete" ]; then
	ln -sfn "../$rel" "$kroot/by-id/$K_ID"
	echo "$dir"
	exit 0
fi

# The package set for this release.
if kl_pkg_exists "linux-binary-unsigned-$rel"; then
	pkgs=("linux-binary-unsigned-$rel" "linux-modules-$rel" "linux-base-$rel")
elif kl_pkg_exists "linux-image-$rel-unsigned"; then
	pkgs=("linux-image-$rel-unsigned")
elif kl_pkg_exists "linux-image-$rel"; then
	pkgs=("linux-image-$rel")
else
	kl_die "$K_ID: no image package for $rel in $K_SUITE"
fi
pkgs+=("linux-headers-$rel")
while read -r d; do
	case $d in
	linux-headers-*|linux-kbuild-*|linux-base-*) pkgs+=("$d") ;;
	esac
done < <(kl_depends "linux-headers-$rel")
# The rest of the headers' dependencies (the compiler they were built with:
# gcc-12, gcc-16-for-host, linux-compiler-gcc-10-x86, ...), for chroots.
hostdeps=$(kl_depends "linux-headers-$rel" | grep -Ev '^linux-(headers|kbuild|base|image)(-|$)' | tr '\n' ' ')
# Unique, in order.
mapfile -t pkgs < <(printf '%s\n' "${pkgs[@]}" | awk '!seen[$0]++')

tmp=$(mktemp -d "$kroot/fetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/debs" "$tmp/root"
echo "fetch: $K_ID = $rel from $K_SUITE: ${pkgs[*]}" >&2
if ! (cd "$tmp/debs" && apt-get "${KL_APT[@]}" -q download "${pkgs[@]}" >&2); then
	# Stale lists (the archive dropped the old version): refresh, retry.
	kl_apt_update "$K_SUITE" force
	(cd "$tmp/debs" && apt-get "${KL_APT[@]}" -q download "${pkgs[@]}" >&2) ||
		kl_die "$K_ID: apt-get download failed for ${pkgs[*]}"
fi
for f in "$tmp"/debs/*.deb; do
	dpkg-deb -x "$f" "$tmp/root"
done

r=$tmp/root
find_one() { # find_one DESCRIPTION CANDIDATE...: first existing candidate
	local what=$1 c
	shift
	for c in "$@"; do
		[ -e "$r/$c" ] && { echo "$c"; return 0; }
	done
	kl_die "$K_ID ($rel): no $what in ${pkgs[*]} (looked for: $*)"
}
vmlinuz=$(find_one vmlinuz "boot/vmlinuz-$rel" "usr/lib/modules/$rel/vmlinuz.unsigned" \
	"usr/lib/modules/$rel/vmlinuz" "lib/modules/$rel/vmlinuz")
modules=$(find_one "modules.builtin" "lib/modules/$rel/modules.builtin" "usr/lib/modules/$rel/modules.builtin")
modules=${modules%/modules.builtin}
config=$(find_one config "boot/config-$rel" "usr/lib/linux/config-$rel" "usr/lib/modules/$rel/config" "lib/modules/$rel/config" "usr/src/linux-headers-$rel/.config")
kdir=$(find_one "headers" "usr/src/linux-headers-$rel/Makefile")
kdir=${kdir%/Makefile}
[ -d "$r/$modules/kernel" ] || kl_die "$K_ID ($rel): no modules in $modules"

# Debian's headers Makefile names the -common tree (and, from 7.x, the
# output tree) by absolute /usr/src/ paths; make them relative to itself.
mk=$r/$kdir/Makefile
if grep -q '/usr/src/' "$mk"; then
	sed -i -e '1i __spulse_hdr := $(realpath $(dir $(lastword $(MAKEFILE_LIST))))' \
		-e 's|/usr/src/|$(__spulse_hdr)/../|g' "$mk"
fi
# Absolute symlinks would point into the host; none are expected.
bad=$(find "$r/usr/src" "$r/usr/lib" -maxdepth 4 -type l -lname '/*' 2>/dev/null | head -n3)
[ -z "$bad" ] || echo "fetch: warning: absolute symlinks in $rel: $bad" >&2

{
	printf 'REL=%q\n' "$rel"
	printf 'SUITE=%q\n' "$K_SUITE"
	printf 'VMLINUZ=%q\n' "$dir/$vmlinuz"
	printf 'MODULES=%q\n' "$dir/$modules"
	printf 'CONFIG=%q\n' "$dir/$config"
	printf 'KDIR=%q\n' "$dir/$kdir"
	printf 'PACKAGES=%q\n' "${pkgs[*]}"
	printf 'HOSTDEPS=%q\n' "${hostdeps% }"
} > "$r/kernel.env"
echo "$rel" > "$r/.version"
rm -rf "$dir"
mv "$r" "$dir"
touch "$dir/.complete"
ln -sfn "../$rel" "$kroot/by-id/$K_ID"
echo "fetch: $K_ID ready in $dir ($(du -sh "$dir" | cut -f1))" >&2
echo "$dir"
