#!/bin/sh
# /init of the spulse test initramfs (busybox sh, PID 1).
#
# Mounts the pseudo file systems, loads the virtio/9p modules listed in
# /modules.order (already in dependency order), mounts the host root
# read-only at /host and the run's output directory read-write at /out,
# prepares /host for `chroot /host` (proc, sys, debugfs, devtmpfs, tmpfs /tmp,
# the output directory bound at its host path), then runs the guest script
# named in /out/.vm/cmd and powers off. The script's exit code goes to
# /out/exit-code and its output to /out/guest.log (and the console).
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug
mkdir -p /tmp && mount -t tmpfs tmpfs /tmp

die() {
	echo "vm-init: $*"
	echo "vm-init: FAILED" > /dev/console
	sync
	poweroff -f
}

if [ -f /modules.order ]; then
	while read -r ko; do
		[ -n "$ko" ] || continue
		insmod "/modules/$ko" || echo "vm-init: insmod $ko failed"
	done < /modules.order
fi

opts=trans=virtio,version=9p2000.L,msize=262144
mkdir -p /host /out
mount -t 9p -o "$opts,ro,cache=loose" host /host || die "cannot mount host root"
mount -t 9p -o "$opts,cache=none" out /out || die "cannot mount out"
# The repository has its own share: a clone under /tmp or /run would
# otherwise be hidden by the tmpfs mounted on /host/tmp below.
mkdir -p /top
mount -t 9p -o "$opts,ro,cache=loose" top /top || die "cannot mount top"

[ -f /out/.vm/cmd ] || die "no /out/.vm/cmd"
# Defines VM_SCRIPT, VM_OUT_HOST, VM_TOP and the positional arguments (set --).
. /out/.vm/cmd

# chroot /host environment for host-built dynamic binaries.
mount -t proc proc /host/proc
mount -t sysfs sysfs /host/sys
mount -t debugfs debugfs /host/sys/kernel/debug
mount -t devtmpfs devtmpfs /host/dev
mount -t tmpfs tmpfs /host/tmp
mount -t tmpfs tmpfs /host/run 2>/dev/null
# The repository at its host path inside /host (first, so that an OUTDIR
# inside the repository is bound on top of it).
if [ -n "$VM_TOP" ]; then
	mkdir -p "/host$VM_TOP" 2>/dev/null
	mount --bind /top "/host$VM_TOP" || die "cannot bind the repository"
fi
# (an OUTDIR under /tmp or /run lives in the tmpfs just mounted: create it)
[ -n "$VM_OUT_HOST" ] && mkdir -p "/host$VM_OUT_HOST" 2>/dev/null
if [ -n "$VM_OUT_HOST" ] && [ -d "/host$VM_OUT_HOST" ]; then
	mount --bind /out "/host$VM_OUT_HOST"
fi

# The repository at its host path in the guest root too, so binaries run
# directly (static) have the same path as on the host: the kernel's d_path
# from a kworker names them relative to this root.
if [ -n "$VM_TOP" ] && [ -d "/host$VM_TOP" ]; then
	mkdir -p "$VM_TOP" && mount -o rbind "/host$VM_TOP" "$VM_TOP"
fi

export OUT=/out HOST=/host VM_OUT_HOST VM_TOP VM_SCRIPT
export VM_SCRIPT_DIR="/host${VM_SCRIPT%/*}"
export VM_LIB="/host$VM_TOP/tests/vm/guest-lib.sh"
echo "vm-init: running $VM_SCRIPT $*"
rm -f /out/exit-code
cd /out
# The script's output goes to the console and to /out/guest.log.
( /bin/sh "$VM_SCRIPT_COPY" "$@" 2>&1; echo $? > /tmp/rc ) | tee /out/guest.log
rc=$(cat /tmp/rc 2>/dev/null || echo 126)
dmesg > /out/dmesg.txt 2>/dev/null
echo "$rc" > /out/exit-code
echo "vm-init: guest script exit code $rc"
cd /
sync
umount "/host$VM_OUT_HOST" 2>/dev/null
umount /out 2>/dev/null
sync
poweroff -f
