#!/usr/bin/env bash
# Build (or reuse) a spulse debug test kernel.
#
#   tests/kunit/build-kernel.sh [--source SERIES] [--config FRAGMENT]...
#
# Default: the KUnit debug kernel, Debian's linux-source-6.1 (the host's
# package, /usr/src/linux-source-6.1.tar.xz) + tests/kunit/debug.config.
# --source SERIES   another linux-source-SERIES package (e.g. 6.12). When
#                   the host has not installed it, its newest version in
#                   $SPULSE_KSRC_SUITE (default bookworm-backports) is
#                   downloaded through the private apt config of
#                   tests/kernels/lib.sh (~/.cache/spulse/apt/<suite>/) and
#                   unpacked with dpkg-deb -x (nothing is installed).
# --config FRAGMENT config fragments merged in order on top of tinyconfig
#                   (repeatable; default debug.config). A later fragment
#                   overrides an earlier one's line for the same option.
#
# Source, extracted once to a fixed path (kbuild records absolute paths):
#   $SPULSE_CACHE/src/linux-source-<pkgver>/
# Build tree (O=), keyed by package version + hash of the fragments:
#   $SPULSE_CACHE/kunit-<pkgver>-<cfghash>/
# (one fragment: the first 12 hex digits of its sha256, the scheme of the
# first debug kernel; several: of the sha256 of their sha256s.)
# A build tree holding the stamp file .spulse-built is reused as is.
# Every option the merged fragments ask for is verified after olddefconfig.
# On success prints the O= directory on the last line of stdout; the build
# time goes to stderr and to <O=>/.spulse-build-seconds.
# Environment: SPULSE_CACHE, SPULSE_KJOBS (2), SPULSE_KNICE (19),
# SPULSE_KSRC_SUITE, SPULSE_KSRC_TAR (a tarball to use instead),
# SPULSE_KUNIT_SEED (1: seed a new tree from a finished one of the same
# source version).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
series=6.1
frags=()
while [ $# -gt 0 ]; do
	case $1 in
	--source) series=${2:?--source needs a series}; shift 2 ;;
	--config) frags+=("$(readlink -f "${2:?--config needs a file}")"); shift 2 ;;
	--print-dir) shift ;;	# (the directory is always printed)
	*) echo "usage: build-kernel.sh [--source SERIES] [--config FRAGMENT]..." >&2; exit 2 ;;
	esac
done
[ ${#frags[@]} -gt 0 ] || frags=("$here/debug.config")
for f in "${frags[@]}"; do
	[ -f "$f" ] || { echo "build-kernel: no config fragment $f" >&2; exit 2; }
done
case $series in [0-9]*.[0-9]*) ;; *) echo "build-kernel: bad series '$series'" >&2; exit 2 ;; esac
cache=${SPULSE_CACHE:-$HOME/.cache/spulse}
jobs=${SPULSE_KJOBS:-2}
niceness=${SPULSE_KNICE:-19}

log() { echo "build-kernel: $*" >&2; }

