#!/usr/bin/env bash
# Fetch Debian's stock kernel image matching the installed linux-headers-*-amd64
# into ~/.cache/spulse/kernel-VER/ (apt-get download + dpkg-deb -x; never
# installed into the host's /boot). Prints the cache directory on stdout.
#
# usage: fetch-kernel.sh [VERSION]     e.g. 6.1.0-57-amd64
set -euo pipefail

cache=${SPULSE_CACHE:-$HOME/.cache/spulse}

kernel_version() {
	local d
	# Newest installed Debian amd64 headers directory.
	d=$(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -n1 || true)
	if [ -n "$d" ]; then
		basename "$d" | sed 's/^linux-headers-//'
		return
	fi
	# Fall back to the meta-package's dependency.
	apt-cache depends linux-headers-amd64 2>/dev/null |
		sed -n 's/.*Depends: linux-headers-\(.*-amd64\)$/\1/p' | head -n1
}

ver=${1:-$(kernel_version)}
[ -n "$ver" ] || { echo "fetch-kernel: cannot determine kernel version" >&2; exit 1; }
dir=$cache/kernel-$ver
if [ -f "$dir/.complete" ]; then
	echo "$dir"
	exit 0
fi

mkdir -p "$cache"
# One fetch at a time (several engineers/CI jobs may start VMs at once).
exec 9> "$cache/fetch-kernel.lock"
flock 9
if [ -f "$dir/.complete" ]; then
	echo "$dir"
	exit 0
fi
tmp=$(mktemp -d "$cache/fetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
got=
for pkg in "linux-image-$ver-unsigned" "linux-image-$ver"; do
	if (cd "$tmp" && apt-get download "$pkg" >&2 2>/dev/null); then
		got=$pkg
		break
	fi
done
if [ -z "$got" ]; then
	# The package lists may be stale: refresh once and retry.
	apt-get update >&2 || true
	for pkg in "linux-image-$ver-unsigned" "linux-image-$ver"; do
		if (cd "$tmp" && apt-get download "$pkg" >&2); then
			got=$pkg
			break
		fi
	done
fi
[ -n "$got" ] || { echo "fetch-kernel: cannot download linux-image-$ver" >&2; exit 1; }
echo "fetch-kernel: extracting $got" >&2
rm -rf "$dir"
mkdir -p "$dir"
dpkg-deb -x "$tmp"/*.deb "$dir"
[ -f "$dir/boot/vmlinuz-$ver" ] || { echo "fetch-kernel: no vmlinuz in $got" >&2; exit 1; }
echo "$ver" > "$dir/.version"
touch "$dir/.complete"
echo "$dir"
