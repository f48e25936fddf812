#!/bin/sh
# Guest script of suite kmod-vm-target for the boot with lockdown=integrity
# (the Secure Boot default): is the kernel locked down, does insmod work.
# usage: vm-target-lock.sh [MODULE.ko]
. "$VM_LIB"
KO=${1:-$VM_TOP/spulse.ko}
L=/sys/kernel/security/lockdown
[ -e $L ] || mount -t securityfs securityfs /sys/kernel/security
echo "tg boot lockdown: $(cat $L)"
chroot /host /sbin/insmod "$KO"; echo "tg boot insmod rc=$?"
[ -d /sys/module/spulse ] && chroot /host /sbin/rmmod spulse
exit 0
