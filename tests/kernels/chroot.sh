#!/usr/bin/env bash
# A minimal Debian build chroot per suite, for kernels whose kbuild needs a
# newer glibc/gcc than the host's (tests/kernels/kernels.list, build=chroot).
#
# usage: chroot.sh SUITE [--pkgs "PKG..."] [--bind DIR]... [-- CMD [ARG...]]
#
# Creates ~/.cache/spulse/chroot-SUITE/ once (debootstrap --variant=minbase
# with build-essential, libelf-dev, bc, bison, flex, dwarves, ...; stamp
# .spulse-complete; one creator at a time, flock), installs what is not
# there yet of that list (it may grow) and of --pkgs (e.g. the compiler the kernel headers ask for), then, with a
# command, runs it inside: in a private mount namespace (unshare -m) with
# /proc, /dev and every --bind DIR mounted at the same path as on the host,
# so all of them vanish when the command ends, whatever way it ends. Without
# a command, prints the chroot's path.
set -euo pipefail
kl_prog=chroot
# shellcheck source=tests/kernels/lib.sh
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

[ $# -ge 1 ] || { sed -n '5p' "$0" | sed 's/^# //' >&2; exit 2; }
suite=$1
shift
pkgs=
binds=()
while [ $# -gt 0 ]; do
	case $1 in
	--pkgs) pkgs="$pkgs $2"; shift 2 ;;
	--bind) binds+=("$(realpath "$2")"); shift 2 ;;
	--) shift; break ;;
	*) kl_die "unknown argument $1" ;;
	esac
done
case $suite in *[!a-z0-9-]*|'') kl_die "bad suite name '$suite'" ;; esac
command -v debootstrap >/dev/null || kl_die "no debootstrap (apt-get install debootstrap)"

base_pkgs="build-essential,libelf-dev,bc,bison,flex,kmod,libssl-dev,dwarves,python3,ca-certificates,xz-utils,zstd,cpio"
root=$kl_cache/chroot-$suite
stamp=$root/.spulse-complete
mkdir -p "$kl_cache"

in_root() { # run a command in the chroot with /proc, /dev (no binds)
	unshare --mount --propagation private -- bash -c '
		r=$1; shift
		mount -t proc proc "$r/proc"
		mount --rbind /dev "$r/dev"
		exec chroot "$r" "$@"' in_root "$root" "$@"
}

missing_pkgs() {
	local p out=
	# shellcheck disable=SC2086 # words
	in_root dpkg -s ${base_pkgs//,/ } $pkgs >/dev/null 2>&1 && return 0
	for p in ${base_pkgs//,/ } $pkgs; do
		in_root dpkg -s "$p" >/dev/null 2>&1 || out="$out $p"
	done
	echo "$out"
}

# shellcheck disable=SC2086 # words
if [ ! -f "$stamp" ] || ! in_root dpkg -s ${base_pkgs//,/ } $pkgs >/dev/null 2>&1; then
	exec 9> "$kl_cache/chroot-$suite.lock"
	flock 9
	if [ ! -f "$stamp" ]; then
		t0=$(kl_now)
		echo "chroot: debootstrap $suite into $root (once)" >&2
		rm -rf "$root"
		inc=$base_pkgs
		for p in $pkgs; do inc="$inc,$p"; done
		if ! debootstrap --variant=minbase --include="$inc" "$suite" "$root" "$kl_mirror" \
			> "$kl_cache/chroot-$suite.log" 2>&1; then
			tail -n 30 "$kl_cache/chroot-$suite.log" >&2
			kl_die "debootstrap $suite failed (log: $kl_cache/chroot-$suite.log)"
		fi
		echo 'Acquire::Check-Valid-Until "false";' > "$root/etc/apt/apt.conf.d/99spulse"
		echo 'APT::Install-Recommends "false";' >> "$root/etc/apt/apt.conf.d/99spulse"
		in_root apt-get clean >/dev/null 2>&1 || true
		touch "$stamp"
		echo "chroot: $suite ready in $(kl_fmt_secs "$(kl_since "$t0")") ($(du -sh "$root" | cut -f1))" >&2
	fi
	miss=$(missing_pkgs)
	if [ -n "${miss// /}" ]; then
		echo "chroot: installing$miss in $suite" >&2
		{ in_root apt-get -q update && in_root env DEBIAN_FRONTEND=noninteractive \
			apt-get -q -y install $miss && in_root apt-get clean; } \
			>> "$kl_cache/chroot-$suite.log" 2>&1 ||
			kl_die "apt-get install$miss in the $suite chroot failed (log: $kl_cache/chroot-$suite.log)"
	fi
	exec 9>&-
fi

if [ $# -eq 0 ]; then
	echo "$root"
	exit 0
fi
for b in "${binds[@]}"; do
	[ -d "$b" ] || kl_die "--bind $b: not a directory"
done
exec unshare --mount --propagation private -- bash -c '
	set -e
	r=$1; shift
	n=$1; shift
	mount -t proc proc "$r/proc"
	mount --rbind /dev "$r/dev"
	while [ "$n" -gt 0 ]; do
		mkdir -p "$r$1"
		mount --bind "$1" "$r$1"
		shift; n=$((n - 1))
	done
	exec chroot "$r" "$@"' chroot "$root" "${#binds[@]}" "${binds[@]}" "$@"
