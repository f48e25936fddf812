#!/usr/bin/env bash
# Build spulse.ko against one listed kernel, outside the source tree.
#
# usage: build-module.sh ID OUTDIR      e.g. build-module.sh 7.2 /tmp/me/k72
#
# ID is a line of tests/kernels/kernels.list (5.10, 6.1, 6.12-bpo, 6.12,
# 6.12-rt, 7.2, 7.2-rt, ...). The script fetches that kernel's headers
# (tests/kernels/fetch.sh --headers, cached), copies the module sources (Kbuild, kmod/,
# include/; never their build products) to OUTDIR/src and runs
# `make -C <headers> M=OUTDIR/src modules` there: on the host, or for
# build=chroot kernels inside that suite's chroot (tests/kernels/chroot.sh,
# created once, with the compiler the headers ask for). The source tree and
# its kmod/*.o are never touched, so any number of builds for different
# kernels (or OUTDIRs) can run at once. Result: OUTDIR/spulse.ko; the full
# compiler output in OUTDIR/build.log; OUTDIR/kernel.env names the kernel;
# OUTDIR/times holds the seconds each part took (fetch, chroot, build). Exit
# status 0 on success, else non-zero with "build-module: FAIL <ID> (<release>)"
# and the first errors on stderr. SRC=DIR builds another checkout's sources;
# JOBS=N sets make -j (default 2); KBUILD_ARGS="W=1 ..." adds make arguments.
set -euo pipefail
kl_prog="build-module"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/kernels/lib.sh
. "$here/lib.sh"

[ $# -eq 2 ] || { sed -n '5p' "$0" | sed 's/^# //' >&2; exit 2; }
id=$1
kl_entry "$id"
mkdir -p "$2"
out=$(realpath "$2")
src_top=$(realpath "${SRC:-$here/../..}")
jobs=${JOBS:-2}
log=$out/build.log
: > "$log"
rm -f "$out/spulse.ko" "$out/times" "$out/kernel.env"

fail() {
	echo "build-module: FAIL $id (${REL:-unresolved}): $*" >&2
	grep -E 'error:|Error [0-9]|undefined!|ERROR:' "$log" 2>/dev/null | head -n 15 | sed 's/^/  /' >&2 || true
	echo "  (full log: $log)" >&2
	exit 1
}

# 1. The kernel's headers.
t0=$(kl_now)
if ! kdir_root=$("$here/fetch.sh" --headers "$id" 2>> "$log"); then
	tail -n 5 "$log" >&2
	fail "cannot fetch the kernel"
fi
t_fetch=$(kl_since "$t0")
# shellcheck source=/dev/null
. "$kdir_root/kernel.env"
cp "$kdir_root/kernel.env" "$out/kernel.env"
echo "build-module: $id = $REL ($SUITE, build on $K_BUILD)" >> "$log"

# 2. A copy of the sources the module build reads.
# (kept between runs, so kbuild rebuilds only what changed)
mkdir -p "$out/src"
for f in Kbuild kmod include; do
	[ -e "$src_top/$f" ] || fail "no $src_top/$f"
done
rsync -a --delete --exclude='*.o' --exclude='*.ko' --exclude='.*.cmd' --exclude='*.mod' \
	--exclude='*.mod.c' --exclude='modules.order' --exclude='Module.symvers' \
	--exclude='*.a' --exclude='.tmp_*' \
	"$src_top/Kbuild" "$src_top/kmod" "$src_top/include" "$out/src/"

# 3. Build.
make_args=(-C "$KDIR" M="$out/src" -j"$jobs" modules)
# shellcheck disable=SC2206 # words
[ -z "${KBUILD_ARGS:-}" ] || make_args+=($KBUILD_ARGS)
t_chroot=0
if [ "$K_BUILD" = chroot ]; then
	t0=$(kl_now)
	# shellcheck disable=SC2086
	"$here/chroot.sh" "$SUITE" --pkgs "$HOSTDEPS" >> "$log" 2>&1 ||
		fail "cannot make the $SUITE chroot (tests/kernels/chroot.sh $SUITE)"
	t_chroot=$(kl_since "$t0")
	t0=$(kl_now)
	echo "build-module: chroot $SUITE: make ${make_args[*]}" >> "$log"
	set +e
	"$here/chroot.sh" "$SUITE" --bind "$kdir_root" --bind "$out" -- \
		make "${make_args[@]}" >> "$log" 2>&1
	rc=$?
	set -e
else
	# The headers name the compiler they were built with (.kernelvariables:
	# CC = ... gcc-N); when the host lacks it, build with the host's gcc
	# and say so (kbuild then warns about the version difference).
	cc=$(sed -n 's/^CC = .*)\(gcc-[0-9]*\)$/\1/p' "$KDIR/.kernelvariables" 2>/dev/null | head -n1)
	if [ -n "$cc" ] && ! command -v "$cc" >/dev/null && ! command -v "x86_64-linux-gnu-$cc" >/dev/null; then
		host_cc=$(command -v gcc)
		echo "build-module: $REL was built with $cc, not on this host: CC=$host_cc" >> "$log"
		make_args+=(CC="$host_cc")
	fi
	t0=$(kl_now)
	echo "build-module: make ${make_args[*]}" >> "$log"
	set +e
	make "${make_args[@]}" >> "$log" 2>&1
	rc=$?
	set -e
fi
t_build=$(kl_since "$t0")
printf 'fetch %.1f\nchroot %.1f\nbuild %.1f\n' "$t_fetch" "$t_chroot" "$t_build" > "$out/times"
[ "$rc" -eq 0 ] || fail "make exited $rc"
[ -f "$out/src/spulse.ko" ] || fail "make succeeded but wrote no spulse.ko"
vermagic=$(modinfo -F vermagic "$out/src/spulse.ko" | cut -d' ' -f1)
[ "$vermagic" = "$REL" ] || fail "spulse.ko has vermagic $vermagic, not $REL"
cp "$out/src/spulse.ko" "$out/spulse.ko"
warnings=$(grep -c 'warning:' "$log" || true)
printf 'build-module: ok %s (%s): %s (fetch %s, chroot %s, build %s, %s compiler warnings)\n' \
	"$id" "$REL" "$out/spulse.ko" "$(kl_fmt_secs "$t_fetch")" "$(kl_fmt_secs "$t_chroot")" \
	"$(kl_fmt_secs "$t_build")" "$warnings" >&2
