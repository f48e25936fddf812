#!/usr/bin/env bash
# Fetch QEMU's TCG plugin API header (include/qemu/qemu-plugin.h) from
# Debian's qemu SOURCE package matching the installed qemu-system-x86
# (any bookworm version of it when that exact one is gone from the archive)
# into ~/.cache/spulse/qemu-plugin-VER/ and print that directory. A private
# apt configuration with a deb-src line lives beside it; the machine's own
# sources are not touched. Only the orig tarball is downloaded (~23 MB)
# and only the header is extracted; Debian's patches do not touch it.
set -euo pipefail

cache=${SPULSE_CACHE:-$HOME/.cache/spulse}
ver=$(dpkg-query -W -f='${Version}' qemu-system-x86 2>/dev/null || true)
[ -n "$ver" ] || { echo "plugin-header: qemu-system-x86 is not installed" >&2; exit 1; }
ver=${ver%+b[0-9]*}		# a binNMU (+bN) has its source's version
up=${ver#*:}
up=${up%-*}			# 7.2+dfsg
dir=$cache/qemu-plugin-$up
if [ -f "$dir/qemu-plugin.h" ]; then
	echo "$dir"
	exit 0
fi
mkdir -p "$cache"
exec 9> "$cache/qemu-plugin.lock"
flock 9
if [ -f "$dir/qemu-plugin.h" ]; then
	echo "$dir"
	exit 0
fi
apt=$cache/apt-src
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial"
cat > "$apt/sources.list" <<X
deb-src http://deb.debian.org/debian bookworm main
deb-src http://deb.debian.org/debian-security bookworm-security main
deb-src http://deb.debian.org/debian bookworm-updates main
X
O=(-o "Dir::Etc::sourcelist=$apt/sources.list" -o Dir::Etc::sourceparts=/nonexistent
	-o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache"
	-o Acquire::Check-Valid-Until=false)
compgen -G "$apt/lists/*_Sources*" >/dev/null || apt-get "${O[@]}" update >&2
tmp=$(mktemp -d "$cache/qemu-src.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if ! (cd "$tmp" && apt-get "${O[@]}" source --download-only "qemu=$ver" >&2 2>/dev/null); then
	apt-get "${O[@]}" update >&2
	(cd "$tmp" && apt-get "${O[@]}" source --download-only "qemu=$ver" >&2) ||
		(cd "$tmp" && apt-get "${O[@]}" source --download-only qemu >&2) ||
		{ echo "plugin-header: cannot download Debian's qemu source" >&2; exit 1; }
fi
orig=$(ls "$tmp"/qemu_*.orig.tar.* 2>/dev/null | head -n 1)
[ -n "$orig" ] || { echo "plugin-header: no qemu orig tarball downloaded" >&2; exit 1; }
tar -xf "$orig" -C "$tmp" --wildcards '*/include/qemu/qemu-plugin.h'
h=$(ls "$tmp"/*/include/qemu/qemu-plugin.h | head -n 1)
grep -q 'define QEMU_PLUGIN_VERSION' "$h" || { echo "plugin-header: $h has no QEMU_PLUGIN_VERSION" >&2; exit 1; }
mkdir -p "$dir.tmp"
cp "$h" "$dir.tmp/qemu-plugin.h"
echo "$(basename "$orig") $ver" > "$dir.tmp/SOURCE"
rm -rf "$dir"
mv "$dir.tmp" "$dir"
echo "$dir"