mkdir -p "$cache/src"
tarball=${SPULSE_KSRC_TAR:-}
pkgver=
if [ -z "$tarball" ]; then
	pkgver=$(dpkg-query -W -f='${Version}' "linux-source-$series" 2>/dev/null || true)
	tarball=/usr/src/linux-source-$series.tar.xz
	if [ -z "$pkgver" ] || [ ! -f "$tarball" ]; then
		# Not on the host: the package from the archive (private apt config).
		# shellcheck disable=SC2034 # read by lib.sh
		kl_prog=build-kernel
		# shellcheck source=tests/kernels/lib.sh
		. "$here/../kernels/lib.sh"
		suite=${SPULSE_KSRC_SUITE:-bookworm-backports}
		kl_apt_update "$suite"
		pkgver=$(apt-cache "${KL_APT[@]}" show "linux-source-$series" 2>/dev/null |
			awk '/^Version: / { print $2 }' | sort -V | tail -n1)
		if [ -z "$pkgver" ]; then
			# offline: the newest version already downloaded
			pkgver=$(ls "$cache/src/deb" 2>/dev/null |
				sed -n "s/^linux-source-${series//./\\.}_\(.*\)_all\.deb\$/\1/p" |
				sed 's/%3a/:/g' | sort -V | tail -n1)
		fi
		[ -n "$pkgver" ] || kl_die "linux-source-$series is neither installed nor in $suite"
		tarball=$cache/src/linux-source-$series-$pkgver.tar.xz
		exec 7>"$cache/src/fetch.lock"
		flock 7
		if [ ! -f "$tarball" ]; then
			mkdir -p "$cache/src/deb"
			deb=$(ls "$cache/src/deb/linux-source-${series}_${pkgver//:/%3a}_all.deb" 2>/dev/null || true)
			if [ -z "$deb" ]; then
				log "downloading linux-source-$series=$pkgver from $suite"
				(cd "$cache/src/deb" && apt-get "${KL_APT[@]}" -q download \
					"linux-source-$series=$pkgver" >&2) ||
					kl_die "apt-get download linux-source-$series=$pkgver failed"
				deb=$(ls "$cache/src/deb/linux-source-${series}_"*"_all.deb" | sort -V | tail -n1)
			fi
			tmp=$(mktemp -d "$cache/src/deb/x.XXXXXX")
			dpkg-deb --fsys-tarfile "$deb" |
				tar -C "$tmp" -x "./usr/src/linux-source-$series.tar.xz"
			mv "$tmp/usr/src/linux-source-$series.tar.xz" "$tarball"
			rm -rf "$tmp"
		fi
		exec 7>&-
	fi
else
	pkgver=${SPULSE_KSRC_VERSION:-$(basename "$tarball" .tar.xz)}
fi

if [ ${#frags[@]} -eq 1 ]; then
	cfghash=$(sha256sum "${frags[0]}" | cut -c1-12)
else
	cfghash=$(sha256sum "${frags[@]}" | cut -c1-64 | sha256sum | cut -c1-12)
fi
src=$cache/src/linux-source-$pkgver
out=$cache/kunit-$pkgver-$cfghash

# One builder per build tree (another tree's build does not wait).
exec 9>"$out.lock"
flock 9

if [ -f "$out/.spulse-built" ] && [ -f "$out/arch/x86/boot/bzImage" ]; then
	log "reusing $out"
	echo "$out"
	exit 0
fi

exec 8>"$src.lock"
flock 8
if [ ! -f "$src/Makefile" ]; then
	log "extracting $tarball -> $src"
	tmp=$(mktemp -d "$cache/src/extract.XXXXXX")
	tar -C "$tmp" -xf "$tarball"
	rm -rf "$src"
	mv "$tmp/linux-source-$series" "$src"
	rmdir "$tmp"
fi
exec 8>&-

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

names=$(for f in "${frags[@]}"; do basename "$f"; done | paste -sd+)
log "configuring $out (tinyconfig + $names)"
kmake -s tinyconfig >&2
"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "${frags[@]}" >/dev/null
kmake -s olddefconfig >&2

# Every option the fragments ask for must really be set; for an option
# named by several fragments the last one's line is the request.
want=$(cat "${frags[@]}" | awk '
	/^CONFIG_[A-Za-z0-9_]+=/ { o = $0; sub(/=.*/, "", o); req[o] = $0; ord[o] = ++n; next }
	/^# CONFIG_[A-Za-z0-9_]+ is not set$/ { o = $2; req[o] = $0; ord[o] = ++n }
	END { for (o in req) print ord[o] "\t" req[o] }' | sort -n | cut -f2-)
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
done <<< "$want"
[ "$bad" -eq 0 ] || { log "config verification FAILED"; exit 1; }
log "config verified: every option of $names is set"

log "building (nice -n $niceness, -j$jobs); a cold build takes 10-40 minutes"
start=$(date +%s)
nice -n "$niceness" make -C "$src" O="$out" ARCH=x86_64 -j"$jobs" -s bzImage modules >&2
secs=$(( $(date +%s) - start ))
log "built in $secs s"
echo "$secs" > "$out/.spulse-build-seconds"
[ -f "$out/Module.symvers" ] || { log "Module.symvers missing"; exit 1; }
touch "$out/.spulse-built"
echo "$out"
