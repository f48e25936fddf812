#!/usr/bin/env bash
# Fill the caches make check needs (~/.cache/spulse, or $SPULSE_CACHE) in
# the background of the suites, at nice 19, so a cold machine pays for them
# while the suites leave the CPU idle (the VM suites keep about one of two
# cores busy) instead of in front of the suites that need them:
#   - every listed kernel's headers and build chroot, and the image of each
#     kernel the kernel-boot suite boots (tests/kernels/fetch.sh, chroot.sh)
#   - the KUnit debug kernel (tests/kunit/build-kernel.sh, 20-30 minutes
#     cold on 2 cores)
# Each cache has its own lock: a suite that needs one while it is being
# filled waits for it and then reuses it (never a second build). On a warm
# cache every part finds its stamp and ends at once.
#
# usage: warm-caches.sh     one line per part: "warm: PART SECONDS s rc RC"
# Started by tests/run-suites.sh (WARM=0 turns it off).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
kdir=$top/tests/kernels

# part NAME CMD...: run CMD, then print its line
part() {
	local name=$1 t0=$SECONDS rc
	shift
	"$@" > /dev/null 2>&1
	rc=$?
	echo "warm: $name $((SECONDS - t0)) s rc $rc"
}

# kernels (network and disk bound: all at once) ...
(
	# shellcheck source=kernels/lib.sh
	kl_prog=warm . "$kdir/lib.sh"
	for id in $(kl_ids); do
		kl_entry "$id"
		if [ "$K_BOOT" = check ]; then
			part "fetch $id" "$kdir/fetch.sh" "$id" &
		else
			part "fetch $id headers" "$kdir/fetch.sh" --headers "$id" &
		fi
	done
	for s in $(for id in $(kl_ids); do
			kl_entry "$id"
			[ "$K_BUILD" != chroot ] || echo "$K_SUITE"
		done | sort -u); do
		part "chroot $s" "$kdir/chroot.sh" "$s" &
	done
	wait
) &
# ... beside the debug kernel (CPU bound)
part "debug kernel" "$top/tests/kunit/build-kernel.sh"
wait
