#!/usr/bin/env bash
# Build (or reuse) the spulse test initramfs and print its path.
#
# usage: mkinitramfs.sh [MODULES_DIR]
#
# MODULES_DIR is a kernel's lib/modules/VERSION directory; the virtio-pci and
# 9p modules and everything they depend on (modinfo -F depends) are copied
# (decompressed when .ko.xz/.ko.zst) and listed in /modules.order in load
# order. A module the kernel has built in (named in MODULES_DIR's
# modules.builtin, as virtio_pci is from 6.12 on) is skipped, as is any
# built-in dependency. An empty MODULES_DIR builds an initramfs without
# modules (for a kernel with virtio/9p built in). The image holds
# busybox-static with its applet links, /dev/console and tests/vm/init.sh as
# /init; it is cached under ~/.cache/spulse/ by a hash of everything that
# goes into it.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache=${SPULSE_CACHE:-$HOME/.cache/spulse}
kmods=${1:-}
busybox=${BUSYBOX:-/bin/busybox}
want=(virtio_pci 9pnet_virtio 9p)

[ -x "$busybox" ] || { echo "mkinitramfs: no $busybox (apt-get install busybox-static)" >&2; exit 1; }
file "$busybox" 2>/dev/null | grep -q 'dynamically linked' &&
	{ echo "mkinitramfs: $busybox is not static (install busybox-static)" >&2; exit 1; }

declare -A path_of=() seen=() builtin=()
order=()
if [ -n "$kmods" ]; then
	[ -d "$kmods" ] || { echo "mkinitramfs: no module dir $kmods" >&2; exit 1; }
	while IFS= read -r f; do
		n=${f##*/}
		n=${n%%.ko*}
		path_of[${n//-/_}]=$f
	done < <(find "$kmods" -name '*.ko' -o -name '*.ko.xz' -o -name '*.ko.zst' -o -name '*.ko.gz')
	if [ -f "$kmods/modules.builtin" ]; then
		while IFS= read -r f; do
			n=${f##*/}
			n=${n%%.ko*}
			builtin[${n//-/_}]=1
		done < "$kmods/modules.builtin"
	fi
	# Depth-first post-order: dependencies before the modules needing them.
	visit() {
		local m=${1//-/_} d deps
		[ -z "${seen[$m]:-}" ] || return 0
		seen[$m]=1
		if [ -z "${path_of[$m]:-}" ]; then
			[ -z "${builtin[$m]:-}" ] || return 0
			echo "mkinitramfs: module $m not found in $kmods (nor in its modules.builtin)" >&2
			exit 1
		fi
		deps=$(modinfo -F depends "${path_of[$m]}" 2>/dev/null | tr ',' ' ')
		for d in $deps; do visit "$d"; done
		order+=("$m")
	}
	for m in "${want[@]}"; do visit "$m"; done
fi

# Content hash: init, this script, busybox, the chosen module files.
key=$( {
	sha256sum "$here/init.sh" "$0" "$busybox"
	for m in "${order[@]}"; do sha256sum "${path_of[$m]}"; done
} | sha256sum | cut -c1-16)
img=$cache/initramfs-$key.cpio.gz
if [ -s "$img" ]; then
	echo "$img"
	exit 0
fi

mkdir -p "$cache"
root=$(mktemp -d "$cache/initramfs.XXXXXX")
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,host,out,modules,etc}
cp "$busybox" "$root/bin/busybox"
for a in $("$root/bin/busybox" --list-full); do
	[ -e "$root/$a" ] || ln -s /bin/busybox "$root/$a"
done
ln -sf busybox "$root/bin/sh"
install -m 0755 "$here/init.sh" "$root/init"
: > "$root/modules.order"
for m in "${order[@]}"; do
	src=${path_of[$m]}
	case $src in
	*.ko.xz) xz -dc "$src" > "$root/modules/$m.ko" ;;
	*.ko.zst) zstd -qdc "$src" > "$root/modules/$m.ko" ;;
	*.ko.gz) gzip -dc "$src" > "$root/modules/$m.ko" ;;
	*) cp "$src" "$root/modules/$m.ko" ;;
	esac
	echo "$m.ko" >> "$root/modules.order"
done
# /dev/console must exist before devtmpfs is mounted (the kernel opens it).
tmpimg=$(mktemp "$cache/initramfs.img.XXXXXX")
(
	cd "$root"
	{ find . -mindepth 1 | sed 's|^\./||'; } | cpio -o -H newc --quiet
	# Append the device node as root:root without needing mknod rights here.
) > "$tmpimg.cpio"
mknod "$root/dev/console" c 5 1 2>/dev/null && (cd "$root" && echo dev/console | cpio -o -H newc -A -F "$tmpimg.cpio" --quiet) || true
gzip -9c "$tmpimg.cpio" > "$tmpimg"
rm -f "$tmpimg.cpio"
mv -f "$tmpimg" "$img"
echo "$img"
