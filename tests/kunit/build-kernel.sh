#!/usr/bin/env bash
# Build (or reuse) the spulse KUnit/debug test kernel.
#
#   tests/kunit/build-kernel.sh [--print-dir]
#
# Source: Debian's linux-source-6.1 (/usr/src/linux-source-6.1.tar.xz),
# extracted once to a fixed path (kbuild records absolute paths):
#   $SPULSE_CACHE/src/linux-source-<pkgver>/
# Build tree (O=), keyed by package version + hash of debug.config:
#   $SPULSE_CACHE/kunit-<pkgver>-<cfghash>/
# A build tree holding the stamp file .spulse-built is reused as is.
# On success prints the O= directory on the last line of stdout.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
frag=$here/debug.config
cache=${SPULSE_CACHE:-$HOME/.cache/spulse}
tarball=${SPULSE_KSRC_TAR:-/usr/src/linux-source-6.1.tar.xz}
jobs=${SPULSE_KJOBS:-2}

pkgver=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null || true)
[ -n "$pkgver" ] || { echo "build-kernel: linux-source-6.1 is not installed" >&2; exit 1; }
cfghash=$(sha256sum "$frag" | cut -c1-12)
src=$cache/src/linux-source-$pkgver
out=$cache/kunit-$pkgver-$cfghash

log() { echo "build-kernel: $*" >&2; }

mkdir -p "$cache/src"
exec 9>"$cache/kunit-build.lock"
flock 9

if [ -f "$out/.spulse-built" ] && [ -f "$out/arch/x86/boot/bzImage" ]; then
	log "reusing $out"
	echo "$out"
	exit 0
fi

if [ ! -f "$src/Makefile" ]; then
	log "extracting $tarball -> $src"
	tmp=$(mktemp -d "$cache/src/extract.XXXXXX")
	tar -C "$tmp" -xf "$tarball"
	rm -rf "$src"
	mv "$tmp/linux-source-6.1" "$src"
	rmdir "$tmp"
fi

# Warm start: seed a new build tree from the newest finished tree of the
# same source version; kbuild then rebuilds only what the config change
# touches (fixdep tracks CONFIG_ dependencies per object).
if [ ! -d "$out" ] && [ "${SPULSE_KUNIT_SEED:-1}" = 1 ]; then
	seed=$(ls -td "$cache"/kunit-"$pkgver"-*/.spulse-built 2>/dev/null | head -n1 || true)
	if [ -n "$seed" ]; then
		seed=${seed%/.spulse-built}
		log "seeding $out from $seed"
		cp -a "$seed" "$out.tmp" && rm -f "$out.tmp/.spulse-built" &&
			mv "$out.tmp" "$out"
	fi
fi
mkdir -p "$out"
kmake() { make -C "$src" O="$out" ARCH=x86_64 "$@"; }

log "configuring $out (tinyconfig + $(basename "$frag"))"
kmake -s tinyconfig >&2
"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "$frag" >/dev/null
kmake -s olddefconfig >&2

# Every option the fragment asks for must really be set.
bad=0
while IFS= read -r line; do
	case "$line" in
	CONFIG_*=*)
		grep -qxF "$line" "$out/.config" || {
			log "option not set as requested: $line (got: $(grep -E "^(# )?${line%%=*}[= ]" "$out/.config" || echo absent))"
			bad=1
		} ;;
	"# CONFIG_"*" is not set")
		opt=${line#"# "}; opt=${opt%% *}
		if grep -q "^$opt=" "$out/.config"; then
			log "option should be unset: $opt"
			bad=1
		fi ;;
	esac
done < "$frag"
[ "$bad" -eq 0 ] || { log "config verification FAILED"; exit 1; }
log "config verified: every option of $(basename "$frag") is set"

log "building (nice -n 10, -j$jobs); a cold build takes ~10 minutes"
start=$(date +%s)
nice -n 10 make -C "$src" O="$out" ARCH=x86_64 -j"$jobs" -s bzImage modules >&2
log "built in $(( $(date +%s) - start )) s"
[ -f "$out/Module.symvers" ] || { log "Module.symvers missing"; exit 1; }
touch "$out/.spulse-built"
echo "$out"
